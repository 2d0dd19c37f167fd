"""What a change affects, derived from the code graph when the caller passes no impact edges.

A caller with an impact analyser passes its typed edges; without one ``compose`` derives the
smallest honest stand-ins so the hard gate still has direct consequences to admit on:

* ``CalledBy`` edges: every definition whose scope invokes a change entity (graph ``invoke``
  edges, one hop), with the caller's signature and source span as a ``03`` code candidate;
* ``ConfigConsumer`` edges: definitions and config-file lines that bind the same config keys
  (``UPPER_SNAKE`` names and environment variables) the change entity reads or defines.

Every derivation is bounded by :class:`~ctxfast.construct.defaults.DefaultsConfig` caps so a
hub symbol of a large repository (thousands of callers) costs a fixed amount, and each cap
that bites is logged. :func:`resolve` and :func:`definition_candidate` (an entity's definition
and its source as a candidate) are shared with :mod:`~ctxfast.construct.targets`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from ctxfast.construct.schema import CodeCandidate, ImpactEdge, ImpactType, LogEntry, Origin
from ctxfast.construct.source_reader import SourceReader
from ctxfast.recon.graph import CodeGraph, Node
from ctxfast.text import CONFIG_KEY, CONFIG_SUFFIXES, is_library_path

if TYPE_CHECKING:
    from ctxfast.construct.defaults import DefaultsConfig


@dataclass(frozen=True)
class ImpactSettings:
    """How far the window follows what a change affects (``DefaultsConfig.impact``): its
    callers and the code reading the same configuration keys. Each cap bounds the search
    and the window room a heavily used definition could take."""

    FLAT_NAMES: ClassVar[Mapping[str, str]] = {}

    #: The callers shown per change target (8): enough to show how it is used, not every
    #: call site of a popular helper.
    max_callers: int = 8
    #: Of those, at most this many tests (2), after every library caller: a test shows the
    #: expected behaviour, the library callers what a change may break.
    max_test_callers: int = 2
    #: Call sites resolved to their calling definitions per change target (400): bounds
    #: the work for a function called from everywhere.
    max_caller_sites: int = 400
    #: A definition read into the window from the code graph (a caller, a change target
    #: retrieval did not return) keeps at most its first this many lines (400), so one
    #: generated function of thousands of lines costs a bounded read.
    max_span_lines: int = 400
    #: A call made at a module's top level is shown with this many lines (2) above and below
    #: it, not the whole module: the call among its neighbouring statements.
    module_context_lines: int = 2
    #: Configuration keys followed per change target (8), the first ones it reads: a
    #: function reading more is a settings loader, and its first eight say what it depends on.
    max_config_keys: int = 8
    #: Definitions and config-file lines reading the same key shown per change target (8,
    #: like the callers); a cut is logged.
    max_config_consumers: int = 8
    #: Code files searched for one key's readers (64): the files defining it, then the files
    #: importing those. The repository's config files (``.env``, ``*.toml``) are always
    #: searched.
    max_config_files: int = 64


ENV_READ = re.compile(
    r"""(?:environ(?:\.get)?\s*[\[(]|getenv\s*\()\s*["']([A-Za-z_][A-Za-z0-9_]*)["']"""
)


@dataclass
class Derived:
    """What the derivation produced: impact edges, extra code candidates and their log."""

    edges: list[ImpactEdge] = field(default_factory=list)
    candidates: list[CodeCandidate] = field(default_factory=list)
    log: list[LogEntry] = field(default_factory=list)
    #: Call/use sites of consumers that were already candidates:
    #: qualname → (lines, of what, the edge type they stand for).
    sites: dict[str, tuple[tuple[int, ...], str, str]] = field(default_factory=dict)

    def with_sites(self, candidates: Sequence[CodeCandidate]) -> list[CodeCandidate]:
        """``candidates`` with the sites found for those that had none."""
        return [
            replace(
                c,
                sites=self.sites[c.qualname][0],
                site_of=self.sites[c.qualname][1],
                site_edge=self.sites[c.qualname][2],
            )
            if c.qualname in self.sites and not c.sites
            else c
            for c in candidates
        ]


def resolve(graph: CodeGraph, entity: str) -> Node | None:
    """The definition an entity string names (exact qualname first), or None."""
    found = [n for n in graph.lookup(entity) if n.is_definition]
    exact = [n for n in found if n.qualname == entity]
    best = exact or found
    return best[0] if best else None


def _signature(graph: CodeGraph, node: Node, reader: SourceReader) -> str:
    sig = graph.signature(node.id)
    if sig is not None and sig.signature:
        return sig.signature.splitlines()[0]
    lines = reader.lines(node.file)
    return lines[node.line - 1].strip() if 0 < node.line <= len(lines) else node.name


def definition_candidate(
    graph: CodeGraph,
    node: Node,
    reader: SourceReader,
    cfg: DefaultsConfig,
    provenance: str,
    site_line: int | None = None,
) -> CodeCandidate:
    """A ``03`` candidate for a definition; a module-level scope (kind ``def``) is cut to the
    lines around ``site_line`` so a call at import time does not pull in a whole file."""
    start, end = node.line, max(node.line, node.end_line)
    if node.kind == "def" and site_line is not None:
        start = max(1, site_line - cfg.impact.module_context_lines)
        end = site_line + cfg.impact.module_context_lines
    end = min(end, start + cfg.impact.max_span_lines - 1)
    n_lines = len(reader.lines(node.file))
    end = max(start, min(end, n_lines)) if n_lines else start
    return CodeCandidate(
        qualname=node.qualname,
        kind=node.kind,
        file=node.file,
        start_line=start,
        end_line=end,
        score=0.0,
        signature=_signature(graph, node, reader),
        text=reader.span(node.file, start, end),
        provenance=provenance,
        origin=Origin.RECON,
    )


def called_by(
    graph: CodeGraph,
    head: str,
    node: Node,
    reader: SourceReader,
    cfg: DefaultsConfig,
    known: set[str],
    out: Derived,
) -> None:
    """One-hop ``CalledBy`` edges of ``node`` (tails = calling scopes), capped.

    The library code that calls the change comes first and at most ``cfg.impact.max_test_callers``
    tests follow, named in words only (an edge, no code candidate): a test calling the change
    tells the model what to run, it is not code that breaks with it, and on a popular function
    the tests outnumber the library callers (sympy's ``acsc`` had nine test callers among its
    first ten). On 131 exact-tree Lite instances at 8k, test callers as code blocks covered
    .519, named in words .534. Callers beside the product (documentation, examples,
    benchmarks: :func:`ctxfast.text.is_example_path`) count as tests: xarray's
    ``asv_bench`` setups sorted first among ``Dataset``'s callers and took 1,000 tokens.
    Only the first ``cfg.impact.max_caller_sites`` call sites (by file:line) are resolved, in one
    batch, so a hub with thousands of them costs a bounded lookup.
    """
    sites = graph.callers(node.id)
    considered = sites[: cfg.impact.max_caller_sites]
    library: dict[str, tuple[Node, list[int]]] = {}
    tests: dict[str, Node] = {}
    for site, scope in zip(considered, graph.scope_definitions(considered), strict=True):
        if scope is None or scope.id == node.id:
            continue
        if not is_library_path(scope.file):
            tests.setdefault(scope.id, scope)
        else:
            library.setdefault(scope.id, (scope, []))[1].append(site.line)
    callers = list(library.values())[: cfg.impact.max_callers]
    named = list(tests.values())[
        : min(cfg.impact.max_test_callers, cfg.impact.max_callers - len(callers))
    ]
    for scope, lines in callers:
        out.edges.append(ImpactEdge(head=head, tail=scope.qualname, type=ImpactType.CALLED_BY))
        if scope.qualname in known:
            at = tuple(sorted(set(lines)))
            out.sites.setdefault(scope.qualname, (at, head, ImpactType.CALLED_BY.value))
        else:
            known.add(scope.qualname)
            where = ", ".join(str(n) for n in sorted(set(lines)))
            prov = f"03: caller of {head} at {scope.file}:{where}"
            cand = definition_candidate(graph, scope, reader, cfg, prov, lines[0])
            in_span = tuple(n for n in sorted(set(lines)) if cand.start_line <= n <= cand.end_line)
            out.candidates.append(
                replace(cand, sites=in_span, site_of=head, site_edge=ImpactType.CALLED_BY.value)
            )
    for scope in named:
        out.edges.append(ImpactEdge(head=head, tail=scope.qualname, type=ImpactType.CALLED_BY))
    chosen = len(callers) + len(named)
    scoped = len(library) + len(tests)
    if chosen < scoped or len(considered) < len(sites):
        out.log.append(
            LogEntry(
                "defaults",
                head,
                "callers_capped",
                f"{len(sites)} call sites, {scoped} calling scopes among the first "
                f"{len(considered)}; kept {chosen} (library first, at most "
                f"{cfg.impact.max_test_callers} tests)",
            )
        )


_SETTINGS_READ = r"""(?:settings|config|conf|cfg|options|environ|env)\s*(?:\.|\[\s*["'])"""


def config_keys(
    node: Node, reader: SourceReader, cfg: DefaultsConfig, cfg_files: Sequence[str] = ()
) -> list[str]:
    """Configuration keys ``node`` reads or defines, first-seen order, capped.

    A key is configuration only when something outside the code can set it: it is read from
    the environment (``os.environ["K"]``, ``getenv("K")``), read off a settings object
    (``settings.K``, ``config["K"]``), or stated in one of the repository's config files. A
    module constant that merely looks like one (``DEFAULT_ENCODING``) is not a key: its users
    are ordinary code, not consumers of a configuration.
    """
    text = reader.span(node.file, node.line, node.end_line)
    found: dict[str, None] = {}
    for m in ENV_READ.finditer(text):
        found.setdefault(m.group(1), None)
    shaped = ([node.name] if CONFIG_KEY.fullmatch(node.name) else []) + [
        m.group(0) for m in CONFIG_KEY.finditer(text)
    ]
    for key in dict.fromkeys(shaped):
        if key in found:
            continue
        if re.search(_SETTINGS_READ + re.escape(key) + r"\b", text) or any(
            reader.word_lines(f, key, re.compile(rf"\b{re.escape(key)}\b")) for f in cfg_files
        ):
            found.setdefault(key, None)
    return list(found)[: cfg.impact.max_config_keys]


def config_files(manifest: dict[str, Any], root: Path) -> list[str]:
    """Config files worth scanning: the manifest's evidence files with a config suffix plus
    config files at the repository root (sorted, so scans are deterministic)."""
    found: set[str] = set()

    def visit(obj: Any) -> None:
        if isinstance(obj, dict):
            for k, v in obj.items():
                if k == "evidence" and isinstance(v, str):
                    path = v.rsplit(":", 1)[0]
                    if path.endswith(CONFIG_SUFFIXES):
                        found.add(path)
                else:
                    visit(v)
        elif isinstance(obj, list):
            for v in obj:
                visit(v)

    visit(manifest)
    try:
        for p in root.iterdir():
            if p.is_file() and (p.name.endswith(CONFIG_SUFFIXES) or p.name == ".env"):
                found.add(p.name)
    except OSError:
        pass
    return sorted(found)


def config_consumers(
    graph: CodeGraph,
    head: str,
    node: Node,
    reader: SourceReader,
    cfg: DefaultsConfig,
    cfg_files: Sequence[str],
    known: set[str],
    out: Derived,
) -> None:
    """``ConfigConsumer`` edges: other bindings of the config keys ``node`` reads/defines.

    Code bindings are searched in the files defining a key and the files importing those
    (``file_deps``), never the whole repository; config-file bindings in ``cfg_files``.
    """
    tails: dict[str, CodeCandidate] = {}
    total = 0
    word: dict[str, re.Pattern[str]] = {}
    for key in config_keys(node, reader, cfg, cfg_files):
        word[key] = re.compile(rf"\b{re.escape(key)}\b")
        def_files = sorted({n.file for n in graph.lookup(key) if n.kind == "var"})
        scan: dict[str, None] = dict.fromkeys(def_files)
        for f in def_files:
            scan.update(dict.fromkeys(graph.importing_files(f)))
        for f in list(scan)[: cfg.impact.max_config_files]:
            for i in reader.word_lines(f, key, word[key]):
                scope = graph.innermost_definition(f, i)
                if scope is None or scope.id == node.id or scope.qualname in tails:
                    continue
                if scope.kind == "def":  # a module-level read: the binding line itself
                    scope = Node("", "var", key, f"{f}:{i}", f, i, 0, i)
                total += 1
                prov = f"03: binds config key {key} at {f}:{i} (read by {head})"
                cand = definition_candidate(graph, scope, reader, cfg, prov, i)
                tails[scope.qualname] = replace(
                    cand, sites=(i,), site_of=key, site_edge=ImpactType.CONFIG_CONSUMER.value
                )
        for f in cfg_files:
            lines = reader.lines(f)
            for i in reader.word_lines(f, key, word[key]):
                line = lines[i - 1]
                tail = f"{f}:{i}"
                if tail in tails:
                    continue
                total += 1
                tails[tail] = CodeCandidate(
                    qualname=tail,
                    kind="config",
                    file=f,
                    start_line=i,
                    end_line=i,
                    score=0.0,
                    signature=line.strip(),
                    text=line,
                    provenance=f"03: config file states {key} at {f}:{i} (read by {head})",
                    origin=Origin.RECON,
                    sites=(i,),
                    site_of=key,
                    site_edge=ImpactType.CONFIG_CONSUMER.value,
                )
    for tail, cand in list(tails.items())[: cfg.impact.max_config_consumers]:
        out.edges.append(ImpactEdge(head=head, tail=tail, type=ImpactType.CONFIG_CONSUMER))
        if tail in known and cand.site_of:
            out.sites.setdefault(tail, (cand.sites, cand.site_of, cand.site_edge or ""))
        if tail not in known:
            known.add(tail)
            out.candidates.append(cand)
    if total > cfg.impact.max_config_consumers:
        out.log.append(
            LogEntry(
                "defaults",
                head,
                "config_consumers_capped",
                f"{total} bindings, first {cfg.impact.max_config_consumers} kept",
            )
        )


def derive_impact(
    graph: CodeGraph,
    manifest: dict[str, Any],
    root: Path,
    heads: Sequence[str],
    known: set[str],
    cfg: DefaultsConfig,
) -> Derived:
    """``CalledBy`` + ``ConfigConsumer`` edges for each change entity in ``heads``."""
    out = Derived()
    reader = SourceReader(root)
    cfg_files = config_files(manifest, root)
    for head in dict.fromkeys(heads):
        node = resolve(graph, head)
        if node is None:
            out.log.append(
                LogEntry("defaults", head, "unresolved", "no definition in the code graph")
            )
            continue
        called_by(graph, head, node, reader, cfg, known, out)
        config_consumers(graph, head, node, reader, cfg, cfg_files, known, out)
    return out


__all__ = [
    "Derived",
    "config_keys",
    "definition_candidate",
    "derive_impact",
    "resolve",
]
