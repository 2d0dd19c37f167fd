"""Each setting changes what the code does: the window or the retrieval result differs from
the default's on a small fixture when the setting alone is changed (no setting that
does nothing, and no test that only restates a default). Settings are named by their nested
path (``"files.literal_min_chars"``)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import TypeVar

import pytest
from construct_fixtures import cand
from recon_fixture import FILES, indexed_repo

import ctxfast
from ctxfast.construct import (
    CodeCandidate,
    ConstructConfig,
    DefaultsConfig,
    ImpactType,
    PlanNode,
    construct,
)
from ctxfast.construct.compose import ComposeInputs, prepare
from ctxfast.construct.ranker import RankRequest
from ctxfast.construct.schema import Origin
from ctxfast.retrieval.config import RetrievalConfig

T = TypeVar("T")

#: A pattern that matches nothing.
NO_MATCH = "(?!)"

EXTRA = {
    "pkg/orders.py": "".join(
        f'def order_step_{i}(cart):\n    """Step {i} of processing the order cart."""\n'
        f"    total = cart.total + {i}\n    return total\n\n\n"
        for i in range(30)
    )
    + "class OrderBook:\n"
    + "".join(
        f"    def method_{i}(self):\n        return self.order_step_{i}\n\n" for i in range(12)
    ),
    "pkg/errors.py": (
        "def check_cart(cart):\n"
        "    if cart is None:\n"
        '        raise ValueError("cart must not be empty before checkout")\n'
        "    return cart\n\n"
        "FLAG = '--dry-run-mode'\n"
    ),
    "web/app.js": (
        "function orderStep(cart) {\n  return cart.total;\n}\n"
        "function parseArgs(argv) { return argv; }\n"
    ),
    "tests/test_orders.py": (
        "from pkg.orders import order_step_1\n\n\n"
        "def test_order_step():\n    assert order_step_1(None)\n"
    ),
    "pkg/long.py": "def long_line_fn():\n    x = '" + "a" * 700 + " zanzibar_quux'\n    return x\n",
    "pkg/paths.py": (
        'import os\n\n\ndef cache_dir():\n    return os.environ.get("CTX_CACHE_HOME", "~/.cache")\n'
    ),
    "pkg/opts.py": 'def options(parser):\n    parser.add("tabwidth")\n    return parser\n',
    # Three classes share a method name a task uses bare (the gate's ambiguity).
    **{
        f"pkg/shape{i}.py": (
            f"class Shape{i}:\n    def permute(self, order):\n        return order[{i}:]\n"
        )
        for i in range(3)
    },
    # A function longer than the large-item cut: a docstring with the task's words, then
    # the code that changes deep in its body.
    "pkg/ledger.py": (
        "def reconcile_ledger(entries):\n"
        '    """Reconcile the ledger: ledger entries, ledger balance, ledger rounding."""\n'
        + "".join(f"    step_{i} = entries.get({i})\n" for i in range(150))
        + "    balance = sum(e.amount for e in entries)  # ledger balance rounding\n"
        + "".join(f"    check_{i} = entries.get({i + 150})\n" for i in range(150))
        + "    return balance\n"
    ),
}

TRACEBACK = (
    "Traceback (most recent call last):\n"
    '  File "pkg/cli.py", line 14, in step\n'
    "    return main([])\n"
    '  File "pkg/cli.py", line 6, in main\n'
    "    args = parse_args(argv)\n"
    "TypeError: bad\n"
)

STEP_FRAME = '  File "pkg/cli.py", line 14, in step\n    return main([])\n'

#: A pasted log longer than the query's head and tail together: an error line at its head,
#: a traceback at its tail.
LONG_ERROR = (
    "pkg.errors.CartMismatch: cart total drifted\n"
    + "".join(f"DEBUG worker tick {i:05d} ok\n" for i in range(3000))
    + TRACEBACK
)

#: An issue as trackers hold it: a template comment, a title with a request verb, paths, a
#: test id, a quoted message, an environment listing.
ISSUE = (
    "<!-- Describe the bug: which OrderBook method_2 call breaks? -->\n"
    "Fix: order_step_3 in pkg/orders.py computes the wrong cart total. "
    "The test tests/test_orders.py::test_order_step fails with "
    "'cart must not be empty before checkout', also from web/app.js and pkg/errors.py.\n"
    "Versions:\n"
    "numpy 1.19.2\n"
    "- pytest 6.0.0rc1\n"
    "h5netcdf: None\n"
    "The OrderBook and check_cart and CartTotals and cart_total_cache are involved;\n"
    "CTX_CACHE_HOME is set."
)

TASKS = [
    ("main() crashes when parse_args gets None", None),
    ("order_step_3 computes the wrong cart total in OrderBook", None),
    ("checkout says 'cart must not be empty before checkout' with --dry-run-mode", None),
    ("the runner fails", TRACEBACK),
    (ISSUE, None),
    ("the runner fails on checkout", LONG_ERROR),
]

COMPOSE_CALLS = [
    {
        "task": "main() crashes when parse_args gets None",
        "tracebacks": [TRACEBACK.replace(STEP_FRAME, "")],
        "test_outputs": [
            "FAILED tests/test_cli.py::test_main - TypeError: bad\n" * 3,
            "FAILED tests/test_cli.py::test_main - TypeError: bad again\n",
        ],
        "tool_outputs": ["$ grep cart\n" + "pkg/orders.py: cart.total\n" * 300],
    },
    {
        "task": "order_step_3 computes the wrong cart total in OrderBook",
        "errors": ["ValueError: cart must not be empty before checkout"],
    },
    {"task": "order_step_3 computes the wrong cart total in OrderBook", "target": 1500},
    # A failure too long for its tier's share of a small ceiling.
    {
        "task": "main() crashes when parse_args gets None",
        "test_outputs": [
            "FAILED tests/test_cli.py::test_main\n"
            + "".join(f"E   line {i}: TypeError in main with parse_args\n" for i in range(400))
        ],
        "ceiling": 2500,
        "target": 1500,
    },
    # A task longer than the window's share for it.
    {"task": "main() crashes when parse_args gets None\n\n" + LONG_ERROR[:20_000]},
    # A bare method name three classes share; a function too long to show whole.
    {"task": "permute gives the wrong order in reconcile_ledger balance rounding"},
]


def _value(cfg: object, path: str) -> object:
    """The setting at ``path`` (``"group.name"`` or a top-level ``"name"``)."""
    for part in path.split("."):
        cfg = getattr(cfg, part)
    return cfg


def _nested(cfg: T, path: str, value: object) -> T:
    """``cfg`` with the setting at ``path`` set to ``value``."""
    group, _, name = path.rpartition(".")
    if not group:
        return replace(cfg, **{name: value})  # type: ignore[type-var]
    inner = replace(getattr(cfg, group), **{name: value})
    return replace(cfg, **{group: inner})  # type: ignore[type-var]


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> ctxfast.Repository:
    return indexed_repo(Path(tmp_path_factory.mktemp("settings")), {**FILES, **EXTRA})


def _retrieved(repo: ctxfast.Repository, cfg: RetrievalConfig) -> list:
    out = []
    for task, error in TASKS:
        res = repo.retrieve(task, error=error, config=cfg)
        rows = [
            (c.file, c.qualname, c.start_line, c.end_line, round(c.score, 6), tuple(c.sources))
            for c in res.candidates
        ]
        files = [(f, round(s, 6)) for f, s in res.file_ranking]
        seen = (res.render(), res.token_count, res.query.to_dict(), res.features is None)
        out.append((seen, rows, files))
    return out


def _composed(repo: ctxfast.Repository, **settings) -> list:
    out = []
    for call in COMPOSE_CALLS:
        call = dict(call)
        ctx = ctxfast.compose(repo, call.pop("task"), refresh=False, **call, **settings)
        log = [(e.stage, e.decision, e.item_id, e.driver) for e in ctx.admission_log]
        out.append((ctx.render(), ctx.token_count, log))
    return out


@pytest.fixture(scope="module")
def retrieved_default(repo: ctxfast.Repository) -> list:
    return _retrieved(repo, RetrievalConfig())


@pytest.fixture(scope="module")
def composed_default(repo: ctxfast.Repository) -> list:
    return _composed(repo)


#: Retrieval settings, each with a value the fixture's tasks tell from the default's.
RETRIEVAL_CHANGES: list[tuple[str, object]] = [
    ("top_k", 5),
    ("max_tokens", 500),
    ("encoding", "o200k_base"),
    ("ranker", "learned"),
    ("keep_features", True),
    ("task.stopwords", frozenset()),
    ("task.listing_min_lines", 0),
    ("task.drop_html_comments", False),
    ("task.goal_rest_min", 100),
    ("query.dotted_re", NO_MATCH),
    ("query.camel_re", NO_MATCH),
    ("query.snake_re", NO_MATCH),
    ("query.test_re", NO_MATCH),
    ("query.file_path_re", NO_MATCH),
    ("query.quoted_re", NO_MATCH),
    ("query.error_line_markers", ()),
    ("query.goal_verbs", ()),
    ("query.goal_sentence_end_re", NO_MATCH),
    ("query.exception_line_re", NO_MATCH),
    ("query.max_identifiers", 0),
    ("query.max_unresolved", 0),
    ("query.max_error_strings", 0),
    ("query.max_test_names", 0),
    ("query.max_file_paths", 0),
    ("query.max_item_chars", 0),
    ("query.max_goal_chars", 0),
    ("query.max_frames", 0),
    ("query.max_text_chars", 0),
    ("query.error_head_chars", 0),
    ("query.error_tail_chars", 0),
    ("query.max_token_chars", 0),
    ("query.max_line_chars", 0),
    ("sources.lexical", False),
    ("sources.lexical_max_hits", 0),
    ("sources.api_desc", False),
    ("sources.api_desc_k", 0),
    ("sources.callgraph", False),
    ("sources.callgraph_k", 0),
    ("sources.traceback", False),
    ("sources.def_bm25_k", 0),
    ("sources.infile_defs", False),
    ("sources.infile_files", 0),
    ("sources.infile_k", 0),
    ("sources.infile_next_files", 0),
    ("sources.infile_next_k", 0),
    ("sources.literal_defs", False),
    ("files.file_bm25", False),
    ("files.definition_match", False),
    ("files.path_mentions", False),
    ("files.def_bm25", False),
    ("files.def_bm25_top", 0),
    ("files.def_line_max_chars", 2000),
    ("files.path_words", False),
    ("files.goal_signals", False),
    ("files.literals", False),
    ("files.literal_min_chars", 51),
    ("files.literal_max_files", 0),
    ("files.literal_names", False),
    ("files.literal_names_flags", True),
    ("files.tested_modules", False),
    ("files.tested_modules_weight", 0.0),
    ("files.tested_modules_files", 0),
    ("files.weights", {**RetrievalConfig().files.weights, "file_bm25": 0.0}),
    ("files.rank_fill", 0),
    ("bm25.k1", 0.0),
    ("bm25.b", 0.0),
    ("bm25.symbol_weight", 1.0),
    ("rerank.goal_candidate_weight", 0.0),
    ("rerank.literal_bonus", 0.0),
    ("rerank.traceback_bonus", 0.0),
    ("rerank.traceback_decay", False),
    ("rerank.named_callee_bonus", 0.0),
    ("rerank.same_file_decay", 1.0),
    ("rerank.class_own_lines", False),
    ("demotions.demote_tests", False),
    ("demotions.test_penalty", 0.0),
    ("demotions.demote_minor_languages", False),
    ("demotions.minor_language_share", 0.0),
    ("demotions.minor_language_penalty", 0.0),
    ("rules.module_header_rank", 0),
    ("rules.second_file_rank", 0),
    ("prune.enabled", False),
    ("prune.tau", 0.0),
    ("prune.line_floor", 0.0),
]


@pytest.mark.parametrize(("name", "value"), RETRIEVAL_CHANGES)
def test_a_retrieval_setting_changes_the_result(repo, retrieved_default, name, value):
    assert _value(RetrievalConfig(), name) != value
    assert _retrieved(repo, _nested(RetrievalConfig(), name, value)) != retrieved_default


#: Construction settings, each with a value the fixture's compose calls tell from the
#: default's.
CONSTRUCT_CHANGES: list[tuple[str, object]] = [
    ("ceiling", 1500),
    ("target_tokens", 3000),
    ("task_tokens", 0),
    ("encoding", "o200k_base"),
    ("min_term_len", 15),
    ("pool.pool_cap", 3),
    ("pool.content_cap_bytes", 512),
    ("pool.provenance_cap_chars", 0),
    ("gate.admitted_cap", 2),
    ("gate.residue_min_shared_terms", 0),
    ("gate.insertion_gap_lines", 0),
    ("ranking.evidence_ranker", False),
    ("ranking.score_threshold", 0.0),
    ("ranking.ranker_max_response_bytes", 0),
    ("compress.compression_floor_bytes", 0),
    ("compress.large_item_lines", 800),
    ("compress.window_lines", 160),
    ("compress.window_head_lines", 0),
    ("budget.tier_shares", (("stable_core", 0.15), ("working_set", 0.8), ("transient", 0.05))),
]


@pytest.mark.parametrize(("name", "value"), CONSTRUCT_CHANGES)
def test_a_construct_setting_changes_the_window(repo, composed_default, name, value):
    assert _value(ConstructConfig(), name) != value
    assert _composed(repo, config=_nested(ConstructConfig(), name, value)) != composed_default


def test_the_pool_cap_keeps_the_sources_first_in_source_priority(repo):
    """With room for four items, the default order (planning first, live outputs last)
    leaves the failing test's output out; live outputs first keep it."""
    call = dict(COMPOSE_CALLS[0])
    task = call.pop("task")
    default = ConstructConfig().pool.source_priority
    live_first = (Origin.LIVE, *(o for o in default if o is not Origin.LIVE))

    def window(priority: tuple[Origin, ...]) -> str:
        config = ConstructConfig(pool_cap=4, source_priority=priority)
        return ctxfast.compose(repo, task, refresh=False, config=config, **call).render()

    assert "TypeError: bad again" not in window(default)
    assert "TypeError: bad again" in window(live_first)


