"""Stage (d): structural compression (spec 08 §3.4) — no model anywhere.

Signatures over bodies, definition-level (AST) slices, sliding-window contiguous-line
extraction scored by token overlap with the decision's terms, and deterministic masking of
older tool output to short pointers. An item that stays over the 1 KB floor while keeping
what the decision needs is flagged ``irreducible`` for the budgeter instead of being dropped.
"""

from __future__ import annotations

import ast
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from ctxfast.construct.represent import CRITICAL_ROLES, Assigned, Rendering, Role
from ctxfast.construct.schema import (
    CODE_KINDS,
    ConstructConfig,
    EvidenceItem,
    Kind,
    LogEntry,
    PlanNode,
)
from ctxfast.construct.terms import line_tokens, short_name


@dataclass(frozen=True)
class Block:
    """One compressed item ready for dedup, ordering and budgeting.

    ``text`` is the body under the current rendering; ``fallback`` is the cheaper form the
    budgeter may demote it to (ladder step 2); ``span`` is the real line range shown.
    """

    item: EvidenceItem
    role: Role
    rendering: Rendering
    driver: str
    text: str
    fallback: str
    tier: str
    critical: bool
    irreducible: bool = False
    pointer_to: str | None = None
    span: tuple[int, int] | None = None
    score: float | None = None

    @property
    def id(self) -> str:
        return self.item.id


def best_line_windows(
    lines: Sequence[str], terms: Collection[str], window: int, k: int = 1, min_len: int = 3
) -> list[tuple[int, int, int]]:
    """The ``k`` best non-overlapping windows of ``window`` contiguous lines.

    A line scores the number of its identifier parts (with repetition) that are decision
    terms; a window scores the sum (RepoCoder's sliding window, made deterministic: ties go
    to the earliest window). Returns ``(start, end_exclusive, score)`` sorted by ``start``.
    This is the one function a native implementation replaces.
    """
    n = len(lines)
    if n == 0 or window <= 0 or k <= 0:
        return []
    window = min(window, n)
    wanted = set(terms)
    line_scores = [sum(1 for t in line_tokens(ln, min_len) if t in wanted) for ln in lines]
    prefix = [0]
    for s in line_scores:
        prefix.append(prefix[-1] + s)
    sums = [prefix[i + window] - prefix[i] for i in range(n - window + 1)]
    taken: list[tuple[int, int, int]] = []
    for _ in range(k):
        best = -1
        best_i = -1
        for i, s in enumerate(sums):
            if any(i < e and i + window > st for st, e, _ in taken):
                continue
            if s > best:
                best, best_i = s, i
        if best_i < 0:
            break
        taken.append((best_i, best_i + window, best))
    return sorted(taken)


def ast_slice(text: str, name: str) -> tuple[int, int] | None:
    """0-based ``(first_line, end_line_exclusive)`` of the definition ``name`` in ``text``.

    Only a strictly smaller span than the whole text counts as a slice; decorators are kept.
    Returns ``None`` when the text is not Python or does not define ``name``.
    """
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    total = len(text.splitlines())
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and (
            node.name == name
        ):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)]) - 1
            end = node.end_lineno or node.lineno
            if end - first < total:
                return first, end
    return None


def derive_signature(item: EvidenceItem) -> str:
    """Name, parameters, return and one-line doc — the cheapest faithful form of code."""
    text = item.content
    doc = None
    header = None
    try:
        tree = ast.parse(text)
        for node in tree.body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                lines = text.splitlines()
                body_start = node.body[0].lineno - 1 if node.body else node.lineno
                header = "\n".join(lines[node.lineno - 1 : max(body_start, node.lineno)]).rstrip()
                raw_doc = ast.get_docstring(node)
                doc = raw_doc.strip().splitlines()[0] if raw_doc else None
                break
    except (SyntaxError, ValueError):
        pass
    if item.meta.signature:
        header = item.meta.signature
    if header is None:
        header = next((ln.rstrip() for ln in text.splitlines() if ln.strip()), "")
    if doc:
        return f'{header}\n    """{doc}"""'
    return header


def call_site_lines(item: EvidenceItem, head: str | None) -> list[str]:
    """Lines of ``item`` naming ``head`` (the call sites of a direct obligation), numbered."""
    if not head or item.kind not in CODE_KINDS:
        return []
    name = short_name(head)
    base = item.meta.start_line or 1
    out = []
    for i, ln in enumerate(item.content.splitlines()):
        if name and name in ln and not ln.lstrip().startswith(("def ", "class ", "async def ")):
            out.append(f"{base + i}: {ln.strip()}")
    return out


def mask_pointer(item: EvidenceItem, config: ConstructConfig) -> str:
    """The compact pointer that replaces a masked output (raw text stays recoverable by id)."""
    lines = item.content.splitlines()
    first = next((ln.strip() for ln in lines if ln.strip()), "")
    preview = first[: config.pointer_preview_chars]
    size = len(item.content.encode("utf-8"))
    return (
        f"[{item.kind.value} {item.id} masked: {len(lines)} lines, {size} bytes; "
        f'starts "{preview}"; recoverable by id]'
    )


