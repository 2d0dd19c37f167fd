"""Gate signals S1–S6, the R0→R2 ladder, the k=1 ego-graph and the tree it injects."""

from __future__ import annotations

import json

import pytest
from recon_fixture import write_project

from ctxfast import Repository, count_tokens
from ctxfast.errors import InvalidArgumentError
from ctxfast.recon.escalation import GateConfig, code_identifiers


@pytest.fixture()
def repo(tmp_path):
    r = Repository(write_project(tmp_path))
    r.index()
    return r


def test_each_injection_budget_bounds_its_part(repo):
    task, entity = "main() returns the wrong count", "pkg.utils.helper"
    ego_head = "### Dependency ego-graph"
    full = repo.gate(task, entity)
    assert ego_head in full.context and "package_manager: pip" in full.context
    assert ego_head not in repo.gate(task, entity, config=GateConfig(ego_graph_tokens=0)).context
    no_header = repo.gate(task, entity, config=GateConfig(manifest_header_tokens=0))
    assert "package_manager: pip" not in no_header.context and ego_head in no_header.context
    tight = repo.gate(task, entity, config=GateConfig(total_tokens=40))
    assert ego_head not in tight.context and tight.context.startswith("## Repository context")


def test_ego_graph_tree_text_exact(repo):
    text = repo.ego_graph("pkg.cli.main").render()
    assert text == (
        'pkg.cli.main (function) — "def main(argv: list[str]) -> int:" [pkg/cli.py:5]\n'
        "├── pkg.utils.parse_args:invoke [pkg/cli.py:6]\n"
        '│   └── pkg.utils.parse_args (function) — "def parse_args(argv):" [pkg/utils.py:1]\n'
        "├── pkg.db.connect:invoke [pkg/cli.py:7]\n"
        '│   └── pkg.db.connect (function) — "def connect(uri: str):" [pkg/db.py:6]\n'
        "├── pkg.cli.Runner.step:invoked-by [pkg/cli.py:16]\n"
        '│   └── pkg.cli.Runner.step (function) — "def step(self):" [pkg/cli.py:15]\n'
        "├── tests.test_cli.test_main:invoked-by [tests/test_cli.py:5]\n"
        '│   └── tests.test_cli.test_main (function) — "def test_main():" [tests/test_cli.py:4]\n'
        "└── pkg.cli:contain [pkg/cli.py:1]"
    )
    assert "return" not in text  # signatures only, never bodies


def test_k2_is_forbidden_and_no_node_is_two_hops_away(repo):
    with pytest.raises(ValueError, match="k=1"):
        repo.ego_graph("pkg.cli.main", max_radius=2)
    ego = repo.ego_graph("pkg.cli.Runner.step")
    g = repo.graph
    root = ego.root
    direct = {e.dst for _, e in g.scope_edges(root)} | {e.dst for e in g.edges_from(root.id)}
    direct |= {g.scope_definition(s).id for s in g.callers(root.id)}
    assert ego.node_ids() - {root.id} <= direct


def test_ego_graph_budget_drops_neighbours_whole(repo):
    ego = repo.ego_graph("pkg.cli.main")
    full = ego.render()
    small = ego.render(max_tokens=60)
    assert count_tokens(small) <= 60 < count_tokens(full)
    assert small.endswith("more neighbours omitted")
    assert small.splitlines()[0] == full.splitlines()[0]


def test_unknown_entity_is_a_clear_error(repo):
    with pytest.raises(InvalidArgumentError):
        repo.ego_graph("no.such.thing")


def test_no_signal_retrieves_nothing(repo):
    res = repo.gate("make it faster please", "pkg.utils.helper")
    assert not res.retrieved and res.level == "none" and res.signals == []
    data = json.loads(res.to_json())
    assert data == {
        "retrieved": False,
        "entity": "pkg.utils.helper",
        "manifest_header": {
            "languages": ["python"],
            "package_manager": "pip",
            "build": "python -m build",
            "test": "pytest tests/",
            "lint": None,
        },
    }
    assert res.token_count <= 500


def test_signals_fire_with_evidence(repo):
    res = repo.gate("main crashes when parse_args gets None", "pkg.cli.main")
    ids = [s.id for s in res.signals]
    assert ids[:3] == ["S1", "S2", "S4"]
    s1 = res.signals[0]
    assert s1.evidence == "pkg/utils.py:1" and s1.named_entity == "pkg.utils.parse_args"
    assert res.signals[1].evidence == "pkg/cli.py:1"
    assert res.signals[2].evidence == "pkg/cli.py:6"


def test_s3_s5_s6(repo):
    res = repo.gate("it fails", "pkg.utils.helper", sbfl_top="pkg.db.connect")
    assert [s.id for s in res.signals] == ["S3"]
    res = repo.gate("DATABASE_URL is ignored", "pkg.utils.helper")
    s5 = [s for s in res.signals if s.id == "S5"]
    assert s5 and s5[0].evidence == "pkg/db.py:3"
    res = repo.gate("calling pkg.cli.main from the shell fails", "pkg.utils.helper")
    assert any(s.id == "S6" for s in res.signals)


def test_signals_can_be_switched_off(repo):
    cfg = GateConfig(signals=("S3",))
    res = repo.gate("main crashes when parse_args gets None", "pkg.cli.main", config=cfg)
    assert not res.retrieved


def test_ladder_climbs_to_r2_only_on_cross_file_evidence(repo):
    # parse_args has only a contain edge and a caller: R1, no missing outgoing cross-file edge.
    res = repo.gate("parse_args drops items", "pkg.db.connect")
    assert [r["level"] for r in res.ladder] == ["R0", "R1"]
    # main invokes definitions in two other files: R2.
    res = repo.gate("main() returns the wrong count", "pkg.utils.helper")
    assert res.named_entity == "pkg.cli.main"
    assert [r["level"] for r in res.ladder] == ["R0", "R1", "R2"]
    assert res.level == "R2"
    assert res.context.startswith("## Repository context\n### Manifest header\n")
    assert "### Dependency ego-graph (k=1, tree-encoded)\npkg.cli.main (function)" in res.context
    assert res.token_count == count_tokens(res.context) <= 4_000
    # The ladder can be capped lower, and never goes past R2.
    capped = repo.gate(
        "main() returns the wrong count", "pkg.utils.helper", config=GateConfig(max_level="R1")
    )
    assert capped.level == "R1"


def test_code_identifiers_ignore_prose():
    ids = code_identifiers("Fix `Runner.run` so parse_args() and HttpClient work in utils.py")
    assert ids == ["Runner.run", "parse_args", "HttpClient"]