def test_the_configured_ceiling_bounds_the_window_unless_compose_is_given_one(repo):
    task = "render_name gives the wrong name for max"
    small = ctxfast.compose(repo, task, refresh=False, config=ConstructConfig(ceiling=1200))
    assert small.ceiling == 1200 and small.token_count <= 1200
    given = ctxfast.compose(
        repo, task, refresh=False, ceiling=3000, config=ConstructConfig(ceiling=1200)
    )
    assert given.ceiling == 3000


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("targets.localization_margin", 0.0),
        ("outlines.files", 7),
        ("outlines.max_lines", 0),
        ("targets.retrieval_candidates", 0),
        ("impact.max_caller_sites", 0),
        ("targets.candidates_per_1k_tokens", 23),
    ],
)
def test_a_defaults_setting_changes_the_window(repo, composed_default, name, value):
    assert _value(DefaultsConfig(), name) != value
    assert _composed(repo, defaults=_nested(DefaultsConfig(), name, value)) != composed_default


def test_words_past_the_definition_line_cut_do_not_count_for_the_definition(repo):
    """``pkg/long.py``'s only mention of ``zanzibar_quux`` sits 700 characters into a line:
    past the default cut, inside a longer one. Asked with the default, the longer cut and
    the default again on one repository, so an index kept from an earlier call with another
    cut fails this too."""

    def def_bm25_files(cut: int) -> dict[str, float]:
        cfg = _nested(RetrievalConfig(), "files.def_line_max_chars", cut)
        return repo.retrieve("zanzibar_quux is wrong", config=cfg).signals["def_bm25"]

    default = RetrievalConfig().files.def_line_max_chars
    assert default < 700
    assert "pkg/long.py" not in def_bm25_files(default)
    assert "pkg/long.py" in def_bm25_files(1000)
    assert "pkg/long.py" not in def_bm25_files(default)


