"""Stage-by-stage tests of spec 08 (a)–(g) on small, hand-built fixtures."""

import pytest
from construct_fixtures import TARGET, cand, load_body, scenario

from ctxfast.construct import ConstructConfig, Kind, PlanNode, construct, stuff_everything
from ctxfast.construct.compress import (
    ast_slice,
    derive_signature,
    mask_pointer,
    signature_lines,
)
from ctxfast.construct.line_windows import best_line_windows, best_window, code_rows, named_rows
from ctxfast.construct.pool import PoolInputs, build_pool
from ctxfast.construct.relevance_gate import fold_residue, run_gate
from ctxfast.construct.represent import (
    REPRESENTATION_TABLE,
    Rendering,
    Role,
    assign_role,
    represent,
)
from ctxfast.errors import InvalidArgumentError
from ctxfast.tokens import count_tokens

CFG = ConstructConfig()


def _pool(**kw):
    cands, plan, impact, live = scenario()
    args = dict(task="Fix session timeout", plan=plan, candidates=cands, impact=impact, **live)
    args.update(kw)
    return build_pool(PoolInputs(**args), kw.pop("config", CFG)), plan


# ---- (a) pool ---------------------------------------------------------------------------
def test_pool_items_are_schema_valid_and_ids_stable():
    p1, _ = _pool()
    p2, _ = _pool()
    assert [i.id for i in p1.items] == [i.id for i in p2.items]
    assert len({i.id for i in p1.items}) == len(p1.items)
    for it in p1.items:
        d = it.to_dict()
        assert set(d) == {"id", "source", "kind", "content", "provenance"}
        assert Kind(d["kind"]) in Kind
        assert d["source"] in ("03", "04", "05", "06", "07", "patch", "live")
    kinds = {it.kind for it in p1.items}
    assert {
        Kind.PLAN_NODE,
        Kind.ACCEPTANCE_CRITERIA,
        Kind.GRAPH_EDGE,
        Kind.RETRIEVED_HIT,
        Kind.ERROR,
        Kind.TEST_OUTPUT,
        Kind.TOOL_OUTPUT,
    } <= kinds


def test_pool_caps_content_provenance_and_size_by_source_priority():
    cfg = ConstructConfig(pool_cap=6, content_cap_bytes=16 * 1024 + 3)
    big = "x = 1\n" * 3000
    cands = [
        cand(
            f"m.f{i}",
            "m.py",
            1 + 10 * i,
            big if i == 0 else f"def f{i}(): pass",
            prov="04: " + "p" * 500,
        )
        for i in range(10)
    ]
    plan = PlanNode("N", "do it", "m.f0")
    pool = build_pool(
        PoolInputs(task="t", plan=plan, candidates=cands, test_outputs=["old", "new"]), cfg
    )
    assert len(pool.items) == 6
    assert all(len(it.content.encode()) <= cfg.pool.content_cap_bytes for it in pool.items)
    capped = next(it for it in pool.items if it.meta.truncated)
    assert capped.content.split("\n")[-1] == "x = 1"  # cut at a line's end, not inside one
    assert all(len(it.provenance) <= 200 for it in pool.items)
    assert pool.items[0].kind is Kind.PLAN_NODE  # 07 first
    assert any(e.decision == "content_capped" for e in pool.log)
    queued = [e for e in pool.log if e.decision == "queued_over_cap"]
    assert len(queued) == len(pool.queued) == 1 + 10 + 2 - 6
    # Nothing is selected here: the pool never drops below its cap.
    assert len(pool.items) + len(pool.queued) == 13


def test_pool_rejects_malformed_candidates():
    plan = PlanNode("N", "x")
    with pytest.raises(InvalidArgumentError):
        build_pool(PoolInputs("t", plan, candidates=[cand("a", "a.py", 1, "x", origin="99")]), CFG)
    bad = cand("a", "a.py", 1, "x")
    bad = type(bad)(**{**bad.__dict__, "start_line": 0})
    with pytest.raises(InvalidArgumentError):
        build_pool(PoolInputs("t", plan, candidates=[bad]), CFG)


