"""Build the repository manifest: discover manifest files, run one parser per
file family, canonicalize runners in a fixed priority order, and enforce the token cap.

The result is a plain ``dict`` matching ``manifest.schema.json``. Building never raises on
repository content: every unparseable or unreadable file becomes an ``errors`` entry and the
manifest always emits (missing fields are empty lists / ``null``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ctxfast.errors import InvalidArgumentError
from ctxfast.recon.manifest import ci, docker, go, java, layout, make, node, python, rust
from ctxfast.recon.manifest._common import (
    CANONICAL_RUNNERS,
    Collector,
    ManifestConfig,
    ManifestParseError,
    RunnerCandidate,
    Source,
    read_source,
    walk_files,
)
from ctxfast.recon.manifest.header import manifest_header, render_manifest_header
from ctxfast.textsafe import safe_strings
from ctxfast.tokens import count_tokens

Parser = Callable[[Collector, Source, bool], None]


def _root_only(fn: Callable[[Collector, Source], None]) -> Parser:
    return lambda col, src, root_level: fn(col, src)


#: (family order, file-name test, parser, root_only). The order is the ecosystem priority used
#: to break ties between package-manager conventions; within a family, shallower files first.
FAMILIES: tuple[tuple[int, Callable[[str], bool], Parser, bool], ...] = (
    (
        0,
        lambda p: p.endswith("pyproject.toml") and p.rsplit("/", 1)[-1] == "pyproject.toml",
        _root_only(python.parse_pyproject),
        False,
    ),
    (1, lambda p: p.rsplit("/", 1)[-1] == "setup.py", _root_only(python.parse_setup_py), False),
    (2, lambda p: p.rsplit("/", 1)[-1] == "setup.cfg", _root_only(python.parse_setup_cfg), False),
    (
        3,
        lambda p: bool(re.fullmatch(r"(.*/)?(requirements[^/]*\.txt|requirements/[^/]+\.txt)", p)),
        _root_only(python.parse_requirements),
        False,
    ),
    (4, lambda p: p in ("pytest.ini", "tox.ini"), _root_only(python.parse_test_ini), True),
    (5, lambda p: p == "noxfile.py", _root_only(python.parse_noxfile), True),
    (10, lambda p: p.rsplit("/", 1)[-1] == "package.json", node.parse_package_json, False),
    (20, lambda p: p.rsplit("/", 1)[-1] == "go.mod", go.parse_go_mod, False),
    (30, lambda p: p.rsplit("/", 1)[-1] == "Cargo.toml", rust.parse_cargo_toml, False),
    (40, lambda p: p.rsplit("/", 1)[-1] == "pom.xml", java.parse_pom, False),
    (
        41,
        lambda p: p.rsplit("/", 1)[-1] in ("build.gradle", "build.gradle.kts"),
        java.parse_gradle,
        False,
    ),
    (
        50,
        lambda p: p in ("Makefile", "makefile", "GNUmakefile"),
        _root_only(make.parse_makefile),
        True,
    ),
    (
        51,
        lambda p: p in ("justfile", "Justfile", ".justfile"),
        _root_only(make.parse_justfile),
        True,
    ),
    (
        60,
        lambda p: bool(re.fullmatch(r"\.github/workflows/[^/]+\.ya?ml", p)),
        _root_only(ci.parse_workflow),
        True,
    ),
    (
        70,
        lambda p: bool(
            re.fullmatch(r"(.*/)?(Dockerfile|Dockerfile\.[\w.-]+|[\w.-]+\.Dockerfile)", p)
        ),
        _root_only(docker.parse_dockerfile),
        False,
    ),
)

_FRAMEWORKS = (
    (r"\bpytest\b|\bpy\.test\b", "pytest"),
    (r"\btox\b", "tox"),
    (r"\bnox\b", "nox"),
    (r"\bunittest\b", "unittest"),
    (r"\bcargo (test|nextest)\b", "cargo test"),
    (r"\bgo test\b", "go test"),
    (r"\bvitest\b", "vitest"),
    (r"\bjest\b", "jest"),
    (r"\bmocha\b", "mocha"),
    (r"\bmvn\b", "junit (maven-surefire)"),
    (r"\bgradlew?\b", "gradle test"),
    (r"\b(npm|yarn|pnpm)( run)? test\b", "npm-test"),
    (r"\bctest\b", "ctest"),
)


def build_manifest(root: str | Path, config: ManifestConfig | None = None) -> dict[str, Any]:
    """The evidence-backed manifest of the repository at ``root``.

    Raises :class:`~ctxfast.errors.InvalidArgumentError` only when ``root`` is not a
    directory; problems *inside* the repository are recorded in ``errors``.
    """
    cfg = config or ManifestConfig()
    root_path = Path(root)
    if not root_path.is_dir():
        raise InvalidArgumentError(f"not a directory: {root}")
    col = Collector(root=root_path.resolve(), config=cfg)
    jobs: list[tuple[int, int, str, Path, Parser, bool]] = []
    for rel in walk_files(col):
        for order, match, parser, root_only in FAMILIES:
            if match(rel):
                depth = rel.count("/")
                if not root_only or depth == 0 or order == 60:
                    path = col.root / rel
                    jobs.append((order, depth, rel, path, parser, depth == 0 or order == 60))
                break
    jobs.sort(key=lambda j: (j[0], j[1], j[2]))
    python_done = False
    for order, _depth, _rel, path, parser, root_level in jobs:
        if order >= 10 and not python_done:
            _python_conventions(col)
            python_done = True
        src = read_source(col, path)
        if src is None:
            continue
        _run_parser(col, src, parser, root_level, order)
    if not python_done:
        _python_conventions(col)
    layout.scan_layout(col)
    return _assemble(col)


def _run_parser(col: Collector, src: Source, parser: Parser, root_level: bool, order: int) -> None:
    """Run one parser all-or-nothing: on failure its partial claims are rolled back and the
    file is recorded in ``errors``: one bad file is skipped, never half-read."""
    snapshot = {k: len(v) for k, v in vars(col).items() if isinstance(v, list)}
    try:
        parser(col, src, root_level)
    except ManifestParseError as exc:
        _rollback(col, snapshot)
        col.error(src.rel, exc.reason, exc.line)
        return
    except (
        ValueError,
        TypeError,
        KeyError,
        AttributeError,
        IndexError,
        RecursionError,
        MemoryError,
        UnicodeError,
    ) as exc:
        _rollback(col, snapshot)
        col.error(src.rel, f"unparseable: {type(exc).__name__}: {exc}")
        return
    if not root_level and order < 10:
        # A nested Python project is a component; its runners/package manager are not the repo's.
        col.package_managers[snapshot["package_managers"] :] = []
        col.runners[snapshot["runners"] :] = []
        d = src.rel.rsplit("/", 1)[0]
        col.component(d.rsplit("/", 1)[-1], d, "package", src.ev(1))


def _rollback(col: Collector, snapshot: dict[str, int]) -> None:
    for key, n in snapshot.items():
        getattr(col, key)[n:] = []


def _python_conventions(col: Collector) -> None:
    """Python's package-manager convention runners, only where a file evidences them."""
    pytest_ev = next((ev for fw, ev in col.test_frameworks if fw == "pytest"), None)
    if pytest_ev is None:
        pytest_ev = next(
            (d["evidence"] for d in col.dependencies if d["name"].lower() == "pytest"), None
        )
    if pytest_ev is not None:
        col.runner(2, "test", "test", "pytest", pytest_ev)
    for tool in ("tox", "nox"):
        ev = next((e for fw, e in col.test_frameworks if fw == tool), None)
        if ev is not None:
            col.runner(2, "test", "test", tool, ev)


