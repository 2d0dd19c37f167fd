"""``ctxfast.compose`` and the repository CLI subcommands on a real fixture repository."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from recon_fixture import indexed_repo, write_project
from test_construct_ranker import _reply, server  # noqa: F401  (the real 127.0.0.1 server)

import ctxfast
from ctxfast.construct import (
    CodeCandidate,
    ConstructConfig,
    DefaultsConfig,
    ImpactEdge,
    OpenAICompatibleRanker,
    PlanNode,
    to_code_candidates,
)
from ctxfast.errors import InvalidArgumentError
from ctxfast.recon.graph import CodeGraph

TASK = "connect should reject an empty database uri"

EXTRA = {
    ".env": "DATABASE_URL=postgres://localhost/app\n",
    "pkg/jobs.py": (
        "from pkg.utils import helper\n\n\n"
        "def nightly():\n    return helper() + 1\n\n\n"
        "def hourly():\n    return helper() + 2\n\n\n"
        "def weekly():\n    return helper() + 3\n"
    ),
    "pkg/pool.py": (
        "def database_pool(uri, size):\n"
        '    """Keep a pool of database connections for one uri."""\n'
        "    return [uri] * size\n\n\n"
        "def close_pool(pool):\n"
        '    """Close every database connection of the pool."""\n'
        "    return pool.clear()\n"
    ),
}


@pytest.fixture
def project(tmp_path):
    root = write_project(tmp_path / "proj")
    for rel, text in EXTRA.items():
        (root / rel).write_text(text, encoding="utf-8")
    return root


def _shows_call(text, caller, callee):
    """The window says ``caller`` calls ``callee``: on the caller's code block, or in words."""
    return re.search(rf"`{caller}`( \(\d+-\d+\))? — (change target; )?calls `{callee}`", text) or (
        re.search(rf"`[\w.]*{caller}` calls `[\w.]*{callee}`", text)
    )


def _decisions(ctx, stage):
    return {e.decision: e for e in ctx.admission_log if e.stage == stage}


def test_compose_indexes_on_first_use_and_windows_the_target(project):
    repo = ctxfast.Repository(project)
    assert not repo.graph_db.exists()
    ctx = ctxfast.compose(repo, TASK)
    assert repo.graph_db.exists()
    assert ctx.token_count <= ctx.ceiling == 24_000
    assert ctx.token_count == ctxfast.count_tokens(ctx.render())
    assert "def connect(uri: str):" in ctx.render()
    assert ctx.model_calls == 0
    defaults = _decisions(ctx, "defaults")
    assert "target=pkg.db.connect (top retrieved definition)" in defaults["default_plan"].driver
    # One clear leader, and the next two best as the floor of three change targets.
    loc = defaults["default_localization"].item_id.split(",")
    assert loc[0] == "pkg.db.connect" and len(loc) == 3
    assert defaults["default_impact"].item_id.split(",") == loc
    assert "3 CalledBy edges" in defaults["default_impact"].driver  # callers of the three
    text = ctx.render()
    assert _shows_call(text, "main", "connect")
    assert text.count(TASK) == 1  # the task once: the default plan only restates it
    assert not re.search(r"E[0-9a-f]{10}", text)  # no internal ids in what the model reads
    assert ctx.acceptance_criteria == (TASK,)
    assert {"retrieve", "defaults", "construct", "construct.gate"} <= set(ctx.timings_ms)


def test_default_localization_is_the_top_retrieved_definitions(project):
    repo = ctxfast.Repository(project)
    fixed = DefaultsConfig(confidence_localization=False, localized_definitions=3)
    ctx = ctxfast.compose(repo, TASK, defaults=fixed)
    entry = _decisions(ctx, "defaults")["default_localization"]
    loc = entry.item_id.split(",")
    ranked = [c for c in repo.retrieve(TASK).candidates if c.qualname and c.kind != "def"]
    best = sorted(ranked, key=lambda c: -c.score)
    assert loc == list(dict.fromkeys(c.qualname for c in best))[:3]
    assert len(loc) == 3 and "top 3 retrieved definitions (fixed count)" in entry.driver
    gate = {e.item_id: e.driver for e in ctx.admission_log if e.stage == "gate"}
    admitted_targets = {i for i, d in gate.items() if d == "obligation:change_target"}
    assert admitted_targets, "the localized definitions are admitted as change targets"
    # An explicit empty localization means "none": only the plan target is a head.
    ctx0 = ctxfast.compose(repo, TASK, localization=[])
    assert "default_localization" not in _decisions(ctx0, "defaults")
    assert ctx0.token_count <= ctx.token_count


