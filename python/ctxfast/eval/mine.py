"""Mine bug-fix commits of git mirrors into benchmark tasks (the format of shared/bench/).

usage: ctxfast eval mine --mirror-root DIR (--repo OWNER/NAME:LANG ... | --dev-set)
       --out OUT.jsonl [--per-repo N] [--split dev|train] [--max-changed-lines N]

One task per selected commit: ``base_commit`` is its parent, ``problem_statement`` the commit
subject and body with file paths, issue/PR numbers, trailers and the verbatim names of the
changed functions removed (each removal is listed in ``stripped``), ``gold_files`` the modified
non-test source files (1 to 3), ``gold_hunks`` the diff hunks at the parent's line numbers and
``gold_symbols`` the innermost definition around each changed line, found by ctxfast's own
parser on the parent's version of each gold file (``status`` says so).

Why a commit and not an issue: commit history is the only source of (task, gold) pairs that
exists for every repository, so the same miner serves the multi-language dev set and a training
corpus. Selection is deterministic: every commit that passes the filters is ordered by
sha256(repo:commit) and the first ``--per-repo`` are kept, so the set does not lean on recent
history and the same mirrors give the same set. The dev-set repositories, the twelve SWE-bench
repositories and the four held-out ones are kept apart here (``--split``), so a training corpus
mined with this script can never overlap what it is measured on.

Mirrors are bare git directories ``DIR/OWNER+NAME/repo`` (what the search tool's ``fetch``
brings). Trees at ``base_commit`` are written by shared/bench/materialize.py; benches/README.md
has the commands that built the dev set.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from ctxfast.eval.errors import EvalError
from ctxfast.eval.gold_functions import definitions_of, innermost

#: The repositories reserved for evaluation (SWE-bench's twelve, the held-out sets): never
#: mined, never trained or tuned on. The list ships with the package (``reserved_repos.txt``,
#: a copy of the benchmark's own file) so the miner and the trainer read one list.
RESERVED_REPOS = frozenset(
    line.strip()
    for line in resources.files("ctxfast.eval")
    .joinpath("reserved_repos.txt")
    .read_text(encoding="utf-8")
    .splitlines()
    if line.strip() and not line.lstrip().startswith("#")
)
#: The multi-language dev set (benches/README.md); a training corpus must not use them.
DEV_REPOS = {
    "junegunn/fzf": "go",
    "labstack/echo": "go",
    "typeorm/typeorm": "typescript",
    "vitejs/vite": "typescript",
    "sharkdp/bat": "rust",
    "sharkdp/fd": "rust",
    "jhy/jsoup": "java",
    "apache/commons-lang": "java",
}

#: Extensions of the languages ctxfast's graph parses (rust/ctxfast-core/src/graph/lang).
SOURCE_EXTENSIONS = (
    ".py",
    ".pyi",
    ".js",
    ".jsx",
    ".mjs",
    ".cjs",
    ".ts",
    ".mts",
    ".cts",
    ".tsx",
    ".go",
    ".rs",
    ".java",
    ".php",
    ".rb",
)
#: Folders whose files are not the product's source even when they are code.
NON_SOURCE_DIRS = (
    "docs",
    "doc",
    "examples",
    "example",
    "playground",
    "bench",
    "benches",
    "benchmark",
    "benchmarks",
    "fixtures",
    "testdata",
    "test-data",
    "tests",
    "test",
    "__tests__",
    "e2e",
    "scripts",
    "vendor",
    "node_modules",
)

_FIX = re.compile(
    r"\b(fix(e[sd])?|bug(fix)?|crash(es|ed)?|panic(s|ked)?|regression|incorrect(ly)?|wrong|"
    r"broken|mistaken(ly)?|fail(s|ed|ure)?|doesn'?t|does not|not work(ing)?|prevent|avoid)\b",
    re.IGNORECASE,
)
_NOT_A_CODE_FIX = re.compile(
    r"\b(typos?|docs?|documentation|readme|changelog|spelling|lint(er|ing)?|clippy|"
    r"fmt|formatting|rustfmt|prettier|eslint|ci|workflow|bump|deps|dependencies|dependabot|renovate|release|"
    r"revert|merge|chore|tests?|flaky|build|license|copyright|javadoc|deprecat\w*)\b",
    re.IGNORECASE,
)
_BOT_AUTHOR = re.compile(r"\[bot\]|dependabot|renovate|github-actions", re.IGNORECASE)
_TRAILER = re.compile(r"^\s*[A-Za-z][A-Za-z-]+:\s+\S.*$")
_ISSUE_REF = re.compile(r"\(?(?:[\w.-]+/[\w.-]+)?#\d+\)?|\bGH-\d+\b")
_URL = re.compile(r"https?://\S+")
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
#: A task keeps at least this many words once the answer is stripped from it.
MIN_WORDS = 3
DEFAULT_PER_REPO = 25
#: Larger fixes are refactors more than localizable bug fixes.
DEFAULT_MAX_CHANGED_LINES = 150


def is_test_or_aux(path: str) -> bool:
    """Tests, fixtures, docs, examples and benchmarks: changed with a fix but never its gold."""
    from ctxfast.text import is_test_path

    return is_test_path(path) or any(p in NON_SOURCE_DIRS for p in path.split("/")[:-1])


def is_source(path: str) -> bool:
    return path.endswith(SOURCE_EXTENSIONS) and not path.endswith(".d.ts")


def is_bug_fix(subject: str) -> bool:
    """A fix of the product's code, by its subject line (conventional ``fix(x):`` included)."""
    head = subject.split(":", 1)[0] if ":" in subject[:30] else ""
    if re.search(r"\b(deps|ci|docs|test|tests|build|chore)\b", head, re.IGNORECASE):
        return False
    return bool(_FIX.search(subject)) and not _NOT_A_CODE_FIX.search(subject)