# ---- (b) gate ---------------------------------------------------------------------------
def test_gate_drivers_residue_and_rejection():
    pool, plan = _pool()
    g = run_gate(pool, plan, CFG)
    by_entity = {it.meta.entity: it.id for it in pool.items if it.kind is Kind.RETRIEVED_HIT}
    assert g.drivers[by_entity[TARGET]] == "obligation:change_target"
    assert g.drivers[by_entity["app.views.login"]] == "impact:CalledBy"
    assert (
        g.drivers[by_entity["app.session.SessionManager.__init__"]] == "obligation:insertion_point"
    )
    assert by_entity["app.cache.SessionCache.get"] in g.residue  # near, unlinked
    assert by_entity["app.misc.render_banner"] in g.rejected  # plausible? no: no driver
    logged = {e.item_id for e in g.log}
    assert logged == {it.id for it in pool.items}  # every decision logged with its driver
    for e in g.log:
        assert e.driver


def test_a_bare_name_many_candidates_share_is_residue_unless_qualified():
    cands = [
        cand("p.target.fix", "p/target.py", 10, "def fix(order, permute):\n    return order"),
        *(
            cand(f"p.m{i}.Shape{i}.permute", f"p/m{i}.py", 5, "def permute(self, order):\n    pass")
            for i in range(3)
        ),
        cand("p.perm.Cycle.rotate", "p/perm.py", 5, "def rotate(self, order):\n    pass"),
    ]
    plan = PlanNode("N", "fix gives the wrong order with permute and rotate", "p.target.fix")
    pool = build_pool(PoolInputs("t", plan, candidates=cands), CFG)
    by_entity = {it.meta.entity: it.id for it in pool.items if it.kind is Kind.RETRIEVED_HIT}
    g = run_gate(pool, plan, CFG)
    assert all(by_entity[f"p.m{i}.Shape{i}.permute"] in g.residue for i in range(3))
    assert g.drivers[by_entity["p.perm.Cycle.rotate"]] == "obligation:dependency"  # one of it
    every = ConstructConfig(named_ambiguity=0)
    g0 = run_gate(build_pool(PoolInputs("t", plan, candidates=cands), every), plan, every)
    assert all(
        g0.drivers[by_entity[f"p.m{i}.Shape{i}.permute"]] == "obligation:dependency"
        for i in range(3)
    )
    named = PlanNode("N", "Shape1.permute gives the wrong order", "p.target.fix")
    g1 = run_gate(build_pool(PoolInputs("t", named, candidates=cands), CFG), named, CFG)
    assert g1.drivers[by_entity["p.m1.Shape1.permute"]] == "obligation:dependency"
    assert by_entity["p.m0.Shape0.permute"] in g1.residue
    layers = PlanNode("N", "permute gives the wrong order", "p.m0.Shape0.permute")
    g2 = run_gate(build_pool(PoolInputs("t", layers, candidates=cands), CFG), layers, CFG)
    assert g2.drivers[by_entity["p.m1.Shape1.permute"]] == "obligation:dependency"  # its name


def test_a_name_is_named_only_as_a_whole_word():
    cands = [
        cand("p.target.fix", "p/target.py", 10, "def fix(x):\n    return x"),
        cand("main", "scripts/run.py", 1, "def main():\n    pass"),  # a script's qualname
        cand("p.rules.check", "p/rules.py", 5, "def check(x):\n    pass"),
        cand("p.rules.check_all", "p/rules.py", 9, "def check_all(x):\n    pass"),
    ]
    plan = PlanNode("N", "fix breaks the domain of p.rules.check_all", "p.target.fix")
    pool = build_pool(PoolInputs("t", plan, candidates=cands), CFG)
    by_entity = {it.meta.entity: it.id for it in pool.items if it.kind is Kind.RETRIEVED_HIT}
    g = run_gate(pool, plan, CFG)
    assert g.drivers[by_entity["p.rules.check_all"]] == "obligation:dependency"
    # "domain" does not name `main`, nor `p.rules.check_all` name `p.rules.check`
    assert g.drivers.get(by_entity["main"]) != "obligation:dependency"
    assert g.drivers.get(by_entity["p.rules.check"]) != "obligation:dependency"