def test_explicit_plan_and_impact_use_no_defaults(project):
    repo = ctxfast.Repository(project)
    plan = PlanNode(
        "n1", "make helper configurable", "pkg.utils.helper", acceptance_criteria=("ok",)
    )
    edge = ImpactEdge("pkg.utils.helper", "pkg.jobs.nightly", "CalledBy")
    ctx = ctxfast.compose(
        repo, "make helper configurable", plan=plan, impact=[edge], localization=[]
    )
    defaults = _decisions(ctx, "defaults")
    assert "default_plan" not in defaults and "default_impact" not in defaults
    assert _shows_call(ctx.render(), "nightly", "helper")
    assert "pkg.jobs.hourly" not in ctx.render()  # no derived edges beside the given one
    assert "def helper():" in ctx.render()


def test_callers_are_capped_and_the_cap_is_logged(project):
    repo = ctxfast.Repository(project)
    plan = PlanNode("n1", "make helper configurable", "pkg.utils.helper")
    ctx = ctxfast.compose(
        repo,
        "make helper configurable",
        plan=plan,
        localization=[],
        defaults=DefaultsConfig(max_callers=2),
    )
    text = ctx.render()
    assert text.count("— calls `helper`") == 2
    capped = _decisions(ctx, "defaults")["callers_capped"]
    assert capped.item_id == "pkg.utils.helper" and "3 call sites" in capped.driver


def test_larger_windows_draw_on_more_retrieved_candidates():
    from ctxfast.construct.compose import _retrieval_settings
    from ctxfast.construct.targets import window_candidates

    d = DefaultsConfig()
    assert [window_candidates(d, t) for t in (0, 2000, 8000, 16000, 24000)] == [40, 40, 40, 80, 120]
    assert _retrieval_settings(None, d, 16000) == {"top_k": 80}
    assert _retrieval_settings({"top_k": 7}, d, 16000) == {"top_k": 7}  # the caller's
    assert _retrieval_settings({"bm25_k1": 1.2}, d, 24000) == {"bm25_k1": 1.2, "top_k": 120}


