"""The window's text: what the model reads, laid out for reading (stage (f)'s output form).

One task at the top; then, under a single note that everything below is data, the code grouped
by file — each block headed ``path:start-end`` with a plain-words label and every line carrying
its real number — with the files holding a change target last, nearest to where the model
starts writing; then what the change affects, in words; the live outputs last, the freshest
failure at the very end. Internal ids, dedup pointers and pipeline terms stay in the logs.

Repository text cannot forge the window's structure: code lines start with their number, file
names and entities are escaped, and outputs are fenced with a fence longer than any backtick
run they contain.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field

from ctxfast.construct.compress import Block
from ctxfast.construct.dedup import ROLE_RANK
from ctxfast.construct.line_windows import Numbered
from ctxfast.construct.order import LIVE_ORDER
from ctxfast.construct.represent import Rendering, Role
from ctxfast.construct.schema import Kind, PlanNode, WindowEntry
from ctxfast.construct.terms import short_name
from ctxfast.fence import DATA_NOTICE, closing_open_fence, fence_block, safe_label
from ctxfast.numbered import render_numbered

SEPARATOR = "\n\n"
#: A piece of a file's listing this short that touches a neighbour is shown inside it.
TINY_PIECE_LINES = 3
TASK_ID = "task"
DATA_NOTE = f"{DATA_NOTICE} Code lines carry their real line numbers; ⋮ marks lines left out."
_LANGUAGES = {
    ".py": "python",
    ".pyi": "python",
    ".rs": "rust",
    ".go": "go",
    ".js": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".tsx": "tsx",
    ".java": "java",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".hpp": "cpp",
    ".php": "php",
    ".rb": "ruby",
}
_LIVE_TITLES = {
    Kind.PATCH: "Current diff",
    Kind.ERROR: "Error",
    Kind.TRACEBACK: "Traceback",
    Kind.TOOL_OUTPUT: "Tool output",
    Kind.TEST_OUTPUT: "Test output",
}


def safe(name: str) -> str:
    """A repository name for a header line: one line, nothing that reorders it, no backtick
    (it is shown inside inline code)."""
    return safe_label(name).replace("`", "'")


def task_text(task: str) -> str:
    """The task section; a code fence the task leaves open is closed at its end, so the
    window's sections after it stay structure (:func:`~ctxfast.fence.closing_open_fence`)."""
    return f"## Task\n{closing_open_fence(task)}"


def local_name(entity: str, path: str) -> str:
    """``entity`` without the module prefix its file already says: ``a.b.C.area`` in
    ``a/b.py`` (or ``src/a/b.py``, ``lib/a/b.rs``) → ``C.area``. The prefix is the longest
    run of leading name parts that the path's folders and file name contain in order; a
    C-family module names its file whole, dots and pluses as underscores
    (``src.reporters.console_cpp.Printer.print`` in ``src/reporters/console.cpp`` →
    ``Printer.print``)."""
    segments = [p for p in path.split("/") if p]
    parts = entity.split(".")
    k, j = 0, 0
    while k < len(parts) - 1 and j < len(segments):
        if parts[k] in _segment_names(segments[j], last=j == len(segments) - 1):
            k += 1
        j += 1
    return ".".join(parts[k:]) if k else entity


def _segment_names(segment: str, last: bool) -> tuple[str, ...]:
    """The names a module path gives one segment of a file's path: itself and its
    C-family spelling (``v1.2`` → ``v1_2``), and for the file name its stem too."""
    c_family = segment.replace(".", "_").replace("+", "_")
    if last and "." in segment:
        return (segment.rsplit(".", 1)[0], c_family)
    return (segment, c_family)


def _callee_name(head: str, caller: str | None) -> str:
    """The callee's short name, or its full name when the caller has the same short name (a
    Python wrapper calling the native function it wraps), so the label never reads as a
    call to itself."""
    short = short_name(head)
    return head if caller and short == short_name(caller) else short


