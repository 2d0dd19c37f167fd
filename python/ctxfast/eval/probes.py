"""Model-backed probes: the lost-in-the-middle "bury" variant and the
oracle-context diagnostic.

Both need a model, so they run only against an OpenAI-compatible endpoint and are otherwise
reported as skipped — never faked. Offline there is no test suite to resolve an issue against,
so the model is given one gradeable task, *localization*: read the issue and the context, name
the file to edit. An answer succeeds when the first file it names is a gold file. That is a
proxy for "the model could use this context", labelled as such in the results.

* Oracle diagnostic: each instance is asked twice, with the primary system's retrieved context
  and with the oracle context (the gold hunks' lines plus a small margin). The pair of outcomes
  falls in one of four cells: retrieval is not the bottleneck, retrieval failed, curation beat
  the gold context, or the model failed with either.
* Bury: the constructed window's items are rendered twice with identical text, once in the
  order the constructor chose (critical items at the edges) and once with every critical item
  (one overlapping a gold hunk) moved to the middle. If burying does not lower the success
  rate, placement is not earning its place (the ordering mechanism fails its ablation).

A call that fails (transport error, timeout, non-200, malformed reply) is recorded on its
instance with the reason and excluded from the rates; it never ends the run and is never
retried (one call per question, as for the ranker).
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxfast.construct.ranker import OpenAICompatibleRanker, RankRequest
from ctxfast.eval.instances import Region
from ctxfast.eval.systems import Candidate, RetrievalOutput, System, read_text

TASK = (
    "localization proxy: the model names the file to edit; success = its first file is a gold "
    "file (no patch is applied or tested offline)"
)
SYSTEM_PROMPT = (
    "You locate the code that must change to fix an issue. Read the issue and the code context, "
    'then reply with JSON only, exactly {"files": [path, ...]}: the repository-relative paths '
    "of the files to edit, most likely first, at most 3."
)
ANSWER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["files"],
    "properties": {"files": {"type": "array", "maxItems": 3, "items": {"type": "string"}}},
}
#: Lines of context kept around each gold hunk in the oracle slice (a hunk alone can be a
#: single line, which no model could place in its file).
ORACLE_MARGIN = 5
MAX_ANSWER_TOKENS = 200
CELLS = ("retrieval_failure", "reasoning_failure", "not_bottleneck", "curation_beats_gold")


class ProbeEndpoint(OpenAICompatibleRanker):
    """The ranker's OpenAI-compatible client (one POST, no retry, timeout, response-size cap,
    key from the environment) reused for the probe question with its own schema name."""

    def _payload(self, request: RankRequest) -> dict[str, Any]:
        payload = super()._payload(request)
        payload["response_format"]["json_schema"]["name"] = "probe_answer"
        return payload

    def ask(self, issue: str, context: str) -> str:
        """Ask the localization question once; the raw reply text (raises on any failure)."""
        user = f"issue:\n{issue}\n\ncontext:\n{context}"
        request = RankRequest(
            messages=(
                {"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": user},
            ),
            candidate_ids=(),
            temperature=0.0,
            max_completion_tokens=MAX_ANSWER_TOKENS,
            schema=ANSWER_SCHEMA,
        )
        return self.rank(request)


def parse_answer(reply: str) -> list[str]:
    """The named files of a reply; raises ``ValueError`` on anything but the schema.

    One surrounding Markdown code fence is tolerated (many local models add it even under a
    JSON response format); everything else must match :data:`ANSWER_SCHEMA`.
    """
    text = reply.strip()
    if text.startswith("```"):
        text = text.split("\n", 1)[1] if "\n" in text else ""
        text = text.rsplit("```", 1)[0]
    data = json.loads(text)
    if not isinstance(data, dict) or set(data) != {"files"}:
        raise ValueError("reply must be an object with exactly the key 'files'")
    files = data["files"]
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        raise ValueError("'files' must be an array of strings")
    return [f.strip() for f in files]


def is_gold(named: str, gold_files: Sequence[str]) -> bool:
    """Whether a model-named path is a gold file (``./`` and leading folders the model added
    in front of the repository-relative path are forgiven, nothing else)."""
    p = named.strip()
    while p.startswith("./"):
        p = p[2:]
    p = p.lstrip("/")
    return any(p == g or p.endswith("/" + g) for g in gold_files)


@dataclass(frozen=True)
class Outcome:
    """One model call: its success (None when the call failed), what it named, why it failed."""

    ok: bool | None
    files: tuple[str, ...] = ()
    error: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "files": list(self.files), "error": self.error}


Asker = Callable[[str, str], str]


def ask_graded(ask: Asker, issue: str, context: str, gold_files: Sequence[str]) -> Outcome:
    """One call, graded; every failure becomes an :class:`Outcome` with its reason."""
    try:
        files = parse_answer(ask(issue, context))
    except Exception as exc:  # fail-soft: a bad reply is a recorded result, not a crash
        return Outcome(None, (), f"{type(exc).__name__}: {exc}")
    return Outcome(bool(files) and is_gold(files[0], gold_files), tuple(files))


# --------------------------------------------------------------------------- rendering


def render_items(root: Path, items: Sequence[Candidate]) -> str:
    """Render delivered items as ``### file:start-end`` blocks of their own lines.

    Both bury variants go through this one renderer, so their texts differ only in order."""
    cache: dict[str, list[str]] = {}
    blocks = []
    for c in items:
        if c.file not in cache:
            cache[c.file] = read_text(root / c.file).splitlines()
        lines = cache[c.file]
        wanted = c.kept_lines if c.kept_lines is not None else range(c.start, c.end + 1)
        body, prev = [], None
        for n in wanted:
            if not 1 <= n <= len(lines):
                continue
            if prev is not None and n != prev + 1:
                body.append("⋮")
            body.append(lines[n - 1])
            prev = n
        blocks.append(f"### {c.file}:{c.start}-{c.end}\n" + "\n".join(body) + "\n")
    return "".join(blocks)


def oracle_items(
    root: Path, gold: Sequence[Region], margin: int = ORACLE_MARGIN
) -> list[Candidate]:
    """The gold slice: each gold hunk widened by ``margin`` lines, merged per file, in the
    order the files first appear in the gold."""
    spans: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for g in gold:
        spans[g.file].append((max(1, g.start - margin), g.end + margin))
    out: list[Candidate] = []
    for f, rs in spans.items():
        n_lines = len(read_text(root / f).splitlines())
        merged: list[list[int]] = []
        for s, e in sorted(rs):
            if merged and s <= merged[-1][1] + 1:
                merged[-1][1] = max(merged[-1][1], e)
            else:
                merged.append([s, e])
        out.extend(Candidate(f, None, s, min(e, n_lines)) for s, e in merged)
    return out


def critical(items: Sequence[Candidate], gold: Sequence[Region]) -> list[Candidate]:
    """Window items the decision depends on: those overlapping a gold hunk."""
    return [c for c in items if any(g.overlaps(c.file, c.start, c.end) for g in gold)]


def bury(items: Sequence[Candidate], gold: Sequence[Region]) -> list[Candidate] | None:
    """The same items with every critical one moved, in its order, to the middle of the
    others; None when there is no critical item or fewer than two others (no middle: with
    one other item the critical block would still sit at an edge)."""
    crit = critical(items, gold)
    rest = [c for c in items if c not in crit]
    if not crit or len(rest) < 2:
        return None
    mid = len(rest) // 2
    return rest[:mid] + crit + rest[mid:]


# --------------------------------------------------------------------------- aggregation


def cell(retrieved: Outcome, oracle: Outcome) -> str | None:
    """The oracle-diagnostic cell of one instance (None when either call failed)."""
    if retrieved.ok is None or oracle.ok is None:
        return None
    if oracle.ok:
        return "not_bottleneck" if retrieved.ok else "retrieval_failure"
    return "curation_beats_gold" if retrieved.ok else "reasoning_failure"


def _rate(values: Sequence[bool]) -> float | None:
    return sum(values) / len(values) if values else None


def summarise_oracle(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Cell counts and success rates over the instances where both calls answered."""
    paired = [r for r in rows if r["cell"] is not None]
    return {
        "instances": len(rows),
        "answered": len(paired),
        "errors": len(rows) - len(paired),
        "cells": {c: sum(1 for r in paired if r["cell"] == c) for c in CELLS},
        "success_rate": {
            "retrieved": _rate([r["retrieved"]["ok"] for r in paired]),
            "oracle": _rate([r["oracle"]["ok"] for r in paired]),
        },
    }


