"""Stage (d): structural compression — no model anywhere.

Signatures over bodies, definition-level (AST) slices, sliding-window contiguous-line
extraction scored by token overlap with the decision's terms, and deterministic masking of
older tool output to short pointers. An item that stays over the 1 KB floor while keeping
what the decision needs is flagged ``irreducible`` for the budgeter instead of being dropped.
The line-window selection is in :mod:`ctxfast.construct.line_windows`.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, ClassVar

from ctxfast.construct.line_windows import Numbered, body_window, code_rows, own_lines
from ctxfast.construct.represent import CRITICAL_ROLES, Assigned, Rendering, Role
from ctxfast.construct.schema import (
    CODE_KINDS,
    EvidenceItem,
    Kind,
    LogEntry,
    PlanNode,
)
from ctxfast.construct.terms import short_name
from ctxfast.errors import InvalidArgumentError
from ctxfast.harness.excerpt import SIGNATURE_RE
from ctxfast.numbered import render_numbered
from ctxfast.text import DECORATOR_PREFIXES, attached_above

if TYPE_CHECKING:
    from ctxfast.construct.config import ConstructConfig


@dataclass(frozen=True)
class CompressSettings:
    """How a long item is cut to fit (``ConstructConfig.compress``)."""

    FLAT_NAMES: ClassVar[Mapping[str, str]] = {}

    #: Items under this many bytes (1 KB) are never compressed: cutting them saves nothing.
    compression_floor_bytes: int = 1024
    #: A body longer than this many lines (200) is shown as its best window of
    #: ``window_lines`` lines (a class as a view of its members): a fix's function is
    #: usually shorter, a generated one far longer.
    large_item_lines: int = 200
    #: The lines of that window (40): a function's worth of code around the best match.
    window_lines: int = 40
    #: A body cut to its window keeps its first this many lines too (8): the signature and
    #: how the body starts (its arguments checked, its locals set up) say what the window's
    #: lines work on, and a fix there is missed by a window further down. 0: the window alone.
    window_head_lines: int = 8
    #: The window is chosen by the task's terms on code lines only: a docstring repeats
    #: the task's words, and a window on it misses the code to change.
    window_code_only: bool = True
    #: A cut body also shows the lines around each line naming a several-part identifier
    #: the task writes whole (``MB_ONIGURUMA_VERSION``) when the body uses that name at most
    #: this many times (3): the line the task points at, which the window of the most
    #: term-dense lines can miss. 0: off.
    named_line_uses: int = 3
    #: Lines shown either side of such a line (3).
    named_line_context: int = 3
    #: An older tool or test output the budget masks becomes a one-line pointer quoting its
    #: first line up to this many characters (60): enough to tell which command it was.
    pointer_preview_chars: int = 60

    def __post_init__(self) -> None:
        if self.large_item_lines < 0:
            raise InvalidArgumentError("large_item_lines must be non-negative")
        if self.window_lines < 1:
            # A window of no lines would show a long body as nothing at all.
            raise InvalidArgumentError("window_lines must be at least 1")
        if self.named_line_uses < 0 or self.named_line_context < 0:
            raise InvalidArgumentError(
                "named_line_uses and named_line_context must be non-negative"
            )
        if self.window_head_lines < 0:
            raise InvalidArgumentError("window_head_lines must be non-negative")


@dataclass(frozen=True)
class Block:
    """One compressed item ready for dedup, ordering and budgeting.

    ``text`` is the body under the current rendering; ``fallback`` is the cheaper form the
    budgeter may demote it to (ladder step 2). Code carries its lines as ``(real number,
    text)`` pairs — ``shown`` for the current rendering, ``fallback_shown`` for the cheaper
    one and ``expansion`` for the full body the window may grow it to when there is room
    (a ranked candidate shown first as a signature) — and ``text`` is ``shown`` numbered.
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
    shown: Numbered = ()
    fallback_shown: Numbered = ()
    expansion: Numbered = field(default=())

    @property
    def id(self) -> str:
        return self.item.id

    @property
    def is_code(self) -> bool:
        return bool(self.shown)


def with_lines(block: Block, shown: Numbered, **changes: object) -> Block:
    """``block`` showing ``shown``: its text, span and line pairs kept consistent."""
    span = (shown[0][0], shown[-1][0]) if shown else None
    return replace(block, shown=shown, text=render_numbered(shown), span=span, **changes)  # type: ignore[arg-type]


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


