"""Each setting changes what the code does: the window or the retrieval result differs from
the default's on a small fixture when the setting alone is changed (issue 44: no setting
that does nothing, and no test that only restates a default)."""

from __future__ import annotations

from pathlib import Path

import pytest
from recon_fixture import FILES, indexed_repo

import ctxfast
from ctxfast.construct import ConstructConfig, DefaultsConfig
from ctxfast.retrieval.config import RetrievalConfig

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

TASKS = [
    ("main() crashes when parse_args gets None", None),
    ("order_step_3 computes the wrong cart total in OrderBook", None),
    ("checkout says 'cart must not be empty before checkout' with --dry-run-mode", None),
    ("the runner fails", TRACEBACK),
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
]


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
        out.append((res.render(), rows))
    return out


def _composed(repo: ctxfast.Repository, **settings) -> list:
    out = []
    for call in COMPOSE_CALLS:
        call = dict(call)
        ctx = ctxfast.compose(repo, call.pop("task"), refresh=False, **call, **settings)
        log = [(e.stage, e.decision, e.item_id, e.driver) for e in ctx.admission_log]
        out.append((ctx.render(), log))
    return out


@pytest.fixture(scope="module")
def retrieved_default(repo: ctxfast.Repository) -> list:
    return _retrieved(repo, RetrievalConfig())


@pytest.fixture(scope="module")
def composed_default(repo: ctxfast.Repository) -> list:
    return _composed(repo)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("k1", 0.0),
        ("b", 0.0),
        ("lexical_max_hits", 0),
        ("api_desc_k", 0),
        ("callgraph_k", 0),
        ("tau", 0.0),
        ("line_floor", 0.0),
        ("def_bm25_top", 0),
        ("infile_k", 0),
        ("infile_next_files", 0),
        ("test_penalty", 0.0),
        ("minor_language_share", 0.0),
        ("minor_language_penalty", 0.0),
        ("module_header_rank", 0),
        ("tested_modules_weight", 0.0),
        ("tested_modules_files", 0),
        ("traceback_bonus", 0.0),
        ("literal_min_chars", 51),
        ("literal_names_flags", True),
    ],
)
def test_a_retrieval_setting_changes_the_result(repo, retrieved_default, name, value):
    assert getattr(RetrievalConfig(), name) != value
    assert _retrieved(repo, RetrievalConfig(**{name: value})) != retrieved_default


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("ceiling", 1500),
        ("provenance_cap_chars", 0),
        ("residue_min_shared_terms", 0),
        ("ranker_max_response_bytes", 0),
        ("compression_floor_bytes", 0),
        ("insertion_gap_lines", 0),
        ("min_term_len", 15),
        ("score_threshold", 0.0),
    ],
)
def test_a_construct_setting_changes_the_window(repo, composed_default, name, value):
    assert getattr(ConstructConfig(), name) != value
    assert _composed(repo, config=ConstructConfig(**{name: value})) != composed_default


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
        ("localization_margin", 0.0),
        ("outline_files", 7),
        ("outline_max_lines", 0),
        ("retrieval_candidates", 0),
        ("max_caller_sites", 0),
        ("candidates_per_1k_tokens", 23),
    ],
)
def test_a_defaults_setting_changes_the_window(repo, composed_default, name, value):
    assert getattr(DefaultsConfig(), name) != value
    assert _composed(repo, defaults=DefaultsConfig(**{name: value})) != composed_default


def test_words_past_the_definition_line_cut_do_not_count_for_the_definition(repo):
    """``pkg/long.py``'s only mention of ``zanzibar_quux`` sits 700 characters into a line:
    past the default cut, inside a longer one. Asked with the default, the longer cut and
    the default again on one repository, so an index kept from an earlier call with another
    cut fails this too."""

    def def_bm25_files(cut: int) -> dict[str, float]:
        cfg = RetrievalConfig(def_line_max_chars=cut)
        return repo.retrieve("zanzibar_quux is wrong", config=cfg).signals["def_bm25"]

    default = RetrievalConfig().def_line_max_chars
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
    on = _file_evidence(repo, task, RetrievalConfig(literal_names_quoted=True), "pkg/opts.py")
    assert off[0] is None and on[0] is not None
    assert on[1] > off[1]


def test_a_name_literal_longer_than_the_cap_is_no_evidence(repo):
    task = "the cache ignores CTX_CACHE_HOME"
    name = len("CTX_CACHE_HOME")
    assert RetrievalConfig().literal_name_max_chars >= name
    held = _file_evidence(repo, task, RetrievalConfig(), "pkg/paths.py")
    capped = RetrievalConfig(literal_name_max_chars=name - 1)
    too_long = _file_evidence(repo, task, capped, "pkg/paths.py")
    assert held[0] is not None and too_long[0] is None
    assert held[1] > too_long[1]
