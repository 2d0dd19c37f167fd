"""A refresh carries the retrieval state over (``ctxfast.retrieval.carry``): after each kind
of edit, every stored piece equals the one a cold build of the same files stores, the
changed files are the only ones read, and a piece the old state cannot give is built from
the texts instead."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import ctxfast
from ctxfast import _native
from ctxfast.bm25 import BM25Index, SymbolSet
from ctxfast.errors import InvalidArgumentError
from ctxfast.retrieval import repoindex
from ctxfast.state_store import MAGIC, STATE_DIRNAME, TAG_BYTES, StateStore

TASK = 'parse_header raises "header line is malformed" for tabs'


def _write(root: Path) -> Path:
    files = {
        "pkg/__init__.py": "",
        "pkg/header.py": (
            "def parse_header(line):\n"
            "    if '\\t' in line:\n"
            "        raise ValueError('header line is malformed: %s' % line)\n"
            "    return line.split(':', 1)\n"
        ),
        "pkg/body.py": (
            "from pkg.header import parse_header\n\n"
            "class Body:\n"
            "    def read(self, lines):\n"
            "        return [parse_header(x) for x in lines]\n"
        ),
        "src/lib.rs": 'include!("gen.rs");\npub fn main_entry() -> u32 { generated() }\n',
        "src/gen.rs": "pub fn generated() -> u32 { 42 }\n",
        "src/other.rs": "pub fn generated() -> u32 { 43 }\n",
        "cmd/flags.go": (
            'package cmd\n\nfunc Flags() { flag.Bool("verbose-output", false, "print more") }\n'
        ),
    }
    # Twenty files that a bundle copies whole, so the bundle scan has something to find.
    parts = []
    for i in range(20):
        body = "".join(
            f"def routine_{i}_{k}(state):\n    return state.value_{i}_{k} + {k}\n"
            for k in range(12)
        )
        files[f"parts/p{i:02d}.py"] = body
        parts.append(body)
    files["dist/bundle.py"] = "".join(parts)
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def _pieces(root: Path) -> dict[str, bytes]:
    """Each stored piece's payload by name (the key prefix dropped)."""
    state = root / ".ctxfast" / STATE_DIRNAME
    head = len(MAGIC) + TAG_BYTES
    return {
        p.name.split(".", 2)[2]: p.read_bytes()[head:]
        for p in state.iterdir()
        if not p.name.startswith(".tmp-") and p.is_file() and not p.is_symlink()
    }


def _comparable(name: str, payload: bytes) -> object:
    """A piece as its readers see it: the literal index's dictionaries and word-pair rows
    are read by key, so their order is not part of it."""
    if not name.startswith("literals-"):
        return payload
    plain = json.loads(payload)
    plain["by_head"] = {(a, b): sorted(frags) for a, b, frags in plain["by_head"]}
    return plain


def _assert_as_cold(root: Path, cold_root: Path, *, planted: bool = False) -> ctxfast.Repository:
    """Every piece of ``root``'s stored state equals a cold build's of the same files (made
    in ``cold_root``), and there are no others unless files were ``planted`` there; the
    cold repository is returned."""
    shutil.copytree(root, cold_root, ignore=shutil.ignore_patterns(".ctxfast"))
    cold = ctxfast.Repository(cold_root)
    cold.index()
    got, want = _pieces(root), _pieces(cold_root)
    assert set(want) <= set(got) if planted else set(want) == set(got)
    for name in want:
        assert _comparable(name, got[name]) == _comparable(name, want[name]), name
    return cold


def _edit(root: Path, kind: str) -> None:
    header = root / "pkg" / "header.py"
    if kind == "body":
        header.write_text(header.read_text().replace("split(':', 1)", "split(':', 2)"))
    elif kind == "definitions":
        header.write_text(
            "import re\n\n" + header.read_text() + "\ndef strip_header(line):\n"
            "    raise KeyError('header value is missing entirely')\n"
        )
    elif kind == "add":
        (root / "pkg" / "extra.py").write_text("def extra_step(x):\n    return x * 2\n")
    elif kind == "remove":
        (root / "pkg" / "body.py").unlink()
    elif kind == "rename":
        (root / "pkg" / "body.py").rename(root / "pkg" / "reader.py")
    elif kind == "include":
        lib = root / "src" / "lib.rs"
        lib.write_text(lib.read_text().replace("gen.rs", "other.rs"))
    elif kind == "literals":
        flags = root / "cmd" / "flags.go"
        flags.write_text(flags.read_text().replace("verbose-output", "quiet-output"))
    elif kind == "bundle":
        (root / "parts" / "p03.py").write_text("def replaced():\n    return 'no longer bundled'\n")