#: At most this many lines stand for a definition shown as its signature.
SIGNATURE_LINES = 6
#: A signature keeps at most this many decorator or attribute lines directly above it
#: (``@property``, ``@overload``, ``#[cfg(unix)]``): they change what the header means, and
#: ``def variables(self)`` read without its ``@property`` is called the wrong way.
DECORATOR_LINES = 3

_CALL_OF = "(?<![A-Za-z0-9_]){name}\\s*\\("
_INLINE_BODY = re.compile(r"\)\s*(?:->[^:]*)?:\s*\S")
_DEF_LINE = re.compile(r"^\s*(?:async\s+def|def|class)\s")


def numbered_content(item: EvidenceItem) -> Numbered:
    """The item's code as ``(real line number, text)`` pairs."""
    lines = item.content.split("\n")
    if item.meta.lines is not None:
        return tuple(zip(item.meta.lines, lines, strict=False))
    base = item.meta.start_line or 1
    return tuple((base + i, t) for i, t in enumerate(lines))


def call_site_lines(item: EvidenceItem, head: str | None) -> Numbered:
    """The lines of ``item`` that call ``head``: the code graph's call sites when the item
    carries them, else lines with a call ``name(`` that are neither a definition line nor a
    comment nor inside a docstring (a mention in prose is not a call)."""
    pairs = numbered_content(item)
    if item.meta.sites:
        wanted = set(item.meta.sites)
        return tuple(p for p in pairs if p[0] in wanted)
    if not head or item.kind not in CODE_KINDS:
        return ()
    call = re.compile(_CALL_OF.format(name=re.escape(short_name(head))))
    code = code_rows([ln for _, ln in pairs])
    return tuple(
        (n, ln)
        for (n, ln), is_code in zip(pairs, code, strict=True)
        if is_code and not _DEF_LINE.match(ln) and call.search(ln.strip().split(" #", 1)[0])
    )


def signature_lines(item: EvidenceItem) -> Numbered:
    """The definition's header lines (up to the line that opens its body), with the
    decorators right above them, and the first line of its docstring, with their real
    numbers — the cheapest faithful form of code.

    Lines with no definition (a module header, matched module-level lines) have no header:
    their first ``SIGNATURE_LINES`` lines of code stand for them — a module's imports, not
    the opening quote of its docstring. Only the definition's own lines are read
    (:func:`own_lines`)."""
    pairs = own_lines(item, numbered_content(item))
    if not pairs:
        return ()
    first = next((i for i, (_, t) in enumerate(pairs) if SIGNATURE_RE.match(t)), None)
    if first is None:
        code = code_rows([t for _, t in pairs])
        rows = [
            i
            for i, (p, is_code) in enumerate(zip(pairs, code, strict=True))
            if is_code and p[1].strip()
        ]
        if rows:
            # one unbroken run (blank lines between imports cost less than gap markers)
            return pairs[rows[0] : rows[:SIGNATURE_LINES][-1] + 1]
        return (next((p for p in pairs if p[1].strip()), pairs[0]),)
    top = attached_above([t for _, t in pairs], first, DECORATOR_PREFIXES, DECORATOR_LINES)
    out: list[tuple[int, str]] = list(pairs[top:first])
    i = first
    while i < len(pairs) and len(out) - (first - top) < SIGNATURE_LINES:
        out.append(pairs[i])
        line_code = pairs[i][1].split(" #", 1)[0].rstrip()
        i += 1
        if line_code.endswith((":", "{", ";")) or _INLINE_BODY.search(line_code):
            break
    if i < len(pairs) and pairs[i][1].strip().startswith(('"""', "'''", 'r"""')):
        out.append(pairs[i])
    return tuple(out)


def mask_pointer(item: EvidenceItem, config: ConstructConfig) -> str:
    """The compact note that replaces a masked older output (the raw text stays in the
    caller's hands; the window names no internal ids)."""
    lines = item.content.splitlines()
    first = next((ln.strip() for ln in lines if ln.strip()), "")
    preview = first[: config.compress.pointer_preview_chars]
    size = len(item.content.encode("utf-8"))
    return (
        f"[older {item.kind.value.replace('_', ' ')} elided: {len(lines)} lines, {size} bytes; "
        f'it started "{preview}"]'
    )


