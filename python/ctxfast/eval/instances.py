"""Benchmark JSONL loading, gold normalisation and reproducible sampling.

The benchmark format is ``shared/bench/swebench_lite_dev.jsonl``. Gold *lines* are only
trustworthy on trees at ``base_commit``; on PyPI release trees they are taken from
``sdist_alignment.jsonl`` (only hunks it marks ``located: true``), so a line-level metric never
scores a hunk whose text is not where the gold says.
"""

from __future__ import annotations

import fnmatch
import json
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxfast.eval.errors import EvalError

REQUIRED_FIELDS = ("instance_id", "repo", "problem_statement", "gold_files")


@dataclass(frozen=True)
class Region:
    """A 1-based inclusive line span of one file (POSIX path relative to the tree root)."""

    file: str
    start: int
    end: int

    def overlaps(self, file: str, start: int, end: int) -> bool:
        return self.file == file and start <= self.end and end >= self.start


@dataclass
class Instance:
    """One benchmark task with its gold, independent of where its tree comes from."""

    instance_id: str
    repo: str
    version: str
    problem_statement: str
    gold_files: list[str]
    gold_hunks: list[dict[str, Any]] = field(default_factory=list)
    gold_symbols: list[tuple[str, str]] = field(default_factory=list)
    raw: dict[str, Any] = field(default_factory=dict)
    #: ``(file, qualname, start_line, end_line)`` of each gold function whose span the record
    #: gives (the corpus's ``gold_functions``, named by tree-sitter by the corpus's own rules):
    #: a candidate is matched to it by span (``metrics.aligned_to_gold``), not by a qualname
    #: spelled the way ctxfast spells it.
    gold_spans: list[tuple[str, str, int, int]] = field(default_factory=list)

    @property
    def language(self) -> str:
        """The record's ``language``, else the language of its first gold file's extension
        (so the Python set reads as ``python`` without a field); ``unknown`` when neither."""
        given = self.raw.get("language")
        if given:
            return str(given)
        for f in self.gold_files:
            lang = language_of_path(f)
            if lang is not None:
                return lang
        return "unknown"

    @property
    def multi_file(self) -> bool:
        """The record's ``multi_file``, else more than one gold file: a fix spread over files
        is judged apart, since every one of its files must reach the window."""
        given = self.raw.get("multi_file")
        return bool(given) if given is not None else len(self.gold_files) > 1

    @property
    def source_key(self) -> str:
        """The ``repo@version`` key of ``sources.json``."""
        return f"{self.repo}@{self.version}"

    def hunk_regions(self, tree: Path | None = None) -> list[Region]:
        """Gold hunks at their ``base_commit`` lines (valid on base-commit trees only).

        With the ``tree`` at hand, a hunk is cut at its file's last line: an insertion after
        the last line names the line after it (``[last, last + 1]``), which no window can
        show, so a window showing the whole file would never count as covering it. For the
        same reason an insertion before the first line (``[0, 1]``) starts at line 1."""
        out = []
        for h in self.gold_hunks:
            start, end = hunk_span(h)
            start = max(start, 1)
            if tree is not None:
                last = line_count(tree / h["file"])
                if last is not None and end > last:
                    start, end = min(start, last), last
            out.append(Region(h["file"], start, end))
        return out


def hunk_span(hunk: dict[str, Any]) -> tuple[int, int]:
    """A gold hunk's 1-based inclusive lines: ``start``/``end`` (the Lite set and the miner)
    or ``start_line``/``end_line`` (the issue corpus), so both benchmarks load unchanged."""
    if "start" in hunk:
        return int(hunk["start"]), int(hunk["end"])
    try:
        return int(hunk["start_line"]), int(hunk["end_line"])
    except KeyError as exc:
        raise EvalError(f"gold hunk without start/end lines: {hunk.get('file')}") from exc


