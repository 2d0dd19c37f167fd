"""A tiny Python project with known answers, written fresh for each test."""

from __future__ import annotations

from pathlib import Path

from ctxfast import Repository

FILES = {
    "pkg/__init__.py": "",
    "pkg/utils.py": (
        "def parse_args(argv):\n"
        '    """Parse command line arguments."""\n'
        "    return list(argv)\n"
        "\n\n"
        "def helper():\n"
        "    return 1\n"
    ),
    "pkg/db.py": (
        "import os\n"
        "\n"
        'DATABASE_URL = os.environ.get("DATABASE_URL", "sqlite://")\n'
        "\n\n"
        "def connect(uri: str):\n"
        '    """Open a database connection."""\n'
        "    return uri\n"
    ),
    "pkg/cli.py": (
        "from pkg.utils import parse_args\n"
        "from pkg import db\n"
        "\n\n"
        "def main(argv: list[str]) -> int:\n"
        "    args = parse_args(argv)\n"
        "    db.connect(db.DATABASE_URL)\n"
        "    return len(args)\n"
        "\n\n"
        "class Runner:\n"
        "    def run(self):\n"
        "        return self.step()\n"
        "\n"
        "    def step(self):\n"
        "        return main([])\n"
    ),
    "tests/test_cli.py": (
        "from pkg.cli import main\n\n\ndef test_main():\n    assert main([]) == 0\n"
    ),
    "pyproject.toml": (
        '[project]\nname = "pkg"\nversion = "0.1"\ndependencies = ["requests>=2"]\n\n'
        '[project.scripts]\npkg = "pkg.cli:main"\n\n'
        '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n'
    ),
    "Makefile": "build:\n\tpython -m build\n\ntest:\n\tpytest tests/\n",
}


def write_project(root: Path) -> Path:
    for rel, text in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def indexed_repo(root: Path, files: dict[str, str]) -> Repository:
    """A repository of exactly ``files`` (relative path → text) under ``root``, indexed."""
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    repo = Repository(root)
    repo.index()
    return repo


def callees(graph, qualname: str) -> set[str]:
    """The qualified names the definition ``qualname`` calls, by the graph's call edges."""
    node = next(n for n in graph.lookup(qualname) if n.qualname == qualname)
    return {n.qualname for n in graph.callees(node.id)}


def refuse_state_builds(monkeypatch) -> None:
    """Make every retrieval-state piece that is not read back from the store fail the test:
    what a fresh process must find stored, not build."""
    from ctxfast.state_store import StateStore

    get = StateStore.get

    def load_only(self, name, build, dump, load):
        def refuse():
            raise AssertionError(f"{name} built although it was stored")

        return get(self, name, refuse, dump, load)

    monkeypatch.setattr(StateStore, "get", load_only)