def _callers_project(tmp_path):
    """``helper`` called by three test functions (in a file sorting first) and one library
    function, so file:line order alone would pick tests."""
    root = tmp_path / "callers"
    files = {
        "app/__init__.py": "",
        "app/core.py": "def helper(x):\n    return x + 1\n",
        "app/api.py": "from app.core import helper\n\n\ndef serve(x):\n    return helper(x)\n",
        "aaa_tests/test_core.py": (
            "from app.core import helper\n\n\n"
            + "".join(
                f"def test_{n}():\n    assert helper({i})\n\n\n"
                for i, n in enumerate(["one", "two", "three"])
            )
        ),
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def test_library_callers_come_before_test_callers(tmp_path):
    repo = ctxfast.Repository(_callers_project(tmp_path))
    plan = PlanNode("n1", "change helper", "app.core.helper")
    edges = lambda d: {  # noqa: E731
        e.driver
        for e in ctxfast.compose(
            repo, "change helper", plan=plan, localization=[], defaults=d
        ).admission_log
        if e.stage == "defaults" and e.decision == "callers_capped"
    }
    ctx = ctxfast.compose(
        repo,
        "change helper",
        plan=plan,
        localization=[],
        defaults=DefaultsConfig(max_callers=2, max_test_callers=1),
    )
    text = ctx.render()
    assert "`serve` — calls `helper`" in text  # the library caller, though its file sorts last
    tests = ("test_one", "test_two", "test_three")
    assert sum(bool(_shows_call(text, t, "helper")) for t in tests) == 1  # one test caller
    assert edges(DefaultsConfig(max_callers=2, max_test_callers=1)) == {
        "4 call sites, 4 calling scopes among the first 4; kept 2 (library first, at most 1 tests)"
    }
    everyone = ctxfast.compose(
        repo,
        "change helper",
        plan=plan,
        localization=[],
        defaults=DefaultsConfig(max_test_callers=8),
    ).render()
    assert all(_shows_call(everyone, t, "helper") for t in tests)


def _one_module(root: Path, module: str, text: str) -> Path:
    """A repository at ``root`` holding the package module ``module`` (``pkg/mod.py``)."""
    package = (root / module).parent
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    (root / module).write_text(text, encoding="utf-8")
    return root


def test_definitions_come_with_decorators_comments_and_blank_margins(tmp_path):
    root = _one_module(
        tmp_path / "deco",
        "shapes/square.py",
        "class Square:\n"
        "    def __init__(self, side):\n"
        "        self.side = side\n"
        "\n"
        "    # the area is recomputed on every access\n"
        "    @property\n"
        "    def area(self):\n"
        "        return self.side * self.side\n"
        "\n"
        "    def perimeter(self):\n"
        "        return 4 * self.side\n",
    )
    repo = ctxfast.Repository(root)
    task = "Square.area is wrong for negative side"
    frugal = ConstructConfig(target_tokens=0)  # the change target alone, no fill
    ctx = ctxfast.compose(
        repo,
        task,
        localization=["shapes.square.Square.area"],
        config=frugal,
        defaults=DefaultsConfig(file_outlines=False),
    )
    text = ctx.render()
    for n, line in ((4, ""), (5, "    # the area is recomputed"), (6, "    @property"), (9, "")):
        assert re.search(rf"^{n}\t{re.escape(line)}", text, re.M), (n, line)
    shown = {n for e in ctx.window if e.file == "shapes/square.py" for n in e.shown_lines()}
    assert {4, 5, 6, 7, 8, 9} <= shown
    bare = ctxfast.compose(
        repo,
        task,
        localization=["shapes.square.Square.area"],
        config=frugal,
        defaults=DefaultsConfig(margin_lines=0, attached_lines=0, file_outlines=False),
    )
    shown = {n for e in bare.window if e.file == "shapes/square.py" for n in e.shown_lines()}
    assert 6 not in shown and 9 not in shown


def test_a_block_comment_above_a_definition_comes_whole_or_not_at_all(tmp_path):
    root = tmp_path / "javadoc"
    src = root / "src/main/java/org/shop"
    src.mkdir(parents=True)
    long_doc = "".join(f"     * Line {i} of the contract.\n" for i in range(12))
    (src / "Cart.java").write_text(
        "package org.shop;\n"  # 1
        "\n"
        "public class Cart {\n"  # 3
        "    /**\n"  # 4
        "     * The total of every item.\n"
        "\n"  # 6: a blank line inside the comment
        "     * @return the sum\n"
        "     */\n"  # 8
        "    public int total() {\n"  # 9
        "        return 0;\n"
        "    }\n"  # 11
        "\n"
        "    /**\n"  # 13
        + long_doc  # 14-25
        + "     */\n"  # 26
        "    public int count() {\n"  # 27
        "        return 0;\n"
        "    }\n"
        "}\n",
        encoding="utf-8",
    )
    repo = ctxfast.Repository(root)
    frugal = ConstructConfig(target_tokens=0)
    plain = DefaultsConfig(file_outlines=False, margin_lines=0)
    cart = "src/main/java/org/shop/Cart.java"
    for target, doc in (("total", range(4, 9)), ("count", range(13, 27))):
        ctx = ctxfast.compose(
            repo,
            f"Cart.{target} is wrong",
            localization=[f"org.shop.Cart.{target}"],
            config=frugal,
            defaults=plain,
        )
        shown = {n for e in ctx.window if e.file == cart for n in e.shown_lines()}
        if target == "total":  # five lines with a blank one inside: whole, from its /**
            assert set(doc) <= shown, sorted(shown)
        else:  # fourteen lines, over the ten attached lines: none of it, not its tail
            assert not set(doc) & shown, sorted(shown)
            assert 27 in shown


def test_a_decorator_written_over_several_lines_comes_whole_with_its_definition(tmp_path):
    root = _one_module(
        tmp_path / "deco_multi",
        "shop/cart.py",
        "class Cart:\n"
        "    def total(self):\n"
        "        return sum(q for _, q in self.items)\n"
        "\n"
        "    @validate(\n"
        '        rule="positive",\n'
        '        message="quantity must be positive",\n'
        "    )\n"
        "    def add(self, item, quantity):\n"
        "        self.items.append((item, quantity))\n",
    )
    ctx = ctxfast.compose(
        ctxfast.Repository(root),
        "Cart.add accepts a negative quantity",
        localization=["shop.cart.Cart.add"],
        config=ConstructConfig(target_tokens=0),
        defaults=DefaultsConfig(file_outlines=False),
    )
    shown = {n for e in ctx.window if e.file == "shop/cart.py" for n in e.shown_lines()}
    # the decorator's every line (its rule is what the task is about), not the method above
    assert {5, 6, 7, 8, 9, 10} <= shown and 3 not in shown


def test_a_name_defined_several_times_is_read_as_its_implementation(tmp_path):
    units = (
        "from typing import overload\n"
        "\n"
        "\n"
        "@overload\n"
        "def convert(value: int) -> int: ...\n"  # 5
        "@overload\n"
        "def convert(value: str) -> str: ...\n"  # 7
        "def convert(value):\n"  # 8
        "    if isinstance(value, str):\n"
        "        return value.strip()\n"
        "    return value * 1000\n"
    )
    repo = indexed_repo(tmp_path / "over", {"conv/__init__.py": "", "conv/units.py": units})
    found = list(CodeGraph(repo.graph_db).lookup("conv.units.convert"))
    assert [n.line for n in found] == [8, 5, 7]  # the implementation first
    found = [c for c in repo.retrieve("convert multiplies strings").candidates if c.qualname]
    assert [(c.start_line, c.end_line) for c in found if c.qualname.endswith("convert")] == [
        (8, 11)
    ]
    ctx = ctxfast.compose(
        repo,
        "convert returns the wrong scale",
        localization=["conv.units.convert"],
        config=ConstructConfig(target_tokens=0),
        defaults=DefaultsConfig(file_outlines=False),
    )
    assert "return value * 1000" in ctx.render()


def _printer_project(tmp_path, extra_lines=0):
    root = tmp_path / "printer"
    (root / "fmt").mkdir(parents=True)
    (root / "fmt/__init__.py").write_text("", encoding="utf-8")
    filler = "".join(f"\n\ndef helper_{i}():\n    return {i}\n" for i in range(extra_lines))
    (root / "fmt/names.py").write_text(
        "KNOWN = {\n"
        '    "exp": "Exp",\n'
        '    "log": "Log",\n'
        "}\n\n\n"
        "def render_name(fn):\n"
        '    """Render a function name in the target syntax."""\n'
        "    return KNOWN.get(fn, fn)\n" + filler,
        encoding="utf-8",
    )
    return ctxfast.Repository(root)


def test_a_small_target_file_is_shown_whole(tmp_path):
    repo = _printer_project(tmp_path)
    task = "render_name gives the wrong name for max"
    ctx = ctxfast.compose(repo, task, localization=["fmt.names.render_name"])
    text = ctx.render()
    assert '\n2\t    "exp": "Exp",' in text  # the table above the target
    assert "### fmt/names.py:1-9 · `render_name` (5-9) — change target" in text
    whole = _decisions(ctx, "defaults")["whole_file"]
    assert whole.subject == "fmt/names.py" and "9 lines" in whole.driver
    off = ctxfast.compose(
        repo,
        task,
        localization=["fmt.names.render_name"],
        defaults=DefaultsConfig(whole_file_share=0.0),
    )
    assert "whole_file" not in _decisions(off, "defaults")
    shown = {n for e in off.window if e.file == "fmt/names.py" for n in e.shown_lines()}
    assert 2 not in shown


def test_a_target_file_over_its_share_of_the_target_is_not_whole(tmp_path):
    repo = _printer_project(tmp_path)
    task = "render_name gives the wrong name for max"
    tight = ctxfast.compose(
        repo,
        task,
        localization=["fmt.names.render_name"],
        config=ConstructConfig(target_tokens=60),  # 65% of it: 39 tokens, under the file's
    )
    assert "whole_file" not in _decisions(tight, "defaults")


def test_a_whole_file_is_not_cut_to_a_line_window_or_the_item_byte_cap(tmp_path):
    # 249 lines: over large_item_lines (200), where any other body is cut to a window.
    repo = _printer_project(tmp_path, extra_lines=60)
    task = "render_name gives the wrong name for max"
    ctx = ctxfast.compose(
        repo,
        task,
        localization=["fmt.names.render_name"],
        config=ConstructConfig(content_cap_bytes=1024),  # the file is about 2.6 KB
    )
    assert "249 lines" in _decisions(ctx, "defaults")["whole_file"].driver
    shown = {n for e in ctx.window if e.file == "fmt/names.py" for n in e.shown_lines()}
    assert shown == set(range(1, 250))


def test_compose_shows_a_small_second_ranked_file_whole_as_a_change_target(tmp_path):
    root = tmp_path / "lib"
    (root / "lib").mkdir(parents=True)
    (root / "lib/__init__.py").write_text("", encoding="utf-8")
    stages = "".join(
        f'\n\ndef stage_{i}(frame):\n    """Render frame stage {i}."""\n    return frame + {i}\n'
        for i in range(12)
    )
    (root / "lib/render.py").write_text("def render_frame(frame):\n    return frame\n" + stages)
    (root / "lib/palette.py").write_text(
        "COLORS = {'red': 1}\n\n\ndef frame_color(name):\n    return COLORS[name]\n"
    )
    repo = ctxfast.Repository(root)
    task = "render_frame draws every frame stage with the wrong frame color"
    ranked = repo.retrieve(task).ranked_files()
    assert ranked[:2] == ["lib/render.py", "lib/palette.py"]
    ctx = ctxfast.compose(repo, task, defaults=DefaultsConfig(localization_min=1))
    whole = {e.subject: e.driver for e in ctx.admission_log if e.decision == "whole_file"}
    assert "5 lines" in whole["lib/palette.py"] and "ranked 2" in whole["lib/palette.py"]
    shown = {n for e in ctx.window if e.file == "lib/palette.py" for n in e.shown_lines()}
    assert shown == {1, 2, 3, 4, 5}
    assert "### lib/palette.py:1-5 · `frame_color` (2-5) — change target" in ctx.render()
    # The second file's prior is all that lets it in: with a prior of 0 at rank 2 it is not.
    off = ctxfast.compose(repo, task, defaults=DefaultsConfig(whole_file_prior=(0.6, 0.0)))
    assert "lib/palette.py" not in {
        e.subject for e in off.admission_log if e.decision == "whole_file"
    }
    # A caller's own localization is respected: no guessed file is added to it.
    given = ctxfast.compose(repo, task, localization=["lib.render.render_frame"])
    assert "lib/palette.py" not in {
        e.subject for e in given.admission_log if e.decision == "whole_file"
    }


def test_a_task_sharing_no_word_with_the_code_shows_the_best_ranked_file(tmp_path):
    root = tmp_path / "tool"
    (root / "src").mkdir(parents=True)
    (root / "tests").mkdir()
    body = "use std::io;\n\nfn main() {\n    let out = io::stdout();\n    run(out);\n}\n"
    (root / "src/main.rs").write_text(body, encoding="utf-8")
    (root / "tests/cli.rs").write_text("fn smoke() {}\n", encoding="utf-8")
    repo = ctxfast.Repository(root)
    assert repo.retrieve("Handle broken pipes, closes").candidates == []
    ctx = ctxfast.compose(repo, "Handle broken pipes, closes")
    shown = {n for e in ctx.window if e.file == "src/main.rs" for n in e.shown_lines()}
    assert shown == set(range(1, 7))  # the library file, whole; never the test
    assert not any(e.file == "tests/cli.rs" for e in ctx.window)
    fallback = _decisions(ctx, "defaults")["best_file_fallback"]
    assert fallback.subject == "src/main.rs"
    assert "change target" in ctx.render()
    # A caller's own localization is respected: no stand-in is added for it.
    given = ctxfast.compose(repo, "Handle broken pipes, closes", localization=["crate.main"])
    assert "best_file_fallback" not in _decisions(given, "defaults")


def test_a_task_matching_only_module_level_code_shows_that_file_not_the_task_alone(tmp_path):
    root = tmp_path / "site"
    (root / "app").mkdir(parents=True)
    (root / "app/__init__.py").write_text("", encoding="utf-8")
    ext = "from flask_login import LoginManager\n\nlogin = LoginManager()\ncors = None\n"
    (root / "app/extensions.py").write_text(ext, encoding="utf-8")
    views = "def index():\n    return 'ok'\n\n\ndef about():\n    return 'about'\n"
    (root / "app/views.py").write_text(views, encoding="utf-8")
    repo = ctxfast.Repository(root)
    task = "Add CORS extensions"
    got = repo.retrieve(task).candidates
    assert got and not any(c.qualname for c in got)  # the best file's header, no definition
    ctx = ctxfast.compose(repo, task)
    shown = {n for e in ctx.window if e.file == "app/extensions.py" for n in e.shown_lines()}
    assert shown == {1, 2, 3, 4}
    assert _decisions(ctx, "defaults")["best_file_fallback"].subject == "app/extensions.py"


def test_config_consumers_from_code_and_config_files(project):
    repo = ctxfast.Repository(project)
    ctx = ctxfast.compose(
        repo, "default DATABASE_URL to postgres", localization=["pkg.db.DATABASE_URL"]
    )
    text = ctx.render()
    assert "### .env:1-1 — uses configuration key `DATABASE_URL`" in text
    assert "`main` — uses configuration key `DATABASE_URL`" in text
    assert 'DATABASE_URL = os.environ.get("DATABASE_URL", "sqlite://")' in text
    assert "\n1\timport os" in text  # a module-level target comes with the module's imports
    defaults = _decisions(ctx, "defaults")
    assert "(first localized entity)" in defaults["default_plan"].driver
    assert "2 ConfigConsumer edges" in defaults["default_impact"].driver
    assert ctx.token_count <= ctx.ceiling


@pytest.mark.parametrize("ceiling", [0, 40, 150, 400])
def test_small_ceilings_never_overflow(project, ceiling):
    ctx = ctxfast.compose(ctxfast.Repository(project), TASK, ceiling=ceiling)
    assert ctx.token_count <= ceiling
    assert ctx.token_count == ctxfast.count_tokens(ctx.render())


def test_bad_input_is_a_clean_error(project):
    repo = ctxfast.Repository(project)
    with pytest.raises(InvalidArgumentError):
        ctxfast.compose(repo, "   ")
    with pytest.raises(InvalidArgumentError):
        ctxfast.compose(str(project), TASK)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError):
        ctxfast.compose(repo, TASK, ceiling=-1)


