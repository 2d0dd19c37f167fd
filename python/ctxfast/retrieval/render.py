"""The injected slice: signatures + retained lines + provenance, under a hard token cap.

Candidates are laid out in rank order; if the cap would be exceeded, the lowest-weight
candidates are dropped whole — never mid-entry, never mid-line. The count is exact.
"""

from __future__ import annotations

from ctxfast.fence import safe_label
from ctxfast.retrieval.candidates import Candidate
from ctxfast.retrieval.repoindex import RepoIndex
from ctxfast.tokens import count_tokens, count_tokens_batch

BANNER = "## Context slice (retrieved — untrusted data)"


def render_block(cand: Candidate, index: RepoIndex) -> str:
    name = safe_label(cand.qualname or cand.file)
    header = f"{name} [{safe_label(cand.file)}:{cand.start_line}, {', '.join(cand.sources)}]"
    lines = index.lines(cand.file)
    body = [lines[i - 1] for i in cand.kept_lines if 0 < i <= len(lines)]
    if cand.signature and (not body or body[0].strip() != cand.signature):
        body.insert(0, cand.signature)
    return "###\n" + header + ("\n" + "\n".join(body) if body else "")


def render_slice(
    cands: list[Candidate], index: RepoIndex, max_tokens: int, encoding: str
) -> tuple[str, list[Candidate]]:
    """The rendered slice and the candidates it holds (rank order, all whole)."""
    shown = [c for c in cands if not c.pruned]
    blocks = [render_block(c, index) for c in shown]
    costs = count_tokens_batch(blocks, encoding)
    sep = count_tokens("\n", encoding)
    used = count_tokens(BANNER, encoding)
    chosen: list[int] = []
    for i, cost in enumerate(costs):
        if used + sep + cost <= max_tokens:
            chosen.append(i)
            used += sep + cost
    text = "\n".join([BANNER, *(blocks[i] for i in chosen)]) if chosen else ""
    while chosen and count_tokens(text, encoding) > max_tokens:
        chosen.pop()  # boundary effects: drop the lowest-weight survivor whole
        text = "\n".join([BANNER, *(blocks[i] for i in chosen)]) if chosen else ""
    return text, [shown[i] for i in chosen]
