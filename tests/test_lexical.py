"""Lexical recall: literal matching, caps, walk rules, bad input, parity with the rg binary."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from ctxfast import _native
from ctxfast.errors import InvalidArgumentError
from ctxfast.retrieval.lexical import (
    DEFAULT_CORPUS_MAX_BYTES,
    DEFAULT_EXCLUDE_ANY_DEPTH,
    LANGUAGE_GLOBS,
    LexicalCorpus,
    LexicalResult,
    lexical_search,
)

RG = shutil.which("rg")
SPEC_EXCLUDES = ["vendor", "node_modules", "site-packages", "third_party", "external", "build"]


def _write(root: Path, rel: str, data: bytes | str) -> None:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(data.encode() if isinstance(data, str) else data)


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    _write(root, "pkg/store.py", "class MemStore:\n    def remember(self, text):\n        pass\n")
    _write(root, "pkg/util.py", "from pkg.store import MemStore\nx = MemStore()\n# $(rm -rf /)\n")
    _write(root, "app/main.js", "const s = new MemStore();\n")
    _write(root, "docs/readme.md", "MemStore docs\n")
    _write(root, "weird.py", "pattern = '(a|b)*[x]'\nprint(\"KeyError: 'kind'\")\n")
    for d in SPEC_EXCLUDES:
        _write(root, f"{d}/vendored.py", "MemStore = None\n")
    _write(root, "ignored/gen.py", "MemStore = 1\n")
    _write(root, ".gitignore", "ignored/\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def test_defaults_are_the_spec_values():
    # The indexer's list (one native definition); `.ctxfast` is hidden, so the walk's
    # hidden-file rule skips it as well.
    assert tuple(_native.vendored_dirs()) == DEFAULT_EXCLUDE_ANY_DEPTH
    spec = {"vendor", "node_modules", "site-packages", "third_party", "external", ".git"}
    assert set(DEFAULT_EXCLUDE_ANY_DEPTH) == spec | {".ctxfast"}
    assert LANGUAGE_GLOBS["python"] == ("*.py", "*.pyi")


def test_hits_are_sorted_literal_and_language_scoped(repo: Path):
    res = lexical_search(repo, ["MemStore", "(a|b)*[x]", "KeyError: 'kind'", "$(rm -rf /)"])
    mem = [(h.path, h.line) for h in res.by_term["MemStore"].hits]
    assert mem == [("app/main.js", 1), ("pkg/store.py", 1), ("pkg/util.py", 1), ("pkg/util.py", 2)]
    assert res.by_term["MemStore"].hits[0].text == "const s = new MemStore();"
    assert [h.path for h in res.by_term["(a|b)*[x]"].hits] == ["weird.py"]
    assert [h.line for h in res.by_term["KeyError: 'kind'"].hits] == [2]
    assert [h.path for h in res.by_term["$(rm -rf /)"].hits] == ["pkg/util.py"]
    py_only = lexical_search(repo, ["MemStore"], languages=["python"])
    assert {h.path for h in py_only.hits} == {"pkg/store.py", "pkg/util.py"}
    assert not py_only.truncated


def test_nested_vendored_dirs_are_skipped_but_nested_build_is_searched(tmp_path: Path):
    _write(tmp_path, "a/node_modules/x.py", "needle\n")
    _write(tmp_path, "a/vendor/x.py", "needle\n")
    _write(tmp_path, "a/build/x.py", "needle\n")
    _write(tmp_path, "build/x.py", "needle\n")
    res = lexical_search(tmp_path, ["needle"])
    assert [h.path for h in res.hits] == ["a/build/x.py"]
    res = lexical_search(tmp_path, ["needle"], exclude_any_depth=[], exclude_root=[])
    assert len(res.hits) == 4


def test_cap_and_truncation(tmp_path: Path):
    for name in ("b.py", "a.py"):
        _write(tmp_path, name, "".join(f"tok line {i}\n" for i in range(30)))
    res = lexical_search(tmp_path, ["tok", "line 2"])  # the default cap: 40 per term
    tok = res.by_term["tok"]
    assert tok.truncated and len(tok.hits) == 40
    assert (tok.hits[29].path, tok.hits[29].line, tok.hits[30].path) == ("a.py", 30, "b.py")
    assert not res.by_term["line 2"].truncated
    assert len(res.by_term["line 2"].hits) == 22
    exactly = lexical_search(tmp_path, ["tok"], max_hits=60)
    assert len(exactly.by_term["tok"].hits) == 60 and not exactly.by_term["tok"].truncated


def test_binary_non_utf8_and_long_lines(tmp_path: Path):
    _write(tmp_path, "bin.py", b"needle\x00\xff\xfe needle\n")
    _write(tmp_path, "latin1.py", b"# caf\xe9 needle\n")
    _write(tmp_path, "long.py", "needle " + "x" * 10_000 + "\n")
    res = lexical_search(tmp_path, ["needle"], max_line_chars=20)
    by_path = {h.path: h.text for h in res.hits}
    assert set(by_path) == {"latin1.py", "long.py"}
    assert by_path["latin1.py"] == "# caf\ufffd needle"
    assert len(by_path["long.py"]) == 20


def test_bad_input(tmp_path: Path):
    _write(tmp_path, "a.py", "x\n")
    with pytest.raises(InvalidArgumentError):
        lexical_search(tmp_path / "missing", ["x"])
    with pytest.raises(InvalidArgumentError):
        lexical_search(tmp_path / "a.py", ["x"])
    with pytest.raises(InvalidArgumentError):
        lexical_search(tmp_path, ["x"], languages=["cobol"])
    with pytest.raises(InvalidArgumentError):
        lexical_search(tmp_path, ["x"], max_hits=-1)
    res = lexical_search(tmp_path, ["", "a\nb", "x", "x", "nothing"], languages=["cobol", "python"])
    assert res.unknown_languages == ("cobol",)
    assert set(res.skipped_terms) == {"", "a\nb"}
    assert list(res.by_term) == ["x", "nothing"]
    assert res.by_term["nothing"].hits == ()
    assert res.files_searched == 1
    assert lexical_search(tmp_path, []).hits == []


def _rg_spec(term: str, root: Path, glob: str, sort: bool = False) -> list[tuple[str, int]]:
    """The spec's exact invocation (plus ``--sort path`` when asked, to make ``head``
    deterministic), parsed into (relative path, line)."""
    assert RG is not None
    cmd = [RG, "--no-heading", "--line-number", "--color", "never", "-F", term, str(root)]
    for d in ("vendor", "node_modules", "site-packages", "third_party", "external", "build"):
        cmd += ["--glob", f"!{d}/**"]
    cmd += ["--glob", "!.git/**", "-g", glob]
    if sort:
        cmd += ["--sort", "path"]
    out = subprocess.run(cmd, capture_output=True, check=False).stdout.decode("utf-8", "replace")
    hits = []
    for line in out.splitlines()[:40]:
        path, lineno, _ = line.split(":", 2)
        hits.append((Path(path).relative_to(root).as_posix(), int(lineno)))
    return hits


def _vendored(path: str) -> bool:
    parts = path.split("/")
    return parts[0] == "build" or any(p in DEFAULT_EXCLUDE_ANY_DEPTH for p in parts[:-1])


@pytest.mark.skipif(RG is None, reason="the rg binary is not installed (apt-get install ripgrep)")
def test_same_hits_as_the_spec_rg_invocation(repo: Path):
    """Same (path, line) hits as the spec's exact rg command, except in vendored directories.

    The spec's ``--glob '!vendor/**'`` globs exclude nothing when rg is given the repository
    as an absolute path (rg matches them against the full path, and the later ``-g '*.py'``
    whitelists the file anyway), so the literal command *does* search ``vendor/`` etc.; this
    module prunes them as the spec intends. That difference is asserted too, so a change in
    either behaviour is noticed."""
    for i in range(60):
        _write(repo, f"many/m{i:02d}.py", f"many_term = {i}\n")
    terms = ["MemStore", "(a|b)*[x]", "KeyError: 'kind'", "$(rm -rf /)", "absent", "many_term"]
    res = lexical_search(repo, terms, languages=["python"])
    for term in terms:
        want = _rg_spec(term, repo, "*.py", sort=term == "many_term")
        if term != "many_term":
            want = sorted(want)
        got = [(h.path, h.line) for h in res.by_term[term].hits]
        assert got == [w for w in want if not _vendored(w[0])], term
    assert res.by_term["many_term"].truncated
    rg_mem = {p for p, _ in _rg_spec("MemStore", repo, "*.py")}
    assert "vendor/vendored.py" in rg_mem and "ignored/gen.py" not in rg_mem


def _answer(res: LexicalResult) -> tuple:  # type: ignore[type-arg]
    return (
        [(t, th.hits, th.truncated) for t, th in res.by_term.items()],
        res.skipped_terms,
        res.unknown_languages,
        res.files_searched,
        res.unreadable,
    )


def test_corpus_answers_exactly_as_the_walk(repo: Path):
    """The in-memory corpus is a pure speedup: the same answer as ``lexical_search`` for every
    term set, language scope and cap, with files held in memory or (past the budget) on disk;
    and it is a snapshot — an edit after loading is not seen, a reloaded corpus sees it."""
    for i in range(60):
        _write(repo, f"many/m{i:02d}.py", f"many_term = {i}\nMemStore.remember()\n")
    _write(repo, "bin/blob.py", b"MemStore\x00binary\n")
    _write(repo, "latin.py", b"caf\xe9 = MemStore\n")
    term_sets = [
        ["MemStore", "(a|b)*[x]", "KeyError: 'kind'", "$(rm -rf /)", "absent", "many_term"],
        ["", "a\nb", "remember", "remember", "many_term = 5"],
        [],
    ]
    for langs in (None, ["python"], ["cobol", "javascript"]):
        for budget in (DEFAULT_CORPUS_MAX_BYTES, 200, 0):
            corpus = LexicalCorpus(repo, langs, max_bytes=budget)
            assert corpus.bytes_loaded <= budget
            for terms in term_sets:
                for max_hits, chars in ((40, 500), (3, 5), (0, 500)):
                    want = lexical_search(
                        repo, terms, languages=langs, max_hits=max_hits, max_line_chars=chars
                    )
                    got = corpus.search(terms, max_hits=max_hits, max_line_chars=chars)
                    assert _answer(got) == _answer(want), (langs, budget, terms, max_hits)
    corpus = LexicalCorpus(repo, ["python"])
    assert corpus.num_files == lexical_search(repo, ["x"], languages=["python"]).files_searched
    _write(repo, "pkg/store.py", "class Renamed:\n    pass\n")
    stale = corpus.search(["MemStore", "Renamed"], max_hits=500)
    assert "pkg/store.py" in {h.path for h in stale.by_term["MemStore"].hits}
    assert stale.by_term["Renamed"].hits == ()
    fresh = LexicalCorpus(repo, ["python"]).search(["Renamed"])
    assert [(h.path, h.line) for h in fresh.by_term["Renamed"].hits] == [("pkg/store.py", 1)]


def test_corpus_bad_input(tmp_path: Path):
    with pytest.raises(InvalidArgumentError):
        LexicalCorpus(tmp_path / "missing")
    with pytest.raises(InvalidArgumentError):
        LexicalCorpus(tmp_path, ["cobol"])
    with pytest.raises(InvalidArgumentError):
        LexicalCorpus(tmp_path, max_bytes=-1)
    corpus = LexicalCorpus(tmp_path)
    with pytest.raises(InvalidArgumentError):
        corpus.search(["x"], max_hits=-1)
    with pytest.raises(InvalidArgumentError):
        corpus.search([b"x"])  # type: ignore[list-item]
    assert corpus.search(["x"]).files_searched == 0
