"""Small trees for the batch and parse-cache tests: two versions of one package, as a
benchmark harness sees them (most files identical, one edited, one added)."""

from __future__ import annotations

import sqlite3
import textwrap
from pathlib import Path

V1 = {
    "pkg/__init__.py": "",
    "pkg/core.py": """
        class Engine:
            def run(self):
                return helper()


        def helper():
            return 1
    """,
    "pkg/api.py": """
        from .core import Engine


        def start():
            return Engine().run()
    """,
    "pkg/util.py": "def fmt(x):\n    return str(x)\n",
    "web/app.js": "import { h } from './h.js';\nexport function app() { return h(); }\n",
    "web/h.js": "export function h() { return 1; }\n",
}
V2_CHANGES = {
    "pkg/core.py": """
        class Engine:
            def run(self):
                return helper() + 1

            def stop(self):
                return 0


        def helper():
            return 2
    """,
    "pkg/extra.py": "from pkg.api import start\n\n\ndef again():\n    return start()\n",
}


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text).lstrip("\n"))
    return root


def two_versions(base: Path) -> tuple[Path, Path]:
    v1 = write(base / "v1", V1)
    v2 = write(write(base / "v2", V1), V2_CHANGES)
    return v1, v2


def graph_rows(db: Path) -> list[tuple]:
    """Every row of the graph tables, sorted, to compare two indexes."""
    con = sqlite3.connect(db)
    out: list[tuple] = []
    for table in ("nodes", "edges", "defs_meta", "unresolved", "name_index", "raw", "files"):
        out += [(table, *row) for row in con.execute(f"SELECT * FROM {table}")]
    con.close()
    return sorted(out, key=repr)