def _file_evidence(repo: ctxfast.Repository, task: str, cfg: RetrievalConfig, path: str):
    """``path``'s literal-name signal and its file score for ``task``."""
    res = repo.retrieve(task, config=cfg)
    return res.signals.get("literal_names", {}).get(path), dict(res.file_ranking)[path]


def test_a_quoted_name_is_a_literal_name_only_when_switched_on(repo):
    task = "setting 'tabwidth' has no effect"
    off = _file_evidence(repo, task, RetrievalConfig(), "pkg/opts.py")
    on = _file_evidence(
        repo, task, _nested(RetrievalConfig(), "files.literal_names_quoted", True), "pkg/opts.py"
    )
    assert off[0] is None and on[0] is not None
    assert on[1] > off[1]


def test_a_name_literal_longer_than_the_cap_is_no_evidence(repo):
    task = "the cache ignores CTX_CACHE_HOME"
    name = len("CTX_CACHE_HOME")
    assert RetrievalConfig().files.literal_name_max_chars >= name
    held = _file_evidence(repo, task, RetrievalConfig(), "pkg/paths.py")
    capped = _nested(RetrievalConfig(), "files.literal_name_max_chars", name - 1)
    too_long = _file_evidence(repo, task, capped, "pkg/paths.py")
    assert held[0] is not None and too_long[0] is None
    assert held[1] > too_long[1]


