"""The task's goal sentence (an issue's title) as a query of its own: two file signals and a
candidate term, each shown moving the file or definition the title names."""

from __future__ import annotations

from recon_fixture import indexed_repo

from ctxfast.retrieval.config import RetrievalConfig
from ctxfast.retrieval.task import parse_task

FILES = {
    "geo/__init__.py": "",
    "geo/vector.py": (
        "class Vector:\n"
        "    def __init__(self, system, basis):\n"
        "        self.system = system\n"
        "        self.basis = basis\n\n"
        "    def cross(self, other):\n"
        "        return Vector(self.system, other.basis)\n\n"
        "    def components(self):\n"
        "        return {self.basis: self.system}\n"
    ),
    "geo/system.py": (
        "class CoordSystem:\n"
        "    def __init__(self, name):\n"
        "        self.name = name\n\n"
        "    def base_vectors(self):\n"
        "        return [self.name]\n"
    ),
    "render/__init__.py": "",
    "render/pretty.py": (
        "def pretty(expr):\n"
        "    # the output of a product is centred, never misaligned\n"
        "    return layout(expr).center()\n\n"
        "def layout(expr):\n"
        "    return str(expr)\n\n"
        "def baseline(picture):\n"
        "    return picture.height // 2\n"
    ),
}

#: The title names the behaviour (pretty output); the example's identifiers name the inputs.
TASK = (
    "Pretty output of a product is misaligned\n"
    "```\n"
    "s = CoordSystem('s')\n"
    "v = Vector(s, s.base_vectors()[0])\n"
    "w = v.cross(Vector(s, v.components()))\n"
    "```\n"
    "It comes out in a jumble."
)

OFF = {"goal_signals": False}


def test_goal_terms_are_the_title_when_the_task_says_more():
    cfg = RetrievalConfig()
    tq = parse_task(TASK, None, None, cfg.query, cfg.task.stopwords)
    assert tq.goal_terms == ("pretty", "output", "product", "misaligned")
    # A task of one sentence is its own goal: no second query of the same words.
    one = parse_task("Pretty output is misaligned", None, None, cfg.query, cfg.task.stopwords)
    assert one.goal_terms == ()


def test_the_title_ranks_the_file_it_describes_first(tmp_path):
    repo = indexed_repo(tmp_path, FILES)
    on = repo.retrieve(TASK)
    off = repo.retrieve(TASK, config=OFF)
    assert off.ranked_files()[0] == "geo/vector.py"  # the example's identifiers win alone
    assert on.ranked_files()[0] == "render/pretty.py"
    assert set(on.signals["goal_bm25"]) >= {"render/pretty.py"}
    assert on.signals["goal_def_bm25"]["render/pretty.py"] == 1.0
    assert "goal_bm25" not in off.signals


def test_a_definition_the_title_describes_rises_by_the_goal_weight(tmp_path):
    repo = indexed_repo(tmp_path, FILES)

    def place(weight: float) -> tuple[int, float]:
        res = repo.retrieve(TASK, config={"goal_candidate_weight": weight})
        names = [c.qualname for c in res.candidates]
        i = names.index("render.pretty.pretty")
        return i, res.candidates[i].score

    (at0, s0), (at1, s1) = place(0.0), place(0.5)
    assert at1 < at0
    assert abs((s1 - s0) - 0.5) < 1e-9  # the best goal match gains the whole weight
