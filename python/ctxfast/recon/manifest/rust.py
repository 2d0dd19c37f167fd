"""``Cargo.toml``: Rust language/edition, cargo, ``[dependencies]``/``[dev-dependencies]``,
``[[bin]]`` entry points, workspace members, and the implicit ``cargo test``/``cargo clippy``."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ctxfast.recon.manifest._common import (
    Collector,
    ManifestParseError,
    Source,
    load_toml,
    read_lines,
)
from ctxfast.recon.manifest._locate import TomlLines

PM_CARGO = 7


def _d(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def _list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


def parse_cargo_toml(col: Collector, src: Source, root_level: bool) -> None:
    data = load_toml(src)
    t = TomlLines(src)
    package = _d(data.get("package"))
    workspace = _d(data.get("workspace"))
    if not package and not workspace:
        raise ManifestParseError("unparseable: neither [package] nor [workspace]")
    anchor = ("package",) if package else ("workspace",)
    hint_key = (
        "rust-version" if "rust-version" in package else "edition" if "edition" in package else None
    )
    hint = package.get(hint_key) if hint_key else None
    if not isinstance(hint, str | int):
        hint = None  # `edition.workspace = true` inherits: the value is not stated here
    hint_s = (f"edition {hint}" if hint_key == "edition" else str(hint)) if hint else None
    col.language("rust", hint_s, src.ev(t.best(anchor, hint_key)))

    tables: list[tuple[tuple[str, ...], Any, str]] = [
        (("dependencies",), data.get("dependencies"), "runtime"),
        (("dev-dependencies",), data.get("dev-dependencies"), "dev"),
        (("build-dependencies",), data.get("build-dependencies"), "dev"),
        (("workspace", "dependencies"), workspace.get("dependencies"), "runtime"),
    ]
    for path, table, kind in tables:
        for name, spec in _d(table).items():
            version = spec if isinstance(spec, str) else _d(spec).get("version")
            col.dependency(
                name,
                version if isinstance(version, str) else None,
                kind,
                src.ev(t.best(path, name)),
            )

    bins = _list(data.get("bin"))
    for idx, b in enumerate(bins):
        if isinstance(b, dict) and isinstance(b.get("name"), str):
            col.entry_point(
                b["name"],
                "bin",
                src.ev(t.best(("bin",), "name", idx)),
                b.get("path") if isinstance(b.get("path"), str) else None,
            )
    base = Path(col.root, src.rel).parent
    main_rs = base / "src" / "main.rs"
    if not bins and package and main_rs.is_file():
        rel = main_rs.relative_to(col.root).as_posix()
        text = read_lines(col, main_rs)
        line = next((i for i, ln in enumerate(text, 1) if re.search(r"\bfn\s+main\s*\(", ln)), None)
        if line:
            col.entry_point(str(package.get("name", "main")), "bin", f"{rel}:{line}", rel)

    for member in (m for m in _list(workspace.get("members")) if isinstance(m, str)):
        line = t.value(("workspace",), "members", member) or t.best(("workspace",), "members")
        kind = "lib" if (base / member / "src" / "lib.rs").is_file() else "app"
        rel_dir = (Path(src.rel).parent / member).as_posix().removeprefix("./")
        col.component(member, rel_dir, kind, src.ev(line))

    if root_level:
        col.package_manager(PM_CARGO, "cargo", src.ev(t.best(anchor)))
        col.runner(2, "test", "test", "cargo test", src.ev(t.best(anchor)))
        col.runner(2, "build", "build", "cargo build", src.ev(t.best(anchor)))
        col.runner(2, "lint", "lint", "cargo clippy", src.ev(t.best(anchor)))
        col.test_framework("cargo test", src.ev(t.best(anchor)))
