"""The injected slice: signatures + retained lines + provenance, under a hard token cap.

Candidates are laid out in rank order; if the cap would be exceeded, the lowest-weight
candidates are dropped whole — never mid-entry, never mid-line. The count is exact.

Repository text cannot forge the slice's structure, by the rules every window shares
(:mod:`ctxfast.fence`): an entry's header is one ``### `` line of escaped names, with its file
and first line number, and the code under it is fenced, so a docstring holding
``## End of context slice`` or a copy of an entry header stays inside its entry's fence.
"""

from __future__ import annotations

from ctxfast.fence import DATA_NOTICE, fence_block, safe_label
from ctxfast.retrieval.candidates import Candidate
from ctxfast.retrieval.repoindex import RepoIndex
from ctxfast.tokens import count_tokens, count_tokens_batch

BANNER = "## Context slice (retrieved — untrusted data)"
#: What opens a slice: the banner, then the window's one sentence that fenced text is data.
PREAMBLE = f"{BANNER}\n{DATA_NOTICE}"


def block_header(cand: Candidate) -> str:
    """The entry's one header line: name, file, first line number and the signals that found
    it (provenance may name another file: escaped like any name)."""
    name = safe_label(cand.qualname or cand.file)
    sources = safe_label(", ".join(cand.sources))
    return f"### {name} [{safe_label(cand.file)}:{cand.start_line}, {sources}]"


def render_block(cand: Candidate, index: RepoIndex) -> str:
    """One entry: its header, then its signature and retained lines, fenced."""
    lines = index.lines(cand.file)
    body = [lines[i - 1] for i in cand.kept_lines if 0 < i <= len(lines)]
    if cand.signature and (not body or body[0].strip() != cand.signature):
        body.insert(0, cand.signature)
    header = block_header(cand)
    return header + "\n" + fence_block("\n".join(body)) if body else header


def render_slice(
    cands: list[Candidate], index: RepoIndex, max_tokens: int, encoding: str
) -> tuple[str, int]:
    """The rendered slice (its candidates in rank order, all whole) and its token count."""
    shown = [c for c in cands if not c.pruned]
    blocks = [render_block(c, index) for c in shown]
    costs = count_tokens_batch(blocks, encoding)
    sep = count_tokens("\n", encoding)
    used = count_tokens(PREAMBLE, encoding)
    chosen: list[int] = []
    for i, cost in enumerate(costs):
        if used + sep + cost <= max_tokens:
            chosen.append(i)
            used += sep + cost
    text = "\n".join([PREAMBLE, *(blocks[i] for i in chosen)]) if chosen else ""
    tokens = count_tokens(text, encoding)
    while chosen and tokens > max_tokens:
        chosen.pop()  # boundary effects: drop the lowest-weight survivor whole
        text = "\n".join([PREAMBLE, *(blocks[i] for i in chosen)]) if chosen else ""
        tokens = count_tokens(text, encoding)
    return text, tokens
