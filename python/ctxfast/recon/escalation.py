"""The level-0 deterministic gate and the R0→R2 escalation ladder.

Retrieval is a ladder whose first rung is a gate: most edits need only the module being
edited (Repoformer's ~20% finding), so when none of the six signals fires the stage returns
the ≤500-token manifest header and nothing else. When a signal fires, the ladder climbs one
rung at a time, each rung gated on evidence from the previous one, and stops at R2: R3/R4 are
deferred, and a run that would need them records ``r3_required_deferred`` and proceeds with R2.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from ctxfast.errors import InvalidArgumentError
from ctxfast.recon.ego import EGO_GRAPH_MAX_TOKENS, EgoGraph, build_ego_graph, resolve_entity
from ctxfast.recon.graph import CodeGraph, Node
from ctxfast.recon.manifest import manifest_header, render_manifest_header
from ctxfast.text import (
    CALL,
    CAMEL_CASE,
    CONFIG_FILE,
    CONFIG_KEY,
    DOTTED_NAME,
    LOWER_SNAKE_CASE,
)
from ctxfast.tokens import DEFAULT_ENCODING, count_tokens

MANIFEST_HEADER_MAX_TOKENS = 500
RECON_CONTEXT_MAX_TOKENS = 4_000

# S1: code-looking identifiers — dotted names, CamelCase, lower-case snake_case, calls
# ``name(`` and anything in backticks. Plain English words are not symbols.
_TICKS = re.compile(r"`([A-Za-z_][A-Za-z0-9_.]*)`")
# S5: config keys and config files.
_ENV_REF = re.compile(r"\benv\.[A-Za-z_][A-Za-z0-9_]*")
_FILE_EXTS = (
    *(".py", ".js", ".ts", ".go", ".rs", ".java", ".php", ".rb"),
    *(".toml", ".json", ".yaml", ".yml"),
)


def code_identifiers(text: str) -> list[str]:
    """Code-looking identifiers of ``text`` in first-seen order, deduplicated."""
    found: dict[str, None] = {}
    for rx in (_TICKS, DOTTED_NAME, CALL, CAMEL_CASE, LOWER_SNAKE_CASE):
        for m in rx.finditer(text):
            ident = m.group(1) if rx.groups else m.group(0)
            if ident.endswith(_FILE_EXTS) or ident.lower().endswith(_FILE_EXTS):
                continue
            found.setdefault(ident, None)
    return list(found)


@dataclass(frozen=True)
class GateSignal:
    """One fired signal: ``id`` S1–S6, what triggered it, the ``file:line`` evidence, and the
    named entity it points at (the R0 content) when one exists."""

    id: str
    trigger: str
    evidence: str
    named_entity: str | None = None


@dataclass
class GateResult:
    """The gate's verdict and the ladder's climb. ``context`` is the model-facing injection
    (the injection's shape) within the 4,000-token recon budget."""

    retrieved: bool
    entity: str
    signals: list[GateSignal]
    level: str
    ladder: list[dict[str, Any]]
    manifest_header: dict[str, Any]
    named_entity: str | None = None
    deferred: str | None = None
    context: str = ""
    token_count: int = 0
    ego_graph: EgoGraph | None = field(default=None, repr=False)

    def to_json(self) -> str:
        if not self.retrieved:
            return json.dumps(
                {
                    "retrieved": False,
                    "entity": self.entity,
                    "manifest_header": self.manifest_header,
                },
                indent=2,
            )
        data = {
            "retrieved": True,
            "entity": self.entity,
            "level": self.deferred or self.level,
            "named_entity": self.named_entity,
            "signals": [asdict(s) for s in self.signals],
            "ladder": self.ladder,
            "manifest_header": self.manifest_header,
            "context": self.context,
            "token_count": self.token_count,
        }
        return json.dumps(data, indent=2)


@dataclass(frozen=True)
class GateConfig:
    """Which signals are on (for ablation) and the budgets of the injection."""

    signals: tuple[str, ...] = ("S1", "S2", "S3", "S4", "S5", "S6")
    max_level: str = "R2"
    manifest_header_tokens: int = MANIFEST_HEADER_MAX_TOKENS
    ego_graph_tokens: int = EGO_GRAPH_MAX_TOKENS
    total_tokens: int = RECON_CONTEXT_MAX_TOKENS
    encoding: str = DEFAULT_ENCODING


def _loc(node: Node) -> str:
    return f"{node.file}:{node.line}"


class Gate:
    """Evaluates S1–S6 for one task against one repository's graph and manifest."""

    def __init__(self, graph: CodeGraph, manifest: Mapping[str, Any], config: GateConfig):
        self.graph = graph
        self.manifest = manifest
        self.config = config

    def _entity(self, current_entity: str) -> Node | None:
        try:
            return resolve_entity(self.graph, current_entity)
        except InvalidArgumentError:
            return None

    def signals(
        self, task_text: str, current: Node | None, sbfl_top: str | None
    ) -> list[GateSignal]:
        on = set(self.config.signals)
        out: list[GateSignal] = []
        cur_file = current.file if current else None
        if "S1" in on:
            out += self._s1(task_text, current)
        if "S2" in on and current is not None:
            for site, edge in self.graph.file_edges(current.file, "import"):
                dst = self.graph.node(edge.dst)
                if dst is not None and dst.file != cur_file:
                    out.append(
                        GateSignal("S2", f"import of {dst.qualname}", _loc(site), dst.qualname)
                    )
                    break
        if "S3" in on and sbfl_top:
            top = self._entity(sbfl_top)
            if top is not None and top.file != cur_file:
                out.append(
                    GateSignal(
                        "S3", f"failing-test top entity {top.qualname}", _loc(top), top.qualname
                    )
                )
        if "S4" in on and current is not None:
            for site, edge in self.graph.scope_edges(current):
                if edge.type not in ("invoke", "import"):
                    continue
                dst = self.graph.node(edge.dst)
                if dst is not None and dst.file != cur_file:
                    out.append(
                        GateSignal("S4", f"{edge.type} of {dst.qualname}", _loc(site), dst.qualname)
                    )
                    break
        if "S5" in on:
            out += self._s5(task_text, cur_file)
        if "S6" in on:
            out += self._s6(task_text, current)
        return out

    def _s1(self, task_text: str, current: Node | None) -> list[GateSignal]:
        out = []
        for ident in code_identifiers(task_text):
            defs = [n for n in self.graph.lookup(ident) if n.is_definition]
            if current is not None and any(
                d.file == current.file and d.qualname.startswith(current.qualname.rsplit(".", 1)[0])
                for d in defs
            ):
                continue  # resolvable in the current entity's scope
            if defs:
                d = defs[0]
                out.append(
                    GateSignal(
                        "S1",
                        f"identifier {ident} defined outside the current scope",
                        _loc(d),
                        d.qualname,
                    )
                )
            else:
                out.append(GateSignal("S1", f"identifier {ident} resolves nowhere", "", None))
        return out

    def _s5(self, task_text: str, cur_file: str | None) -> list[GateSignal]:
        out = []
        keys = [
            m.group(0) for rx in (CONFIG_FILE, CONFIG_KEY, _ENV_REF) for m in rx.finditer(task_text)
        ]
        for key in dict.fromkeys(keys):
            evidence = self._config_evidence(key)
            if evidence and evidence.split(":", 1)[0] != cur_file:
                out.append(GateSignal("S5", f"config reference {key}", evidence, None))
        return out

    def _config_evidence(self, key: str) -> str | None:
        """Where the repository states ``key``: the file itself for a config file name, else
        the manifest claim or the first definition/line naming it."""
        files = {f.path for f in self.graph.files()}
        if key in files:
            return f"{key}:1"
        for path in sorted(files):
            if path.endswith("/" + key):
                return f"{path}:1"
        needle = key.removeprefix("env.")
        blob = json.dumps(self.manifest)
        if needle in blob:
            for section in self.manifest.values():
                for claim in section if isinstance(section, list) else [section]:
                    if isinstance(claim, dict) and needle in json.dumps(claim):
                        ev = claim.get("evidence")
                        if isinstance(ev, str):
                            return ev
        defs = [n for n in self.graph.lookup(needle) if n.is_definition]
        return _loc(defs[0]) if defs else None

    def _s6(self, task_text: str, current: Node | None) -> list[GateSignal]:
        targets: list[tuple[str, str]] = []
        for comp in self.manifest.get("components") or []:
            targets.append((str(comp.get("name", "")).replace("/", "."), comp.get("evidence", "")))
        for ep in self.manifest.get("entry-points") or []:
            name = str(ep.get("target") or ep.get("name") or "").replace(":", ".")
            targets.append((name, ep.get("evidence", "")))
        own = current.qualname if current else ""
        out = []
        for ident in DOTTED_NAME.findall(task_text):
            for name, evidence in targets:
                if not name or not (ident == name or ident.startswith(name + ".")):
                    continue
                if own == name or own.startswith(name + "."):
                    continue
                out.append(GateSignal("S6", f"{ident} names component {name}", evidence, ident))
                break
        return out


def run_gate(
    graph: CodeGraph,
    manifest: Mapping[str, Any],
    task_text: str,
    current_entity: str,
    sbfl_top: str | None = None,
    config: GateConfig | None = None,
) -> GateResult:
    """Gate, then climb R0 → R1 → R2 (never further), then render the injection."""
    cfg = config or GateConfig()
    gate = Gate(graph, manifest, cfg)
    current = gate._entity(current_entity)
    header = manifest_header(dict(manifest))
    signals = gate.signals(task_text, current, sbfl_top)
    if not signals:
        text = render_manifest_header(dict(manifest), max_tokens=cfg.manifest_header_tokens)
        return GateResult(
            False,
            current_entity,
            [],
            "none",
            [],
            header,
            context=text,
            token_count=count_tokens(text, cfg.encoding),
        )

    # R0: the task plus the named entity of the first signal that names a resolvable one.
    named: Node | None = None
    for s in signals:
        if s.named_entity:
            named = gate._entity(s.named_entity)
            if named is not None:
                break
    ladder: list[dict[str, Any]] = [
        {
            "level": "R0",
            "entity": named.qualname if named else None,
            "reason": f"signal {signals[0].id} fired",
        }
    ]
    level = "R0"
    ego: EgoGraph | None = None
    deferred = None
    if named is not None and cfg.max_level in ("R1", "R2"):
        internal = (
            graph.scope_edges(named)
            or graph.edges_from(named.id)
            or graph.file_edges(named.file, "import")
        )
        if internal:
            ego = build_ego_graph(graph, named)
            r1_ids = {named.id} | {e.target.id for e in ego.edges if e.target.file == named.file}
            ladder.append(
                {
                    "level": "R1",
                    "entity": named.qualname,
                    "reason": "named entity has project-internal edges",
                }
            )
            level = "R1"
            # R1's map holds the entity and its same-file neighbours; an outgoing edge of the
            # entity whose target lives in another file is the evidence for R2.
            cross = [
                e
                for e in ego.edges
                if e.direction == "out"
                and e.type in ("invoke", "import")
                and e.target.file != named.file
                and e.target.id not in r1_ids
            ]
            if cross and cfg.max_level == "R2":
                ladder.append(
                    {
                        "level": "R2",
                        "entity": named.qualname,
                        "reason": f"cross-file edge to {cross[0].target.qualname} missing from R1",
                    }
                )
                level = "R2"
                second_hop = any(
                    graph.node(e.dst) is not None and graph.node(e.dst).file not in ego.files()  # type: ignore[union-attr]
                    for nb in ego.edges
                    if nb.direction == "out"
                    for _, e in graph.scope_edges(nb.target)
                    if e.type in ("invoke", "import")
                )
                if second_hop and any(s.id == "S6" for s in signals):
                    deferred = "r3_required_deferred"
                    ladder.append(
                        {
                            "level": "r3_required_deferred",
                            "entity": named.qualname,
                            "reason": "component-level evidence beyond k=1; proceeding with R2",
                        }
                    )
            if level == "R1":
                ego.edges = [e for e in ego.edges if e.target.file == named.file]
    context = render_injection(manifest, ego, named, task_text, cfg)
    return GateResult(
        True,
        current_entity,
        signals,
        level,
        ladder,
        header,
        named_entity=named.qualname if named else None,
        deferred=deferred,
        context=context,
        token_count=count_tokens(context, cfg.encoding),
        ego_graph=ego,
    )


def render_injection(
    manifest: Mapping[str, Any],
    ego: EgoGraph | None,
    named: Node | None,
    task_text: str,
    cfg: GateConfig,
) -> str:
    """The injection: manifest header, then the tree-encoded k=1 ego-graph, ≤4,000 tokens."""
    header = render_manifest_header(dict(manifest), max_tokens=cfg.manifest_header_tokens)
    parts = ["## Repository context", "### Manifest header", header]
    if ego is not None:
        used = count_tokens("\n".join(parts), cfg.encoding)
        room = min(cfg.ego_graph_tokens, cfg.total_tokens - used - 20)
        tree = ego.render(max(room, 0), encoding=cfg.encoding)
        if tree:
            parts += ["### Dependency ego-graph (k=1, tree-encoded)", tree]
    elif named is not None:
        parts += [
            "### Named entity",
            f"{named.qualname} ({named.kind}) [{named.file}:{named.line}]",
        ]
    text = "\n".join(parts)
    while count_tokens(text, cfg.encoding) > cfg.total_tokens and len(parts) > 3:
        parts.pop()
        text = "\n".join(parts)
    return text
