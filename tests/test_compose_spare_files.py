"""The room the fill leaves: the best-ranked library files, whole (``spare_files``)."""

from __future__ import annotations

import ctxfast
from ctxfast.construct import DefaultsConfig


def _routes_project(root):
    """A small library: the function the task names, and a 220-line table retrieval ranks
    (a file no retrieved definition shows whole) beside a test."""
    (root / "app").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "app/server.py").write_text(
        "from app.routes import lookup\n\n\n"
        "def serve_folder(path):\n"
        '    """Serve the files of one folder."""\n'
        "    return lookup(path)\n",
        encoding="utf-8",
    )
    rows = "".join(f'    "/page/{i}": "view_{i}",\n' for i in range(210))
    (root / "app/routes.py").write_text(
        "def home():\n    return 'index'\n\n\nTABLE = {\n"
        + rows
        + "}\n\n\ndef lookup(path):\n    return TABLE.get(path)\n",
        encoding="utf-8",
    )
    (root / "tests/test_server.py").write_text(
        "from app.server import serve_folder\n\n\n"
        "def test_serve():\n"
        '    assert serve_folder("/a") is None\n',
        encoding="utf-8",
    )
    return ctxfast.Repository(root)


def test_the_room_the_fill_leaves_shows_the_best_ranked_files_whole(tmp_path):
    repo = _routes_project(tmp_path / "routes")
    task = "serve_folder misses nested pages"
    assert "app/routes.py" in repo.retrieve(task).ranked_files()

    def shown(**defaults):
        ctx = ctxfast.compose(repo, task, defaults=DefaultsConfig(**defaults))
        return {n for e in ctx.window if e.file == "app/routes.py" for n in e.shown_lines()}

    # Whole, past the 200 lines where any other body is cut to a 40-line window.
    assert shown() == set(range(1, 221))
    assert len(shown(spare_files=0)) < 10