def test_gate_caps_admitted_set_by_source_priority():
    cfg = ConstructConfig(admitted_cap=3)
    cands = [cand(f"m.f{i}", "m.py", 100 * (i + 1), f"def f{i}(): pass") for i in range(5)]
    plan = PlanNode(
        "N", "edit " + " ".join(f"m.f{i}" for i in range(5)), "m.f0", acceptance_criteria=("ok",)
    )
    pool = build_pool(PoolInputs("t", plan, candidates=cands), cfg)
    g = run_gate(pool, plan, cfg)
    assert len(g.admitted) == 3
    kinds = [pool.by_id()[i].kind for i in g.admitted]
    assert kinds[:2] == [Kind.PLAN_NODE, Kind.ACCEPTANCE_CRITERIA]  # 07 outranks 04
    assert sum(1 for e in g.log if "admitted cap" in e.driver) == 4


def test_oversize_residue_is_folded_without_a_model():
    plan = PlanNode(
        "N",
        "fix the parser tokenizer",
        "p.parse",
        acceptance_criteria=("tokenize handles unicode parser tokenizer input",),
    )
    items = [
        cand(f"p.helper{i}", "p.py", 10 * i + 1, f"def helper{i}(): parser tokenizer")
        for i in range(40)
    ]
    items.append(cand("p.unicode_input", "p.py", 900, "def unicode_input(): parser tokenizer"))
    pool = build_pool(PoolInputs("t", plan, candidates=items), CFG)
    res = [pool.by_id()[i] for i in run_gate(pool, plan, CFG).residue]
    assert len(res) > 32
    admitted, log = fold_residue(res, plan, CFG)
    assert [pool.by_id()[i].meta.entity for i in admitted] == ["p.unicode_input"]
    assert len(log) == len(res)


# ---- (c) representation --------------------------------------------------------------
def test_representation_table_rows():
    t = REPRESENTATION_TABLE
    assert t[(Kind.RETRIEVED_HIT, Role.CHANGE_TARGET)] is Rendering.VERBATIM
    assert t[(Kind.SOURCE_CODE, Role.INSERTION_POINT)] is Rendering.VERBATIM
    assert t[(Kind.PLAN_NODE, Role.REQUIREMENT)] is Rendering.VERBATIM
    assert t[(Kind.ACCEPTANCE_CRITERIA, Role.REQUIREMENT)] is Rendering.VERBATIM
    assert t[(Kind.RETRIEVED_HIT, Role.RELATED_SYMBOL)] is Rendering.SIGNATURE
    assert t[(Kind.RETRIEVED_HIT, Role.IMPACT_DIRECT)] is Rendering.SIGNATURE
    assert t[(Kind.GRAPH_EDGE, Role.IMPACT_WIDER)] is Rendering.DIGEST
    assert t[(Kind.RETRIEVED_HIT, Role.RELATED_TEST)] is Rendering.SIGNATURE
    assert t[(Kind.CONFIG, Role.CONFIG_CONSUMER)] is Rendering.SIGNATURE
    for k in (Kind.PATCH, Kind.ERROR, Kind.TRACEBACK, Kind.TOOL_OUTPUT, Kind.TEST_OUTPUT):
        assert t[(k, Role.LIVE_STATE)] is Rendering.VERBATIM
        assert t[(k, Role.STALE)] is Rendering.OMITTED


