"""The recall sources (plus traceback anchoring), each a pure function.

1. lexical: ripgrep's crates, fixed strings, ≤40 hits per term (:class:`LexicalRecall`);
2. api-desc: description↔description BM25 over ``api.db``, ≤20;
3. callgraph: one hop over invoke/import/contain from resolved identifiers, ≤20;
4. traceback: every project frame of the error maps to its enclosing definition (first-class:
   a frame is the strongest evidence of where a failure lives).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from ctxfast.recon.graph import CodeGraph, Node
from ctxfast.retrieval.apiindex import ApiIndex
from ctxfast.retrieval.candidates import RawCandidate
from ctxfast.retrieval.lexical import (
    LANGUAGE_GLOBS,
    LexicalCorpus,
    LexicalResult,
    lexical_search,
)
from ctxfast.retrieval.query import Frame, innermost_depths
from ctxfast.retrieval.repoindex import RepoIndex
from ctxfast.retrieval.task import TaskQuery


@dataclass(frozen=True)
class RecallSettings:
    """Where candidate definitions come from (``RetrievalConfig.sources``): each recall
    source can be switched off and its yield capped. All are on: each finds definitions the
    others miss, and the re-rank orders what they bring."""

    FLAT_NAMES: ClassVar[Mapping[str, str]] = {}

    #: Line-level search for the task's identifiers, error strings and paths.
    lexical: bool = True
    #: At most this many lexical hits per searched term (40): a common word stops early.
    lexical_max_hits: int = 40
    #: Search of the definitions' API descriptions (signature and docstring) with the task.
    api_desc: bool = True
    #: How many API-description matches become candidates (20).
    api_desc_k: int = 20
    #: One hop in the code graph (calls, imports, containment) from definitions the task
    #: names.
    callgraph: bool = True
    #: How many call-graph neighbours become candidates (20).
    callgraph_k: int = 20
    #: Every project frame of a traceback in the task recalls its enclosing definition, and
    #: the frames' files count as a file signal: a frame is the strongest evidence of where a
    #: failure happens.
    traceback: bool = True
    #: Handlers dispatched by class name: a capitalised name in the task (``Poly``) recalls
    #: ``<prefix><name>`` of every family of such handlers in one scope (``_print_Poly``),
    #: which no other source finds since the task never writes that name.
    dispatch: bool = True
    #: A family counts only when it has at least this many handlers (5): two functions
    #: sharing a prefix are no dispatch table.
    dispatch_family_min: int = 5
    #: The best this many definitions by their own BM25 text become candidates too (50).
    def_bm25_k: int = 50
    #: Definitions ranked inside the best-ranked files become candidates: a file the
    #: signals agree on usually holds the fix even when no term of the task is in the
    #: definition's name.
    infile_defs: bool = True
    #: How many of the best files lend definitions that way (1: the best file only; more
    #: displaced better candidates from the top of the list).
    infile_files: int = 1
    #: How many definitions of those files become candidates (30).
    infile_k: int = 30
    #: The files ranked after those, up to this rank (5), each lend a few definitions too:
    #: the file to change is often second to fifth.
    infile_next_files: int = 5
    #: How many definitions each of those lends (5).
    infile_next_k: int = 5
    #: The definition holding a string the task quotes (an error message) is a candidate:
    #: the message pins the function that prints it. Needs the ``literals`` file signal.
    literal_defs: bool = True


class LexicalRecall:
    """Line-level lexical search over an indexed repository's files, for one index state:
    its indexed languages' globs, and for a language without globs of its own (the generic
    tier's and plain files': Elixir, Fortran, ...) the extensions its files have, so that no
    file the index holds is left out of lexical recall; every known language when the index
    holds no file.

    The first search streams the files from disk: a one-shot process (the command line) asks
    once, and walking and searching in one pass costs about half of first loading every
    file into memory (0.07 against 0.16 s on sympy). From the second search on, the files
    are held in a :class:`LexicalCorpus` loaded once, so a long-lived process searches
    memory. Both answer identically (the corpus is a snapshot of the same files, and the
    state is rebuilt when any file changes)."""

    def __init__(self, index: RepoIndex) -> None:
        langs = sorted({lang for lang in index.languages.values() if lang})
        self.root = index.root
        self.extra_globs = sorted(
            {
                "*." + name.rsplit(".", 1)[1]
                for path, lang in index.languages.items()
                if lang and lang not in LANGUAGE_GLOBS
                for name in (path.rsplit("/", 1)[-1],)
                if "." in name
            }
        )
        #: The index's files skipped as minified or generated: never searched, so that
        #: their lines neither become candidates nor take a term's hits.
        self.machine_made = index.machine_made
        known = [lang for lang in langs if lang in LANGUAGE_GLOBS]
        self.languages = known if known or self.extra_globs else None
        self._corpus: LexicalCorpus | None = None
        self._searched = False

    def search(self, terms: list[str], max_hits: int) -> LexicalResult:
        """Each term's first ``max_hits`` lines, without their text (empty): recall reads
        where a term is, and copying up to 500 characters of every hit line out of the
        search was a tenth of its time."""
        if not self._searched:
            self._searched = True
            return lexical_search(
                self.root,
                terms,
                self.languages,
                max_hits,
                extra_globs=self.extra_globs,
                max_line_chars=0,
                exclude_files=self.machine_made,
            )
        if self._corpus is None:
            self._corpus = LexicalCorpus(
                self.root,
                languages=self.languages,
                extra_globs=self.extra_globs,
                exclude_files=self.machine_made,
            )
        return self._corpus.search(terms, max_hits=max_hits, max_line_chars=0)


def lexical_source(recall: LexicalRecall, tq: TaskQuery, max_hits: int) -> list[RawCandidate]:
    terms = [t for t in tq.query.recall_terms() if len(t.strip()) >= 3]
    if not terms:
        return []
    res = recall.search(terms, max_hits)
    return [
        RawCandidate("ripgrep", h.term, h.path, h.line, h.line)
        for th in res.by_term.values()
        for h in th.hits
    ]


def api_desc_source(api: ApiIndex, tq: TaskQuery, k: int) -> list[RawCandidate]:
    out = []
    for row, score in api.search(list(tq.api_terms), k=k):
        d_end = row.line
        out.append(
            RawCandidate(
                "api-desc", row.qualname, row.file, row.line, d_end, row.qualname, row.kind, score
            )
        )
    return out


class CallNeighbours:
    """One hop in the code graph from a definition (the targets of its calls and imports,
    the definitions calling it, what it contains), for one index state. Remembered per
    definition: the graph queries cost about 8 ms a query on Django, return the same rows
    until the index changes, and tasks on one repository name the same definitions again."""

    def __init__(self, graph: CodeGraph) -> None:
        self.graph = graph
        self._known: dict[str, tuple[Node | None, ...] | None] = {}

    def of(self, node_id: str) -> tuple[Node | None, ...] | None:
        """The neighbours of ``node_id`` in query order; ``None`` when the graph has no
        such node."""
        if node_id not in self._known:
            graph = self.graph
            node = graph.node(node_id)
            if node is None:
                self._known[node_id] = None
            else:
                # Batched: one query per neighbour kind, not one per neighbour.
                neighbours: list[Node | None] = list(graph.scope_edge_targets(node))
                neighbours += graph.scope_definitions(graph.callers(node.id))
                neighbours += graph.edge_targets(node.id, "contain")
                self._known[node_id] = tuple(neighbours)
        return self._known[node_id]


def callgraph_source(
    neighbours: CallNeighbours, index: RepoIndex, tq: TaskQuery, k: int
) -> list[RawCandidate]:
    out: list[RawCandidate] = []
    seen: set[str] = set()
    for ident in tq.query.identifiers:
        last = ident.rsplit(".", 1)[-1]
        defs = [index.defs_by_qualname[ident]] if ident in index.defs_by_qualname else []
        defs = (
            defs or [d for d in index.defs_by_name.get(last, []) if d.qualname.endswith(ident)][:3]
        )
        for d in defs:
            for n in neighbours.of(d.id) or ():
                if n is None or n.id in seen or n.kind not in ("function", "class"):
                    continue
                seen.add(n.id)
                out.append(
                    RawCandidate("callgraph", ident, n.file, n.line, n.end_line, n.qualname, n.kind)
                )
                if len(out) >= k:
                    return out
    return out


def frame_definition(index: RepoIndex, path: str, frame: Frame) -> Node | None:
    """The definition a frame ran in. Tracebacks in issues usually come from an installed
    release, not from the checkout, so the printed line may sit in another definition here:
    when the definition at that line does not bear the frame's function name, the nearest
    definition of that name in the file is taken instead."""
    d = index.innermost(path, frame.line)
    # Java and Go print qualified names (`pkg.Type.method`); the definition name is the last.
    name = (frame.func or "").rsplit(".", 1)[-1]
    if not name or name.startswith("<") or (d is not None and d.name == name):
        return d
    named: list[Node] = [x for x in index.defs_by_file.get(path, ()) if x.name == name]
    if not named:
        return d
    return min(named, key=lambda x: (abs(x.line - frame.line), x.line))


def traceback_source(index: RepoIndex, tq: TaskQuery) -> list[RawCandidate]:
    """One candidate per project frame; ``score`` is ``1 / (1 + depth)`` with depth 0 for the
    innermost frame, so the frame where the error surfaced weighs most."""
    out = []
    frames = tq.query.frames
    for frame, depth in zip(frames, innermost_depths(frames), strict=True):
        path = index.resolve_frame(frame.path, frame.func)
        if path is None:
            continue
        weight = 1.0 / (1 + depth)
        d = frame_definition(index, path, frame)
        if d is not None:
            out.append(
                RawCandidate(
                    "traceback",
                    f"{path}:{frame.line}",
                    path,
                    d.line,
                    d.end_line,
                    d.qualname,
                    d.kind,
                    weight,
                )
            )
        else:
            out.append(
                RawCandidate(
                    "traceback", f"{path}:{frame.line}", path, frame.line, frame.line, score=weight
                )
            )
    return out