def git(mirror: Path, *args: str, check: bool = True) -> str:
    out = subprocess.run(
        ["git", "-C", str(mirror), *args], capture_output=True, text=True, errors="replace"
    )
    if check and out.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)}: {out.stderr.strip()[-300:]}")
    return out.stdout


@dataclass(frozen=True)
class Commit:
    sha: str
    parent: str
    author: str
    date: str
    subject: str
    body: str


def commits(mirror: Path) -> Iterator[Commit]:
    """Non-merge commits with exactly one parent, on the default branch's first-parent line."""
    fmt = "%H%x00%P%x00%an <%ae>%x00%cI%x00%s%x00%b%x1e"
    log = git(mirror, "log", "--first-parent", "--no-merges", f"--format={fmt}", "HEAD")
    for rec in log.split("\x1e"):
        fields = rec.strip("\n").split("\x00")
        if len(fields) != 6:
            continue
        sha, parents, author, date, subject, body = fields
        if len(parents.split()) != 1:
            continue
        yield Commit(sha, parents, author, date, subject.strip(), body.strip())


def changed_files(mirror: Path, c: Commit) -> list[tuple[str, str]]:
    """``(status letter, path)`` of every file the commit changes (renames split in two)."""
    out = git(mirror, "diff", "--name-status", "--no-renames", c.parent, c.sha)
    rows = []
    for line in out.splitlines():
        status, _, path = line.partition("\t")
        rows.append((status[:1], path))
    return rows


def hunks(mirror: Path, c: Commit, path: str) -> list[dict[str, Any]]:
    """Diff hunks of ``path`` at the parent's lines, in the gold_hunks form of shared/bench/.

    A hunk of pure insertion is recorded as ``[line before, line after]`` (``insert``); with
    ``-U0`` every hunk is one block, which is what the gold needs.
    """
    out = git(mirror, "diff", "-U0", "--no-renames", c.parent, c.sha, "--", path)
    found = []
    for line in out.splitlines():
        m = _HUNK.match(line)
        if not m:
            continue
        start = int(m.group(1))
        count = 1 if m.group(2) is None else int(m.group(2))
        header = line.split("@@", 2)[-1].strip()
        if count == 0:
            block = [start, start + 1, "insert"]
            lo, hi = start, start + 1
        else:
            plus = 1 if m.group(4) is None else int(m.group(4))
            kind = "delete" if plus == 0 else "change"
            block = [start, start + count - 1, kind]
            lo, hi = start, start + count - 1
        found.append(
            {
                "file": path,
                "start": lo,
                "end": hi,
                "blocks": [block],
                "header_hint": header,
                "line_source": "base_commit",
                "symbols": None,
            }
        )
    return found