def test_table_miss_defaults_to_signature_and_expansion_is_gated():
    plan = PlanNode("N", "make test_x pass", "m.f", required_validation=("tests.t.test_x",))
    cands = [
        cand("tests.t.test_x", "tests/t.py", 1, "def test_x():\n    assert f() == 1"),
        cand("tests.t.test_y", "tests/t.py", 9, "def test_y():\n    assert f() == 2"),
    ]
    pool = build_pool(PoolInputs("t", plan, candidates=cands), CFG)
    items = [it for it in pool.items if it.kind is Kind.RETRIEVED_HIT]
    drivers = {items[0].id: "obligation:validation_target", items[1].id: "rank:score"}
    out, log = represent(items, drivers, plan, CFG)
    assert out[0].role is Role.RELATED_TEST and out[0].rendering is Rendering.VERBATIM
    assert out[1].role is Role.RELATED_TEST and out[1].rendering is Rendering.SIGNATURE
    assert any(e.decision == "expanded" and e.item_id == items[0].id for e in log)
    # A library name that contains "test" in a library file is not a test.
    lib = [
        cand("pkg.reports.TestReport", "src/pkg/reports.py", 1, "class TestReport:\n    x = 1"),
        cand("pkg.hooks.pytest_runtest", "src/pkg/hooks.py", 1, "def pytest_runtest():\n    0"),
    ]
    lib_items = [
        it
        for it in build_pool(PoolInputs("t", plan, candidates=lib), CFG).items
        if it.kind is Kind.RETRIEVED_HIT
    ]
    assert [assign_role(it, "rank:score", False) for it in lib_items] == [Role.RELATED_SYMBOL] * 2
    # A fault entity reached only as a dependency: (fault_entity, related_symbol) is a miss.
    fault = build_pool(PoolInputs("t", plan, localization=["m.g"]), CFG).items[-1]
    assert assign_role(fault, "obligation:dependency", False) is Role.RELATED_SYMBOL
    out, log = represent([fault], {fault.id: "obligation:dependency"}, plan, CFG)
    assert out[0].rendering is Rendering.SIGNATURE
    assert any(e.decision == "table_miss" for e in log)


# ---- (d) compression ------------------------------------------------------------------
def test_best_line_windows_picks_the_contiguous_lines_with_most_overlap():
    lines = ["a = 1"] * 10 + ["timeout = session.timeout", "load(session, timeout)"] + ["b"] * 10
    assert best_line_windows(lines, {"timeout", "session", "load"}, 3) == [(9, 12, 6)]
    # Deterministic tie-break: the earliest window wins; k windows never overlap.
    assert best_line_windows(["x"] * 5, {"y"}, 2) == [(0, 2, 0)]
    two = best_line_windows(lines, {"timeout"}, 2, k=2)
    assert len(two) == 2 and two[0][1] <= two[1][0]
    assert best_line_windows([], {"x"}, 3) == []


def test_a_cut_body_is_windowed_on_its_code_not_its_docstring():
    doc = [
        '    """Solve the equation for syms with permute set.',
        *["    permute syms"] * 8,
        '    """',
    ]
    body = ["    x = 1"] * 30 + ["    return solve(eq, syms, permute=permute)"] + ["    y = 2"] * 30
    pairs = tuple(enumerate(["def solve(eq, syms, permute):", *doc, *body], start=100))
    cfg = ConstructConfig(large_item_lines=20, window_lines=10)
    shown, cut = best_window(pairs, {"permute", "syms"}, cfg)
    assert cut and "    return solve(eq, syms, permute=permute)" in [t for _, t in shown]
    every = ConstructConfig(large_item_lines=20, window_lines=10, window_code_only=False)
    prose, _ = best_window(pairs, {"permute", "syms"}, every)
    assert prose[0][0] <= 102  # scored on every line, the docstring wins
    rows = ['"""One line."""', "x = 1", "# note", "// note", "'''", "prose", "'''", "y = 2"]
    assert code_rows(rows) == [False, True, False, False, False, False, False, True]