# ---- construction settings that act on a model ranker's residue and on live outputs -------
# (hand-built candidates: the window settings are seen directly, without a repository)

PLAN = PlanNode(
    "N1",
    "make session timeout honoured",
    "app.s.load",
    acceptance_criteria=("session timeout test passes",),
)
TARGET = cand("app.s.load", "app/s.py", 500, "def load(session, timeout): pass", 0.9)
HELPERS = [
    cand(f"app.s.helper{i}", "app/s.py", 10 * i + 1, f"def helper{i}(session, timeout): pass")
    for i in range(3)
]


class _Model:
    """A model ranker that scores every residue candidate ``score`` and keeps each request."""

    def __init__(self, score: float = 0.9) -> None:
        self.score = score
        self.requests: list[RankRequest] = []

    def rank(self, request: RankRequest) -> str:
        self.requests.append(request)
        rankings = [
            {"candidate_id": i, "relevance_score": self.score} for i in request.candidate_ids
        ]
        return json.dumps({"rankings": rankings})


def _with_model(config, score=0.9, candidates=(TARGET, *HELPERS), plan=PLAN):
    model = _Model(score)
    ctx = construct(
        "fix session timeout", candidates=candidates, plan=plan, ranker=model, config=config
    )
    return ctx, model


def _model_window(config: ConstructConfig) -> tuple:
    """The window, its log and every request a model ranker got, the model scoring each
    residue candidate 0.55: over the admission threshold, under the filler bar."""
    ctx, model = _with_model(config, score=0.55)
    log = [(e.stage, e.decision, e.item_id, e.driver) for e in ctx.admission_log]
    sent = [
        (r.messages, r.candidate_ids, r.temperature, r.max_completion_tokens)
        for r in model.requests
    ]
    return ctx.render(), log, sent