def changed_line_count(mirror: Path, c: Commit, paths: list[str]) -> int:
    out = git(mirror, "diff", "--numstat", "--no-renames", c.parent, c.sha, "--", *paths)
    total = 0
    for line in out.splitlines():
        added, deleted, _ = line.split("\t", 2)
        total += int(added) + int(deleted) if added.isdigit() and deleted.isdigit() else 10**6
    return total


def definitions_at_parent(mirror: Path, c: Commit, files: list[str]) -> dict[str, list[Any]]:
    """Definitions of each gold file at the parent, from ctxfast's parser
    (:func:`~ctxfast.eval.gold_functions.definitions_of`)."""
    shown = {
        f: subprocess.run(
            ["git", "-C", str(mirror), "show", f"{c.parent}:{f}"], capture_output=True, check=True
        ).stdout
        for f in files
    }
    return definitions_of(shown)


def gold_symbols(
    defs: dict[str, list[Any]], gold_hunks: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The innermost definition around each changed line (``<module>`` outside all of them)."""
    seen: dict[tuple[str, str], dict[str, Any]] = {}
    for h in gold_hunks:
        f = h["file"]
        lo, hi, kind = h["blocks"][0]
        lines = [lo, hi] if kind == "insert" else list(range(lo, hi + 1))
        names = []
        for line in lines:
            found = innermost(defs.get(f, []), line, lo, hi, kind == "insert")
            if found is not None:
                n, q = found
                key, sym_kind = (f, q), n.kind
            else:
                key, sym_kind = (f, "<module>"), "module"
            names.append(key[1])
            seen.setdefault(
                key,
                {
                    "file": f,
                    "qualname": key[1],
                    "symbol": key[1],
                    "kind": sym_kind,
                    "status": "ctxfast_parser_at_base_commit",
                },
            )
        h["symbols"] = list(dict.fromkeys(names))
    return list(seen.values())


def strip_message(text: str, paths: list[str], function_names: list[str]) -> tuple[str, list[str]]:
    """The message without what would hand the answer over, and the list of what was removed.

    Removed: trailer lines (``Signed-off-by:`` ...), URLs, issue/PR numbers, every changed
    file's path and file name, and each changed function's name where it appears verbatim as a
    word (case-sensitive; ``Type.name``/``Type::name`` spellings go with it).
    """
    stripped: list[str] = []
    lines = []
    for line in text.splitlines():
        if _TRAILER.match(line) and (
            "@" in line or "by:" in line.lower() or line.lower().startswith("git-svn-id")
        ):
            stripped.append(line.strip())
            continue
        lines.append(line)
    out = "\n".join(lines)

    def cut(pattern: str, flags: int = 0) -> None:
        nonlocal out
        for m in re.finditer(pattern, out, flags):
            stripped.append(m.group(0))
        out = re.sub(pattern, "", out, flags=flags)

    cut(_URL.pattern)
    cut(_ISSUE_REF.pattern)
    names: list[str] = []
    for p in paths:
        names += [p, p.rsplit(".", 1)[0], p.rsplit("/", 1)[-1]]
    for n in sorted(set(names), key=len, reverse=True):
        if "/" in n or "." in n:
            cut(r"(?<![\w/.-])" + re.escape(n) + r"(?![\w-])")
    for fn in sorted(set(function_names), key=len, reverse=True):
        if len(fn) >= 3:
            cut(r"(?<![\w$])(?:[\w$]+(?:\.|::|#))*" + re.escape(fn) + r"(?:\(\))?(?![\w$])")
    out = re.sub(r"`\s*(\(\))?\s*`", "", out)
    out = re.sub(r"[ \t]+", " ", out)
    out = re.sub(r" +([.,;:)])", r"\1", out)
    out = re.sub(r"\n{3,}", "\n\n", out).strip()
    return out, stripped


def task(mirror: Path, repo: str, lang: str, c: Commit, max_lines: int) -> dict[str, Any] | None:
    """The benchmark record of one commit, or None when it does not make a localizable task."""
    if _BOT_AUTHOR.search(c.author) or not is_bug_fix(c.subject):
        return None
    rows = changed_files(mirror, c)
    source = [(s, p) for s, p in rows if is_source(p) and not is_test_or_aux(p)]
    gold = [p for s, p in source if s == "M"]
    if not 1 <= len(gold) <= 3:
        return None
    if changed_line_count(mirror, c, gold) > max_lines:
        return None
    gold_hunks = [h for f in gold for h in hunks(mirror, c, f)]
    if not gold_hunks:
        return None
    defs = definitions_at_parent(mirror, c, gold)
    symbols = gold_symbols(defs, gold_hunks)
    fn_names = [q.rsplit(".", 1)[-1] for s in symbols if (q := s["qualname"]) and q != "<module>"]
    fn_names += [s["qualname"] for s in symbols if "." in s["qualname"]]
    message = c.subject + ("\n\n" + c.body if c.body else "")
    text, stripped = strip_message(message, [p for _, p in rows], fn_names)
    if len(re.findall(r"[A-Za-z]{2,}", text)) < MIN_WORDS:
        return None
    owner, name = repo.split("/")
    return {
        "instance_id": f"{owner}__{name}-{c.sha[:10]}",
        "repo": repo,
        "language": lang,
        "base_commit": c.parent,
        "commit": c.sha,
        "version": "",
        "created_at": c.date,
        "problem_statement": text,
        "hints_text": "",
        "stripped": stripped,
        "gold_files": gold,
        "gold_hunks": gold_hunks,
        "gold_symbols": symbols,
        "patch_files_excluded": [p for s, p in rows if p not in gold and (s, p) not in source],
        "patch_files_added": [p for s, p in source if s != "M"],
        "gold_notes": [],
        "symbols_source": "ctxfast_parser_at_base_commit",
    }


def selection_key(repo: str, sha: str) -> str:
    return hashlib.sha256(f"{repo}:{sha}".encode()).hexdigest()


def mine(
    mirror_root: Path, repo: str, lang: str, per_repo: int, max_lines: int
) -> list[dict[str, Any]]:
    mirror = mirror_root / repo.replace("/", "+") / "repo"
    if not mirror.is_dir():
        raise EvalError(f"no mirror of {repo} at {mirror}")
    ordered = sorted(commits(mirror), key=lambda c: selection_key(repo, c.sha))
    out: list[dict[str, Any]] = []
    for c in ordered:
        if len(out) >= per_repo:
            break
        rec = task(mirror, repo, lang, c, max_lines)
        if rec is not None:
            out.append(rec)
    return out


def check_split(repo: str, split: str) -> None:
    if repo in RESERVED_REPOS:
        raise EvalError(f"{repo} is reserved for evaluation: never mined or trained on")
    if split == "train" and repo in DEV_REPOS:
        raise EvalError(f"{repo} belongs to the multi-language dev set: not training data")


def register(esub: Any) -> None:
    """Add ``ctxfast eval mine`` to the eval subcommands."""
    ap = esub.add_parser("mine", help="mine bug-fix commits of git mirrors into a benchmark")
    ap.add_argument("--mirror-root", required=True, type=Path, help="holds OWNER+NAME/repo")
    ap.add_argument("--repo", action="append", default=[], help="OWNER/NAME:LANG (repeatable)")
    ap.add_argument("--dev-set", action="store_true", help="mine every repository of DEV_REPOS")
    ap.add_argument("--out", required=True, type=Path, help="JSONL file to write")
    ap.add_argument(
        "--per-repo", type=int, default=DEFAULT_PER_REPO, help="tasks kept per repository"
    )
    ap.add_argument(
        "--max-changed-lines",
        type=int,
        default=DEFAULT_MAX_CHANGED_LINES,
        help="skip commits changing more lines",
    )
    ap.add_argument(
        "--split",
        choices=["dev", "train"],
        default="dev",
        help="train also refuses the dev-set repositories",
    )
    ap.set_defaults(func=run)


def run(a: argparse.Namespace) -> int:
    targets = [tuple(r.split(":", 1)) for r in a.repo]
    if a.dev_set:
        targets += list(DEV_REPOS.items())
    if not targets or any(len(t) != 2 for t in targets):
        raise EvalError("give --repo OWNER/NAME:LANG (repeatable) or --dev-set")
    for repo, _ in targets:
        check_split(repo, a.split)
    rows: list[dict[str, Any]] = []
    for repo, lang in targets:
        got = mine(a.mirror_root, repo, lang, a.per_repo, a.max_changed_lines)
        print(f"{repo}: {len(got)} tasks", file=sys.stderr)
        rows += got
    a.out.parent.mkdir(parents=True, exist_ok=True)
    with a.out.open("w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r) + "\n")
    return 0
