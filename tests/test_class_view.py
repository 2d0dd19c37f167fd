"""A class longer than construction's ``large_item_lines`` is shown as a view of its members:
header, constructor and the members scoring best for the task in full, nothing else of it —
instead of one window of lines that is usually the class docstring."""

from __future__ import annotations

import pytest

import ctxfast
from ctxfast.construct import ConstructConfig, DefaultsConfig


def _ledger(tmp_path):
    root = tmp_path / "ledger"
    (root / "books").mkdir(parents=True)
    (root / "books/__init__.py").write_text("", encoding="utf-8")
    filler = "".join(
        f"    def report_{i}(self):\n"
        f'        """Summary number {i} of the totals."""\n'
        f"        return sum(self.totals) + {i}\n\n"
        for i in range(12)
    )
    (root / "books/ledger.py").write_text(
        "class Ledger:\n"  # 1
        '    """A book of entries.\n'  # 2
        "\n"
        "    Totals are kept per page.\n"
        '    """\n'  # 5
        "\n"
        "    def __init__(self, pages):\n"  # 7
        "        self.pages = pages\n"
        "        self.totals = []\n"  # 9
        "\n"
        + filler  # 11 .. 58
        + "    @property\n"  # 59
        "    def cursor(self):\n"  # 60
        "        return self.cursor_entry_offset\n"
        "\n"
        "    def fetch_entry(self, offset):\n"  # 63
        "        # the offset counts from the first page\n"
        "        page = self.pages[offset // 10]\n"
        "        return page[offset % 10]\n",  # 66
        encoding="utf-8",
    )
    return ctxfast.Repository(root)


TASK = "Ledger fetch returns the wrong entry when the offset crosses a page"
# Small enough that the 66-line class is "large", bodies not cut further.
CONFIG = ConstructConfig(large_item_lines=40, window_lines=12, target_tokens=0)


def _shown(ctx):
    return {n for e in ctx.window if e.file == "books/ledger.py" for n in e.shown_lines()}


def _compose(repo, **defaults):
    """The window with the class as the change target (no file outline beside it)."""
    return ctxfast.compose(
        repo,
        TASK,
        localization=["books.ledger.Ledger"],
        config=CONFIG,
        defaults=DefaultsConfig(file_outlines=False, **defaults),
    )


def test_large_class_shows_header_constructor_and_the_members_the_task_points_at(tmp_path):
    repo = _ledger(tmp_path)
    ctx = _compose(repo, class_view_methods=1)
    shown = _shown(ctx)
    assert set(range(1, 6)) <= shown  # header with the docstring
    assert set(range(7, 10)) <= shown  # the constructor in full
    assert set(range(63, 67)) <= shown  # fetch_entry: "entry", "offset", "page" are the task's
    assert not shown & set(range(11, 59))  # the members the task's words do not point at
    assert 61 not in shown  # only one member beyond the constructor (class_view_methods=1)
    assert any(e.decision == "class_view" for e in ctx.admission_log)
    text = ctx.render()
    assert "\n63\t    def fetch_entry(self, offset):" in text


def test_the_view_is_a_setting_and_members_come_with_their_decorators(tmp_path):
    repo = _ledger(tmp_path)
    two = _compose(repo, class_view_methods=2)
    # cursor (its decorator included) shares "entry" and "offset" too; the constructor stays
    assert {7, 8, 9, 59, 60, 61, 63, 64, 65, 66} <= _shown(two)
    off = _compose(repo, class_view=False)
    shown = _shown(off)
    assert not {7, 8, 9, 63, 64, 65, 66} <= shown  # one 12-line window cannot hold both
    assert not any(e.decision == "class_view" for e in off.admission_log)


def test_the_view_stays_within_its_line_cap(tmp_path):
    repo = _ledger(tmp_path)
    ctx = _compose(repo, class_view_max_lines=14)
    shown = _shown(ctx)
    assert set(range(1, 11)) <= shown  # header and constructor fit in 14 lines
    assert 63 in shown and 65 not in shown  # fetch_entry does not: its first line only


_FILLER_PHP = "".join(
    f"    public function report{i}()\n    {{\n"
    f"        return array_sum($this->totals) + {i};\n    }}\n\n"
    for i in range(12)
)
_FILLER_RB = "".join(f"  def report_{i}\n    @totals.sum + {i}\n  end\n\n" for i in range(12))
LANG_CLASSES = {
    # PHP's constructor is ``__construct`` (lines 6-10), Ruby's ``initialize`` (lines 3-6).
    "php": (
        "<?php\nclass Ledger\n{\n    private $pages;\n\n"
        "    public function __construct($pages)\n    {\n        $this->pages = $pages;\n"
        "        $this->totals = [];\n    }\n\n"
        + _FILLER_PHP
        + "    public function fetchEntry($offset)\n    {\n"
        "        return $this->pages[intdiv($offset, 10)][$offset % 10];\n    }\n}\n",
        range(6, 11),
    ),
    "rb": (
        "class Ledger\n\n  def initialize(pages)\n    @pages = pages\n    @totals = []\n  end\n\n"
        + _FILLER_RB
        + "  def fetch_entry(offset)\n    @pages[offset / 10][offset % 10]\n  end\nend\n",
        range(3, 7),
    ),
}


@pytest.mark.parametrize("ext", sorted(LANG_CLASSES))
def test_php_and_ruby_constructors_are_the_views_constructor(tmp_path, ext):
    """``__construct`` and ``initialize`` construct an instance as ``__init__`` does: the view
    shows them in full although the task shares no word with them."""
    source, ctor = LANG_CLASSES[ext]
    (tmp_path / f"ledger.{ext}").write_text(source, encoding="utf-8")
    repo = ctxfast.Repository(tmp_path)
    repo.index()
    cls = next(n for n in repo.graph.nodes_in_file(f"ledger.{ext}") if n.kind == "class")
    ctx = ctxfast.compose(
        repo,
        TASK,
        localization=[cls.qualname],
        config=CONFIG,
        defaults=DefaultsConfig(file_outlines=False, class_view_methods=1),
    )
    shown = {n for e in ctx.window if e.file == f"ledger.{ext}" for n in e.shown_lines()}
    assert set(ctor) <= shown
    assert len(shown) < source.count("\n") // 2  # a view, not the whole class