def _label(b: Block) -> str:
    """What a block is, in words the model can use."""
    role = b.role
    meta = b.item.meta
    head = meta.edge_head or meta.site_of
    if role is Role.IMPACT_DIRECT and head:
        return f"calls `{safe(_callee_name(head, meta.entity))}`"
    if role is Role.IMPACT_DIRECT:
        return "caller of a change target"
    if role is Role.CHANGE_TARGET and head and head != meta.entity and meta.site_edge == "CalledBy":
        # A change target that calls another one: the window says so where the call is
        # shown, as it does for any caller (the edge itself is not listed a second time).
        return f"change target; calls `{safe(_callee_name(head, meta.entity))}`"
    if role is Role.CONFIG_CONSUMER and meta.site_of:
        return f"uses configuration key `{safe(meta.site_of)}`"
    labels = {
        Role.CHANGE_TARGET: "change target",
        Role.INSERTION_POINT: "insertion point (just above a change target)",
        Role.CRITICAL_DEFINITION: "named by the task",
        Role.RELATED_SYMBOL: "related",
        Role.RELATED_TEST: "test",
        Role.CONFIG_CONSUMER: "uses the same configuration key",
        Role.FILE_OUTLINE: "outline: definitions in this file",
    }
    text = labels.get(role, role.value.replace("_", " "))
    if role is Role.RELATED_SYMBOL and not meta.entity:
        # Module-level lines retrieval matched: there is no signature to speak of. They are
        # the module's header when the lines shown open the file, not when the span they
        # were cut from does (two lines of a `type (` block 40 lines down are no header).
        return "module header" if b.shown and b.shown[0][0] == 1 else "matching module-level lines"
    if b.rendering is Rendering.SIGNATURE and role is not Role.FILE_OUTLINE:
        text += ", signature only"
    return text


@dataclass
class FileGroup:
    """The blocks of one file, with the lines each of them still shows after stronger blocks
    of the same file took theirs (a line is shown once)."""

    path: str
    blocks: list[tuple[Block, Numbered]]
    #: Blocks whose few lines are shown inside a neighbour's piece (see ``TINY_PIECE_LINES``).
    absorbed: list[Block] = field(default_factory=list)

    def members(self) -> list[Block]:
        """Every block that shows a line here, once each, in reading order."""
        found = {b.id: b for b, _ in self.blocks}
        found.update((b.id, b) for b in self.absorbed)
        return list(found.values())

    @property
    def critical(self) -> bool:
        return any(b.critical for b in self.members())

    def lines(self) -> tuple[int, ...]:
        return tuple(sorted({n for _, shown in self.blocks for n, _ in shown}))


def group_code(code: Sequence[Block]) -> list[FileGroup]:
    """Code blocks by file (first-seen file order), each line kept by its strongest block,
    blocks left with no line of their own dropped, the rest in line order.

    A block whose lines skip over lines another block of the file shows (a class view around
    a method the fill admitted) is cut there into pieces, so a file reads top to bottom and
    no marker calls lines elided that the window shows a few lines further down."""
    by_file: dict[str, list[Block]] = {}
    for b in code:
        by_file.setdefault(b.item.meta.file or "", []).append(b)
    groups = []
    for path, members in by_file.items():
        taken: set[int] = set()
        kept: list[tuple[Block, Numbered]] = []
        for b in sorted(members, key=lambda x: (ROLE_RANK[x.role], x.item.meta.seq)):
            own = tuple(p for p in b.shown if p[0] not in taken)
            if own:
                taken.update(n for n, _ in own)
                kept.append((b, own))
        ordered = sorted(taken)
        pieces = [(b, piece) for b, own in kept for piece in _pieces(own, ordered)]
        pieces.sort(key=lambda bs: (bs[1][0][0], bs[0].item.meta.seq))
        if pieces:
            groups.append(_absorb_tiny(FileGroup(path, pieces)))
    return groups


def _absorb_tiny(g: FileGroup) -> FileGroup:
    """Pieces of at most ``TINY_PIECE_LINES`` lines that touch a neighbour (a decorator or a
    blank line owned by another block, a class line above a method) are shown inside it, the
    next one by preference (what precedes a definition belongs to it): a header per line
    of code would cost more than it tells."""
    out: list[tuple[Block, list[tuple[int, str]]]] = []
    absorbed: list[Block] = []
    carry: list[tuple[Block, Numbered]] = []  # tiny pieces waiting for the next one
    pieces = g.blocks
    for i, (b, piece) in enumerate(pieces):
        lines = [p for _, c in carry for p in c] + list(piece)
        nxt = pieces[i + 1][1] if i + 1 < len(pieces) else None
        if len(lines) <= TINY_PIECE_LINES and nxt and nxt[0][0] == lines[-1][0] + 1:
            carry.append((b, piece))
            continue
        if len(lines) <= TINY_PIECE_LINES and out and out[-1][1][-1][0] + 1 == lines[0][0]:
            out[-1][1].extend(lines)
            absorbed += [b, *(c for c, _ in carry)]
        else:
            out.append((b, lines))
            absorbed += [c for c, _ in carry]
        carry = []
    return FileGroup(g.path, [(b, tuple(ls)) for b, ls in out], absorbed)