def test_unresolvable_localization_is_logged_not_fatal(project):
    ctx = ctxfast.compose(ctxfast.Repository(project), TASK, localization=["no.such.thing"])
    assert _decisions(ctx, "defaults")["unresolved"].item_id == "no.such.thing"
    assert ctx.token_count <= ctx.ceiling


def test_to_code_candidates_keeps_rank_order_and_drops_bad_spans(project):
    real = ctxfast.Repository(project).retrieve(TASK)
    cands, log = to_code_candidates(real)
    assert [c.qualname for c in cands] == [c.qualname for c in real.candidates]
    top = cands[0]
    assert top.origin == "04" and top.provenance.startswith("04: ")
    assert top.text == real.candidates[0].text and top.score == real.candidates[0].score
    bad = SimpleNamespace(
        qualname="x.y", kind="function", file="x.py", start_line=5, end_line=2, score=1.0,
        provenance=[], signature="", text="",
    )  # fmt: skip
    ok = SimpleNamespace(
        qualname=None, kind="lines", file="x.py", start_line=1, end_line=1, score=0.5,
        provenance=[], signature="", text="x = 1",
    )  # fmt: skip
    cands, log = to_code_candidates(SimpleNamespace(candidates=[bad, ok]))
    assert [c.file for c in cands] == ["x.py"] and cands[0].signature is None
    assert cands[0].provenance == "04: retrieval"
    assert [(e.item_id, e.decision) for e in log] == [("x.y", "dropped")]