EDITS = ["body", "definitions", "add", "remove", "rename", "include", "literals", "bundle"]


@pytest.mark.parametrize("kind", EDITS)
def test_a_carried_state_equals_a_cold_build_of_the_same_files(tmp_path, kind, caplog):
    root = _write(tmp_path / "carried")
    ctxfast.Repository(root).index()
    _edit(root, kind)
    with caplog.at_level("DEBUG", logger="ctxfast"):
        carried = ctxfast.Repository(root)
        carried.index()
    assert any("carrying the retrieval state" in r.getMessage() for r in caplog.records)
    cold = _assert_as_cold(root, tmp_path / "cold")
    # The process that refreshed keeps the state it carried (symbols and all).
    assert _ranked(carried) == _ranked(cold)


def _ranked(repo: ctxfast.Repository) -> object:
    """What a retrieval found and how it scored it, without its timings."""
    out = json.loads(repo.retrieve(TASK, refresh=False).to_json())
    del out["timings_ms"]
    return out


def test_a_refresh_reads_only_the_changed_files(tmp_path, monkeypatch):
    root = _write(tmp_path / "proj")
    ctxfast.Repository(root).index()
    _edit(root, "definitions")
    read: list[str] = []
    real = repoindex.read_lines

    def recorded(base, paths):
        paths = list(paths)
        read.extend(paths)
        return real(base, paths)

    monkeypatch.setattr(repoindex, "read_lines", recorded)
    ctxfast.Repository(root).index()
    assert read and set(read) == {"pkg/header.py"}


def test_an_old_piece_that_does_not_decode_is_built_from_the_texts(tmp_path):
    """A piece under the old key whose tag verifies but whose bytes are another layout's
    (or damaged) is not carried: the new piece is built from the texts."""
    root = _write(tmp_path / "proj")
    repo = ctxfast.Repository(root)
    repo.index()
    state_dir = repo.index_dir / STATE_DIRNAME
    old_key = next(state_dir.iterdir()).name.split(".", 1)[0]
    old = StateStore(repo.index_dir, old_key)
    for name in ("file_bm25", "line-sets-16", "literals-12-n40", "deftable", "included-1"):
        old._store(old.path(name), b"not a piece of this layout")
    _edit(root, "body")
    ctxfast.Repository(root).index()
    _assert_as_cold(root, tmp_path / "cold")


def test_a_forged_old_piece_is_never_carried(tmp_path):
    """Bytes written into the old state without the user's key fail the tag: the refresh
    builds that piece from the texts."""
    root = _write(tmp_path / "proj")
    repo = ctxfast.Repository(root)
    repo.index()
    state_dir = repo.index_dir / STATE_DIRNAME
    forged = next(p for p in state_dir.iterdir() if p.name.endswith(".file_bm25"))
    evil = BM25Index(["forged words only"]).to_bytes()
    forged.write_bytes(MAGIC + b"\0" * TAG_BYTES + evil)
    _edit(root, "body")
    ctxfast.Repository(root).index()
    _assert_as_cold(root, tmp_path / "cold")


def test_a_spliced_index_scores_as_one_built_over_the_new_documents():
    symbols = SymbolSet(["parse_header", "Body"])
    old_docs = ["parse_header line split", "class Body read", "gone words here", "tail"]
    new_docs = ["parse_header line split", "fresh Body words", "tail", "more parse words"]
    old = BM25Index(old_docs, symbols=symbols)
    spliced = old.spliced([0, None, 3, None], [new_docs[1], new_docs[3]], symbols=symbols)
    built = BM25Index(new_docs, symbols=symbols)
    for q in ["parse_header", "body words", "gone", "tail parse line"]:
        assert spliced.scores(q) == built.scores(q)
        assert spliced.query(q, 3) == built.query(q, 3)
    assert spliced.idf("gone") is None and spliced.vocab_size == built.vocab_size
    for keep, docs in [([7], []), ([0, 0], []), ([None], []), ([-1], []), ([True], [])]:
        with pytest.raises(InvalidArgumentError):
            old.spliced(keep, docs)


