"""Project instructions: priority order, README opt-in, budgets, dedup, path gating."""

import os

import pytest

from ctxfast import load_instructions
from ctxfast.errors import ConfigError
from ctxfast.harness.instructions import gate, glob_match


def _w(root, rel, text):
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text, encoding="utf-8")


def test_priority_order_and_layering(tmp_path):
    for rel in [
        ".ctxfast/PROJECT.md",
        ".cursorrules",
        "AGENTS.md",
        ".ctxfast/AGENTS.md",
        "CLAUDE.md",
        "AGENT.md",
        ".cursor/rules/b.mdc",
        ".cursor/rules/a.mdc",
    ]:
        _w(tmp_path, rel, f"rule from {rel}")
    ins = load_instructions(tmp_path)
    assert ins.files == [
        "AGENTS.md",
        "CLAUDE.md",
        "AGENT.md",
        ".cursorrules",
        ".cursor/rules/a.mdc",
        ".cursor/rules/b.mdc",
        ".ctxfast/AGENTS.md",
        ".ctxfast/PROJECT.md",
    ]
    # .ctxfast/AGENTS.md layers under AGENTS.md instead of shadowing it.
    assert ins.text.index("rule from AGENTS.md") < ins.text.index("rule from .ctxfast/AGENTS.md")


def test_readme_only_when_opted_in(tmp_path):
    _w(tmp_path, "README.md", "badges and install steps")
    _w(tmp_path, "AGENTS.md", "run tests")
    assert "badges" not in load_instructions(tmp_path).text
    ins = load_instructions(tmp_path, include_readme=True)
    assert ins.files == ["AGENTS.md", "README.md"] and "badges" in ins.text


def test_per_file_budget(tmp_path):
    _w(tmp_path, "AGENTS.md", "x" * 10_000)
    ins = load_instructions(tmp_path)
    assert len(ins.text.encode()) <= 4_000
    assert ins.truncated == ["AGENTS.md"]
    assert load_instructions(tmp_path, file_budget=20_000).truncated == []


def test_total_budget_checked_after_each_file(tmp_path):
    for rel in ["AGENTS.md", "CLAUDE.md", "AGENT.md", ".cursorrules", ".ctxfast/AGENTS.md"]:
        _w(tmp_path, rel, ("é" + "y" * 99 + "\n") * 39)  # ~3.9 KB each, multi-byte chars
    ins = load_instructions(tmp_path)
    size = len(ins.text.encode("utf-8"))
    assert size <= 12_000
    assert ins.files[:3] == ["AGENTS.md", "CLAUDE.md", "AGENT.md"]
    assert ".cursorrules" in ins.truncated or ".cursorrules" in ins.skipped
    assert ".ctxfast/AGENTS.md" in ins.skipped
    small = load_instructions(tmp_path, total_budget=5_000, file_budget=10_000)
    assert len(small.text.encode("utf-8")) <= 5_000


def test_dedup_by_resolved_relative_path(tmp_path):
    _w(tmp_path, "AGENTS.md", "shared rules")
    os.symlink(tmp_path / "AGENTS.md", tmp_path / "CLAUDE.md")
    ins = load_instructions(tmp_path)
    assert ins.files == ["AGENTS.md"]
    assert ins.text.count("shared rules") == 1


def test_front_matter_gating(tmp_path):
    _w(tmp_path, "AGENTS.md", "---\npaths: pkg/**/*.go, cmd/**\n---\nGo rules here\n")
    _w(tmp_path, "CLAUDE.md", "always applies")
    assert "Go rules" in load_instructions(tmp_path, scope=["pkg/a/b/c.go"]).text
    assert "Go rules" in load_instructions(tmp_path, scope=["cmd/main.go"]).text
    gated = load_instructions(tmp_path, scope=["web/app.tsx"])
    assert "Go rules" not in gated.text and "always applies" in gated.text
    assert "AGENTS.md" in gated.skipped
    # Empty scope disables gating; the front matter itself is never shown.
    ungated = load_instructions(tmp_path, scope=())
    assert "Go rules" in ungated.text and "paths:" not in ungated.text


def test_section_gating():
    doc = (
        "# Rules\nGeneral rule.\n"
        "## Frontend <!-- paths: web/**/*.tsx -->\nUse hooks.\n### Sub\nFrontend detail.\n"
        "## Backend\nUse contexts.\n"
    )
    go = gate(doc, ["pkg/x.go"])
    assert "Use hooks" not in go and "Frontend detail" not in go
    assert "General rule" in go and "Use contexts" in go
    web = gate(doc, ["web/src/App.tsx"])
    assert "Use hooks" in web and "Frontend detail" in web and "<!--" not in web
    assert "Use hooks" in gate(doc, [])


def test_glob_semantics():
    assert glob_match("pkg/a/b.go", "pkg/**/*.go")
    assert glob_match("pkg/b.go", "pkg/**/*.go")
    assert not glob_match("pkg/b.py", "pkg/**/*.go")
    assert glob_match("web/x/y.tsx", "web/")
    assert not glob_match("src/a/b.py", "src/*.py")
    assert glob_match("./src/a.py", "src/*.py")


def test_bad_root(tmp_path):
    with pytest.raises(ConfigError):
        load_instructions(tmp_path / "nope")
