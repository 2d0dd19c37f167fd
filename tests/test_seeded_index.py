"""A new index seeded from a similar tree's index is the index a cold build gives.

Tree B is tree A with files edited (one shifting the definitions other files point into),
added, removed and renamed, its Go module path changed, and one file rewritten with the
same size and modification time as in A — the trap for a refresh that trusted the seed's
recorded stats. Every table of the seeded index of B is compared with a cold build of B.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path

import pytest
from batch_fixture import V1, V2_CHANGES, two_versions, write

from ctxfast import ParseCache, Repository
from ctxfast.batch import index_many
from ctxfast.recon import graph_db

A = {
    # The batch fixture's package and web files, with an api.py of its own.
    **{k: V1[k] for k in ("pkg/__init__.py", "pkg/core.py", "web/app.js", "web/h.js")},
    "pkg/api.py": """
        from pkg.core import Engine, helper


        def start():
            return Engine().run() + helper()
    """,
    "pkg/alpha.py": "def alpha():\n    return 1\n",
    "pkg/use_alpha.py": "from pkg.alpha import alpha\n\n\ndef go():\n    return alpha()\n",
    "pkg/old.py": "from pkg.api import start\n\n\ndef legacy():\n    return start()\n",
    "pkg/moved.py": "from pkg.core import helper\n\n\ndef twice():\n    return helper() * 2\n",
    "go.mod": "module example.com/first\n",
    "lib/lib.go": "package lib\n\nfunc Help() int { return 1 }\n",
    "cmd/main.go": """
        package main

        import "example.com/first/lib"

        func main() { lib.Help() }
    """,
    # Files B leaves alone: with a parse cache a seed must share 80% of the files.
    **{
        f"pkg/f{i}.py": f"from pkg.core import helper\n\n\ndef f{i}():\n    return helper()\n"
        for i in range(12)
    },
}

#: B's edits: core.py grows above helper (every edge into helper moves), a file is added,
#: old.py is removed, moved.py is renamed, and go.mod names another module.
B_EDITS = {
    **V2_CHANGES,  # core.py grows above helper; extra.py is added
    "pkg/sub/moved.py": A["pkg/moved.py"],
    "go.mod": "module example.com/second\n",
}


def trees(base: Path) -> tuple[Path, Path]:
    a = write(base / "a", A)
    b = base / "b"
    shutil.copytree(a, b)
    write(b, B_EDITS)
    (b / "pkg" / "old.py").unlink()
    (b / "pkg" / "moved.py").unlink()
    # Same length, same mtime as in A, other content: only a content check sees it.
    alpha_a, alpha_b = a / "pkg" / "alpha.py", b / "pkg" / "alpha.py"
    alpha_b.write_text(alpha_a.read_text().replace("alpha", "omega", 1))
    assert alpha_b.stat().st_size == alpha_a.stat().st_size
    st = alpha_a.stat()
    os.utime(alpha_b, ns=(st.st_atime_ns, st.st_mtime_ns))
    return a, b


def cold_rows(tree: Path, index_dir: Path) -> dict[str, list[tuple]]:
    repo = Repository(tree, index_dir)
    repo.index()
    return graph_db.content_rows(repo.graph_db)


def mentions(db: Path, text: str) -> list[tuple]:
    """Every row of every table of ``db`` with a text value containing ``text``."""
    with graph_db.reading(db) as con:
        tables = [r[0] for r in con.rows("SELECT name FROM sqlite_master WHERE type='table'")]
        return [
            (t, *r)
            for t in tables
            for r in con.rows(f"SELECT * FROM {t}")
            if any(isinstance(v, str) and text in v for v in r)
        ]


@pytest.mark.parametrize("cache", [False, True], ids=["no-cache", "parse-cache"])
def test_seeded_index_equals_a_cold_build(tmp_path: Path, cache: bool) -> None:
    a, b = trees(tmp_path)
    pc = ParseCache(tmp_path / "cache") if cache else None
    seed = Repository(a, tmp_path / "ia", parse_cache=pc)
    seed.index()
    repo = Repository(b, tmp_path / "ib", parse_cache=pc, seed=seed)
    s = repo.index()
    assert (s.seeded_from, s.seed_note) == (str(seed.graph_db), None)
    # core.py, alpha.py (same stat, other bytes), extra.py and the renamed file; go.mod moved
    # the resolution context, so every file is resolved again.
    assert s.files_parsed == 4 and s.files_removed == 2
    assert s.files_resolved == s.files_seen
    assert graph_db.content_rows(repo.graph_db) == cold_rows(b, tmp_path / "cold")
    assert mentions(repo.graph_db, str(a)) == []
    # The seeded index refreshes as any other: a no-op now, and an edit is picked up.
    assert repo.index().files_parsed == 0
    write(b, {"pkg/api.py": "def start():\n    return 0\n"})
    repo.index()
    assert graph_db.content_rows(repo.graph_db) == cold_rows(b, tmp_path / "cold2")


def test_an_unchanged_context_resolves_only_what_the_edits_reach(tmp_path: Path) -> None:
    a, b = trees(tmp_path)
    write(b, {"go.mod": A["go.mod"]})
    seed = Repository(a, tmp_path / "ia")
    seed.index()
    s = Repository(b, tmp_path / "ib", seed=tmp_path / "ia").index()
    assert s.seeded_from == str(seed.graph_db)
    assert s.files_resolved < s.files_seen
    assert graph_db.content_rows(tmp_path / "ib" / "recon.db") == cold_rows(b, tmp_path / "cold")


def foreign_schema(db: Path) -> None:
    con = sqlite3.connect(db)
    con.execute("UPDATE meta SET value = '1.0' WHERE key = 'schema_version'")
    con.commit()
    con.close()


def garbage(db: Path) -> None:
    for side in db.parent.glob("recon.db*"):
        side.unlink()
    db.write_bytes(b"not a database at all " * 512)


@pytest.mark.parametrize(
    ("spoil", "why"),
    [
        (foreign_schema, "schema 1.0"),
        (garbage, "not a database"),
        (lambda db: shutil.rmtree(db.parent), "no index there"),
    ],
    ids=["foreign-schema", "corrupt", "missing"],
)
def test_an_unusable_seed_falls_back_to_a_cold_build(tmp_path: Path, spoil, why: str) -> None:
    a, b = trees(tmp_path)
    seed = Repository(a, tmp_path / "ia")
    seed.index()
    spoil(seed.graph_db)
    s = Repository(b, tmp_path / "ib", seed=seed).index()
    assert s.seeded_from is None
    assert s.seed_note is not None and why in s.seed_note, s.seed_note
    assert s.files_parsed == s.files_seen  # cold
    assert graph_db.content_rows(tmp_path / "ib" / "recon.db") == cold_rows(b, tmp_path / "cold")


def test_a_seed_sharing_too_little_is_passed_over(tmp_path: Path) -> None:
    a, _ = trees(tmp_path)
    other = write(tmp_path / "other", {"x.py": "def x():\n    return 1\n"})
    Repository(other, tmp_path / "io").index()
    s = Repository(a, tmp_path / "ia", seed=tmp_path / "io").index()
    assert s.seeded_from is None and "shares 0 of" in (s.seed_note or "")


def test_the_best_of_several_seeds_is_used_and_an_old_schema_index_is_replaced(
    tmp_path: Path,
) -> None:
    a, b = trees(tmp_path)
    other = write(tmp_path / "other", {"x.py": "def x():\n    return 1\n"})
    Repository(other, tmp_path / "io").index()
    near = Repository(a, tmp_path / "ia")
    near.index()
    # B's own index exists but is of another schema: it is rebuilt from the seed.
    Repository(b, tmp_path / "ib").index()
    foreign_schema(tmp_path / "ib" / "recon.db")
    s = Repository(b, tmp_path / "ib", seed=[tmp_path / "io", near]).index()
    assert s.seeded_from == str(near.graph_db)
    assert graph_db.content_rows(tmp_path / "ib" / "recon.db") == cold_rows(b, tmp_path / "cold")
    # An index of the current schema is refreshed as it is, whatever the seed.
    assert Repository(b, tmp_path / "ib", seed=near).index().seeded_from is None


def test_index_many_seeds_a_new_tree_from_a_finished_one(tmp_path: Path) -> None:
    v1, v2 = two_versions(tmp_path)
    kw = {"index_root": tmp_path / "idx", "progress": False, "no_cache": True}
    # One worker: v1 is finished before v2 starts, and is its only candidate.
    s = index_many([v1, v2], workers=1, **kw)
    r = {Path(x["root"]).name: x for x in s.results}
    assert r["v1"]["seeded_from"] is None
    assert r["v2"]["seeded_from"] == str(Path(r["v1"]["index_dir"]) / "recon.db")
    assert r["v2"]["files_parsed"] == 2  # the edited file and the new one
    assert s.to_json()["seeded"] == 1
    assert graph_db.content_rows(Path(r["v2"]["index_dir"]) / "recon.db") == cold_rows(
        v2, tmp_path / "cold"
    )
    # A later batch finds the finished indexes under the same index root.
    v3 = tmp_path / "v3"
    shutil.copytree(v2, v3)
    again = index_many([v3], **kw).results[0]
    assert again["seeded_from"] is not None and again["files_parsed"] == 0
    off = index_many([v3], recheck=True, seed=False, **{**kw, "index_root": tmp_path / "i2"})
    assert off.results[0]["seeded_from"] is None


#: A package re-exporting through two ``__init__`` levels (as sympy does), and a reader for
#: each way a lookup can reach a definition: by name, through an alias, a base class, a
#: typed attribute, a star import.
CHAIN = {
    "pkg/__init__.py": "from .core import *\nfrom .util import helper as assist\n",
    "pkg/core/__init__.py": "from .basic import Basic, make\nfrom .sym import Symbol\n",
    "pkg/core/basic.py": """
        from pkg.mixins import Left, Right


        class Basic(Left):
            def diff(self):
                return 1


        def make():
            return Basic()
    """,
    "pkg/mixins.py": """
        class Left:
            def spin(self):
                return 1


        class Right:
            def spin(self):
                return 2
    """,
    "pkg/core/sym.py": "from .basic import Basic\n\n\nclass Symbol(Basic):\n    pass\n",
    "pkg/util.py": "def helper():\n    return 1\n\n\ndef other():\n    return 2\n",
    "pkg/holder.py": """
        from pkg.core import Basic


        class Holder:
            def __init__(self):
                self.item = Basic()
    """,
    "app/by_name.py": "from pkg import make\n\n\ndef g():\n    return make()\n",
    "app/by_alias.py": "from pkg import assist\n\n\ndef h():\n    return assist()\n",
    "app/by_base.py": """
        from pkg import Symbol


        class Mine(Symbol):
            def go(self):
                return self.spin() + self.diff()
    """,
    "app/by_attr.py": """
        from pkg.holder import Holder


        class User(Holder):
            def run(self):
                return self.item.diff()
    """,
    "app/by_star.py": "from pkg import *\n\n\ndef u():\n    return newname() + make()\n",
    **{f"app/leaf{i}.py": f"def leaf{i}():\n    return {i}\n" for i in range(8)},
}

#: Each edit reaches a reader only through a chain: a definition moves, a base class is
#: swapped, an alias is rebound, a name is newly defined behind a star import, a file goes.
CHAIN_EDITS = {
    "pkg/core/basic.py": """
        from pkg.mixins import Left, Right

        # the base moved to Right, and every definition two lines down

        class Basic(Right):
            def diff(self):
                return 1


        def make():
            return Basic()


        def newname():
            return 0
    """,
    "pkg/core/__init__.py": ("from .basic import Basic, make, newname\nfrom .sym import Symbol\n"),
    "pkg/__init__.py": "from .core import *\nfrom .util2 import other as assist\n",
    "pkg/util2.py": "def other():\n    return 2\n",
}


@pytest.mark.parametrize("seeded", [True, False], ids=["seeded", "refreshed"])
def test_a_change_read_through_a_re_export_chain_matches_a_cold_build(
    tmp_path: Path, seeded: bool
) -> None:
    a = write(tmp_path / "a", CHAIN)
    b = tmp_path / "b"
    shutil.copytree(a, b)
    Repository(a, tmp_path / "ia").index()
    if not seeded:
        Repository(b, tmp_path / "ib").index()
    write(b, CHAIN_EDITS)
    (b / "pkg" / "util.py").unlink()
    s = Repository(b, tmp_path / "ib", seed=tmp_path / "ia" if seeded else None).index()
    assert (s.seeded_from is not None) == seeded
    assert graph_db.content_rows(tmp_path / "ib" / "recon.db") == cold_rows(b, tmp_path / "cold")
    # The leaves read nothing that changed; the parsed files and the chain's readers are
    # resolved again.
    assert s.files_parsed == 4 and s.files_resolved < s.files_seen - 8