def framework_of(command: str) -> str | None:
    for pattern, name in _FRAMEWORKS:
        if re.search(pattern, command):
            return name
    return None


def canonical_runners(cands: list[RunnerCandidate]) -> dict[str, RunnerCandidate]:
    """Winner per canonical slot: lowest level (Makefile/justfile > CI > conventions), then an
    exactly-named target over a prefix match, then discovery order. No candidate → no slot."""
    out: dict[str, RunnerCandidate] = {}
    for name in CANONICAL_RUNNERS:
        pool = [(c.level, c.name != name, i, c) for i, c in enumerate(cands) if c.canonical == name]
        if pool:
            out[name] = min(pool, key=lambda t: t[:3])[3]
    return out


def _assemble(col: Collector) -> dict[str, Any]:
    winners = canonical_runners(col.runners)
    runners = [
        {"name": n, "command": c.command, "evidence": c.evidence} for n, c in winners.items()
    ]
    won = {id(c) for c in winners.values()}
    names = set(winners)
    seen_cmds: set[tuple[str, str]] = set()
    for c in col.runners:
        if id(c) in won or (c.level > 1 and c.canonical is not None):
            continue  # a losing convention is implied, not a separate runner
        if (c.name, c.command) in seen_cmds:
            continue
        seen_cmds.add((c.name, c.command))
        name, n = c.name, 2
        while name in names:
            name, n = f"{c.name}#{n}", n + 1
        names.add(name)
        runners.append({"name": name, "command": c.command, "evidence": c.evidence})

    tests: list[dict[str, Any]] = []
    test_cands = sorted(
        (
            (c.level, c.name != "test", i, c)
            for i, c in enumerate(col.runners)
            if c.canonical == "test"
        ),
        key=lambda t: t[:3],
    )
    default_fw = col.test_frameworks[0][0] if col.test_frameworks else None
    for *_, c in test_cands:
        if all(t["command"] != c.command for t in tests):
            fw = c.framework or framework_of(c.command) or default_fw
            tests.append({"framework": fw, "command": c.command, "evidence": c.evidence})

    langs: dict[str, dict[str, Any]] = {}
    for lang in col.languages:
        cur = langs.get(lang["name"])
        if cur is None or (cur["version_hint"] is None and lang["version_hint"]):
            langs[lang["name"]] = lang
    pm = min(col.package_managers, key=lambda t: t[0]) if col.package_managers else None
    conventions = _unique([(t, e) for t, e in col.layout], key=lambda t: t[0])

    manifest: dict[str, Any] = {
        "repo": col.root.name,
        "languages": list(langs.values()),
        "package_manager": {"name": pm[1], "evidence": pm[2]}
        if pm
        else {"name": None, "evidence": None},
        "components": _unique(col.components, key=lambda c: c["path"]),
        "dependencies": _unique(
            col.dependencies,
            key=lambda d: (d["name"].lower(), d["kind"], d["evidence"].rsplit(":", 1)[0]),
        ),
        "tests": tests,
        "external-packages": _unique(col.external, key=lambda e: e["path"]),
        "runners": runners,
        "entry-points": _unique(col.entry_points, key=lambda e: (e["name"], e["kind"])),
        "layout": {
            "conventions": [t for t, _ in conventions],
            "evidence": conventions[0][1] if conventions else None,
            "evidence_list": [e for _, e in conventions],
        },
        "errors": list(col.errors),
    }
    return enforce_cap(safe_strings(manifest), col.config.max_tokens, col.config.encoding)


