"""The retrieval state is keyed by what the index parsed, not only by the files' bytes: a
header the index once read as C and now reads as C++ gives other definitions, so a state
built from the old reading must not be reused."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import ctxfast
from ctxfast.retrieval.repoindex import content_key

FILES = {
    "lib/shapes.h": "namespace geo {\nclass Circle {\npublic:\n  double area() const;\n};\n}\n",
    "lib/shapes.cpp": '#include "shapes.h"\ndouble geo::Circle::area() const { return 1.0; }\n',
    "lib/main.cpp": '#include "shapes.h"\nint main() { return 0; }\n',
}


def test_the_state_key_changes_when_a_file_is_read_as_another_language(tmp_path: Path) -> None:
    for rel, text in FILES.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    repo = ctxfast.Repository(tmp_path)
    repo.index()
    db = repo.graph_db
    before = content_key(db)
    with sqlite3.connect(db) as con:
        (lang,) = con.execute("SELECT language FROM files WHERE path = 'lib/shapes.h'").fetchone()
        assert lang == "cpp"
        con.execute("UPDATE files SET language = 'c' WHERE path = 'lib/shapes.h'")
    assert content_key(db) != before
