"""The six deterministic reconnaissance questions, answered from the artifacts.

Each answer carries ``file:line`` evidence so the battery can be graded against pointers, with
no model: Q1 tests (manifest), Q2 defining module (name_index), Q3 callers (invoke edges), Q4
build command (runners), Q5 database config (config evidence), Q6 k=1 impact set (ego-graph).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ctxfast.confine import decode, read_confined
from ctxfast.errors import InvalidArgumentError
from ctxfast.recon.ego import build_ego_graph, resolve_entity
from ctxfast.recon.graph import CodeGraph
from ctxfast.text import CONFIG_SUFFIXES, is_test_path

QUESTIONS = {
    "Q1": "where are the tests for {subject}?",
    "Q2": "what module defines {subject}?",
    "Q3": "what calls {subject}?",
    "Q4": "what command builds this?",
    "Q5": "which config selects the database?",
    "Q6": "which files does changing API {subject} plausibly affect?",
}
DATABASE_KEYS = (
    "DATABASE_URL",
    "DATABASES",
    "SQLALCHEMY_DATABASE_URI",
    "DB_URL",
    "DB_HOST",
    "DB_NAME",
    "database_url",
    "db_url",
    "database",
)


@dataclass(frozen=True)
class Answer:
    """``answer`` is a command/module string or a sorted list; ``evidence`` are ``file:line``."""

    question_id: str
    question: str
    subject: str | None
    answer: Any
    evidence: list[str] = field(default_factory=list)


def answer_question(
    graph: CodeGraph,
    manifest: Mapping[str, Any],
    root: Any,
    question_id: str,
    subject: str | None = None,
) -> Answer:
    qid = question_id.upper()
    if qid not in QUESTIONS:
        raise InvalidArgumentError(f"unknown question {question_id!r}; expected Q1..Q6")
    question = QUESTIONS[qid].format(subject=subject or "")
    if qid in ("Q2", "Q3", "Q6") and not subject:
        raise InvalidArgumentError(f"{qid} needs a subject symbol")
    if qid == "Q1":
        tests = manifest.get("tests") or []
        mirror = _test_files_for(graph, subject) if subject else []
        command = tests[0]["command"] if tests else None
        evidence = [t["evidence"] for t in tests if t.get("evidence")]
        return Answer(qid, question, subject, {"command": command, "test_files": mirror}, evidence)
    if qid == "Q2":
        node = resolve_entity(graph, subject or "")
        module = node.qualname.rsplit(".", 1)[0] if "." in node.qualname else node.qualname
        return Answer(
            qid,
            question,
            subject,
            {"module": module, "file": node.file},
            [f"{node.file}:{node.line}"],
        )
    if qid == "Q3":
        node = resolve_entity(graph, subject or "")
        sites = graph.callers(node.id)
        return Answer(
            qid,
            question,
            subject,
            sorted({s.qualname for s in sites}),
            sorted({f"{s.file}:{s.line}" for s in sites}),
        )
    if qid == "Q4":
        for runner in manifest.get("runners") or []:
            if runner.get("name") == "build":
                return Answer(qid, question, None, runner["command"], [runner["evidence"]])
        return Answer(qid, question, None, None, [])
    if qid == "Q5":
        return _database_config(graph, manifest, root, subject)
    ego = build_ego_graph(graph, subject or "")
    neighbours = [e for e in ego.edges if e.type in ("invoke", "import")]
    return Answer(
        qid,
        question,
        subject,
        sorted({e.target.file for e in neighbours}),
        sorted({f"{e.target.file}:{e.target.line}" for e in neighbours}),
    )


def _test_files_for(graph: CodeGraph, subject: str) -> list[str]:
    """Test files that reference the subject's definition (via invoke/import edges)."""
    try:
        node = resolve_entity(graph, subject)
    except InvalidArgumentError:
        return []
    files = {s.file for s in graph.callers(node.id)}
    for e in graph.edges_to(node.id, "import"):
        importer = graph.node(e.src)
        if importer is not None:
            files.add(importer.file)
    return sorted(f for f in files if is_test_path(f))


def _database_config(
    graph: CodeGraph, manifest: Mapping[str, Any], root: Any, subject: str | None
) -> Answer:
    """The first line that states a database configuration key: config files first, then
    definitions (e.g. Django's ``DATABASES`` setting)."""
    keys = (subject,) if subject else DATABASE_KEYS
    question = QUESTIONS["Q5"]
    from pathlib import Path

    base = Path(root)
    candidates = sorted(
        (
            p
            for p in base.rglob("*")
            if p.is_file()
            and not p.is_symlink()
            and (p.suffix in CONFIG_SUFFIXES or p.name in (".env", "settings.py"))
            and ".ctxfast" not in p.parts
            and ".git" not in p.parts
        ),
        key=lambda p: (p.suffix == ".py", str(p)),
    )
    patterns = [re.compile(rf"(?<![A-Za-z0-9_]){re.escape(k)}(?![A-Za-z0-9_])") for k in keys]
    for path in candidates[:500]:
        try:
            data = read_confined(base, path.relative_to(base), max_bytes=1_000_000)
            lines = decode(data).splitlines()
        except OSError:
            continue
        for i, line in enumerate(lines, 1):
            for key, rx in zip(keys, patterns, strict=True):
                if rx.search(line) and ("=" in line or ":" in line):
                    rel = path.relative_to(base).as_posix()
                    return Answer(
                        "Q5", question, subject, {"key": key, "file": rel}, [f"{rel}:{i}"]
                    )
    for key in keys:
        defs = [n for n in graph.lookup(key) if n.is_definition]
        if defs:
            return Answer(
                "Q5",
                question,
                subject,
                {"key": key, "file": defs[0].file},
                [f"{defs[0].file}:{defs[0].line}"],
            )
    return Answer("Q5", question, subject, None, [])
