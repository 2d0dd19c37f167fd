"""Progressive skill disclosure: cards for all matches, few bodies, lookup for the rest."""

import pytest

from ctxfast import skills
from ctxfast.errors import ConfigError, InvalidArgumentError
from ctxfast.harness.skills import Skill, disclose, load_skills, lookup

SK = [
    Skill("pytest-debugging", "debug failing pytest tests and fixtures", "BODY-PYTEST"),
    Skill("git-bisect", "find the commit that introduced a regression with git bisect", "BODY-GIT"),
    Skill("sql-migrations", "write safe database migrations for sql schemas", "BODY-SQL"),
    Skill("docker-build", "speed up docker image builds", "BODY-DOCKER"),
    Skill("release-notes", "draft release notes from merged pull requests", "BODY-REL"),
]


def test_cards_for_every_match_bodies_only_for_strong_matches():
    d = disclose(SK, "debug the failing pytest fixtures")
    assert [s.name for s in d.expanded] == ["pytest-debugging"]
    assert "BODY-PYTEST" in d.text
    assert "BODY-GIT" not in d.text and "BODY-SQL" not in d.text


def test_weak_matches_stay_cards():
    d = disclose(SK, "the docker migrations are slow")
    names = {s.name for s in d.cards}
    assert {"docker-build", "sql-migrations"} <= names
    assert not d.expanded
    assert "- docker-build: speed up docker image builds" in d.text
    assert "BODY-DOCKER" not in d.text


def test_references_and_pins_expand_up_to_the_cap():
    d = disclose(SK, "use @skill:git-bisect and @skill:release-notes", pinned=["docker-build"])
    assert [s.name for s in d.expanded] == ["git-bisect", "release-notes"]
    assert "docker-build" in {s.name for s in d.cards}  # over the cap → card, not dropped
    d3 = disclose(SK, "@skill:git-bisect", pinned=["docker-build"], max_expanded=3)
    assert [s.name for s in d3.expanded] == ["git-bisect", "docker-build"]
    assert disclose(SK, "@skill:git-bisect", max_expanded=0).expanded == []


def test_unknown_references_are_reported():
    d = disclose(SK, "@skill:nope please", pinned=["ghost"])
    assert d.unknown_references == ["nope", "ghost"]


def test_lookup_and_errors():
    assert lookup(SK, "git-bisect").body == "BODY-GIT"
    with pytest.raises(InvalidArgumentError, match="did you mean git-bisect"):
        lookup(SK, "bisect")
    with pytest.raises(ConfigError):
        disclose([SK[0], SK[0]], "x")
    with pytest.raises(ConfigError):
        disclose(SK, "x", max_expanded=-1)


def test_load_skills_from_directory(tmp_path):
    d = tmp_path / "skills" / "lint"
    d.mkdir(parents=True)
    (d / "SKILL.md").write_text(
        "---\nname: lint-fix\ndescription: fix ruff lint errors\n---\nRun ruff --fix.\n",
        encoding="utf-8",
    )
    e = tmp_path / "skills" / "plain"
    e.mkdir()
    (e / "SKILL.md").write_text("Just a body.", encoding="utf-8")
    loaded = load_skills(tmp_path / "skills")
    assert [(s.name, s.description, s.body) for s in loaded] == [
        ("lint-fix", "fix ruff lint errors", "Run ruff --fix."),
        ("plain", "", "Just a body."),
    ]
    assert skills.disclose(loaded, "fix the ruff lint errors").expanded[0].name == "lint-fix"
    assert load_skills(tmp_path / "absent") == []