#: Construction settings that act on a model ranker's call and its picks, each with a value
#: the hand-built residue tells from the default's.
MODEL_CHANGES: list[tuple[str, object]] = [
    ("ranking.residue_cap", 2),
    ("ranking.score_threshold", 0.6),
    ("ranking.max_completion_tokens", 64),
    ("ranking.temperature", 0.7),
    ("ranking.ranker_max_response_bytes", 10),
    ("ranking.residue_signature_chars", 12),
    ("filler.drop_filler", False),
    ("filler.filler_score_below", 0.5),
]


@pytest.mark.parametrize(("name", "value"), MODEL_CHANGES)
def test_a_ranking_setting_changes_the_model_call_or_its_picks(name, value):
    assert _value(ConstructConfig(), name) != value
    default = _model_window(ConstructConfig())
    assert _model_window(_nested(ConstructConfig(), name, value)) != default


def test_a_model_ranks_the_residue_only_within_the_residue_cap():
    ctx, model = _with_model(ConstructConfig())
    assert ctx.model_calls == 1 and len(model.requests[0].candidate_ids) == len(HELPERS)
    assert "def helper1" in ctx.render()
    ctx, model = _with_model(ConstructConfig(residue_cap=len(HELPERS) - 1))
    assert ctx.model_calls == 0 and not model.requests
    assert "def helper1" not in ctx.render()
    assert any(e.stage == "fold" for e in ctx.admission_log)


def test_an_oversize_residue_is_folded_into_its_obligation_bucket_only_when_switched_on():
    plan = PlanNode(
        "N",
        "fix the parser tokenizer",
        "p.parse",
        acceptance_criteria=("tokenize handles unicode parser tokenizer input",),
    )
    body = "(): parser tokenizer"  # two decision terms each: residue, not rejected
    items = [cand("p.parse", "p.py", 2000, f"def parse{body}", 0.9)]
    items += [cand(f"p.helper{i}", "p.py", 10 * i + 1, f"def helper{i}{body}") for i in range(5)]
    items.append(cand("p.unicode_input", "p.py", 900, f"def unicode_input{body}"))
    # "unicode input" in the criterion covers ``unicode_input``'s name, so the fold admits it.
    fold = ConstructConfig(residue_cap=2)
    ctx, _ = _with_model(fold, candidates=items, plan=plan)
    assert ctx.model_calls == 0 and "def unicode_input" in ctx.render()
    ctx, _ = _with_model(replace(fold, fold_oversize_residue=False), candidates=items, plan=plan)
    assert "def unicode_input" not in ctx.render()


def _prompt_signatures(model: _Model) -> list[str]:
    user = model.requests[0].messages[1]["content"]
    return [r["signature"] for r in json.loads(user.split("residue:\n", 1)[1])]


def test_the_model_sees_each_residue_signature_cut_to_the_signature_cap():
    full = "app.s.helper0: def helper0(session, timeout): pass"
    _, model = _with_model(ConstructConfig())
    assert full in _prompt_signatures(model)
    _, model = _with_model(ConstructConfig(residue_signature_chars=12))
    assert full[:12] in _prompt_signatures(model)
    assert max(map(len, _prompt_signatures(model))) == 12