def _window_text(
    item: EvidenceItem, terms: Collection[str], config: ConstructConfig, keep_tail: bool = False
) -> tuple[str, tuple[int, int] | None, bool]:
    """Reduce a large code body to its best window; returns (text, real span, was_cut)."""
    lines = item.content.splitlines()
    base = item.meta.start_line or 1
    if len(lines) <= config.large_item_lines:
        return item.content, (base, base + len(lines) - 1) if lines else None, False
    if keep_tail:
        st, en = len(lines) - config.window_lines, len(lines)
    else:
        st, en, _ = best_line_windows(
            lines, terms, config.window_lines, min_len=config.min_term_len
        )[0]
    return "\n".join(lines[st:en]), (base + st, base + en - 1), True


def _tier(item: EvidenceItem, role: Role) -> str:
    if role is Role.REQUIREMENT:
        return "stable_core"
    if item.kind in (Kind.ERROR, Kind.TRACEBACK, Kind.TOOL_OUTPUT, Kind.TEST_OUTPUT):
        return "transient"
    return "working_set"


def compress(
    assigned: Sequence[Assigned],
    plan: PlanNode,
    terms: Collection[str],
    config: ConstructConfig,
    freshest_failure: str | None,
) -> tuple[list[Block], list[LogEntry]]:
    """Compress every represented item; drop ``omitted`` ones (stale history, P6)."""
    blocks: list[Block] = []
    log: list[LogEntry] = []
    for a in assigned:
        item, role, rendering = a.item, a.role, a.rendering
        if rendering is Rendering.OMITTED:
            log.append(LogEntry("compress", item.id, "omitted", f"{role.value}: superseded"))
            continue
        is_code = item.kind in CODE_KINDS
        span = None
        sig = derive_signature(item) if is_code else item.content
        if is_code and role in (Role.IMPACT_DIRECT, Role.CONFIG_CONSUMER):
            heads = [o for o in (item.meta.edge_head,) if o] or list(
                dict.fromkeys([plan.target_entity] if plan.target_entity else [])
            )
            sites = [s for h in heads for s in call_site_lines(item, h)]
            if sites:
                sig = sig + "\n" + "\n".join(f"  call site {s}" for s in sites)
        if rendering is Rendering.VERBATIM and is_code:
            text, span, cut = item.content, None, False
            name = short_name(plan.target_entity) if plan.target_entity else None
            sliced = ast_slice(item.content, name) if name and role is Role.CHANGE_TARGET else None
            if sliced is not None and item.meta.entity != plan.target_entity:
                lines = item.content.splitlines()
                base = item.meta.start_line or 1
                text = "\n".join(lines[sliced[0] : sliced[1]])
                span = (base + sliced[0], base + sliced[1] - 1)
                log.append(LogEntry("compress", item.id, "ast_slice", f"definition of {name}"))
            else:
                text, span, cut = _window_text(
                    item, terms, config, keep_tail=role is Role.INSERTION_POINT
                )
                if cut:
                    log.append(
                        LogEntry(
                            "compress",
                            item.id,
                            "line_window",
                            f"lines {span[0]}-{span[1]} by term overlap" if span else "line window",
                        )
                    )
        elif rendering is Rendering.VERBATIM:
            text = item.content
        else:
            text = sig
            if is_code and item.content and sig != item.content:
                log.append(LogEntry("compress", item.id, "signature", "signature over body"))
        critical = role in CRITICAL_ROLES or (
            role is Role.LIVE_STATE
            and (
                item.kind in (Kind.PATCH, Kind.ERROR, Kind.TRACEBACK) or item.id == freshest_failure
            )
        )
        irreducible = (
            critical
            and rendering is Rendering.VERBATIM
            and len(text.encode("utf-8")) > config.compression_floor_bytes
        )
        if irreducible:
            log.append(
                LogEntry(
                    "compress",
                    item.id,
                    "irreducible",
                    f"over {config.compression_floor_bytes} bytes after compression",
                )
            )
        if span is None and is_code and item.meta.start_line and text == item.content:
            span = (item.meta.start_line, item.meta.end_line or item.meta.start_line)
        blocks.append(
            Block(
                item=item,
                role=role,
                rendering=rendering,
                driver=a.driver,
                text=text,
                fallback=sig if is_code else text,
                tier=_tier(item, role),
                critical=critical,
                irreducible=irreducible,
                span=span,
                score=a.score,
            )
        )
    return blocks, log


__all__ = [
    "Block",
    "ast_slice",
    "best_line_windows",
    "call_site_lines",
    "compress",
    "derive_signature",
    "mask_pointer",
]