def test_compose_with_a_real_http_ranker_calls_at_most_once(project, server, monkeypatch):  # noqa: F811
    repo = ctxfast.Repository(project)
    # One change target, so the fixture's other definitions are residue for the ranker.
    one = DefaultsConfig(localization_min=1, whole_file_prior=(0.6,))
    frugal = ctxfast.compose(
        repo, TASK, config=ConstructConfig(evidence_ranker=False), defaults=one
    )
    residue = [e.item_id for e in frugal.admission_log if e.decision == "residue"]
    assert 1 <= len(residue) <= 32, "the fixture must leave a small residue"
    server.reply = _reply([(i, 0.9) for i in residue])
    monkeypatch.setenv("CTXFAST_TEST_KEY", "sk-test")
    ranker = OpenAICompatibleRanker(server.url, "m", "CTXFAST_TEST_KEY")
    ctx = ctxfast.compose(repo, TASK, ranker=ranker, defaults=one)
    assert ctx.model_calls == 1 and len(server.requests) == 1
    body = server.requests[0]["body"]
    assert body["temperature"] == 0 and body["max_completion_tokens"] == 1024
    ranked = {e.item_id for e in ctx.admission_log if (e.stage, e.decision) == ("rank", "admitted")}
    assert ranked == set(residue)
    assert "close_pool" in ctx.render() and "close_pool" not in frugal.render()
    assert ctx.token_count <= ctx.ceiling
    # No residue (nothing retrieved shares the plan's terms): the ranker is never called.
    plan = PlanNode("p", "qqzx", "pkg.utils.parse_args", acceptance_criteria=("qqzx",))
    quiet = ctxfast.compose(repo, "qqzx", ranker=ranker, plan=plan, impact=[])
    assert not any(e.decision == "residue" for e in quiet.admission_log)
    assert quiet.model_calls == 0 and len(server.requests) == 1


