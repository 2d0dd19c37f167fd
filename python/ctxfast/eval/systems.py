"""The ``System`` protocol the harness drives, and the two baselines that need no model.

A system prepares a handle per source tree (indexing, cached under ``cache_dir`` so a second
run does not re-index) and answers one instance at a time. The harness never looks inside a
system: it only scores what comes back, so ctxfast's own pipeline and the baselines are
measured by exactly the same code.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import shutil
import time
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from ctxfast.eval.errors import EvalError
from ctxfast.eval.instances import Instance
from ctxfast.eval.trees import Tree
from ctxfast.text import identifier_tokens

#: Why ``ctxfast eval`` stops before running when its BM25 baseline cannot be built.
BM25_HINT = "ctxfast eval scores a plain-BM25 baseline with bm25s: pip install 'ctxfast[eval]'"

Span = tuple[str, int, int]


@dataclass(frozen=True)
class Candidate:
    """A delivered piece of code: file, qualname (None for whole files/windows), line span."""

    file: str
    qualname: str | None
    start: int
    end: int
    kept_lines: tuple[int, ...] | None = None
    #: tokens this piece costs in the rendering (0 when the system does not say)
    tokens: int = 0
    #: True when the piece is a whole function or method (it delivers the functions
    #: nested in it; see ``metrics.function_acc_at_k``)
    is_function: bool = False
    #: How the piece is shown, for the miss analysis (``eval.window_misses``): a window
    #: block's ``role:rendering``, ``file:whole`` or ``file:prefix`` for stuffed files.
    view: str | None = None

    def lines(self) -> list[tuple[str, int]]:
        span = self.kept_lines if self.kept_lines is not None else range(self.start, self.end + 1)
        return [(self.file, n) for n in span]


@dataclass
class RetrievalOutput:
    """What one system returned for one instance (plain data; the metrics read only this)."""

    ranked_files: list[str]
    candidates: list[Candidate]
    rendered_text: str
    token_count: int
    ms: float
    ranked_regions: list[Span] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def regions(self) -> list[Span]:
        if self.ranked_regions is not None:
            return self.ranked_regions
        return [(c.file, c.start, c.end) for c in self.candidates]


class System(Protocol):
    """Anything the harness can evaluate."""

    @property
    def name(self) -> str: ...

    @property
    def symbol_level(self) -> bool:
        """True when candidates carry qualnames, so function-level metrics mean something."""
        ...

    def switches(self) -> list[str]:
        """Mechanisms ``--ablate`` can switch off one at a time."""
        ...

    def without(self, switch: str) -> System:
        """A copy of this system with ``switch`` off."""
        ...

    def handle_key(self) -> Hashable:
        """What ``prepare`` builds: systems with equal keys get one shared handle per tree
        (one index opened, one warm-up), however many variants of them a run holds."""
        ...

    def prepare(self, tree: Tree, cache_dir: Path) -> Any: ...

    def retrieve(self, handle: Any, instance: Instance) -> RetrievalOutput: ...


def source_files(root: Path, globs: Sequence[str] = ("*.py",)) -> list[str]:
    """POSIX paths (relative, sorted) of every file whose name matches one of ``globs``,
    skipping hidden directories and ``node_modules`` (installed packages, not the project).
    Symlinks are skipped, as the index's walk skips them: a broken link (a submodule not
    checked out) cannot be read, and a link may point outside the tree."""
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d != "node_modules")
        rel = Path(dirpath).relative_to(root)
        for fn in filenames:
            if any(fnmatch.fnmatchcase(fn, g) for g in globs) and not os.path.islink(
                os.path.join(dirpath, fn)
            ):
                found.append((rel / fn).as_posix())
    return sorted(found)


def read_text(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace")


# --------------------------------------------------------------------------- rendering

#: ``Candidate.view`` of a file stuffed whole, and of the last file cut at the token cap.
WHOLE_FILE = "file:whole"
FILE_PREFIX = "file:prefix"


def render_files(
    root: Path, files: Sequence[str], max_tokens: int, encoding: str = "cl100k_base"
) -> tuple[str, list[Candidate], int]:
    """Concatenate whole files in rank order under a hard token cap.

    A file that does not fit whole is cut to the lines that do (line-exact, so the delivered
    spans stay true) and rendering stops there: no budget overflow, no silent gaps.
    """
    from ctxfast.tokens import count_tokens

    parts: list[str] = []
    cands: list[Candidate] = []
    used = 0
    for f in files:
        header = f"### {f}\n"
        text = read_text(root / f)
        block = header + text + ("" if text.endswith("\n") else "\n")
        cost = count_tokens(block, encoding)
        if used + cost <= max_tokens:
            parts.append(block)
            used += cost
            n = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
            cands.append(Candidate(f, None, 1, max(n, 1), tokens=cost, view=WHOLE_FILE))
            continue
        room = max_tokens - used - count_tokens(header, encoding)
        kept: list[str] = []
        for line in text.splitlines(keepends=True):
            c = count_tokens(line, encoding)
            if c > room:
                break
            kept.append(line)
            room -= c
        if kept:
            block = header + "".join(kept)
            cost = count_tokens(block, encoding)
            parts.append(block)
            used += cost
            cands.append(Candidate(f, None, 1, len(kept), tokens=cost, view=FILE_PREFIX))
        break
    rendered = "".join(parts)
    return rendered, cands, count_tokens(rendered, encoding) if rendered else 0


# --------------------------------------------------------------------------- BM25 baseline

BM25_SWITCHES = ("path", "identifier_split")


@dataclass
class BM25Handle:
    root: Path
    files: list[str]
    retriever: Any


@dataclass(frozen=True)
class BM25Files:
    """Plain BM25 over whole files: path + content, identifiers split, bm25s k1=1.5 b=0.75.

    The README's reference baseline. ``path`` and ``identifier_split`` can be ablated.
    ``globs`` are the files indexed: ``*.py`` on the Python set (its reference figures), the
    globs of the repository's languages elsewhere (``eval.instances.gold_file_globs``), given per
    tree in ``tree_globs`` when a set mixes languages — a Rust tree's test data in JavaScript
    is not part of what a Rust baseline searches.
    """

    name: str = "bm25"
    symbol_level: bool = False
    k1: float = 1.5
    b: float = 0.75
    max_tokens: int = 4000
    use_path: bool = True
    split_identifiers: bool = True
    globs: tuple[str, ...] = ("*.py",)
    #: ``(tree key, globs)`` pairs overriding ``globs`` for those trees.
    tree_globs: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def switches(self) -> list[str]:
        return list(BM25_SWITCHES)

    def without(self, switch: str) -> BM25Files:
        if switch == "path":
            return replace(self, use_path=False)
        if switch == "identifier_split":
            return replace(self, split_identifiers=False)
        raise KeyError(switch)

    def _globs(self, tree: Tree) -> tuple[str, ...]:
        return dict(self.tree_globs).get(tree.key, self.globs)

    def _variant(self, globs: tuple[str, ...]) -> str:
        base = f"bm25-k{self.k1}-b{self.b}-p{int(self.use_path)}-s{int(self.split_identifiers)}"
        if globs == ("*.py",):
            return base  # the cache key the Python set has always used
        tag = hashlib.sha256("\0".join(globs).encode()).hexdigest()[:8]
        return f"{base}-g{tag}"

    def handle_key(self) -> Hashable:
        return ("bm25", self._variant(self.globs), self.tree_globs)

    @staticmethod
    def require() -> None:
        """Raises a one-line :class:`EvalError` naming the extra when bm25s is missing:
        otherwise every instance would fail to prepare and the results hold none."""
        import importlib.util

        if importlib.util.find_spec("bm25s") is None:
            raise EvalError(BM25_HINT)

    def prepare(self, tree: Tree, cache_dir: Path) -> BM25Handle:
        import bm25s

        globs = self._globs(tree)
        idx = cache_dir / "index" / self._variant(globs) / tree.key
        meta = idx / "files.json"
        if meta.exists():
            files = json.loads(meta.read_text(encoding="utf-8"))
            return BM25Handle(tree.path, files, bm25s.BM25.load(str(idx)))
        files = source_files(tree.path, globs)
        corpus = []
        for f in files:
            text = read_text(tree.path / f)
            doc = (f + "\n" + text) if self.use_path else text
            toks = identifier_tokens(doc, self.split_identifiers)
            corpus.append(toks or [""])
        retriever = bm25s.BM25(k1=self.k1, b=self.b)
        if corpus:
            retriever.index(corpus, show_progress=False)
        tmp = idx.with_name(idx.name + f".tmp{os.getpid()}")
        tmp.mkdir(parents=True, exist_ok=True)
        if corpus:
            retriever.save(str(tmp))
        (tmp / "files.json").write_text(json.dumps(files), encoding="utf-8")
        try:
            tmp.replace(idx)
        except OSError:  # another worker won the race; its index is identical
            shutil.rmtree(tmp, ignore_errors=True)
        return BM25Handle(tree.path, files, retriever)

    def rank(self, handle: BM25Handle, query: str) -> list[str]:
        """Files with a positive score, best first; ties by path for determinism."""
        if not handle.files:
            return []
        q = identifier_tokens(query, self.split_identifiers)
        vocab = getattr(handle.retriever, "vocab_dict", None) or {}
        q = [t for t in q if t in vocab]
        if not q:
            return []
        scores = handle.retriever.get_scores(q)
        order = sorted(range(len(handle.files)), key=lambda i: (-float(scores[i]), handle.files[i]))
        return [handle.files[i] for i in order if float(scores[i]) > 0.0]

    def retrieve(self, handle: BM25Handle, instance: Instance) -> RetrievalOutput:
        t0 = time.perf_counter()
        ranked = self.rank(handle, instance.problem_statement)
        rendered, cands, tokens = render_files(handle.root, ranked, self.max_tokens)
        ms = (time.perf_counter() - t0) * 1000.0
        regions = [(f, 1, 10**9) for f in ranked[:10]]
        return RetrievalOutput(ranked, cands, rendered, tokens, ms, ranked_regions=regions)


# --------------------------------------------------------------------------- stuff everything


@dataclass(frozen=True)
class StuffEverything:
    """The construction baseline: the whole candidate pool concatenated, no constructor at all,
    only the window's hard ceiling (24,000 tokens by default) stops it."""

    pool: Any  # a System whose ranked_files are the candidate pool
    name: str = "stuff_everything"
    symbol_level: bool = False
    window_tokens: int = 24_000

    def switches(self) -> list[str]:
        return []

    def without(self, switch: str) -> StuffEverything:
        raise KeyError(switch)

    def handle_key(self) -> Hashable:
        key: Hashable = self.pool.handle_key()
        return key

    def prepare(self, tree: Tree, cache_dir: Path) -> Any:
        return self.pool.prepare(tree, cache_dir)

    def retrieve(self, handle: Any, instance: Instance) -> RetrievalOutput:
        t0 = time.perf_counter()
        base = self.pool.retrieve(handle, instance)
        root = tree_root(handle)
        rendered, cands, tokens = render_files(root, base.ranked_files, self.window_tokens)
        ms = base.ms + (time.perf_counter() - t0) * 1000.0
        return RetrievalOutput(
            base.ranked_files, cands, rendered, tokens, ms, ranked_regions=base.regions()
        )


