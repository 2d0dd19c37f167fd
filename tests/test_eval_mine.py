"""The commit miner on a real git repository built here: selection, gold, stripping, splits."""

import json
import subprocess

import pytest

from ctxfast.cli import main
from ctxfast.eval.instances import gold_file_globs, load_bench
from ctxfast.eval.mine import is_bug_fix, is_test_or_aux, strip_message

GO_V1 = """package shop

type Cart struct {
\titems []int
}

func (c *Cart) Total() int {
\tsum := 0
\tfor _, v := range c.items {
\t\tsum += v
\t}
\treturn sum
}

func helper() int {
\treturn 1
}
"""

GO_V2 = GO_V1.replace("sum := 0", "sum := helper() - 1")


def _git(repo, *args):
    subprocess.run(
        ["git", "-C", str(repo), *args],
        check=True,
        capture_output=True,
        env={
            "GIT_AUTHOR_NAME": "Dev",
            "GIT_AUTHOR_EMAIL": "dev@example.com",
            "GIT_COMMITTER_NAME": "Dev",
            "GIT_COMMITTER_EMAIL": "dev@example.com",
            "GIT_AUTHOR_DATE": "2020-01-01T00:00:00Z",
            "GIT_COMMITTER_DATE": "2020-01-01T00:00:00Z",
            "PATH": "/usr/bin:/bin",
        },
    )


def _commit(work, files, message):
    for path, text in files.items():
        dest = work / path
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(text)
    _git(work, "add", "-A")
    _git(work, "commit", "-q", "-m", message)


@pytest.fixture
def mirrors(tmp_path):
    """``MIRROR/acme+shop/repo``: a bare clone with one fix, one docs change, one test fix."""
    work = tmp_path / "work"
    work.mkdir()
    _git(work, "init", "-q", "-b", "main")
    _commit(work, {"cart.go": GO_V1, "README.md": "shop\n"}, "initial import")
    _commit(work, {"README.md": "shop, fixed typo\n"}, "Fix typo in docs")
    _commit(work, {"cart_test.go": "package shop\n"}, "Fix flaky test")
    _commit(
        work,
        {"cart.go": GO_V2, "cart_test.go": "package shop\n// more\n"},
        "Fix wrong sum in Total for empty carts (#42)\n\n"
        "Cart.Total started from zero; see cart.go.\n\nSigned-off-by: Dev <dev@example.com>",
    )
    root = tmp_path / "mirrors"
    subprocess.run(
        ["git", "clone", "-q", "--bare", str(work), str(root / "acme+shop" / "repo")], check=True
    )
    return root


def _mine(tmp_path, mirrors, *extra):
    out = tmp_path / "set.jsonl"
    rc = main(["eval", "mine", "--mirror-root", str(mirrors), "--repo", "acme/shop:go", "--out",
               str(out), *extra])  # fmt: skip
    assert rc == 0
    return [json.loads(line) for line in out.read_text().splitlines()]


def test_mines_the_fix_with_gold_at_the_parent(tmp_path, mirrors):
    rows = _mine(tmp_path, mirrors)
    assert len(rows) == 1  # the docs typo and the test-only fix are not tasks
    r = rows[0]
    parent = subprocess.run(
        ["git", "-C", str(mirrors / "acme+shop" / "repo"), "rev-parse", f"{r['commit']}^"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert r["base_commit"] == parent
    assert r["language"] == "go"
    assert r["gold_files"] == ["cart.go"]  # the test file changed too, but is never gold
    assert "cart_test.go" in r["patch_files_excluded"]
    assert r["gold_hunks"] == [
        {
            "file": "cart.go",
            "start": 8,
            "end": 8,
            "blocks": [[8, 8, "change"]],
            "header_hint": "func (c *Cart) Total() int {",
            "line_source": "base_commit",
            "symbols": [r["gold_symbols"][0]["qualname"]],
        }
    ]
    assert [s["qualname"].rsplit(".", 1)[-1] for s in r["gold_symbols"]] == ["Total"]
    # File path, the changed method's name (also as Cart.Total), PR number and trailer gone.
    text = r["problem_statement"]
    assert "Total" not in text and "cart.go" not in text and "#42" not in text
    assert "Signed-off-by" not in text
    assert text.startswith("Fix wrong sum in for empty carts")
    assert {"cart.go", "(#42)", "Cart.Total"} <= set(r["stripped"])
    # The record loads as a benchmark instance and names its language's files for BM25.
    insts = load_bench(tmp_path / "set.jsonl")
    assert insts[0].language == "go" and gold_file_globs(insts) == ("*.go",)


def test_selection_is_deterministic(tmp_path, mirrors):
    assert _mine(tmp_path, mirrors) == _mine(tmp_path, mirrors)


@pytest.mark.parametrize(
    ("repo", "extra", "why"),
    [
        ("google/gson:java", [], "reserved"),
        ("django/django:python", [], "reserved"),
        ("apache/dubbo:java", [], "reserved"),  # a later line of the reserved list
        ("sharkdp/fd:rust", ["--split", "train"], "dev set"),
    ],
)
def test_reserved_and_dev_repositories_are_refused(tmp_path, mirrors, capsys, repo, extra, why):
    out = tmp_path / "x.jsonl"
    argv = ["eval", "mine", "--mirror-root", str(mirrors), "--repo", repo, "--out", str(out)]
    assert main([*argv, *extra]) != 0
    assert why in capsys.readouterr().err and not out.exists()


def test_fix_heuristics_and_test_paths():
    assert is_bug_fix("fix(ssr): crash on empty module")
    assert is_bug_fix("Fix panic when the walker is given no value")
    assert not is_bug_fix("fix(deps): update rollup")
    assert not is_bug_fix("docs: fix broken link")
    assert not is_bug_fix("Add a new flag")
    for test in ("src/a.spec.ts", "pkg/__tests__/x.ts", "src/test/java/FooTest.java", "x_test.go"):
        assert is_test_or_aux(test)
    for aux in ("docs/conf.py", "playground/app/main.ts", "benches/walk.rs"):
        assert is_test_or_aux(aux)
    assert not is_test_or_aux("packages/vite/src/node/server/index.ts")


def test_strip_message_keeps_english_words_and_short_names():
    text, gone = strip_message("Fix parse of `Parser::parse()` when new is empty", [], ["parse"])
    assert text == "Fix of when new is empty"
    assert gone == ["parse", "Parser::parse()"]


def test_packaged_reserved_list_is_the_benchmarks_file():
    """The miner's list is a copy of the benchmark's ``reserved_repos.txt``: every repository
    there is refused, comments and blank lines are not repositories."""
    from ctxfast.eval.mine import RESERVED_REPOS

    assert {"django/django", "gin-gonic/gin", "astral-sh/ruff"} <= RESERVED_REPOS
    assert not any(r.startswith("#") or not r for r in RESERVED_REPOS)