def test_a_cut_body_keeps_its_head_before_its_window():
    body = ["    total = 0"] * 40 + ["    return permute(syms, permute=True)"] + ["    y = 2"] * 40
    pairs = tuple(enumerate(["def solve(eq, syms):", "    check(eq)", *body], start=100))
    cfg = ConstructConfig(large_item_lines=20, window_lines=10, window_head_lines=3)
    shown, cut = best_window(pairs, {"permute"}, cfg)
    numbers = [n for n, _ in shown]
    assert cut and numbers[:3] == [100, 101, 102]  # the signature and the body's start
    assert 142 in numbers and len(numbers) == 13  # then the window, whole
    alone = ConstructConfig(large_item_lines=20, window_lines=10, window_head_lines=0)
    window, _ = best_window(pairs, {"permute"}, alone)
    assert [n for n, _ in window] == numbers[3:]
    # A window that starts within the head is not shown twice.
    early = tuple(enumerate(["def solve(eq, syms):", *["    permute(eq)"] * 5, *body], 1))
    first, _ = best_window(early, {"permute"}, cfg)
    assert [n for n, _ in first] == list(range(1, 11))


def test_a_cut_body_shows_the_line_naming_the_task_s_identifier_whole():
    # Forty lines dense with the name's parts outvote the one line naming it whole.
    dense = ["    version = runtime.constant('PHP_VERSION')"] * 40
    rest = ["    x = 1"] * 60
    named = "    if runtime.has('MB_ONIGURUMA_VERSION'):"
    body = [*dense, *rest, named, "        add(library)", *rest]
    pairs = tuple(enumerate(["def initialize(self):", *body], start=1))
    terms = {"version", "runtime", "constant", "oniguruma", "mb_oniguruma_version"}
    cfg = ConstructConfig(large_item_lines=20, window_lines=10, window_head_lines=0)
    shown, cut = best_window(pairs, terms, cfg)
    numbers = [n for n, _ in shown]
    at = next(n for n, t in pairs if t == named)
    assert cut and at in numbers and at + 1 in numbers  # the named line, with its context
    assert numbers[:10] == list(range(2, 12))  # beside the densest window, not instead of it
    assert len(numbers) == 10 + 7  # three lines either side
    off = ConstructConfig(
        large_item_lines=20, window_lines=10, window_head_lines=0, named_line_uses=0
    )
    assert at not in [n for n, _ in best_window(pairs, terms, off)[0]]
    bare = ConstructConfig(
        large_item_lines=20, window_lines=10, window_head_lines=0, named_line_context=0
    )
    assert [n for n, _ in best_window(pairs, terms, bare)[0]][10:] == [at]  # the line alone
    # A name the body uses more often than ``named_line_uses`` marks no line.
    common = tuple(enumerate(["def f():", *body[:100], *[named] * 4, *rest], start=1))
    assert len(best_window(common, terms, cfg)[0]) == 10
    # Nor does a one-part word, however rare.
    assert named_rows(["    if oniguruma:"], {"oniguruma"}, 3) == []


def test_ast_slice_and_signature():
    src = (
        "class A:\n    def f(self):\n        return 1\n\n    @dec\n    def g(self, x) -> int:\n"
        '        """Doc line."""\n        return x\n'
    )
    assert ast_slice(src, "g") == (4, 8)
    assert ast_slice(src, "nope") is None
    assert ast_slice("not python (", "g") is None
    pool = build_pool(
        PoolInputs(
            "t",
            PlanNode("N", "x"),
            candidates=[
                cand(
                    "m.g",
                    "m.py",
                    5,
                    'def g(self, x) -> int:\n    """Doc line.\n\n    More."""\n    return x\n',
                )
            ],
        ),
        CFG,
    )
    sig = derive_signature(pool.items[-1])
    assert sig == 'def g(self, x) -> int:\n    """Doc line."""'


