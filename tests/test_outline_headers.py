"""A file's outline shows each definition's first line; a header that goes on over several
lines (a long parameter list, where a fix adding a parameter is made) shows on, up to
``DefaultsConfig.outlines.header_lines`` lines."""

from __future__ import annotations

from recon_fixture import indexed_repo

from ctxfast.construct.context_lines import file_outline, header_lines
from ctxfast.construct.defaults import DefaultsConfig
from ctxfast.construct.source_reader import SourceReader

SOURCE = (
    "def swiglu(\n"
    "    x,\n"
    "    w1,\n"
    "    b1,\n"
    ") -> float:\n"
    "    return x * w1 + b1\n"
    "\n"
    "\n"
    "def packed(x):\n"
    "    return (x,\n"
    "            x)\n"
)


def test_header_lines_follow_an_open_parameter_list_up_to_the_cap():
    lines = SOURCE.splitlines()
    assert list(header_lines(lines, 1, 8)) == [1, 2, 3, 4, 5]
    assert list(header_lines(lines, 1, 3)) == [1, 2, 3]
    assert list(header_lines(lines, 1, 1)) == [1]
    assert list(header_lines(lines, 9, 8)) == [9]  # closed on its first line: a body is no header


def test_the_outline_shows_whole_headers_only_when_set(tmp_path):
    repo = indexed_repo(tmp_path, {"ops.py": SOURCE})
    reader = SourceReader(repo.root)

    def shown(n: int) -> tuple[int, ...] | None:
        cfg = DefaultsConfig(outline_header_lines=n)
        cand = file_outline(repo.graph, reader, "ops.py", 1.0, cfg)
        assert cand is not None
        return cand.lines

    assert shown(1) == (1, 9)
    assert shown(8) == (1, 2, 3, 4, 5, 9)
