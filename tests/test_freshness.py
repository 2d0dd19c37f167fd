"""Every read refreshes the index first: an edit made between two calls is what the second
call shows, unless the caller opts out with ``refresh=False``."""

from __future__ import annotations

import pytest
from recon_fixture import FILES, write_project

import ctxfast

TASK = "connect should reject an empty database uri"
EDITED = (
    "def connect(uri: str):\n"
    '    """Open a database connection."""\n'
    "    if not uri:\n"
    '        raise ValueError("empty database uri rejected here")\n'
    "    return uri\n"
)
ADDED = "def reconnect(uri: str):\n    return connect(uri)\n"


@pytest.fixture
def repo(tmp_path):
    return ctxfast.Repository(write_project(tmp_path / "proj"))


def _edit(repo: ctxfast.Repository) -> None:
    """Rewrites ``connect`` in place, as an agent's edit tool would."""
    db = repo.root / "pkg" / "db.py"
    db.write_text(FILES["pkg/db.py"].split("def connect", 1)[0] + EDITED)


def test_compose_sees_an_edit_made_between_two_calls(repo):
    before = ctxfast.compose(repo, TASK).render()
    assert "def connect(uri: str):" in before and "empty database uri rejected" not in before
    _edit(repo)
    after = ctxfast.compose(repo, TASK).render()
    assert "empty database uri rejected here" in after


def test_retrieve_sees_an_edit_and_refresh_false_keeps_the_old_state(repo):
    assert "rejected here" not in repo.retrieve(TASK).render()
    _edit(repo)
    stale = repo.retrieve(TASK, refresh=False).render()
    assert "rejected here" not in stale  # opted out: the index and its state are as before
    assert "rejected here" in repo.retrieve(TASK).render()


def test_graph_and_map_see_a_definition_added_between_calls(repo):
    with pytest.raises(ctxfast.CtxfastError):
        repo.ego_graph("pkg.db.reconnect")
    assert "reconnect" not in repo.repo_map(max_tokens=2000)
    (repo.root / "pkg" / "db.py").write_text(
        (repo.root / "pkg" / "db.py").read_text() + "\n\n" + ADDED
    )
    with pytest.raises(ctxfast.CtxfastError):
        repo.ego_graph("pkg.db.reconnect", refresh=False)
    ego = repo.ego_graph("pkg.db.reconnect")
    assert "pkg.db.connect" in ego.render()
    assert "reconnect" in repo.repo_map(max_tokens=2000)


def test_a_missing_index_is_built_even_with_refresh_false(repo):
    assert not repo.graph_db.exists()
    assert "def connect" in repo.retrieve(TASK, refresh=False).render()
    assert repo.graph_db.exists()