def summarise_bury(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Paired success rates (edge vs buried) and the verdict."""
    paired = [r for r in rows if r["edge"]["ok"] is not None and r["buried"]["ok"] is not None]
    edge = _rate([r["edge"]["ok"] for r in paired])
    buried = _rate([r["buried"]["ok"] for r in paired])
    delta = None if edge is None or buried is None else edge - buried
    if delta is None:
        verdict = None
    elif delta > 0:
        verdict = "LOAD-BEARING: burying critical content degrades the result"
    else:
        verdict = "NOT LOAD-BEARING: burying does not degrade; ordering fails its ablation"
    return {
        "instances": len(rows),
        "answered": len(paired),
        "errors": len(rows) - len(paired),
        "success_rate": {"edge": edge, "buried": buried},
        "delta": delta,
        "degrades": None if delta is None else delta > 0,
        "verdict": verdict,
    }


# --------------------------------------------------------------------------- driver


def run_probes(
    ask: Asker,
    endpoint: dict[str, str],
    retrieval: System,
    window: System,
    jobs: Sequence[Any],
    cache_dir: Path,
    progress: bool = False,
) -> dict[str, dict[str, Any]]:
    """Run both probes on every job; ``retrieval`` supplies the oracle diagnostic's retrieved
    context and ``window`` the constructed window that is buried (they may be the same system).

    Handles are prepared once per tree and system (indexes come from the cache the main run
    filled). A system failing on a tree or instance is recorded in the probe's ``skipped``.
    """
    from tqdm import tqdm

    oracle_rows: list[dict[str, Any]] = []
    bury_rows: list[dict[str, Any]] = []
    oracle_skip: list[dict[str, str]] = []
    bury_skip: list[dict[str, str]] = []
    by_tree: dict[str, list[Any]] = defaultdict(list)
    for j in jobs:
        by_tree[j.tree.key].append(j)
    bar = tqdm(total=len(jobs), desc="probes", unit="inst", file=sys.stderr, disable=not progress)
    try:
        for group in by_tree.values():
            root = group[0].tree.path
            outputs: dict[str, dict[str, RetrievalOutput | str]] = {}
            for system in [retrieval] if window is retrieval else [retrieval, window]:
                per: dict[str, RetrievalOutput | str] = {}
                try:
                    handle = system.prepare(group[0].tree, cache_dir)
                except Exception as exc:
                    msg = f"{system.name}: prepare failed: {type(exc).__name__}: {exc}"
                    per = {j.instance.instance_id: msg for j in group}
                else:
                    for j in group:
                        try:
                            per[j.instance.instance_id] = system.retrieve(handle, j.instance)
                        except Exception as exc:
                            per[j.instance.instance_id] = (
                                f"{system.name}: {type(exc).__name__}: {exc}"
                            )
                outputs[system.name] = per
            for j in group:
                iid, inst = j.instance.instance_id, j.instance
                got = outputs[retrieval.name][iid]
                if isinstance(got, str):
                    oracle_skip.append({"instance_id": iid, "reason": got})
                elif not j.gold:
                    oracle_skip.append({"instance_id": iid, "reason": "no located gold hunk"})
                else:
                    ret = ask_graded(
                        ask, inst.problem_statement, got.rendered_text, inst.gold_files
                    )
                    orc_text = render_items(root, oracle_items(root, j.gold))
                    orc = ask_graded(ask, inst.problem_statement, orc_text, inst.gold_files)
                    oracle_rows.append(
                        {
                            "instance_id": iid,
                            "retrieved": ret.as_dict(),
                            "oracle": orc.as_dict(),
                            "cell": cell(ret, orc),
                        }
                    )
                win = outputs[window.name][iid]
                if isinstance(win, str):
                    bury_skip.append({"instance_id": iid, "reason": win})
                    continue
                items = [c for c in win.candidates if c.file]
                buried = bury(items, j.gold)
                if buried is None:
                    why = (
                        "fewer than two non-critical window items: no middle to bury in"
                        if critical(items, j.gold)
                        else "no window item overlaps a located gold hunk"
                    )
                    bury_skip.append({"instance_id": iid, "reason": why})
                    continue
                edge = ask_graded(
                    ask, inst.problem_statement, render_items(root, items), inst.gold_files
                )
                mid = ask_graded(
                    ask, inst.problem_statement, render_items(root, buried), inst.gold_files
                )
                bury_rows.append(
                    {
                        "instance_id": iid,
                        "items": len(items),
                        "critical": len(critical(items, j.gold)),
                        "edge": edge.as_dict(),
                        "buried": mid.as_dict(),
                    }
                )
            bar.update(len(group))
    finally:
        bar.close()

    def status(summary: dict[str, Any]) -> str:
        if not summary["instances"]:
            return "no_instances"
        return "ran" if summary["answered"] else "failed"

    osum, bsum = summarise_oracle(oracle_rows), summarise_bury(bury_rows)
    return {
        "oracle_diagnostic": {
            "status": status(osum),
            **endpoint,
            "task": TASK,
            "retrieval_system": retrieval.name,
            "oracle_margin_lines": ORACLE_MARGIN,
            **osum,
            "skipped": oracle_skip,
            "per_instance": oracle_rows,
        },
        "lost_in_the_middle_bury": {
            "status": status(bsum),
            **endpoint,
            "task": TASK,
            "window_system": window.name,
            **bsum,
            "skipped": bury_skip,
            "per_instance": bury_rows,
        },
    }