def line_count(path: Path) -> int | None:
    """Lines of a file as an editor numbers them (None when it cannot be read)."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    return len(data.splitlines())


def language_of_path(path: str) -> str | None:
    """Language of a file by the globs the lexical search uses (one home for that rule)."""
    from ctxfast.retrieval.lexical import LANGUAGE_GLOBS

    name = path.rsplit("/", 1)[-1]
    for lang, globs in LANGUAGE_GLOBS.items():
        if any(fnmatch.fnmatchcase(name, g) for g in globs):
            return lang
    return None


def gold_file_globs(instances: Iterable[Instance]) -> tuple[str, ...]:
    """The file globs of every language the instances' gold files are written in, sorted.

    A file-level baseline indexes exactly these: on the Python set that is ``*.py *.pyi``
    (its reference figures), on a TypeScript repository also the JavaScript it holds when a
    gold file is JavaScript.
    """
    from ctxfast.retrieval.lexical import LANGUAGE_GLOBS

    langs = {language_of_path(f) for i in instances for f in i.gold_files}
    globs = {g for lang in langs if lang for g in BASELINE_GLOBS.get(lang, LANGUAGE_GLOBS[lang])}
    return tuple(sorted(globs))


#: Where the baseline's files differ from the language's globs: Python's reference BM25
#: (shared/bench/README.md) indexes ``.py`` files only, no stubs.
BASELINE_GLOBS: dict[str, tuple[str, ...]] = {"python": ("*.py",)}


def _instance(rec: dict[str, Any], where: str) -> Instance:
    missing = [f for f in REQUIRED_FIELDS if f not in rec]
    if missing:
        raise EvalError(f"{where}: missing field(s) {', '.join(missing)}")
    symbols: list[tuple[str, str]] = []
    for s in rec.get("gold_symbols") or []:
        if s.get("qualname"):
            key = (s["file"], s["qualname"])
            if key not in symbols:
                symbols.append(key)
    spans: list[tuple[str, str, int, int]] = []
    if not symbols:
        for g in rec.get("gold_functions") or []:
            if g.get("qualname") and g.get("start_line") and g.get("end_line"):
                span = (
                    str(g["file"]),
                    str(g["qualname"]),
                    int(g["start_line"]),
                    int(g["end_line"]),
                )
                if span not in spans:
                    spans.append(span)
        symbols = list(dict.fromkeys((f, q) for f, q, _, _ in spans))
    return Instance(
        instance_id=str(rec["instance_id"]),
        repo=str(rec["repo"]),
        version=str(rec.get("version", "")),
        problem_statement=str(rec["problem_statement"]),
        gold_files=list(dict.fromkeys(rec["gold_files"] or [])),
        gold_hunks=list(rec.get("gold_hunks") or []),
        gold_symbols=symbols,
        raw=rec,
        gold_spans=spans,
    )


def _read_jsonl(path: Path) -> Iterable[tuple[int, dict[str, Any]]]:
    try:
        fh = path.open(encoding="utf-8")
    except OSError as exc:
        raise EvalError(f"cannot read {path}: {exc}") from exc
    with fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as exc:
                raise EvalError(f"{path}:{n}: invalid JSON ({exc.msg})") from exc
            if not isinstance(rec, dict):
                raise EvalError(f"{path}:{n}: expected a JSON object")
            yield n, rec


def load_bench(path: str | Path) -> list[Instance]:
    """Load every instance; duplicate ids are an error because results are keyed by id."""
    path = Path(path)
    out: list[Instance] = []
    seen: set[str] = set()
    for n, rec in _read_jsonl(path):
        inst = _instance(rec, f"{path}:{n}")
        if inst.instance_id in seen:
            raise EvalError(f"{path}:{n}: duplicate instance_id {inst.instance_id}")
        seen.add(inst.instance_id)
        out.append(inst)
    return out


def load_alignment(path: str | Path) -> dict[str, dict[str, Any]]:
    """``sdist_alignment.jsonl`` keyed by instance id."""
    return {str(rec["instance_id"]): rec for _, rec in _read_jsonl(Path(path))}


def located_regions(alignment: dict[str, Any] | None) -> tuple[list[Region], int]:
    """Gold regions in a release tree: hunks located verbatim, and the total hunk count."""
    if alignment is None:
        return [], 0
    hunks = alignment.get("hunks") or []
    regions = [
        Region(h["file"], int(h["sdist_start"]), int(h["sdist_end"]))
        for h in hunks
        if h.get("located") is True and "sdist_start" in h
    ]
    return regions, len(hunks)


def present_symbols(inst: Instance, alignment: dict[str, Any] | None) -> list[tuple[str, str]]:
    """Gold symbols minus those the alignment says are absent from the release tree."""
    if alignment is None:
        return list(inst.gold_symbols)
    absent = {
        (s["file"], s["qualname"])
        for s in alignment.get("symbols") or []
        if s.get("present") is False
    }
    return [s for s in inst.gold_symbols if s not in absent]


def sample(
    instances: Sequence[Instance],
    limit: int | None = None,
    seed: int = 0,
    repos: Sequence[str] | None = None,
) -> list[Instance]:
    """A reproducible sample: filter by repo, then take ``limit`` instances.

    The sample is stratified so every repository present is represented when ``limit`` allows
    it (one instance per repository first, in seeded order, then the rest in seeded order):
    a plain random 60 of 300 would routinely miss the three-instance repositories, and the
    per-repository breakdown is part of the contract. The output is sorted by instance id.
    """
    pool = list(instances)
    if repos:
        wanted = {r.strip() for r in repos if r.strip()}
        unknown = wanted - {i.repo for i in pool}
        if unknown:
            raise EvalError(f"--repos: no instances for {', '.join(sorted(unknown))}")
        pool = [i for i in pool if i.repo in wanted]
    if limit is None or limit >= len(pool):
        return sorted(pool, key=lambda i: i.instance_id)
    if limit < 0:
        raise EvalError("--limit must be >= 0")
    rng = random.Random(seed)
    order = sorted(pool, key=lambda i: i.instance_id)
    rng.shuffle(order)
    first: dict[str, Instance] = {}
    for inst in order:
        first.setdefault(inst.repo, inst)
    heads = list(first.values())[:limit]
    chosen = {i.instance_id for i in heads}
    rest = [i for i in order if i.instance_id not in chosen]
    picked = heads + rest[: limit - len(heads)]
    return sorted(picked, key=lambda i: i.instance_id)


__all__ = [
    "Instance",
    "Region",
    "gold_file_globs",
    "hunk_span",
    "language_of_path",
    "line_count",
    "load_alignment",
    "load_bench",
    "located_regions",
    "present_symbols",
    "sample",
]