def test_lines_without_a_definition_stand_for_themselves_by_their_code():
    header = '"""The module.\n\nMore prose.\n"""\n\n# a comment\n'
    header += "import os\nfrom a import (\n    b,\n)\n\n"
    header += "".join(f"import m{i}\n" for i in range(10))
    pool = build_pool(
        PoolInputs("t", PlanNode("N", "x"), candidates=[cand(None, "m.py", 1, header)]), CFG
    )
    shown = signature_lines(pool.items[-1])
    # the imports, with their real numbers, not the docstring's opening quote
    assert shown[:5] == (
        (7, "import os"),
        (8, "from a import ("),
        (9, "    b,"),
        (10, ")"),
        (11, ""),
    )
    assert shown[5:] == ((12, "import m0"), (13, "import m1"))  # six lines of code, unbroken
    prose = cand(None, "m.py", 3, '"""\nonly prose\n"""')
    only = build_pool(PoolInputs("t", PlanNode("N", "x"), candidates=[prose]), CFG)
    assert signature_lines(only.items[-1]) == ((3, '"""'),)


def test_a_signature_keeps_the_decorators_that_change_what_it_means():
    src = "# the cache\n@property\n@functools.cache\ndef variables(self):\n    return self._v\n"
    rust = "#[cfg(any(\n    unix,\n))]\npub fn open(path: &Path) -> File {\n    todo()\n}\n"
    pool = build_pool(
        PoolInputs(
            "t",
            PlanNode("N", "x"),
            candidates=[cand("m.A.variables", "m.py", 10, src), cand("open", "f.rs", 3, rust)],
        ),
        CFG,
    )
    py, rs = (signature_lines(it) for it in pool.items[-2:])
    # the decorators right above the header, not the comment above them
    assert py == ((11, "@property"), (12, "@functools.cache"), (13, "def variables(self):"))
    assert [n for n, _ in rs] == [3, 4, 5, 6]  # the attribute's three lines and the header
    many = "".join(f"@d{i}\n" for i in range(5)) + "def f():\n    pass\n"
    one = build_pool(
        PoolInputs("t", PlanNode("N", "x"), candidates=[cand("f", "m.py", 1, many)]), CFG
    )
    assert [n for n, _ in signature_lines(one.items[-1])] == [3, 4, 5, 6]  # three at most


def test_mask_pointer_is_short_and_deterministic():
    pool, _ = _pool()
    tool = next(it for it in pool.items if it.kind is Kind.TOOL_OUTPUT)
    p = mask_pointer(tool, CFG)
    assert p == mask_pointer(tool, CFG)
    assert tool.id not in p and "elided" in p  # the window names no internal ids
    assert count_tokens(p) <= 40 < count_tokens(tool.content)


def test_change_target_reduced_to_window_and_flagged_irreducible():
    cands, plan, impact, live = scenario()
    small = ConstructConfig(large_item_lines=80)  # the 125-line body is over the limit
    ctx = construct(
        "Fix session timeout", candidates=cands, plan=plan, impact=impact, config=small, **live
    )
    log = ctx.admission_log
    assert any(e.decision == "line_window" for e in log)
    assert any(e.decision == "irreducible" for e in log)
    target = next(e for e in ctx.window if e.role == "change_target")
    assert "self.default_timeout" in target.text  # the best-overlap lines, not the head


# ---- (e) dedup ------------------------------------------------------------------------
def test_overloads_of_one_name_are_not_duplicates_of_each_other():
    # Java overloads: one qualname, two methods at different lines; both are shown.
    one = "public List<Log> matchingLogs(long from, long to) {\n    return scan(from, to);\n}"
    two = "public List<Log> matchingLogs(Hash block) {\n    return read(block);\n}"
    name = "org.chain.BlockchainQueries.matchingLogs"
    plan = PlanNode("N", "fix matchingLogs", name)
    cands = [
        cand(name, "q/BlockchainQueries.java", 10, one, 0.9),
        cand(name, "q/BlockchainQueries.java", 40, two, 0.8),
        # the first method again, from recon, with a margin line above it: a duplicate
        cand(name, "q/BlockchainQueries.java", 9, "\n" + one, origin="03", prov="03: recon"),
    ]
    ctx = construct("t", candidates=cands, plan=plan, localization=[name])
    text = ctx.render()
    assert "return scan(from, to);" in text and "return read(block);" in text
    assert text.count("return scan(from, to);") == 1  # the recon copy was one of them