@runtime_checkable
class MatchedSystem(Protocol):
    """A baseline whose budget is another system's output on the same instance; the runner
    runs ``reference`` first and hands its output over."""

    @property
    def name(self) -> str: ...

    @property
    def symbol_level(self) -> bool: ...

    @property
    def reference(self) -> str: ...

    def handle_key(self) -> Hashable: ...

    def prepare(self, tree: Tree, cache_dir: Path) -> Any: ...

    def retrieve_matched(
        self, handle: Any, instance: Instance, reference: RetrievalOutput
    ) -> RetrievalOutput: ...


@dataclass(frozen=True)
class SameTokens:
    """Plain whole-file stuffing cut, instance by instance, at exactly the tokens the
    ``reference`` system (the constructed window) spent: what the same tokens of BM25's top
    files would have held, so a window is never credited for merely being larger."""

    pool: BM25Files
    reference: str
    name: str = "bm25_same_tokens"
    symbol_level: bool = False

    def handle_key(self) -> Hashable:
        return self.pool.handle_key()

    def prepare(self, tree: Tree, cache_dir: Path) -> BM25Handle:
        return self.pool.prepare(tree, cache_dir)

    def retrieve_matched(
        self, handle: BM25Handle, instance: Instance, reference: RetrievalOutput
    ) -> RetrievalOutput:
        return replace(self.pool, max_tokens=reference.token_count).retrieve(handle, instance)