def test_a_model_pick_scoring_below_the_filler_bar_is_dropped():
    # 0.55 passes the admission threshold (0.5) but not the default filler bar (0.6).
    ctx, _ = _with_model(ConstructConfig(), score=0.55)
    assert "def helper1" not in ctx.render()
    assert any(e.decision == "dropped" and "filler" in e.driver for e in ctx.admission_log)
    ctx, _ = _with_model(ConstructConfig(filler_score_below=0.5), score=0.55)
    assert "def helper1" in ctx.render()


def test_a_newer_test_run_supersedes_the_older_only_when_switched_on():
    runs = [
        "FAILED tests/test_s.py::test_load - app.s.load raised KeyError old_run\n",
        "FAILED tests/test_s.py::test_load - AssertionError new_run\n",
    ]

    def window(config: ConstructConfig) -> str:
        return construct(
            "fix session timeout", candidates=[TARGET], plan=PLAN, test_outputs=runs, config=config
        ).render()

    assert "old_run" not in window(ConstructConfig()) and "new_run" in window(ConstructConfig())
    assert "old_run" in window(ConstructConfig(supersede_older_test_outputs=False))


def test_a_masked_older_output_is_previewed_by_the_pointer_preview_cap():
    first = "$ grep -n load app/s.py   # every place that calls load with a timeout argument"
    calls = "".join(f"app/s.py:{i}: load(session, timeout={i})\n" for i in range(300))
    outputs = [f"{first}\n{calls}", "$ ls\napp\n"]

    def window(config: ConstructConfig) -> str:
        ctx = construct(
            "fix session timeout",
            candidates=[TARGET],
            plan=PLAN,
            tool_outputs=outputs,
            config=config,
            ceiling=300,  # too small for 300 lines of grep: the older output is masked
        )
        return ctx.render()

    assert f'it started "{first[:60]}"]' in window(ConstructConfig())
    assert f'it started "{first[:10]}"]' in window(ConstructConfig(pointer_preview_chars=10))


def test_an_acceptance_criterion_is_trimmed_to_the_trim_cap_when_nothing_else_fits():
    long = "session timeout test passes " + " and ".join(f"clause {i}" for i in range(80))
    plan = replace(PLAN, acceptance_criteria=(long, "second criterion passes"))

    def window(config: ConstructConfig) -> str:
        ctx = construct(
            "fix session timeout", candidates=[TARGET], plan=plan, config=config, ceiling=150
        )
        return ctx.render()

    assert f"{long[:200]} […]" in window(ConstructConfig())
    assert f"{long[:50]} […]" in window(ConstructConfig(acceptance_trim_chars=50))


# ---- the lines compose shows around a change target, on files too large to show whole -----

BIG = {
    "pkg/__init__.py": "",
    "pkg/settings.py": "".join(f"import mod{i}\n" for i in range(12))
    + "\n\n"
    + "".join(
        f"def helper_{i}(x):\n    '''Helper {i} that adjusts the value by a fixed amount.'''\n"
        f"    y = x * {i} + {i}\n    return y - {i}\n\n\n"
        for i in range(300)
    )
    + "TIMEOUT_SECONDS = 30\n",
    "books/__init__.py": "",
    "books/ledger.py": 'class Ledger:\n    """A book of entries.\n\n'
    + "".join(
        f"    Rule {i}: an entry on page {i} is kept until the page closes.\n" for i in range(60)
    )
    + '    """\n\n'
    + "    def __init__(self, pages):\n        self.pages = pages\n        self.totals = []\n\n"
    + "".join(
        f"    def report_{i}(self):\n        return sum(self.totals) + {i}\n\n" for i in range(400)
    )
    + "    def fetch_entry(self, offset):\n        return self.pages[offset // 10]\n",
}


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> ctxfast.Repository:
    return indexed_repo(Path(tmp_path_factory.mktemp("big")), BIG)


def _shown(ctx, path: str) -> set[int]:
    return {n for e in ctx.window if e.file == path for n in e.shown_lines()}


