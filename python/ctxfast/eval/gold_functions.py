"""Gold functions from a record's hunks, when the record names none.

An issue→fix record that gives its changed hunks but no gold functions (the issue corpus's
training rows, a user's own set) would score no function ranks. The gold functions are then
the innermost function or method around each changed line, found by ctxfast's own parser in
the files the fix changed, exactly as the miner names them (``mine.gold_symbols``), and
matched to the candidates by span as the corpus's own gold functions are
(``metrics.aligned_to_gold``).
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxfast.confine import read_many_confined
from ctxfast.eval.instances import Instance, hunk_span

if TYPE_CHECKING:
    from ctxfast.recon.graph import Node

#: Definition kinds that are functions (the candidates' ``is_function`` reads the same).
FUNCTION_KINDS = ("function", "method")


def definitions_of(files: Mapping[str, bytes]) -> dict[str, list[tuple[Node, str]]]:
    """Every definition of each file, with its qualname relative to its module, from
    ctxfast's parser run over a temporary tree holding only these files: a definition's
    local qualname depends on its own file alone, and a handful of files parses at once."""
    from ctxfast.repository import Repository

    with tempfile.TemporaryDirectory(prefix="ctxfast-gold-") as tmp:
        root = Path(tmp) / "tree"
        for rel, data in files.items():
            dest = root / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(data)
        repo = Repository(root, Path(tmp) / "index")
        repo.index(retrieval_state=False)
        graph = repo.graph
        try:
            # The module node (kind "def") is the file itself, not a definition in it.
            return {
                rel: [
                    (n, repo.local_symbol(rel, n.qualname))
                    for n in graph.nodes_in_file(rel)
                    if n.is_definition and n.kind != "def"
                ]
                for rel in files
            }
        finally:
            graph.close()


def innermost(
    defs: Sequence[tuple[Node, str]], line: int, lo: int, hi: int, insert: bool
) -> tuple[Node, str] | None:
    """The innermost of ``defs`` around ``line`` of a hunk spanning ``lo``–``hi``: an
    insertion's must hold both lines around it; a function or class beats a variable
    defined inside it (TS/JS locals). None outside all of them."""
    around = [
        (n, q)
        for n, q in defs
        if n.line <= line <= n.end_line and (not insert or n.line <= lo <= hi <= n.end_line)
    ]
    code = [d for d in around if d[0].kind != "var"] or around
    return max(code, key=lambda d: (d[0].line, -d[0].end_line)) if code else None


def function_spans(
    defs: Mapping[str, Sequence[tuple[Node, str]]], hunks: Sequence[dict[str, Any]]
) -> list[tuple[str, str, int, int]]:
    """``(file, qualname, start, end)`` of the innermost function or method around each
    changed line of ``hunks``; an insertion's function must hold both lines around it. A
    line outside every function names none (a module-level or class-level change)."""
    out: dict[tuple[str, str], tuple[str, str, int, int]] = {}
    for h in hunks:
        f = str(h["file"])
        lo, hi = hunk_span(h)
        insert = _kind(h) == "insert"
        fns = [(n, q) for n, q in defs.get(f, ()) if n.kind in FUNCTION_KINDS]
        for line in (lo, hi) if insert else range(lo, hi + 1):
            found = innermost(fns, line, lo, hi, insert)
            if found is not None:
                n, q = found
                out.setdefault((f, q), (f, q, n.line, n.end_line))
    return list(out.values())


def _kind(hunk: dict[str, Any]) -> str | None:
    """A hunk's kind: ``kind`` (the issue corpus) or its first block's (the Lite format and
    the miner: ``blocks: [[start, end, kind], ...]``)."""
    if "kind" in hunk:
        return str(hunk["kind"])
    blocks = hunk.get("blocks") or []
    return str(blocks[0][2]) if blocks and len(blocks[0]) > 2 else None


def derived_function_spans(
    root: Path, hunks: Sequence[dict[str, Any]]
) -> list[tuple[str, str, int, int]]:
    """:func:`function_spans` of ``hunks`` in the tree at ``root``; a changed file that
    cannot be read inside ``root`` (missing, a symlink, a special file) names none."""
    files = sorted({str(h["file"]) for h in hunks})
    read = read_many_confined(root, files)
    readable = {rel: data for rel, data in read if isinstance(data, bytes)}
    if not readable:
        return []
    return function_spans(definitions_of(readable), hunks)


def with_derived_functions(inst: Instance, root: Path) -> Instance:
    """``inst`` with gold functions derived from its hunks in the tree at ``root``
    (:func:`derived_function_spans`), for a record that names none; unchanged when no
    changed line lies in a function."""
    spans = derived_function_spans(root, inst.gold_hunks)
    if not spans:
        return inst
    return replace(inst, gold_spans=spans, gold_symbols=[(f, q) for f, q, _, _ in spans])
