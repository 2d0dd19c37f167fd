"""Working defaults for the inputs of components 05–07 when ``compose`` runs alone.

A caller with a planner (07), an impact analyser (06) or a localizer (05) passes their typed
outputs; without them ``compose`` derives the smallest honest stand-ins from the code graph so
the hard gate still has obligations and direct consequences to admit on:

* ``CalledBy`` edges: every definition whose scope invokes a change entity (graph ``invoke``
  edges, one hop), with the caller's signature and source span as a ``03`` code candidate;
* ``ConfigConsumer`` edges: definitions and config-file lines that bind the same config keys
  (``UPPER_SNAKE`` names and environment variables) the change entity reads or defines.

Every derivation is bounded by :class:`DefaultsConfig` caps so a hub symbol of a large
repository (thousands of callers) costs a fixed amount, and each cap that bites is logged.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ctxfast.confine import decode, read_confined
from ctxfast.construct.schema import CodeCandidate, ImpactEdge, ImpactType, LogEntry, Origin
from ctxfast.recon.graph import CodeGraph, Node
from ctxfast.text import (
    CONFIG_KEY,
    CONFIG_SUFFIXES,
    is_library_path,
    is_product_path,
    is_test_code,
)

ENV_READ = re.compile(
    r"""(?:environ(?:\.get)?\s*[\[(]|getenv\s*\()\s*["']([A-Za-z_][A-Za-z0-9_]*)["']"""
)


@dataclass(frozen=True)
class DefaultsConfig:
    """Caps of the default derivations (pinned by tests)."""

    max_callers: int = 8  # CalledBy tails per change entity
    max_config_keys: int = 8  # config keys per change entity
    max_config_consumers: int = 8  # ConfigConsumer tails per change entity
    max_config_files: int = 64  # files scanned for one key's binding lines
    max_span_lines: int = 400  # longest caller span read into a candidate
    module_context_lines: int = 2  # lines around a module-level call site
    # Without a localizer (05), the best-scored distinct retrieved definitions stand in for
    # the fault entities. Measured on the SWE-bench Lite sample (`ctxfast eval construct`),
    # 3 instead of 1 added 38% tokens per covered instance and covered no more instances, so
    # the frugal default stays 1; raise it when the top hit is often a near miss.
    localized_definitions: int = 1
    # Confidence-sized localization (replaces the fixed ``localized_definitions`` when on):
    # every retrieved definition scoring within ``localization_margin`` × the best score of
    # the best, at least ``localization_min`` and at most ``localization_max`` of them. The
    # extra targets are shown whole and labelled as candidates to change; coverage is the
    # same as with the fixed single target within one instance of 140 (.443 vs .450), since
    # the fill shows those bodies either way. The floor is three: the gold lines a window
    # shows are in the files of its change targets (91 of the 94 file groups showing gold
    # lines on the 140 exact-tree Lite windows at 8k), hardly ever in other files' blocks
    # (related symbols, named definitions, callers: a fifth of the tokens). Floors
    # 1 / 2 / 3 / 4 / 5 covered 90 / 90 / 91 / 91 / 90 at the same p50 (7,876-7,905
    # tokens); 3 had the fewest tokens per covered instance.
    confidence_localization: bool = True
    localization_margin: float = 0.25
    localization_min: int = 3
    localization_max: int = 5
    # A change target is shown with its context: the enclosing class's header for a
    # method, the module's imports for module-level code.
    target_context: bool = True
    # Which files are shown whole (:mod:`ctxfast.construct.whole_files`): one value-per-
    # token rule. ``whole_file_prior[r]`` is the chance that the file retrieval ranks
    # ``r + 1``-th holds the fix, measured on the 300 issue-corpus tasks at their base
    # commits (.60, .25, .12, .12, .09, .06, .07, .05 for the first eight; the same shape on
    # both repository halves). A file at that rank is a change target shown whole when its
    # tokens are at most ``whole_file_share`` × target × prior(rank) / prior(1), cheapest
    # per unit of prior first, all of them within ``whole_files_share`` of the target. The
    # rule replaced three (the best target's file up to .65 of the target; any of the best
    # eight files up to 2,000 tokens; the spare files below): whole files at ranks 3-8 took
    # a sixth of the corpus windows' tokens and held a gold line in one of ten.
    whole_file_prior: tuple[float, ...] = (0.60, 0.25, 0.12, 0.12, 0.09, 0.06, 0.06, 0.05)
    whole_file_share: float = 0.65
    whole_files_share: float = 0.8
    whole_file_prior_power: float = 0.5
    fill_prior_power: float = 1.0
    whole_targets: bool = True
    whole_target_share: float = 0.65
    # The room the fill leaves (every retrieved candidate shown, the target not reached)
    # goes to the best-ranked product files, each shown whole when it fits what is left,
    # after everything else: of the ``spare_files`` best-ranked files not already shown
    # whole, each at most ``whole_file_share`` of the target. On the 200 multi-language
    # dev tasks at 8k (a small Go or TypeScript repository's window ended at 1-2k tokens
    # with the file to change ranked third), every-hunk coverage .435 → .470 (seven
    # gained, none lost), gold files .750 → .760, tokens p50 7,756 → 7,772. With the
    # change targets' imports also shown: 1 file .455, 3 files .470, 5 files .470 (7,787).
    spare_files: int = 3
    # A skeleton (definition lines with real line numbers) of each file holding a change
    # target and of the ``outline_files`` best-ranked files (the best one mostly holds a
    # target already; the best file not holding one instead covered one fewer on the 140
    # exact-tree Lite instances at 8k, 100 → 99), so the model sees where else to look.
    # Skeletons cost room the fill would give to bodies: on the 140 exact-tree Lite
    # instances at the 8k target, every-hunk coverage .486 without them, .450 with the best
    # file's, .443 with the best three's; .471 with the best file's cut to 12 lines.
    file_outlines: bool = True
    outline_files: int = 1
    outline_max_lines: int = 12
    # How many retrieved candidates the window draws on (retrieval's own slice keeps its
    # top_k of 20): on the 140 instances, 40 raised gold-file presence .736 → .779 and
    # coverage .471 → .471 at the same 8k target (20 → 40 with 30-line skeletons: .450 → .464).
    retrieval_candidates: int = 40
    # A window filled toward more than 8k tokens runs out of the top 40 (16k and 24k covered
    # the same .543): it draws on ``candidates_per_1k_tokens`` per thousand tokens of its
    # target when that is more than ``retrieval_candidates``.
    candidates_per_1k_tokens: int = 5
    # Retrieval puts the class of each of its best methods at rank 10 (``RetrievalConfig.
    # enclosing_class_of``) for a reader of its ranked slice; a window shows each change
    # target with its class's header (``target_context``) and the target file's skeleton,
    # so the window's retrieval step leaves it off unless the caller's settings say
    # otherwise. On, the 8k window on the 140 exact-tree Lite instances covered 2 fewer
    # (102 → 100): the whole-class candidates took room from bodies.
    window_enclosing_classes: bool = False
    # The same for the base class that leading sibling classes share (``RetrievalConfig.
    # shared_base_of``): on, the 8k window on the 140 exact-tree Lite instances covered
    # 102 → 101 (pytest 6116: ``PyCollector`` took room from ``Session.collect``), none
    # gained.
    window_shared_bases: bool = False
    max_import_lines: int = 30
    # A definition is shown with what is attached to it and the blank lines around it:
    # decorators, annotations and comments directly above it (at most ``attached_lines``),
    # then up to ``margin_lines`` blank lines on each side. The code graph's span starts at
    # the ``def`` line, so ``@property`` or ``@classmethod`` was missing from bodies, and an
    # insertion just before or after a definition had no anchor lines to place it. On the
    # first 107 exact-tree Lite instances at the 8k target every-hunk coverage went .449 → .495.
    margin_lines: int = 2
    attached_lines: int = 10
    # A class over construction's ``large_item_lines`` is shown as a view of its members
    # (:mod:`ctxfast.construct.class_view`) instead of its best 40-line window: its
    # constructor, its first ``class_view_header_lines`` and the ``class_view_methods``
    # members scoring best for the task, at most ``class_view_max_lines`` lines. On the 140
    # exact-tree Lite instances at the 8k target: 76 covered without, 78 with; 200 lines with
    # the first line of every other member cost more than they found (74); header before the
    # constructor 77, a 120-line cap 77.
    class_view: bool = True
    class_view_methods: int = 3
    class_view_header_lines: int = 10
    class_view_max_lines: int = 80
    # Of the ``max_callers``, at most this many tests, after every library caller.
    max_test_callers: int = 2
    max_caller_sites: int = 400  # call sites resolved to calling scopes per change entity


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


class SourceReader:
    """Reads repository files once per compose call (callers often share files)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._lines: dict[str, list[str]] = {}
        self._joined: dict[str, str] = {}

    def lines(self, rel: str) -> list[str]:
        if rel not in self._lines:
            try:
                text = decode(read_confined(self.root, rel))
            except OSError:
                text = ""
            self._lines[rel] = text.splitlines()
        return self._lines[rel]

    def span(self, rel: str, start: int, end: int) -> str:
        return "\n".join(self.lines(rel)[max(0, start - 1) : end])

    def word_lines(self, rel: str, key: str, word: re.Pattern[str]) -> list[int]:
        """1-based numbers of the lines where ``word`` — ``\\b<key>\\b`` — matches,
        ascending: the occurrences of ``key`` in the whole file are found by a plain substring
        scan and each is tested with ``word`` in place, instead of running the regex (which
        has no literal prefix to skip ahead on) over every line. The lines are joined with
        ``\\n``, a non-word character exactly like a line's start and end, so ``\\b``
        behaves as on each line alone."""
        text = self._joined.get(rel)
        if text is None:
            text = self._joined[rel] = "\n".join(self.lines(rel))
        out: list[int] = []
        line, pos = 1, 0
        i = text.find(key) if key else -1
        while i != -1:
            if word.match(text, i):
                line += text.count("\n", pos, i)
                pos = i
                if not out or out[-1] != line:
                    out.append(line)
            i = text.find(key, i + 1)
        return out


def window_candidates(cfg: DefaultsConfig, target_tokens: int) -> int:
    """How many retrieved candidates a window filled toward ``target_tokens`` draws on."""
    return max(cfg.retrieval_candidates, target_tokens * cfg.candidates_per_1k_tokens // 1000)


def default_localization(candidates: Sequence[CodeCandidate], k: int) -> tuple[str, ...]:
    """The ``k`` best-scored distinct retrieved definitions (ties keep retrieval order)."""
    return _ranked_definitions(candidates)[:k]


def _ranked_definitions(candidates: Sequence[CodeCandidate]) -> tuple[str, ...]:
    ranked = sorted(
        (c for c in candidates if c.qualname and c.kind != "def"),
        key=lambda c: -c.score,
    )
    return tuple(dict.fromkeys(c.qualname for c in ranked if c.qualname))


def best_file_fallback(
    graph: CodeGraph, reader: SourceReader, ranked_files: Sequence[str]
) -> CodeCandidate | None:
    """The best-ranked library file as a stand-in change target, for a task whose words
    retrieval found in no definition: the window then shows the code most likely to change
    instead of the task alone. Its text is the whole file; the whole-file rule and the line
    window decide how much of it fits. None when no library file is ranked."""
    path = next((f for f in ranked_files if is_product_path(f)), None)
    lines = reader.lines(path) if path else []
    if path is None or not lines:
        return None
    return CodeCandidate(
        qualname=graph.module_qualname(path) or path,
        kind="module",
        file=path,
        start_line=1,
        end_line=len(lines),
        score=0.0,
        signature=None,
        text="\n".join(lines),
        provenance="04: no retrieved definition; the best-ranked file",
        origin=Origin.RETRIEVAL,
    )


def confident_localization(
    candidates: Sequence[CodeCandidate], cfg: DefaultsConfig
) -> tuple[str, ...]:
    """Change targets sized by the retrieval score distribution, not a fixed count.

    When one definition clearly leads, it alone is the target; when several score close to
    the best (the task is ambiguous between them), each of them is: every distinct retrieved
    definition scoring at least ``(1 - localization_margin)`` × the best score, at least
    ``localization_min`` and at most ``localization_max`` of them, in score order. Falls back
    to the fixed ``localized_definitions`` when ``confidence_localization`` is off.
    """
    if not cfg.confidence_localization:
        return default_localization(candidates, cfg.localized_definitions)
    best: dict[str, float] = {}
    for c in candidates:
        if c.qualname and c.kind != "def":
            best[c.qualname] = max(best.get(c.qualname, float("-inf")), c.score)
    order = _ranked_definitions(candidates)
    files = {c.qualname: c.file for c in candidates if c.qualname}
    library = tuple(q for q in order if is_product_path(files[q]) and not is_test_code(files[q], q))
    # Tests, examples, documentation, vendored or generated code are change targets only
    # when nothing else is.
    order = library or order
    if not order:
        return ()
    top = best[order[0]]
    floor = top - abs(top) * cfg.localization_margin
    chosen = [q for q in order if best[q] >= floor]
    n = min(max(len(chosen), cfg.localization_min), cfg.localization_max)
    return order[:n]


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


def _code_candidate(
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
        start = max(1, site_line - cfg.module_context_lines)
        end = site_line + cfg.module_context_lines
    end = min(end, start + cfg.max_span_lines - 1)
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

    The library code that calls the change comes first and at most ``cfg.max_test_callers``
    tests follow, named in words only (an edge, no code candidate): a test calling the change
    tells the model what to run, it is not code that breaks with it, and on a popular function
    the tests outnumber the library callers (sympy's ``acsc`` had nine test callers among its
    first ten). On 131 exact-tree Lite instances at 8k, test callers as code blocks covered
    .519, named in words .534. Callers beside the product (documentation, examples,
    benchmarks: :func:`ctxfast.text.is_example_path`) count as tests: xarray's
    ``asv_bench`` setups sorted first among ``Dataset``'s callers and took 1,000 tokens.
    Only the first ``cfg.max_caller_sites`` call sites (by file:line) are resolved, in one
    batch, so a hub with thousands of them costs a bounded lookup.
    """
    sites = graph.callers(node.id)
    considered = sites[: cfg.max_caller_sites]
    library: dict[str, tuple[Node, list[int]]] = {}
    tests: dict[str, Node] = {}
    for site, scope in zip(considered, graph.scope_definitions(considered), strict=True):
        if scope is None or scope.id == node.id:
            continue
        if not is_library_path(scope.file):
            tests.setdefault(scope.id, scope)
        else:
            library.setdefault(scope.id, (scope, []))[1].append(site.line)
    callers = list(library.values())[: cfg.max_callers]
    named = list(tests.values())[: min(cfg.max_test_callers, cfg.max_callers - len(callers))]
    for scope, lines in callers:
        out.edges.append(ImpactEdge(head=head, tail=scope.qualname, type=ImpactType.CALLED_BY))
        if scope.qualname in known:
            at = tuple(sorted(set(lines)))
            out.sites.setdefault(scope.qualname, (at, head, ImpactType.CALLED_BY.value))
        else:
            known.add(scope.qualname)
            where = ", ".join(str(n) for n in sorted(set(lines)))
            prov = f"03: caller of {head} at {scope.file}:{where}"
            cand = _code_candidate(graph, scope, reader, cfg, prov, lines[0])
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
                f"{cfg.max_test_callers} tests)",
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
    return list(found)[: cfg.max_config_keys]


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
        for f in list(scan)[: cfg.max_config_files]:
            for i in reader.word_lines(f, key, word[key]):
                scope = graph.innermost_definition(f, i)
                if scope is None or scope.id == node.id or scope.qualname in tails:
                    continue
                if scope.kind == "def":  # a module-level read: the binding line itself
                    scope = Node("", "var", key, f"{f}:{i}", f, i, 0, i)
                total += 1
                prov = f"03: binds config key {key} at {f}:{i} (read by {head})"
                cand = _code_candidate(graph, scope, reader, cfg, prov, i)
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
    for tail, cand in list(tails.items())[: cfg.max_config_consumers]:
        out.edges.append(ImpactEdge(head=head, tail=tail, type=ImpactType.CONFIG_CONSUMER))
        if tail in known and cand.site_of:
            out.sites.setdefault(tail, (cand.sites, cand.site_of, cand.site_edge or ""))
        if tail not in known:
            known.add(tail)
            out.candidates.append(cand)
    if total > cfg.max_config_consumers:
        out.log.append(
            LogEntry(
                "defaults",
                head,
                "config_consumers_capped",
                f"{total} bindings, first {cfg.max_config_consumers} kept",
            )
        )


def target_sources(
    graph: CodeGraph, root: Path, heads: Sequence[str], known: set[str], cfg: DefaultsConfig
) -> Derived:
    """The source of each change entity retrieval did not return: the edit target's own code
    must be in the window, whoever named it (planner, localizer or the default plan)."""
    out = Derived()
    reader = SourceReader(root)
    for head in dict.fromkeys(heads):
        if head in known:
            continue
        node = resolve(graph, head)
        if node is None or node.kind == "def":
            continue
        known.add(head)
        prov = f"03: definition of change entity {head}"
        cand = _code_candidate(graph, node, reader, cfg, prov)
        out.candidates.append(replace(cand, qualname=head))
        out.log.append(LogEntry("defaults", head, "target_source", "read from the code graph span"))
    return out


_IMPORT = re.compile(r"^\s*(?:from\s+\S+\s+import\b|import\s)")


def import_lines(lines: Sequence[str], limit: int) -> list[int]:
    """1-based numbers of a module's import statements above its first definition
    (parenthesised imports with their continuation lines), at most ``limit`` of them."""
    out: list[int] = []
    depth = 0
    for i, ln in enumerate(lines, 1):
        if len(out) >= limit:
            break
        if depth > 0:
            out.append(i)
            depth += ln.count("(") - ln.count(")")
            continue
        stripped = ln.lstrip()
        if stripped.startswith(("def ", "class ", "async def ", "@")):
            break
        if _IMPORT.match(ln):
            out.append(i)
            depth = max(0, ln.count("(") - ln.count(")"))
    return out


def _header_lines(lines: Sequence[str], start: int, limit: int = 4) -> list[int]:
    """A definition's header: its first line and continuation lines up to the one that
    opens the body (``:`` or ``{``), at most ``limit`` lines."""
    out = []
    for i in range(start, min(start + limit, len(lines) + 1)):
        out.append(i)
        text = lines[i - 1].split("#", 1)[0].rstrip()
        if text.endswith((":", "{")) or (text.endswith(")") and i == start):
            break
    return out


def with_context(
    graph: CodeGraph, reader: SourceReader, cand: CodeCandidate, cfg: DefaultsConfig
) -> CodeCandidate:
    """The change target with what a model needs to edit it in place: the header of the
    enclosing class for a method, the module's imports for module-level code. The result
    carries its exact line set (``lines``) since the context is not adjacent to the body."""
    if not cfg.target_context:
        return cand
    lines = reader.lines(cand.file)
    if not lines:
        return cand
    extra: list[int] = []
    if cand.kind in ("function", "method", "class"):
        for enc in graph.definitions_enclosing(cand.file, cand.start_line):
            if enc.kind == "class" and enc.line < cand.start_line:
                extra = _header_lines(lines, enc.line)
                break
    else:
        extra = import_lines(lines, cfg.max_import_lines)
    span = cand.lines or range(cand.start_line, min(cand.end_line, len(lines)) + 1)
    shown = sorted(set(extra) | set(span))
    if len(shown) == len(span):
        return cand
    text = "\n".join(lines[n - 1] for n in shown)
    return replace(cand, lines=tuple(shown), text=text)


# Lines that belong to the definition below them: decorators and annotations (``@``),
# attributes (``#[``), and comments of every graph language.
_ATTACHED = ("@", "#", "//", "/*", "*")
_DEFINITION_KINDS = ("function", "method", "class")


def with_margins(reader: SourceReader, cand: CodeCandidate, cfg: DefaultsConfig) -> CodeCandidate:
    """A definition candidate widened over its attached lines (decorators, comments) and up
    to ``cfg.margin_lines`` blank lines on each side, so the model sees the decorators that
    change what the body means and the exact lines an insertion before or after it goes
    between. Other candidates (line ranges, outlines, config lines) are returned as given."""
    if cand.kind not in _DEFINITION_KINDS or cand.lines is not None:
        return cand
    lines = reader.lines(cand.file)
    if not lines or cand.end_line > len(lines):
        return cand
    start, end = margins(lines, cand.start_line, cand.end_line, cfg)
    if (start, end) == (cand.start_line, cand.end_line):
        return cand
    return replace(cand, start_line=start, end_line=end, text=reader.span(cand.file, start, end))


def margins(lines: Sequence[str], start: int, end: int, cfg: DefaultsConfig) -> tuple[int, int]:
    """The span ``start..end`` of a definition in ``lines`` widened over its attached lines
    above (at most ``cfg.attached_lines``) and up to ``cfg.margin_lines`` blank lines on
    each side."""
    taken = 0
    while (
        start > 1 and taken < cfg.attached_lines and lines[start - 2].lstrip().startswith(_ATTACHED)
    ):
        start -= 1
        taken += 1
    taken = 0
    while start > 1 and taken < cfg.margin_lines and not lines[start - 2].strip():
        start -= 1
        taken += 1
    taken = 0
    while end < len(lines) and taken < cfg.margin_lines and not lines[end].strip():
        end += 1
        taken += 1
    return start, end


def file_outline(
    graph: CodeGraph, reader: SourceReader, path: str, score: float, cfg: DefaultsConfig
) -> CodeCandidate | None:
    """A skeleton of ``path``: the first line of each definition with its real line number,
    classes and top-level functions before methods when the cap bites, shown in file order."""
    lines = reader.lines(path)
    defs = [n for n in graph.nodes_in_file(path) if n.kind in ("function", "class")]
    if not lines or not defs:
        return None
    depth = {n.id: n.qualname.count(".") for n in defs}
    pick = sorted(defs, key=lambda n: (n.kind != "class", depth[n.id], n.line))
    chosen = sorted({n.line for n in pick[: cfg.outline_max_lines] if 0 < n.line <= len(lines)})
    if not chosen:
        return None
    return CodeCandidate(
        qualname=None,
        kind="outline",
        file=path,
        start_line=chosen[0],
        end_line=chosen[-1],
        score=score,
        signature=None,
        text="\n".join(lines[n - 1] for n in chosen),
        provenance=f"03: outline of {path} ({len(defs)} definitions, {len(lines)} lines)",
        origin=Origin.RECON,
        lines=tuple(chosen),
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
    "DefaultsConfig",
    "Derived",
    "SourceReader",
    "best_file_fallback",
    "confident_localization",
    "config_keys",
    "default_localization",
    "derive_impact",
    "file_outline",
    "import_lines",
    "margins",
    "resolve",
    "target_sources",
    "window_candidates",
    "with_context",
    "with_margins",
]