def test_dedup_four_classes():
    body = "def load(self, key):\n    return key"
    plan = PlanNode("N", "fix load", TARGET, acceptance_criteria=("load works", "load works"))
    cands = [
        cand(TARGET, "app/session.py", 40, body, origin="04"),
        cand(TARGET, "app/session.py", 40, body, origin="03", prov="03: recon"),
    ]
    ctx = construct(
        "t",
        candidates=cands,
        plan=plan,
        localization=[TARGET],
        errors=["ValueError: bad key"],
        test_outputs=["FAILED test_load\nValueError: bad key\n1 failed"],
    )
    ptr = [e for e in ctx.admission_log if e.stage == "dedup"]
    whys = " | ".join(e.driver for e in ptr)
    assert "same definition/symbol" in whys  # class 1 (03+04) and class 3 (fault entity)
    assert "same failure reported twice" in whys  # class 2
    assert "same normalised content" in whys  # class 4: one fact under two criteria
    assert ctx.render().count("return key") == 1
    assert ctx.render().count("ValueError: bad key") == 1
    assert ctx.render().count("load works") == 1


# ---- (f) ordering + (g) budgeting ---------------------------------------------------------
def test_edges_and_adjacency():
    cands, plan, impact, live = scenario()
    ctx = construct("Fix session timeout", candidates=cands, plan=plan, impact=impact, **live)
    roles = [e.role for e in ctx.window]
    assert roles[0] == "requirement" and ctx.window[1].kind == "plan_node"
    assert ctx.window[-1].kind == "test_output"  # freshest failure last
    assert "test_load_timeout\nTimeoutError" in ctx.window[-1].text
    site = next(e for e in ctx.window if e.role == "change_target")
    # The code before the edit point sits right above the change target, in its file's group.
    assert site.text.index("insertion point") < site.text.index("change target")
    crit = [k for k, e in enumerate(ctx.window) if e.critical]
    sup = [k for k, e in enumerate(ctx.window) if not e.critical]
    # critical* supporting* critical*: every critical item sits before or after all support.
    front = [k for k in crit if k < min(sup)]
    back = [k for k in crit if k > max(sup)]
    assert sorted(front + back) == crit


def test_ladder_runs_transient_then_working_set_then_core():
    cands, plan, impact, live = scenario()
    live = {**live, "config": ConstructConfig(target_tokens=0)}  # the ladder alone, no fill
    full = construct("Fix session timeout", candidates=cands, plan=plan, impact=impact, **live)
    ceiling = full.token_count - 5
    ctx = construct(
        "Fix session timeout", candidates=cands, plan=plan, impact=impact, ceiling=ceiling, **live
    )
    assert ctx.token_count <= ceiling == ctx.ceiling
    assert any(s.startswith("ladder 1") for s in ctx.budget_log)
    assert not any(s.startswith("ladder 2") for s in ctx.budget_log)
    assert "[older tool output elided" in ctx.render()
    tight = construct(
        "Fix session timeout", candidates=cands, plan=plan, impact=impact, ceiling=150, **live
    )
    steps = [s.split(":")[0] for s in tight.budget_log if s.startswith("ladder")]
    assert steps == sorted(steps)  # 1 → 2 → 3, never backwards
    assert tight.token_count <= 150
    core = construct(
        "Fix session timeout", candidates=cands, plan=plan, impact=impact, ceiling=40, **live
    )
    assert core.stable_core_only and "stable_core_only" in core.flags
    assert {e.role for e in core.window} == {"requirement"}
    assert core.token_count <= 40
    assert construct("x" * 50, ceiling=0).token_count == 0