def test_a_module_level_target_is_shown_with_at_most_max_import_lines_imports(big):
    def shown(defaults: DefaultsConfig) -> set[int]:
        ctx = ctxfast.compose(
            big,
            "TIMEOUT_SECONDS is too short",
            refresh=False,
            localization=["pkg.settings.TIMEOUT_SECONDS"],
            defaults=defaults,
        )
        assert not any(e.decision == "whole_file" for e in ctx.admission_log)
        return _shown(ctx, "pkg/settings.py")

    imports = set(range(1, 13))
    assert imports <= shown(DefaultsConfig())
    assert not imports & shown(DefaultsConfig(max_import_lines=0))


def test_a_large_class_is_shown_with_at_most_class_view_header_lines_of_its_header(big):
    lines = BIG["books/ledger.py"].splitlines()
    header = set(range(1, lines.index('    """') + 2))  # down to the docstring's end

    def shown(defaults: DefaultsConfig) -> set[int]:
        ctx = ctxfast.compose(
            big,
            "Ledger fetch returns the wrong entry when the offset crosses a page",
            refresh=False,
            localization=["books.ledger.Ledger"],
            defaults=defaults,
        )
        assert any(e.decision == "class_view" for e in ctx.admission_log)
        return _shown(ctx, "books/ledger.py")

    cap = DefaultsConfig().class_view.header_lines
    assert len(header) > cap + ConstructConfig().budget.gap_lines  # no gap closing reaches past it
    assert shown(DefaultsConfig()) & header == set(range(1, cap + 1))
    assert header <= shown(DefaultsConfig(class_view_header_lines=len(header)))


def test_compose_keeps_the_retrieval_settings_a_caller_gives(repo):
    """The window sets ``top_k`` for its retrieval only where the caller's settings leave it
    out: a caller's value, in a mapping or a ``RetrievalConfig``, is what retrieval runs
    with."""
    task = "method_3 returns the wrong order step"  # a method, its class not named

    def retrieved(settings) -> list:
        inputs = prepare(repo, task, retrieval_config=settings, refresh=False, target_tokens=8000)
        return [c for c in inputs.candidates if c.provenance.startswith("04:")]

    own = retrieved(None)
    assert len(own) > RetrievalConfig().top_k  # the window draws on more than a slice's 20
    for given in ({"top_k": 3}, RetrievalConfig(top_k=3)):
        assert len(retrieved(given)) == 3


# ---- what a change affects, derived when the caller passes no impact edges -----------------
# ``load_limits`` reads three configuration keys (two from the environment, one off the
# settings module) and is called by a long function and at a module's top level.

IMPACT = {
    "svc/__init__.py": "",
    "svc/settings.py": 'import os\n\nQUEUE_SIZE = int(os.environ.get("QUEUE_SIZE", "8"))\n',
    "svc/loader.py": (
        "import os\n\nfrom svc import settings\n\n\n"
        "def load_limits():\n"
        "    size = settings.QUEUE_SIZE\n"
        '    retries = os.environ["RETRY_LIMIT"]\n'
        '    delay = os.environ["BACKOFF_MS"]\n'
        "    return size, retries, delay\n"
    ),
    "svc/worker.py": "from svc import settings\n\n\n"
    + "".join(
        f"def drain_{i}(q):\n    return q[: settings.QUEUE_SIZE] + [{i}]\n\n\n" for i in range(3)
    ),
    "svc/report.py": "from svc.loader import load_limits\n\n\ndef summary():\n"
    + "".join(f"    line_{i} = {i}\n" for i in range(30))
    + "    return load_limits()\n",  # line 35, the summary's last (4-35)
    "svc/boot.py": "from svc.loader import load_limits\n"
    + "".join(f"X_{i} = {i}\n" for i in range(8))
    + "load_limits()\n"  # line 10, a call at import time
    + "".join(f"Y_{i} = {i}\n" for i in range(8)),
    ".env": "RETRY_LIMIT=3\nBACKOFF_MS=250\nQUEUE_SIZE=16\n",
}
HEAD = "svc.loader.load_limits"


@pytest.fixture(scope="module")
def impact_repo(tmp_path_factory: pytest.TempPathFactory) -> ctxfast.Repository:
    return indexed_repo(Path(tmp_path_factory.mktemp("impact")), IMPACT)


def _derived(repo: ctxfast.Repository, target: str = HEAD, **settings) -> ComposeInputs:
    """What ``compose`` derives for a plan changing ``target``; retrieval is held to its one
    best candidate (``load_limits``), so every caller and binding is the derivation's."""
    return prepare(
        repo,
        "load_limits returns the wrong limits",
        plan=PlanNode("N1", "fix the limits", target),
        localization=[],
        refresh=False,
        retrieval_config={"top_k": 1},
        defaults=DefaultsConfig(**settings),
    )