def tree_root(handle: Any) -> Path:
    root = getattr(handle, "root", None)
    if root is None:
        raise TypeError("system handle exposes no tree root")
    return Path(root)


# --------------------------------------------------------------------------- ctxfast itself


def ctxfast_available() -> bool:
    """Whether this build carries ctxfast's own pipeline (reconnaissance and retrieval)."""
    import importlib.util

    return importlib.util.find_spec("ctxfast.repository") is not None


@dataclass
class CtxfastHandle:
    root: Path
    repo: Any


class TreeLines:
    """A tree's file lines as the retrieval renderer reads them (``RepoIndex.lines``)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._lines: dict[str, list[str]] = {}

    def lines(self, path: str) -> list[str]:
        if path not in self._lines:
            try:
                self._lines[path] = read_text(self.root / path).splitlines()
            except OSError:
                self._lines[path] = []
        return self._lines[path]


def rendered_in(candidates: Sequence[Any], text: str, lines: TreeLines) -> list[bool]:
    """Which retrieval candidates the slice's text holds. The result lists the ranked top-k,
    but the token cap drops some whole and pruning empties others: only a candidate whose
    block (rendered by retrieval's own ``render_block``) is in the text was delivered."""
    from ctxfast.retrieval.render import render_block

    padded = text + "\n"
    return [
        not getattr(c, "pruned", False) and f"\n{render_block(c, lines)}\n" in padded  # type: ignore[arg-type]
        for c in candidates
    ]


@dataclass(frozen=True)
class CtxfastRetrieval:
    """ctxfast's own retrieval stage (``Repository.retrieve``), once that API is built in."""

    name: str = "ctxfast"
    symbol_level: bool = True
    max_tokens: int = 4000
    config: dict[str, Any] = field(default_factory=dict)
    ablatable: tuple[str, ...] = ()

    def switches(self) -> list[str]:
        """Every on/off stage of the retrieval pipeline (sources, prune, file signals)."""
        if self.ablatable:
            return list(self.ablatable)
        from ctxfast.retrieval.config import RetrievalConfig

        return RetrievalConfig().switches()

    def without(self, switch: str) -> CtxfastRetrieval:
        cfg = dict(self.config)
        cfg[switch] = False
        return replace(self, config=cfg)

    def handle_key(self) -> Hashable:
        return ("ctxfast",)

    def prepare(self, tree: Tree, cache_dir: Path) -> CtxfastHandle:
        from ctxfast.recon.parse_cache import ParseCache
        from ctxfast.repository import Repository

        index_dir = str(cache_dir / "index" / tree.key)
        # The parse cache gives the rows a cold build gives (benches/README.md) but
        # parses a file shared by several trees of one repository once, not once per tree.
        cache = ParseCache(cache_dir / "parse")
        repo = Repository(str(tree.path), index_dir=index_dir, parse_cache=cache)
        repo.index()
        # Trees are fixed during a run: the index was just refreshed, so the timed calls skip it.
        repo.retrieve("warm up", refresh=False)  # build in-memory state outside the timed calls
        return CtxfastHandle(tree.path, repo)

    def retrieve(self, handle: CtxfastHandle, instance: Instance) -> RetrievalOutput:
        t0 = time.perf_counter()
        res = handle.repo.retrieve(
            instance.problem_statement,
            max_tokens=self.max_tokens,
            config=self.config or None,
            refresh=False,
        )
        ms = (time.perf_counter() - t0) * 1000.0
        shown = rendered_in(res.candidates, res.render(), TreeLines(handle.root))
        cands = [
            Candidate(
                c.file,
                getattr(c, "symbol", None) or c.qualname,
                int(c.start_line),
                int(c.end_line),
                tuple(c.kept_lines) if ok else (),
                is_function=c.kind in ("function", "method"),
            )
            for c, ok in zip(res.candidates, shown, strict=True)
        ]
        return RetrievalOutput(list(res.ranked_files()), cands, res.render(), res.token_count, ms)


_UNSET = object()

#: ``--ablate`` switches of the constructor, one per mechanism that works on its own:
#: name -> (settings object it lives in, field, value that switches it off).
CONSTRUCT_SWITCHES: dict[str, tuple[str, str, Any]] = {
    "confidence_localization": ("defaults", "confidence_localization", False),
    "target_context": ("defaults", "target_context", False),
    "file_outlines": ("defaults", "file_outlines", False),
    "whole_files": ("defaults", "whole_files_share", 0.0),
    "whole_definitions": ("defaults", "whole_target_share", 0.0),
    "evidence_ranker": ("config", "evidence_ranker", False),
    "fill": ("config", "target_tokens", 0),
    "spare_files": ("defaults", "spare_files", 0),
}


def window_candidates(
    entries: Sequence[Any], sizes: Sequence[int], local_symbol: Any
) -> list[Candidate]:
    """Code entries of a window as scored pieces, delivering exactly their shown lines.

    An entry's ``start..end`` is only its extent: a file outline spans the whole file but
    shows its definition lines, a method shown under its class header skips the lines in
    between. Crediting the extent would count an outline as delivering every hunk of its file.
    """
    out = []
    for it, size in zip(entries, sizes, strict=True):
        shown = tuple(it.shown_lines())
        start = int(it.start_line or (shown[0] if shown else 1))
        out.append(
            Candidate(
                str(it.file),
                local_symbol(it.file, it.entity) if it.entity else None,
                start,
                int(it.end_line or start),
                kept_lines=shown,
                tokens=size,
                view=f"{it.role}:{it.rendering}",
            )
        )
    return out


@dataclass(frozen=True)
class CtxfastConstruct:
    """ctxfast's constructor (``ctxfast.compose``) scored on its ``DecisionContext`` window.

    ``config`` and ``defaults`` override settings of ``ConstructConfig`` and ``DefaultsConfig``,
    by their flat names or in nested form (so an ablation or a curve point is a change of
    settings, never of code); ``options`` are further ``compose`` keyword arguments
    (``ceiling``)."""

    name: str = "ctxfast_construct"
    symbol_level: bool = True
    options: dict[str, Any] = field(default_factory=dict)
    config: dict[str, Any] = field(default_factory=dict)
    defaults: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # Overrides equal to the default are dropped, so two constructors that build the same
        # window compare equal and a run executes it once (the curve point at the default
        # target is the default window).
        from ctxfast.construct.config import ConstructConfig
        from ctxfast.construct.defaults import DefaultsConfig
        from ctxfast.settings import flat_names, flat_value

        for where, base in (("config", ConstructConfig()), ("defaults", DefaultsConfig())):
            given = getattr(self, where)
            known = flat_names(type(base))
            kept = {
                k: v
                for k, v in given.items()
                if (flat_value(base, k) if k in known else getattr(base, k, _UNSET)) != v
            }
            object.__setattr__(self, where, kept)

    def switches(self) -> list[str]:
        return list(CONSTRUCT_SWITCHES)

    def without(self, switch: str) -> CtxfastConstruct:
        where, name, off = CONSTRUCT_SWITCHES[switch]
        changed = {**getattr(self, where), name: off}
        renamed = f"{self.name}-without-{switch}"
        if where == "config":
            return replace(self, name=renamed, config=changed)
        return replace(self, name=renamed, defaults=changed)

    def at_target(self, tokens: int) -> CtxfastConstruct:
        """The same constructor filling toward ``tokens`` (one point of the coverage curve)."""
        return replace(
            self, name=f"{self.name}@{tokens}", config={**self.config, "target_tokens": tokens}
        )

    def settings(self) -> tuple[Any, Any]:
        """``(ConstructConfig, DefaultsConfig)`` with the overrides applied (raises on an
        unknown field or an invalid value, so a bad ``--config`` fails before the run)."""
        from ctxfast.construct.config import ConstructConfig
        from ctxfast.construct.defaults import DefaultsConfig

        return (
            ConstructConfig.from_mapping(self.config),
            DefaultsConfig.from_mapping(self.defaults),
        )

    def handle_key(self) -> Hashable:
        return CtxfastRetrieval().handle_key()

    def prepare(self, tree: Tree, cache_dir: Path) -> CtxfastHandle:
        return CtxfastRetrieval().prepare(tree, cache_dir)

    def retrieve(self, handle: CtxfastHandle, instance: Instance) -> RetrievalOutput:
        from ctxfast.construct.compose import compose
        from ctxfast.tokens import count_tokens_batch

        config, defaults = self.settings()
        t0 = time.perf_counter()
        ctx = compose(
            handle.repo,
            instance.problem_statement,
            config=config,
            defaults=defaults,
            refresh=False,
            **self.options,
        )
        ms = (time.perf_counter() - t0) * 1000.0
        # Non-code items (task, constraints) have no file; they still count in token_count.
        entries = [it for it in ctx.window if it.file is not None]
        sizes = count_tokens_batch([it.text for it in entries])
        cands = window_candidates(entries, sizes, handle.repo.local_symbol)
        files = list(dict.fromkeys(c.file for c in cands))
        return RetrievalOutput(files, cands, ctx.render(), int(ctx.token_count), ms)


__all__ = [
    "CONSTRUCT_SWITCHES",
    "FILE_PREFIX",
    "WHOLE_FILE",
    "BM25Files",
    "Candidate",
    "CtxfastConstruct",
    "CtxfastRetrieval",
    "MatchedSystem",
    "RetrievalOutput",
    "SameTokens",
    "StuffEverything",
    "System",
    "TreeLines",
    "ctxfast_available",
    "identifier_tokens",
    "render_files",
    "rendered_in",
    "source_files",
    "window_candidates",
]