def test_without_a_model_the_evidence_ranker_fills_the_window(project):
    repo = ctxfast.Repository(project)
    # One change target, so the fixture's other definitions are residue to fill with.
    one = DefaultsConfig(localization_min=1, whole_file_prior=(0.6,))
    frugal = ctxfast.compose(
        repo, TASK, config=ConstructConfig(evidence_ranker=False), defaults=one
    )
    # The default ranker: the residue ranked from retrieval scores.
    ctx = ctxfast.compose(repo, TASK, defaults=one)
    assert ctx.model_calls == 0
    ranked = [e for e in ctx.admission_log if (e.stage, e.decision) == ("rank", "admitted")]
    assert ranked and all("ranker score" in e.driver for e in ranked)
    assert "close_pool" in ctx.render() and "close_pool" not in frugal.render()
    filled = [e for e in ctx.admission_log if e.stage == "fill" and e.decision == "admitted"]
    assert filled and all(e.subject for e in filled)  # logs name what they place
    # With no room to fill, the residue stays out and the window is the frugal one's size.
    tight = ctxfast.compose(repo, TASK, config=ConstructConfig(target_tokens=0), defaults=one)
    assert "close_pool" not in tight.render() and tight.token_count <= ctx.token_count


# ---- CLI, as real subprocesses -------------------------------------------------------------


