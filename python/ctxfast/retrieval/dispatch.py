"""Handlers dispatched by a class's name: the task that names a class names its handlers.

A printer, visitor or serializer picks the method for an object from the object's class
name: ``LatexPrinter._print_Poly`` prints a ``Poly``, ``NodeVisitor.visit_Call`` visits a
``Call``. An issue about how ``Poly`` prints names ``Poly`` and never ``_print_Poly``, so
neither the name match nor BM25 (which splits ``_print_Poly`` into two common words) lifts
the one method to change above its siblings. Such a family is recognised from the index
alone, never from a list of known prefixes: at least ``min_family`` definitions of one scope
(a class, a module) named ``<prefix><ClassName>``, the prefix lower-case words ending in an
underscore and the suffix capitalised. A task identifier that is capitalised then recalls
every ``<prefix><identifier>`` of every family prefix as a ``dispatch`` candidate.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence

from ctxfast.recon.graph import Node
from ctxfast.retrieval.candidates import RawCandidate
from ctxfast.retrieval.repoindex import RepoIndex
from ctxfast.retrieval.task import TaskQuery

#: ``_print_`` + ``Poly``, ``visit_`` + ``Call``: lower-case words ending in ``_``, then a
#: capitalised name.
HANDLER_NAME = re.compile(r"(_*[a-z][a-z0-9]*(?:_[a-z0-9]+)*_)([A-Z][A-Za-z0-9]*)")


def family_prefixes(defs: Iterable[Node], min_family: int) -> frozenset[str]:
    """The prefixes of every scope's family of at least ``min_family`` class-named
    handlers."""
    counts: Counter[tuple[str, str, str]] = Counter()
    for d in defs:
        if d.kind != "function":
            continue
        m = HANDLER_NAME.fullmatch(d.name)
        if m:
            scope = d.qualname.rsplit(".", 1)[0] if "." in d.qualname else ""
            counts[(d.file, scope, m.group(1))] += 1
    return frozenset(prefix for (_, _, prefix), n in counts.items() if n >= min_family)


def dispatch_source(ix: RepoIndex, tq: TaskQuery, prefixes: Sequence[str]) -> list[RawCandidate]:
    """One candidate per handler of a capitalised identifier the task names, in every
    family of the repository (``prefixes``, from :func:`family_prefixes`; the file evidence
    then tells the printers apart)."""
    out: list[RawCandidate] = []
    for ident in tq.named if prefixes else ():
        if not ident[:1].isupper() or not ident.isidentifier():
            continue
        for prefix in prefixes:
            for d in ix.defs_by_name.get(prefix + ident, []):
                out.append(
                    RawCandidate(
                        "dispatch", ident, d.file, d.line, d.end_line, d.qualname, d.kind, 1.0
                    )
                )
    return out