def test_baseline_stuffs_everything_up_to_the_window():
    cands, plan, impact, live = scenario()
    text, n = stuff_everything(
        "Fix session timeout", candidates=cands, plan=plan, impact=impact, **live
    )
    ctx = construct("Fix session timeout", candidates=cands, plan=plan, impact=impact, **live)
    assert "render_banner" in text  # no gate: the distractor rides along
    assert "render_banner" not in ctx.render()
    # The window numbers every line, so it is not smaller than the raw concatenation of so
    # small a pool; what it leaves out is the point.
    assert ctx.token_count <= ctx.ceiling and n <= 24_000
    _, small = stuff_everything("t", candidates=cands, ceiling=100)
    assert small <= 100


def test_fill_counts_only_the_lines_a_block_adds_to_its_file():
    """Blocks of one file are laid out as one listing, so a residue block whose lines the
    window already shows costs (almost) nothing: it is admitted within a few tokens of room
    where a block of another file of the same size is not."""
    body = load_body(25)
    lines = body.split("\n")
    inner = "\n".join(lines[10:16])  # file lines 50-55, inside the target's span
    plan = PlanNode("N", "Fix session timeout", TARGET, acceptance_criteria=("timeout works",))
    cands = [
        cand(TARGET, "app/session.py", 40, body, 0.9),
        cand("app.session.SessionManager.load.cached", "app/session.py", 50, inner, 0.8),
        cand("app.other.cached_timeout", "app/other.py", 50, inner, 0.7),
    ]

    def window(target):
        return construct(
            "Fix session timeout cache",
            candidates=cands,
            plan=plan,
            impact=[],
            config=ConstructConfig(target_tokens=target),
        )

    base = window(0)
    assert not any(e.stage == "fill" for e in base.admission_log)
    ctx = window(base.token_count + 30)
    filled = {e.subject for e in ctx.admission_log if (e.stage, e.decision) == ("fill", "admitted")}
    assert filled == {"app.session.SessionManager.load.cached"}
    assert ctx.token_count <= base.token_count + 30


def test_the_ladder_narrowing_a_change_target_keeps_the_line_naming_the_task_s_identifier():
    """Over its ceiling the window narrows the change target to its best line windows; the
    line that names the task's identifier whole stays with them, as compression keeps it."""
    dense = ["    version = runtime.constant('PHP_VERSION')"] * 30
    named = "    if runtime.has('MB_ONIGURUMA_VERSION'):"
    body = ["def initialize(self):", *dense, *["    x = 1"] * 20, named, "        add(lib)"]
    target = "app.platform.Platform.initialize"
    cands = [cand(target, "app/platform.py", 10, "\n".join(body), 0.9)]
    plan = PlanNode("n", "fix the version check", target)
    task = "MB_ONIGURUMA_VERSION: the runtime version constant is read wrong"
    cfg = ConstructConfig(target_tokens=0)
    full = construct(task, candidates=cands, plan=plan, localization=[target], config=cfg)
    ceiling = full.token_count - 200
    ctx = construct(
        task, candidates=cands, plan=plan, localization=[target], config=cfg, ceiling=ceiling
    )
    assert ctx.token_count <= ceiling
    assert any("best" in s and "-line window" in s for s in ctx.budget_log)
    at = 10 + body.index(named)
    entry = next(e for e in ctx.window if e.file == "app/platform.py")
    assert at in entry.shown_lines() and len(entry.shown_lines()) < len(body)
    plain = ConstructConfig(target_tokens=0, named_line_uses=0)
    cut = construct(
        task, candidates=cands, plan=plan, localization=[target], config=plain, ceiling=ceiling
    )
    assert at not in next(e for e in cut.window if e.file == "app/platform.py").shown_lines()