def run(*args, seed="0"):
    env = {**os.environ, "PYTHONHASHSEED": seed}
    return subprocess.run(
        [sys.executable, "-m", "ctxfast.cli", *args],
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )


def test_cli_compose_is_byte_identical_across_processes(project, tmp_path):
    first = run("compose", str(project), TASK, seed="1")
    assert first.returncode == 0, first.stderr
    assert first.stderr == ""  # no progress noise when stderr is not a TTY
    second = run("compose", str(project), TASK, seed="4242")
    assert second.returncode == 0, second.stderr
    assert first.stdout == second.stdout  # first run indexed, the second reused the index
    assert "def connect(uri: str):" in first.stdout
    other = tmp_path / "idx"
    third = run("compose", str(project), TASK, "--index-dir", str(other), seed="7")
    assert third.stdout == first.stdout and (other / "recon.db").exists()


def test_cli_compose_json_and_inputs(project, tmp_path):
    tb = tmp_path / "tb.txt"
    tb.write_text(
        "Traceback (most recent call last):\n"
        '  File "pkg/cli.py", line 7, in main\n'
        "    db.connect(db.DATABASE_URL)\n"
        "ValueError: empty uri\n",
        encoding="utf-8",
    )
    out = run("compose", str(project), TASK, "--traceback", str(tb), "--ceiling", "3000", "--json")
    assert out.returncode == 0, out.stderr
    emit = json.loads(out.stdout)
    assert emit["token_count"] <= emit["ceiling"] == 3000 and emit["model_calls"] == 0
    assert any(e["decision"] == "default_plan" for e in emit["admission_log"])
    assert any(w["kind"] == "traceback" for w in emit["window"])
    assert "timings_ms" not in emit  # the emit is deterministic


def test_cli_errors_are_clean(project):
    out = run("compose", str(project), TASK, "--ranker-url", "http://127.0.0.1:9/v1")
    assert out.returncode == 2 and "--ranker-model" in out.stderr
    out = run("compose", str(project / "missing"), TASK)
    assert out.returncode == 2 and "not a directory" in out.stderr
    out = run("graph", str(project), "no_such_symbol")
    assert out.returncode == 2 and "no definition named" in out.stderr
    assert "Traceback" not in out.stderr


def test_cli_status_before_and_after_indexing(project):
    (project / "bad.py").write_text("def broken(:\n  pass\n", encoding="utf-8")
    before = json.loads(run("status", str(project), "--json").stdout)
    assert before["indexed"] is False and before["sizes_bytes"]["recon.db"] is None
    assert before["manifest_languages"] == ["python"]
    assert not (project / ".ctxfast").exists()  # status never indexes
    assert run("retrieve", str(project), TASK).returncode == 0
    after = json.loads(run("status", str(project), "--json").stdout)
    assert after["indexed"] is True and after["files"]["by_language"] == {"python": 8}
    assert [e["path"] for e in after["files"]["parse_errors"]] == ["bad.py"]
    assert after["sizes_bytes"]["recon.db"] > 0 and after["sizes_bytes"]["api.db"] > 0
    assert after["nodes"] > 0 and after["edges"] > 0 and after["last_refresh"] > 0
    text = run("status", str(project)).stdout
    assert "parse error bad.py" in text and "graph " in text


def test_cli_retrieve_map_graph(project):
    out = run("retrieve", str(project), TASK, "--json", "--tokens", "500")
    assert out.returncode == 0, out.stderr
    res = json.loads(out.stdout)
    assert set(res) == {"query", "candidates", "text", "token_count"}
    assert res["token_count"] <= 500 and res["candidates"][0]["qualname"] == "pkg.db.connect"
    assert res["token_count"] == ctxfast.count_tokens(res["text"])
    plain = run("retrieve", str(project), TASK, "--tokens", "500").stdout
    assert plain == res["text"] + "\n"

    out = run("map", str(project), "--tokens", "200", "--query", "database")
    assert out.returncode == 0 and "pkg/db.py" in out.stdout
    assert ctxfast.count_tokens(out.stdout.rstrip("\n")) <= 200

    out = run("graph", str(project), "pkg.db.connect", "--json")
    g = json.loads(out.stdout)
    assert g["root"]["qualname"] == "pkg.db.connect"
    assert {"type": "invoke", "direction": "in", "target": "pkg.cli.main"}.items() <= next(
        e for e in g["edges"] if e["direction"] == "in"
    ).items()
    assert run("graph", str(project), "connect").stdout.strip() == g["text"]