def test_spliced_line_sets_count_bundles_as_sets_made_anew():
    parts = ["".join(f"line number {i} of part {p} here\n" for i in range(30)) for p in "abc"]
    old = _native.LineSets([parts[0], parts[1], "small"])
    new_texts = [parts[0], parts[2], parts[0] + parts[2]]
    spliced = old.spliced([0, None, None], [parts[2], parts[0] + parts[2]])
    made = _native.LineSets(new_texts)
    assert spliced.to_bytes() == made.to_bytes()
    assert spliced.held_counts() == made.held_counts() == [0, 0, 2]
    with pytest.raises(InvalidArgumentError):
        _native.LineSets.from_bytes(made.to_bytes()[:-3])


def test_a_seeded_index_carries_its_siblings_state(tmp_path, caplog):
    """A new index seeded from a sibling tree's index carries that index's retrieval state
    (the same relative paths): every piece equals a cold build's of the new tree."""
    first = _write(tmp_path / "first")
    ctxfast.Repository(first).index()
    second = tmp_path / "second"
    shutil.copytree(first, second, ignore=shutil.ignore_patterns(".ctxfast"))
    _edit(second, "definitions")
    _edit(second, "add")
    with caplog.at_level("DEBUG", logger="ctxfast"):
        stats = ctxfast.Repository(second, seed=first / ".ctxfast").index()
    assert stats.seeded_from
    assert any("carrying the retrieval state" in r.getMessage() for r in caplog.records)
    _assert_as_cold(second, tmp_path / "cold")
    assert len(_pieces(first)) == len(_pieces(second))  # the sibling's own state is left as it was


def test_hostile_files_in_the_state_directory_are_never_carried(tmp_path):
    """Files planted in the state directory (a repository may ship its ``.ctxfast/``): names
    shaped like another state's pieces with no valid tag, links to a file outside, a
    directory, junk. None of it is read as a state to carry from."""
    root = _write(tmp_path / "proj")
    outside = tmp_path / "secret.txt"
    outside.write_text("not yours to read")
    ctxfast.Repository(root).index()
    state = root / ".ctxfast" / STATE_DIRNAME
    fake = "0123456789abcdef.v5."
    (state / f"{fake}rows").write_bytes(MAGIC + b"\0" * TAG_BYTES + b'[["pkg/header.py", "x"]]')
    (state / f"{fake}file_bm25").symlink_to(outside)
    (state / "zz.v5.").write_bytes(b"junk")
    (state / f"{'x' * 16}.v5.deftable").mkdir()
    (state / f"{'y' * 16}.v5.rows").symlink_to(outside)
    _edit(root, "body")
    ctxfast.Repository(root).index()
    _assert_as_cold(root, tmp_path / "cold", planted=True)


def test_row_documents_are_those_of_the_whole_table_and_bad_calls_are_errors(tmp_path):
    root = _write(tmp_path / "proj")
    repo = ctxfast.Repository(root)
    repo.index()
    table = repoindex.RepoIndex(root, repo.graph_db).table
    files = table.files()
    texts = [(root / f).read_text().rstrip("\n") for f in files]
    whole = table.definition_docs(texts, 60, 30, 200)
    rows = [len(whole) - 1, 0]
    assert table.row_docs(rows, files, texts, 60, 30, 200) == [whole[-1], whole[0]]
    with pytest.raises(InvalidArgumentError):
        table.row_docs([0], files, texts[:-1], 60, 30, 200)
    with pytest.raises(InvalidArgumentError):
        table.row_docs([len(whole)], files, texts, 60, 30, 200)
    assert table.carried_rows(table, files) == list(range(len(whole)))