def _pieces(own: Numbered, shown: Sequence[int]) -> list[Numbered]:
    """``own`` cut wherever the lines it skips include one of ``shown`` (the file's shown
    line numbers in order, its own among them)."""
    out: list[list[tuple[int, str]]] = [[own[0]]]
    for p in own[1:]:
        prev = out[-1][-1][0]
        if p[0] > prev + 1 and shown[bisect_right(shown, prev)] < p[0]:
            out.append([p])
        else:
            out[-1].append(p)
    return [tuple(x) for x in out]


def _span_inside(b: Block, shown: Numbered) -> str:
    """`` (a-b)`` when a change target is shown with more of its file than its own lines (its
    class header, or the whole small file): the header's range is then not the definition's."""
    meta = b.item.meta
    start, end = meta.start_line, meta.end_line
    if b.role is not Role.CHANGE_TARGET or start is None or end is None:
        return ""
    if start <= shown[0][0] and shown[-1][0] <= end:
        return ""
    return f" ({start}-{end})" if shown[0][0] <= start and end <= shown[-1][0] else ""


def _outside_span(b: Block, shown: Numbered) -> str:
    """`` ({start}-{end})`` when none of ``shown`` lies in the block's definition span (a
    piece holding only the class header or the imports shown with a change target), else
    ``""``: such a piece is the definition's context, and its header says so instead of
    naming the definition over lines that are not it."""
    start, end = b.item.meta.start_line, b.item.meta.end_line
    if start is None or end is None or any(start <= n <= end for n, _ in shown):
        return ""
    return f" ({start}-{end})"


def code_block_text(b: Block, shown: Numbered, continued: bool = False) -> str:
    path = b.item.meta.file or ""
    head = f"### {safe(path)}:{shown[0][0]}-{shown[-1][0]}"
    ent = b.item.meta.entity or ""
    label = _label(b) + (", continued" if continued else "")
    named = ent and not ent.startswith(f"{path}:")  # a config line's entity is its address
    outside = _outside_span(b, shown) if named else ""
    if outside:
        head += f" — context of `{safe(local_name(ent, path))}`{outside}"
    elif named:
        head += f" · `{safe(local_name(ent, path))}`{_span_inside(b, shown)} — {label}"
    else:
        head += f" — {label}"
    lang = _LANGUAGES.get("." + path.rsplit(".", 1)[-1] if "." in path else "", "")
    return f"{head}\n{fence_block(render_numbered(shown), lang)}"


def group_text(g: FileGroup) -> str:
    seen: set[str] = set()
    parts = []
    for b, shown in g.blocks:
        parts.append(code_block_text(b, shown, continued=b.id in seen))
        seen.add(b.id)
    return "\n\n".join(parts)


def _plan_text(plan: PlanNode) -> str:
    """The plan node's lines: the caller's obligation (none when it only restates the task,
    see :mod:`ctxfast.construct.dedup`) and preconditions as stated, the names that may come
    from the repository (the target, the validating tests) escaped like a block header's, so a
    file name holding a newline cannot open a section of its own."""
    lines = [f"obligation: {plan.obligation}"] if plan.obligation else []
    if plan.target_entity:
        lines.append(f"target: `{safe(plan.target_entity)}`")
    lines += [f"precondition: {p}" for p in plan.preconditions]
    lines += [f"required validation: `{safe(v)}`" for v in plan.required_validation]
    return "\n".join(lines)


def _plain(b: Block) -> str:
    """A non-code block in words: requirements as stated, impact edges as sentences, live
    outputs fenced under a title."""
    item, meta = b.item, b.item.meta
    if item.kind is Kind.PLAN_NODE and meta.plan is not None:
        return _plan_text(meta.plan)
    if item.kind in LIVE_ORDER:
        return f"### {_LIVE_TITLES[item.kind]}\n{fence_block(b.text, 'text')}"
    if meta.edge_type and meta.entity and meta.edge_head:
        tail, head = f"`{safe(meta.entity)}`", f"`{safe(meta.edge_head)}`"
        if meta.edge_type == "CalledBy":
            return f"- {tail} calls {head}"
        if meta.edge_type == "ConfigConsumer":
            return f"- {tail} uses a configuration key that {head} reads"
        return f"- {tail} depends on {head} ({meta.edge_type})"
    if meta.transitive_digest:
        return f"- wider impact: {b.text}"
    if item.kind is Kind.FAULT_ENTITY:
        return f"- likely fault location: `{safe(b.text)}`"
    return b.text


