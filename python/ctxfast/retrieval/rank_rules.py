"""Rank rules: after the re-rank, place what the best candidates imply but nothing in the
task names — the module header of the best file, an operator's or a protocol's twin, the
base class that sibling classes share, the class and constructor of a leading method, a
second file when one file fills the first ranks.

Each rule reaches into the whole ranking (the candidate it wants may rank below ``top_k``,
or be no candidate at all and come from the definition table) and moves one candidate to a
fixed rank with the score of the one before it, so the list stays sorted. Each says why in
the moved candidate's provenance. ``RetrievalConfig`` has the measurements behind each
rank.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ctxfast.retrieval.candidates import Candidate
from ctxfast.retrieval.config import RetrievalConfig
from ctxfast.retrieval.merge import signature_line
from ctxfast.retrieval.repoindex import RepoIndex

if TYPE_CHECKING:
    from ctxfast.recon.graph import Node


def apply_rank_rules(
    ranked: list[Candidate], ix: RepoIndex, top_file: str | None, cfg: RetrievalConfig
) -> None:
    """Every enabled rule over ``ranked`` (best first, changed in place), in this order: the
    header (rank 5), twins (right after their operator), the shared base (8), the enclosing
    class and constructor (10, 9), the second file (10). A later insert pushes what an
    earlier rule placed below it one rank down; each rule was measured in this order.
    ``top_file`` is the best file that is not demoted (None: no header)."""
    if cfg.module_header and top_file is not None:
        _insert_module_header(ranked, ix, top_file, cfg)
    if cfg.operator_twins:
        _insert_operator_twins(ranked, ix, cfg)
    if cfg.shared_base_of and cfg.shared_base_rank:
        _insert_shared_bases(ranked, ix, cfg)
    if cfg.enclosing_class_of and cfg.enclosing_class_rank:
        _insert_enclosing_classes(ranked, ix, cfg)
    if cfg.second_file_rank:
        _ensure_second_file(ranked, cfg.second_file_rank)


#: Binary operators with a reflected twin (``__radd__`` for ``__add__``).
_OPERATORS = frozenset(
    {
        *("add", "sub", "mul", "matmul", "truediv", "floordiv", "div", "mod", "divmod", "pow"),
        *("lshift", "rshift", "and", "xor", "or"),
    }
)
_DUNDER = re.compile(r"__([a-z]+)__")


#: The two halves of a protocol (``protocol_twins``): what one writes the other reads back.
_PROTOCOL_TWINS = {
    a: b
    for x, y in (
        ("__getstate__", "__setstate__"),
        ("__enter__", "__exit__"),
        ("__aenter__", "__aexit__"),
        ("__getitem__", "__setitem__"),
        ("__get__", "__set__"),
        ("__getattr__", "__setattr__"),
    )
    for a, b in ((x, y), (y, x))
}


def _operator_twin(name: str) -> str | None:
    """``__rX__`` for ``__X__`` and back, for a binary operator ``X``; None otherwise."""
    m = _DUNDER.fullmatch(name)
    core = m.group(1) if m else ""
    if core in _OPERATORS:
        return f"__r{core}__"
    if core.startswith("r") and core[1:] in _OPERATORS:
        return f"__{core[1:]}__"
    return None


def _insert_operator_twins(ranked: list[Candidate], ix: RepoIndex, cfg: RetrievalConfig) -> None:
    """Right after each binary operator method among the first ``operator_twin_rank``
    candidates, its reflected twin in the same class (moved up if it ranks lower), at the
    same score."""
    i = 0
    while i < min(cfg.operator_twin_rank, len(ranked)):
        c = ranked[i]
        i += 1
        if not c.qualname or "." not in c.qualname:
            continue
        owner, name = c.qualname.rsplit(".", 1)
        twin_name = _operator_twin(name) or (
            _PROTOCOL_TWINS.get(name) if cfg.protocol_twins else None
        )
        twin = ix.defs_by_qualname.get(f"{owner}.{twin_name}") if twin_name else None
        if twin is None or twin.file != c.file:
            continue
        if _move_to(ranked, ix, twin, i + 1, f"twin:{c.qualname}"):
            i += 1


def _insert_module_header(
    ranked: list[Candidate], ix: RepoIndex, path: str, cfg: RetrievalConfig
) -> None:
    """Put ``path``'s module header (line 1 up to its first definition, at most
    ``module_header_lines``) at rank ``module_header_rank``, unless module-level lines of that
    file already rank there."""
    pos = max(cfg.module_header_rank - 1, 0)
    if any(c.file == path and c.qualname is None for c in ranked[: pos + 1]):
        return
    defs = ix.defs_by_file.get(path, [])
    last = len(ix.lines(path))
    end = min(defs[0].line - 1 if defs else last, cfg.module_header_lines)
    if end < 1:
        return
    header = Candidate(None, "lines", path, 1, end, "", ix.span_text(path, 1, end))
    header.provenance.append(f"module-header:{path}")
    header.symbol = ix.local_symbol(path, None)
    header.score = ranked[min(pos, len(ranked)) - 1].score if pos and ranked else 0.0
    ranked.insert(min(pos, len(ranked)), header)


def _insert_enclosing_classes(ranked: list[Candidate], ix: RepoIndex, cfg: RetrievalConfig) -> None:
    """The class of each method among the first ``enclosing_class_of`` candidates (the
    module header not counted) at rank ``enclosing_class_rank`` (moved up if it ranks lower,
    built from the definition table if it was no candidate), and its constructor, when
    recall found it, at rank ``enclosing_init_rank``; either stays where it is if it ranks
    there or higher already."""
    heads = [c for c in ranked if c.qualname is not None][: cfg.enclosing_class_of]
    for c in heads:
        qualname = c.qualname or ""
        if c.kind not in ("function", "method"):
            continue
        owner = _owner_class(ix, qualname)
        if owner is None or owner.file != c.file:
            continue
        if cfg.enclosing_init_rank:
            inits = (ix.defs_by_qualname.get(f"{owner.qualname}.{n}") for n in _CONSTRUCTORS)
            init = next((d for d in inits if d is not None), None)
            if init is not None:
                why = f"enclosing:{qualname}"
                _move_to(ranked, ix, init, cfg.enclosing_init_rank, why, build=False)
        _move_to(ranked, ix, owner, cfg.enclosing_class_rank, f"enclosing:{qualname}")


#: The base classes in a class's first signature line: Python's ``class X(A, B):``, and
#: ``class X extends A`` in TypeScript, JavaScript and Java (modifiers and type parameters
#: allowed). Rust and Go have no class inheritance.
_BASES = re.compile(
    r"^\s*(?:(?:export|default|public|protected|private|abstract|final|static|sealed|open)\s+)*"
    r"class\s+\w+\s*(?:\((?P<py>[^)]*)\)|(?:<[^>]*>)?\s*extends\s+(?P<ext>[\w.]+))"
)


def _base_names(ix: RepoIndex, node: Node) -> list[str]:
    """The last segment of each base class ``node`` names (``models.Model`` → ``Model``,
    ``Generic[T]`` → ``Generic``); keyword arguments such as ``metaclass=`` are left out."""
    m = _BASES.match(signature_line(ix, node.qualname))
    if m is None:
        return []
    text = m.group("py") if m.group("py") is not None else m.group("ext") or ""
    out = []
    for part in text.split(","):
        name = part.strip().split("[")[0].split(".")[-1]
        if name.isidentifier() and "=" not in part:
            out.append(name)
    return out


def _insert_shared_bases(ranked: list[Candidate], ix: RepoIndex, cfg: RetrievalConfig) -> None:
    """The base class that two or more classes among the first ``shared_base_of`` candidates
    derive from (a method stands for its class) at rank ``shared_base_rank``, moved up or
    built from the definition table. The base must resolve to one class: the one defined in
    a file of those classes, else the only class of that name in the repository. The base
    most of them share goes first (ties: the earliest-ranked class's first base); one base
    per task."""
    heads = [c for c in ranked if c.qualname is not None][: cfg.shared_base_of]
    classes: dict[str, Node] = {}
    for c in heads:
        node = ix.defs_by_qualname.get(c.qualname or "")
        if node is not None and node.kind != "class":
            node = _owner_class(ix, node.qualname)
        if node is not None:
            classes.setdefault(node.qualname, node)
    if len(classes) < 2:
        return
    count: dict[str, int] = {}
    for node in classes.values():
        for b in dict.fromkeys(_base_names(ix, node)):
            count[b] = count.get(b, 0) + 1
    files = {node.file for node in classes.values()}
    for name, n in sorted(count.items(), key=lambda kv: -kv[1]):
        if n < 2:
            break
        defs = [d for d in ix.defs_by_name.get(name, ()) if d.kind == "class"]
        local = [d for d in defs if d.file in files]
        pick = local or (defs if len(defs) == 1 else [])
        if pick:
            _move_to(ranked, ix, pick[0], cfg.shared_base_rank, f"shared-base:{name}")
            return


def _owner_class(ix: RepoIndex, qualname: str) -> Node | None:
    """The class ``qualname`` is defined in (a method's class), or None."""
    if "." not in qualname:
        return None
    owner = ix.defs_by_qualname.get(qualname.rsplit(".", 1)[0])
    return owner if owner is not None and owner.kind == "class" else None


#: Names of a class's constructor method (Python, JavaScript / TypeScript).
_CONSTRUCTORS = ("__init__", "constructor")


def _move_to(
    ranked: list[Candidate], ix: RepoIndex, node: Node, rank: int, why: str, *, build: bool = True
) -> bool:
    """``node``'s candidate at ``rank`` (moved up if it ranks lower; built from the
    definition table if it is no candidate and ``build``), unless it ranks there or higher
    already or is missing (then False)."""
    now = next((j for j, o in enumerate(ranked) if o.qualname == node.qualname), None)
    if now is not None and now < rank:
        return False
    if now is None and not build:
        return False
    _place(
        ranked, ranked.pop(now) if now is not None else _definition_candidate(ix, node), rank, why
    )
    return True


def _place(ranked: list[Candidate], moved: Candidate, rank: int, why: str) -> None:
    """Insert ``moved`` (taken out of ``ranked`` or new) at ``rank`` with the score of the
    candidate before it, noting ``why`` in its provenance."""
    moved.provenance.append(why)
    pos = min(rank - 1, len(ranked))
    moved.score = ranked[pos - 1].score if pos else moved.score
    ranked.insert(pos, moved)


def _ensure_second_file(ranked: list[Candidate], rank: int) -> None:
    """When the first ``rank`` candidates all come from one file, move the best candidate of
    another file to ``rank`` (its provenance says which file filled the ones before it)."""
    if rank < 2 or len(ranked) <= rank or len({c.file for c in ranked[:rank]}) > 1:
        return
    other = next((j for j in range(rank, len(ranked)) if ranked[j].file != ranked[0].file), None)
    if other is not None:
        _place(ranked, ranked.pop(other), rank, f"second-file:{ranked[0].file}")


def _definition_candidate(ix: RepoIndex, node: Node) -> Candidate:
    """A candidate for a definition no source recalled, built from the definition table:
    its whole span, its signature line and its module-relative symbol."""
    c = Candidate(
        node.qualname,
        node.kind,
        node.file,
        node.line,
        node.end_line,
        signature_line(ix, node.qualname),
        ix.span_text(node.file, node.line, node.end_line),
    )
    c.symbol = ix.local_symbol(node.file, node.qualname)
    return c