@settings(max_examples=300, deadline=None)
@given(
    text=st.text(alphabet="AB_ x\n\r\x0c\u2028é(=", max_size=120),
    key=st.sampled_from(["AB_A", "A_B", "B__", "_AB"]),
)
def test_word_lines_is_the_per_line_search(tmp_path_factory, text, key):
    """SourceReader.word_lines (one scan of the file) finds exactly the lines a per-line
    ``\\bKEY\\b`` search finds, whatever the line separators and overlaps."""
    import re

    from ctxfast.construct.source_reader import SourceReader

    root = tmp_path_factory.mktemp("ml")
    (root / "f.py").write_text(text, encoding="utf-8", newline="")
    reader = SourceReader(root)
    word = re.compile(rf"\b{re.escape(key)}\b")
    want = [i for i, line in enumerate(reader.lines("f.py"), start=1) if word.search(line)]
    assert reader.word_lines("f.py", key, word) == want
    assert reader.word_lines("f.py", key, word) == want  # cached join
    assert reader.word_lines("missing.py", key, word) == []


def test_test_callers_are_edges_without_code_candidates(tmp_path):
    from ctxfast.construct.impact import derive_impact

    repo = ctxfast.Repository(_callers_project(tmp_path))
    repo.ensure_index(True)
    derived = derive_impact(
        repo.graph, repo.manifest(), repo.root, ["app.core.helper"], set(), DefaultsConfig()
    )
    tails = [e.tail for e in derived.edges]
    assert tails[0] == "app.api.serve"  # the library caller first
    assert sum(t.startswith("aaa_tests.") for t in tails) == 2  # max_test_callers
    assert [c.qualname for c in derived.candidates] == ["app.api.serve"]


def test_callers_beside_the_product_are_named_like_tests(tmp_path):
    """A benchmark or a documentation example calling the change sorts first by file:line
    (``asv_bench/``, ``doc/``) but is no code that breaks with it: it is an edge in words,
    counted with the tests, and the library caller keeps the code block."""
    from ctxfast.construct.impact import derive_impact

    root = _callers_project(tmp_path)
    for rel in ("asv_bench/benchmarks/bench_core.py", "doc/examples/use_helper.py"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(
            "from app.core import helper\n\n\ndef run():\n    return helper(2)\n",
            encoding="utf-8",
        )
    repo = ctxfast.Repository(root)
    repo.ensure_index(True)
    derived = derive_impact(
        repo.graph, repo.manifest(), repo.root, ["app.core.helper"], set(), DefaultsConfig()
    )
    assert [c.qualname for c in derived.candidates] == ["app.api.serve"]
    tails = [e.tail for e in derived.edges]
    assert tails[0] == "app.api.serve"
    assert len(tails) == 1 + DefaultsConfig().impact.max_test_callers


def _cand(qualname: str, score: float, file: str = "pkg/a.py") -> CodeCandidate:
    return CodeCandidate(qualname, "function", file, 1, 2, score, None, f"def {qualname}():", "r")


def test_confident_localization_has_a_floor_a_margin_and_a_cap():
    from ctxfast.construct.targets import confident_localization

    lead = [_cand("a", 10.0), _cand("b", 2.0), _cand("c", 1.0), _cand("d", 0.5)]
    # One clear leader: the floor still makes the next best change targets too.
    assert confident_localization(lead, DefaultsConfig()) == ("a", "b", "c")
    assert confident_localization(lead, DefaultsConfig(localization_min=1)) == ("a",)
    close = [_cand(q, 10.0 - i * 0.1) for i, q in enumerate("abcdefg")]
    # Every definition within the margin of the best, up to the cap.
    assert confident_localization(close, DefaultsConfig()) == tuple("abcde")
    assert confident_localization(close, DefaultsConfig(localization_max=6)) == tuple("abcdef")
    # A test is a change target only when nothing else is.
    mixed = [_cand("t", 20.0, "tests/test_a.py"), _cand("a", 10.0), _cand("b", 9.9)]
    assert confident_localization(mixed, DefaultsConfig()) == ("a", "b")
    only_tests = [_cand("t", 20.0, "tests/test_a.py")]
    assert confident_localization(only_tests, DefaultsConfig()) == ("t",)