def _unique(items: list[Any], key: Callable[[Any], Any]) -> list[Any]:
    seen: set[Any] = set()
    out = []
    for it in items:
        k = key(it)
        if k not in seen:
            seen.add(k)
            out.append(it)
    return out


def render_manifest_json(manifest: dict[str, Any]) -> str:
    """The rendering the 5,000-token cap is measured on (and the one injected once)."""
    return json.dumps(manifest, indent=2, ensure_ascii=False)


#: Top-level lists the cap may trim (``errors`` last-resort included; notes are kept).
TRIMMABLE = (
    "languages",
    "components",
    "dependencies",
    "tests",
    "external-packages",
    "runners",
    "entry-points",
    "errors",
)


def enforce_cap(
    manifest: dict[str, Any], max_tokens: int, encoding: str = "cl100k_base"
) -> dict[str, Any]:
    """Trim entries from the tail of the currently largest list (by rendered tokens) until the
    rendering fits ``max_tokens``; each trim is recorded as an ``errors`` note so truncation
    is never silent."""
    if count_tokens(render_manifest_json(manifest), encoding) <= max_tokens:
        return manifest
    m: dict[str, Any] = json.loads(json.dumps(manifest))
    original = {k: len(m[k]) for k in TRIMMABLE}
    notes: list[dict[str, Any]] = []

    def render() -> str:
        return render_manifest_json({**m, "errors": m["errors"] + notes})

    def refresh_notes() -> None:
        notes[:] = [
            {
                "file": "<manifest>",
                "line": None,
                "reason": f"trimmed {k}: kept {len(m[k])} of {original[k]} entries to fit the "
                f"{max_tokens}-token cap",
            }
            for k in TRIMMABLE
            if len(m[k]) < original[k]
        ]

    def size_of(k: str) -> int:
        return count_tokens(json.dumps(m[k], indent=2, ensure_ascii=False), encoding)

    # Each list's rendered size, re-measured only for the list a step trimmed.
    measured = {k: size_of(k) for k in TRIMMABLE if m[k]}
    total = count_tokens(render(), encoding)
    while total > max_tokens:
        sizes = sorted(((n, k) for k, n in measured.items() if m[k]), reverse=True)
        if not sizes:
            break
        size, key = sizes[0]
        second = sizes[1][0] if len(sizes) > 1 else 0
        per_entry = max(1, size // len(m[key]))
        excess = total - max_tokens
        drop = max(1, min(-(-excess // per_entry), (size - second) // per_entry or 1))
        del m[key][max(0, len(m[key]) - drop) :]
        if m[key]:
            measured[key] = size_of(key)
        refresh_notes()
        total = count_tokens(render(), encoding)
    m["errors"] = m["errors"] + notes
    return m


__all__ = [
    "FAMILIES",
    "ManifestConfig",
    "build_manifest",
    "canonical_runners",
    "enforce_cap",
    "manifest_header",
    "render_manifest_header",
    "render_manifest_json",
]
