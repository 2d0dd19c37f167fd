"""``package.json``: JavaScript/TypeScript, npm/yarn/pnpm (decided by the lockfile present),
dependencies, ``scripts`` runners and ``main``/``bin`` entry points."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ctxfast.recon.manifest._common import Collector, ManifestParseError, Source
from ctxfast.recon.manifest._locate import json_key_lines

PM_NODE = 5
#: Lockfile → package manager, in precedence order (the ``packageManager`` field wins over all).
LOCKFILES = (
    ("pnpm-lock.yaml", "pnpm"),
    ("yarn.lock", "yarn"),
    ("package-lock.json", "npm"),
    ("npm-shrinkwrap.json", "npm"),
)


def parse_package_json(col: Collector, src: Source, root_level: bool) -> None:
    try:
        data = json.loads(src.text)
    except json.JSONDecodeError as exc:
        raise ManifestParseError(f"unparseable: {exc}", exc.lineno) from exc
    if not isinstance(data, dict):
        raise ManifestParseError("unparseable: top-level JSON value is not an object", 1)
    lines = json_key_lines(src.text)

    def ev(*path: str) -> str:
        for n in range(len(path), 0, -1):
            if path[:n] in lines:
                return src.ev(lines[path[:n]])
        return src.ev(1)

    deps = _dependencies(col, data, ev)

    engines = _obj(data.get("engines"))
    node_ver = engines.get("node") if isinstance(engines.get("node"), str) else None
    col.language("javascript", node_ver, ev("engines", "node") if node_ver else ev("name"))
    base = Path(col.root, src.rel).parent
    if "typescript" in deps:
        col.language("typescript", None, ev(deps["typescript"], "typescript"))
    elif (base / "tsconfig.json").is_file():
        col.language(
            "typescript",
            None,
            f"{(Path(src.rel).parent / 'tsconfig.json').as_posix().removeprefix('./')}:1",
        )

    pm = _package_manager(data, base)
    if pm is not None and root_level:
        name, where = pm
        evidence = ev("packageManager") if where == "field" else f"{where}:1"
        col.package_manager(PM_NODE, name, evidence)
    runner_pm = pm[0] if pm else "npm"

    if root_level:
        _runners(col, _obj(data.get("scripts")), deps, runner_pm, ev)

    _entry_points(col, data, ev)
    if not root_level and isinstance(data.get("name"), str):
        d = Path(src.rel).parent.as_posix()
        col.component(data["name"], d, "app" if data.get("private") else "package", ev("name"))


def _dependencies(col: Collector, data: dict[str, Any], ev: Callable[..., str]) -> dict[str, str]:
    """Record every declared dependency (dev ones as ``dev``); returns each name with the
    section declaring it, which later steps read to spot TypeScript and the test framework."""
    deps: dict[str, str] = {}
    for section, kind in (
        ("dependencies", "runtime"),
        ("devDependencies", "dev"),
        ("peerDependencies", "runtime"),
        ("optionalDependencies", "runtime"),
    ):
        table = data.get(section)
        if isinstance(table, dict):
            for name, version in table.items():
                deps[name] = section
                col.dependency(
                    name, version if isinstance(version, str) else None, kind, ev(section, name)
                )
    return deps


def _runners(
    col: Collector,
    scripts: dict[str, Any],
    deps: dict[str, str],
    runner_pm: str,
    ev: Callable[..., str],
) -> None:
    """Record the ``build``/``test``/``lint`` scripts as runners invoked through the package
    manager (``npm test``, ``pnpm run build``); the test script also names the framework."""
    for name in ("build", "test", "lint"):
        if isinstance(scripts.get(name), str):
            cmd = f"{runner_pm} test" if name == "test" else f"{runner_pm} run {name}"
            fw = _framework(scripts[name], deps) if name == "test" else None
            col.runner(2, name, name, cmd, ev("scripts", name), fw)
            if name == "test":
                col.test_framework(fw or "npm-test", ev("scripts", name))


def _entry_points(col: Collector, data: dict[str, Any], ev: Callable[..., str]) -> None:
    """Record ``main`` and ``bin`` as entry points; a string ``bin`` is one command named
    after the package, a ``bin`` object one command per key."""
    if isinstance(data.get("main"), str):
        col.entry_point(data["main"], "main", ev("main"), data["main"])
    binv = data.get("bin")
    if isinstance(binv, str):
        col.entry_point(str(data.get("name") or binv), "bin", ev("bin"), binv)
    elif isinstance(binv, dict):
        for name, target in binv.items():
            col.entry_point(name, "bin", ev("bin", name), str(target))


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _package_manager(data: dict[str, Any], base: Path) -> tuple[str, str] | None:
    field = data.get("packageManager")
    if isinstance(field, str):
        for name in ("pnpm", "yarn", "npm"):
            if field.startswith(name + "@") or field == name:
                return name, "field"
    for lock, name in LOCKFILES:
        if (base / lock).is_file():
            return name, lock
    return None


def _framework(script: str, deps: dict[str, Any]) -> str | None:
    for fw in ("vitest", "jest", "mocha", "ava", "tap", "playwright"):
        if fw in script or fw in deps:
            return fw
    return None