@dataclass(frozen=True)
class Layout:
    """The window in reading order: entries (the task, requirements, impact lines, file
    groups, live outputs) and the exact text they make."""

    entries: tuple[WindowEntry, ...]
    text: str
    blocks: tuple[Block, ...]


def _entry(b: Block, text: str) -> WindowEntry:
    return WindowEntry(
        b.id,
        b.item.kind.value,
        b.role.value,
        b.rendering.value,
        b.tier,
        b.critical,
        text,
        b.item.meta.entity,
    )


def _group_entry(g: FileGroup, text: str) -> WindowEntry:
    members = g.members()
    lead = min(members, key=lambda b: (ROLE_RANK[b.role], b.item.meta.seq))
    lines = g.lines()
    verbatim = any(b.rendering is Rendering.VERBATIM for b, _ in g.blocks)
    return WindowEntry(
        "+".join(b.id for b in members),
        lead.item.kind.value,
        lead.role.value,
        (Rendering.VERBATIM if verbatim else Rendering.SIGNATURE).value,
        lead.tier,
        g.critical,
        text,
        lead.item.meta.entity,
        g.path,
        lines[0],
        lines[-1],
        lines,
    )


def lay_out(task: str, blocks: Sequence[Block], freshest: str | None) -> Layout:
    """Order and render ``blocks`` into the window (pure; the budgeter calls it per step)."""
    reqs = sorted(
        (b for b in blocks if b.role is Role.REQUIREMENT),
        key=lambda b: (b.item.kind is not Kind.PLAN_NODE, b.item.meta.seq),
    )
    live = sorted(
        (b for b in blocks if b.item.kind in LIVE_ORDER),
        key=lambda b: (b.id == freshest, LIVE_ORDER[b.item.kind], b.item.meta.seq),
    )
    code = [b for b in blocks if b.is_code]
    words = [b for b in blocks if b not in reqs and b not in live and not b.is_code]
    words.sort(key=lambda b: (ROLE_RANK[b.role], b.item.meta.seq))
    groups = group_code(sorted(code, key=lambda b: b.item.meta.seq))

    # Supporting files first, then the files holding critical code, the strongest last.
    def strength(g: FileGroup) -> tuple[int, int]:
        best = min((ROLE_RANK[b.role], b.item.meta.seq) for b in g.members())
        return (-best[0], -best[1])

    support = [g for g in groups if not g.critical]
    critical = sorted((g for g in groups if g.critical), key=strength)
    groups = support + critical

    entries: list[WindowEntry] = [
        WindowEntry(TASK_ID, "task", Role.REQUIREMENT.value, Rendering.VERBATIM.value,
                    "stable_core", True, task_text(task))
    ]  # fmt: skip
    parts: list[str] = [task_text(task)]

    def put(entry: WindowEntry) -> None:
        entries.append(entry)
        parts.append(entry.text)

    for i, b in enumerate(reqs):
        put(_entry(b, ("## Plan\n" if i == 0 else "") + _plain(b)))
    lead = f"## Context\n{DATA_NOTE}\n\n"
    for i, b in enumerate(words):
        put(_entry(b, lead + ("### What the change affects\n" if i == 0 else "") + _plain(b)))
        lead = ""
    # Older, non-critical outputs close the middle; critical code and outputs the back.
    for b in (b for b in live if not b.critical):
        put(_entry(b, lead + _plain(b)))
        lead = ""
    for g in groups:
        put(_group_entry(g, lead + group_text(g)))
        lead = ""
    for b in (b for b in live if b.critical):
        put(_entry(b, lead + _plain(b)))
        lead = ""
    placed = [*reqs, *words, *(b for g in groups for b in g.members()), *live]
    return Layout(tuple(entries), SEPARATOR.join(parts), tuple(placed))


__all__ = [
    "DATA_NOTE",
    "SEPARATOR",
    "TASK_ID",
    "TINY_PIECE_LINES",
    "FileGroup",
    "Layout",
    "group_code",
    "lay_out",
    "local_name",
    "safe",
    "task_text",
]
