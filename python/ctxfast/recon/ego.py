"""The tree-encoded k=1 ego-graph: an entity, its one-hop neighbours, signatures.

Models read trees better than edge lists, and signatures orient where bodies distract, so the
injection is the root definition, then one child per neighbour edge: outgoing ``invoke`` and
``import`` edges from the entity's own call sites, incoming ``invoke`` edges (callers), and the
``contain`` edge to the enclosing scope. Each invoke/import edge is rendered at its *call site*
(``qualname:<type> [file:line]``) with the target definition as a child line
(``qualname (kind) — "signature" [file:line]``). Never a body, never a line range.

The radius is fixed at 1: a flattened k=2 expansion measurably hurts (RepoGraph), so asking for
``max_radius=2`` raises ``ValueError`` rather than being a tuning knob.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ctxfast.errors import InvalidArgumentError
from ctxfast.recon.graph import CodeGraph, Node
from ctxfast.tokens import DEFAULT_ENCODING, count_tokens

EGO_GRAPH_MAX_TOKENS = 3_500
MAX_RADIUS = 1


@dataclass(frozen=True)
class EgoEdge:
    """One neighbour of the root. ``direction`` is ``out`` (the root's call/import site points
    at ``target``), ``in`` (``target`` calls the root) or ``up`` (the ``contain`` parent)."""

    type: str
    direction: str
    site_file: str
    site_line: int
    target: Node
    target_signature: str


@dataclass
class EgoGraph:
    root: Node
    root_signature: str
    edges: list[EgoEdge] = field(default_factory=list)
    max_radius: int = MAX_RADIUS

    def node_ids(self) -> set[str]:
        """Every definition in the graph: the root and its one-hop neighbours."""
        return {self.root.id} | {e.target.id for e in self.edges}

    def files(self) -> list[str]:
        """Files the neighbourhood touches (root file first), for impact questions."""
        seen = [self.root.file]
        for e in self.edges:
            if e.target.file not in seen:
                seen.append(e.target.file)
        return seen

    def _lines(self, edges: list[EgoEdge]) -> list[str]:
        lines = [_def_line(self.root, self.root_signature)]
        for i, e in enumerate(edges):
            last = i == len(edges) - 1
            branch = "└── " if last else "├── "
            if e.type == "contain":
                lines.append(
                    f"{branch}{e.target.qualname}:contain [{e.target.file}:{e.target.line}]"
                )
                continue
            label = "invoked-by" if e.direction == "in" else e.type
            name = e.target.qualname
            lines.append(f"{branch}{name}:{label} [{e.site_file}:{e.site_line}]")
            pad = "    " if last else "│   "
            lines.append(f"{pad}└── {_def_line(e.target, e.target_signature)}")
        return lines

    def render(
        self, max_tokens: int = EGO_GRAPH_MAX_TOKENS, *, encoding: str = DEFAULT_ENCODING
    ) -> str:
        """The tree text within ``max_tokens`` (exact count). Neighbours are dropped from
        the end (callers and contain last in priority) with a count line, never mid-line."""
        edges = list(self.edges)
        text = "\n".join(self._lines(edges))
        while count_tokens(text, encoding) > max_tokens and edges:
            edges.pop()
            omitted = len(self.edges) - len(edges)
            text = "\n".join([*self._lines(edges), f"… {omitted} more neighbours omitted"])
        if count_tokens(text, encoding) > max_tokens:
            return ""
        return text


def _def_line(node: Node, signature: str) -> str:
    sig = signature.strip().replace('"', "'")
    return f'{node.qualname} ({node.kind}) — "{sig}" [{node.file}:{node.line}]'


def resolve_entity(graph: CodeGraph, entity: str | Node) -> Node:
    """The definition an entity string names: exact qualname first, then suffix/name match."""
    if isinstance(entity, Node):
        return entity
    found = [n for n in graph.lookup(entity) if n.is_definition]
    if not found:
        raise InvalidArgumentError(f"no definition named {entity!r} in the code graph")
    exact = [n for n in found if n.qualname == entity]
    return (exact or found)[0]


def build_ego_graph(graph: CodeGraph, entity: str | Node, max_radius: int = MAX_RADIUS) -> EgoGraph:
    """The k=1 neighbourhood of ``entity``. ``max_radius`` must be 1 (0 gives the root alone)."""
    if max_radius not in (0, 1):
        raise ValueError(
            f"max_radius={max_radius}: the ego-graph is k=1 only (a k=2 expansion is forbidden)"
        )
    root = resolve_entity(graph, entity)
    root_sig = _sig(graph, root)
    ego = EgoGraph(root=root, root_signature=root_sig, max_radius=max_radius)
    if max_radius == 0:
        return ego
    seen: set[tuple[str, str, str]] = set()

    def add(edge_type: str, direction: str, site_file: str, site_line: int, target: Node) -> None:
        key = (edge_type, direction, target.id)
        if key in seen or target.id == root.id:
            return
        seen.add(key)
        ego.edges.append(
            EgoEdge(edge_type, direction, site_file, site_line, target, _sig(graph, target))
        )

    for site, edge in graph.scope_edges(root):
        if edge.type in ("invoke", "import"):
            target = graph.node(edge.dst)
            if target is not None:
                add(edge.type, "out", site.file, site.line, target)
    for site in graph.callers(root.id):
        scope = graph.scope_definition(site)
        if scope is not None:
            add("invoke", "in", site.file, site.line, scope)
    for edge in graph.edges_from(root.id, "contain"):
        parent = graph.node(edge.dst)
        if parent is not None:
            add("contain", "up", parent.file, parent.line, parent)
    return ego


def _sig(graph: CodeGraph, node: Node) -> str:
    sig = graph.signature(node.id)
    if sig is not None and sig.signature:
        return sig.signature.splitlines()[0]
    return node.name