def _consumers(inputs: ComposeInputs) -> dict[str, CodeCandidate]:
    """The ``ConfigConsumer`` tails, in edge order, each with its derived candidate."""
    by_name = {c.qualname: c for c in inputs.candidates if c.provenance.startswith("03:")}
    return {e.tail: by_name[e.tail] for e in inputs.impact if e.type is ImpactType.CONFIG_CONSUMER}


def _derived_candidate(inputs: ComposeInputs, qualname: str) -> CodeCandidate:
    return next(
        c for c in inputs.candidates if c.qualname == qualname and c.provenance.startswith("03:")
    )


def test_only_the_first_max_config_keys_an_entity_reads_are_followed(impact_repo):
    def keys(**settings) -> list[str]:
        consumers = _consumers(_derived(impact_repo, **settings)).values()
        return list(dict.fromkeys(c.site_of or "" for c in consumers))

    assert keys() == ["RETRY_LIMIT", "BACKOFF_MS", "QUEUE_SIZE"]  # in reading order
    assert keys(max_config_keys=2) == ["RETRY_LIMIT", "BACKOFF_MS"]
    assert keys(max_config_keys=1) == ["RETRY_LIMIT"]


def test_at_most_max_config_consumers_bindings_are_kept_and_the_cap_is_logged(impact_repo):
    def capped(inputs: ComposeInputs) -> list[str]:
        return [e.driver for e in inputs.log if e.decision == "config_consumers_capped"]

    every = _derived(impact_repo)
    assert len(_consumers(every)) == 7 and not capped(every)
    few = _derived(impact_repo, max_config_consumers=2)
    assert list(_consumers(few)) == list(_consumers(every))[:2]
    assert capped(few) == ["7 bindings, first 2 kept"]
    assert not {c.qualname for c in few.candidates} & set(list(_consumers(every))[2:])


def test_a_key_is_looked_up_in_at_most_max_config_files_code_files(impact_repo):
    """``QUEUE_SIZE`` is defined in ``svc/settings.py`` and read in the files importing it;
    the defining file is scanned first. Config files (``.env``) are always read."""

    def binders(**settings) -> set[str]:
        consumers = _consumers(_derived(impact_repo, **settings)).values()
        return {c.file for c in consumers if c.site_of == "QUEUE_SIZE"}

    assert binders() == {"svc/settings.py", "svc/worker.py", ".env"}
    assert binders(max_config_files=1) == {"svc/settings.py", ".env"}
    assert binders(max_config_files=0) == {".env"}


def test_a_definition_read_from_the_code_graph_is_cut_to_max_span_lines(impact_repo):
    """``summary`` (lines 4-35) calls ``load_limits`` on its last line: read whole it shows
    the call, cut to five lines it does not. The same cut holds for a change target's own
    source read from the graph."""
    caller = _derived_candidate(_derived(impact_repo), "svc.report.summary")
    assert (caller.start_line, caller.end_line, caller.sites) == (4, 35, (35,))
    assert "return load_limits()" in caller.text
    caller = _derived_candidate(_derived(impact_repo, max_span_lines=5), "svc.report.summary")
    assert (caller.start_line, caller.end_line, caller.sites) == (4, 8, ())
    assert caller.text.count("\n") == 4 and "load_limits" not in caller.text

    def target(**settings) -> CodeCandidate:
        inputs = _derived(impact_repo, "svc.report.summary", **settings)
        c = _derived_candidate(inputs, "svc.report.summary")
        assert c.provenance.startswith("03: definition of change entity")
        return c

    assert target().end_line == 35 and "return load_limits()" in target().text
    cut = target(max_span_lines=5)
    assert cut.end_line == 8 and "load_limits" not in cut.text


def test_a_module_level_call_is_shown_with_module_context_lines_around_it(impact_repo):
    """``svc/boot.py`` calls ``load_limits`` at import time (line 10): the caller is the
    module, shown as the call and the lines around it, not the whole file."""

    def around(**settings) -> tuple[int, int, tuple[int, ...]]:
        c = _derived_candidate(_derived(impact_repo, **settings), "svc.boot")
        assert c.text == "\n".join(
            IMPACT["svc/boot.py"].splitlines()[c.start_line - 1 : c.end_line]
        )
        return c.start_line, c.end_line, c.sites

    assert around() == (8, 12, (10,))
    assert around(module_context_lines=0) == (10, 10, (10,))
    assert around(module_context_lines=5) == (5, 15, (10,))