def _sliced(item: EvidenceItem, name: str) -> Numbered | None:
    """The definition ``name`` inside a larger item (a method inside a retrieved class)."""
    if item.meta.lines is not None:
        return None
    cut = ast_slice(item.content, name)
    if cut is None:
        return None
    return numbered_content(item)[cut[0] : cut[1]]


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
            log.append(
                LogEntry(
                    "compress", item.id, "omitted", f"{role.value}: superseded", _subject(item)
                )
            )
            continue
        is_code = item.kind in CODE_KINDS and item.meta.file is not None and item.content.strip()
        if not is_code:
            blocks.append(_text_block(a, config, freshest_failure))
            continue
        full = numbered_content(item)
        sig = signature_lines(item) or full[:1]
        if role in (Role.IMPACT_DIRECT, Role.CONFIG_CONSUMER):
            head = item.meta.edge_head or plan.target_entity
            sites = call_site_lines(item, head)
            # module-level code has no header to show: its calls alone say how it uses X
            headless = not any(SIGNATURE_RE.match(t) for _, t in full)
            sig = sites if sites and headless else tuple(sorted(set(sig) | set(sites)))
        expansion: Numbered = ()
        if rendering is Rendering.VERBATIM:
            shown = full
            name = short_name(plan.target_entity) if plan.target_entity else None
            sliced = (
                _sliced(item, name)
                if name and role is Role.CHANGE_TARGET and item.meta.entity != plan.target_entity
                else None
            )
            if sliced:
                shown = sliced
                log.append(
                    LogEntry(
                        "compress", item.id, "ast_slice", f"definition of {name}", _subject(item)
                    )
                )
            elif role is not Role.FILE_OUTLINE and not item.meta.uncut:
                shown, cut = body_window(
                    item, full, terms, config, keep_tail=role is Role.INSERTION_POINT
                )
                if cut:
                    log.append(
                        LogEntry(
                            "compress",
                            item.id,
                            "line_window",
                            f"lines {shown[0][0]}-{shown[-1][0]} by term overlap",
                            _subject(item),
                        )
                    )
        else:
            shown = sig
            if item.meta.score is not None or a.driver.startswith("rank:"):
                # Retrieval found it: the window may show its body when it has room.
                # (a file chosen whole grows to the whole file, never to a line window)
                expansion = full if item.meta.uncut else body_window(item, full, terms, config)[0]
            if sig != full:
                log.append(
                    LogEntry(
                        "compress", item.id, "signature", "signature over body", _subject(item)
                    )
                )
        critical = role in CRITICAL_ROLES
        text = render_numbered(shown)
        irreducible = (
            critical
            and rendering is Rendering.VERBATIM
            and len(text.encode("utf-8")) > config.compress.compression_floor_bytes
        )
        if irreducible:
            log.append(
                LogEntry(
                    "compress",
                    item.id,
                    "irreducible",
                    f"over {config.compress.compression_floor_bytes} bytes after compression",
                    _subject(item),
                )
            )
        blocks.append(
            Block(
                item=item,
                role=role,
                rendering=rendering,
                driver=a.driver,
                text=text,
                fallback=render_numbered(sig),
                tier=_tier(item, role),
                critical=critical,
                irreducible=irreducible,
                span=(shown[0][0], shown[-1][0]),
                score=a.score,
                shown=shown,
                fallback_shown=sig,
                expansion=expansion if expansion != shown else (),
            )
        )
    return blocks, log


def _text_block(a: Assigned, config: ConstructConfig, freshest_failure: str | None) -> Block:
    """A non-code item (requirement, impact edge, live output) as plain text."""
    item, role = a.item, a.role
    critical = role in CRITICAL_ROLES or (
        role is Role.LIVE_STATE
        and (item.kind in (Kind.PATCH, Kind.ERROR, Kind.TRACEBACK) or item.id == freshest_failure)
    )
    text = item.content if a.rendering is Rendering.VERBATIM else derive_signature(item)
    irreducible = (
        critical
        and a.rendering is Rendering.VERBATIM
        and len(text.encode("utf-8")) > config.compress.compression_floor_bytes
    )
    return Block(
        item=item,
        role=role,
        rendering=a.rendering,
        driver=a.driver,
        text=text,
        fallback=text,
        tier=_tier(item, role),
        critical=critical,
        irreducible=irreducible,
        score=a.score,
    )


def _subject(item: EvidenceItem) -> str:
    """What an item is, for a log reader: its entity, else ``path:start-end``."""
    if item.meta.entity:
        return item.meta.entity
    if item.meta.file:
        return f"{item.meta.file}:{item.meta.start_line}-{item.meta.end_line}"
    return item.kind.value


__all__ = [
    "Block",
    "ast_slice",
    "call_site_lines",
    "compress",
    "derive_signature",
    "mask_pointer",
    "numbered_content",
    "own_lines",
    "signature_lines",
    "with_lines",
]
