"""The file signals' registry (``retrieval.signals``): one module per signal, one ordered
list that the hand-set sum, the learned ranker's file columns and the hand-set weight vector
all read, each signal switched by its own setting."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import sys
from collections import defaultdict
from pathlib import Path

import pytest
from recon_fixture import indexed_repo

import ctxfast.retrieval.signals as registry
from ctxfast.eval.train_ranker import hand_prior
from ctxfast.retrieval import features
from ctxfast.retrieval.config import RetrievalConfig
from ctxfast.retrieval.signals import COLUMNS, FILE_SIGNALS, LENDERS, hand_weights

FILES = {
    "shop/__init__.py": "",
    "shop/cart.py": (
        "import os\n"
        "import sys\n\n"
        'CART_MODE = os.environ.get("SHOP_CART_MODE")\n\n\n'
        "def cart_total(items):\n"
        '    if sys.platform == "win32":\n'
        "        return sum(items) + 1\n"
        "    if sum(items) < 0:\n"
        '        raise ValueError("cart total cannot be negative")\n'
        "    return sum(items)\n"
    ),
    "shop/render.py": 'def render_total(total):\n    return f"{total:.2f} total"\n',
    "shop/stock.py": "def restock(item, count):\n    item.count += count\n    return item\n",
    "tests/__init__.py": "",
    "tests/test_cart.py": (
        "from shop.cart import cart_total\n\n\n"
        "def test_cart_total():\n"
        "    assert cart_total([1, 2]) == 3\n"
    ),
}

#: A task every signal reads something in: a title naming a platform, a path, a definition
#: by name, a traceback, a quoted message and an environment-variable name.
TASK = (
    "Cart total is wrong on Windows\n"
    "Calling cart_total in shop/cart.py with SHOP_CART_MODE set fails:\n"
    "Traceback (most recent call last):\n"
    '  File "tests/test_cart.py", line 5, in test_cart_total\n'
    "    assert cart_total([1, 2]) == 3\n"
    '  File "shop/cart.py", line 11, in cart_total\n'
    '    raise ValueError("cart total cannot be negative")\n'
    "ValueError: cart total cannot be negative\n"
)


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    return indexed_repo(tmp_path_factory.mktemp("shop"), FILES)


def _module_of(entry: registry.FileSignal | registry.Lender):
    fn = entry.measure if isinstance(entry, registry.FileSignal) else entry.lend
    return sys.modules[fn.__module__]


def test_the_registry_is_the_learned_rankers_file_columns():
    names = [s.name for s in FILE_SIGNALS] + [lender.name for lender in LENDERS]
    assert len(set(names)) == len(names)
    assert features.SIGNALS == COLUMNS
    assert sorted(COLUMNS) == sorted(names)
    assert features.FILE_FEATURES[: len(COLUMNS)] == COLUMNS
    # The hand-set prior over the file columns is the registry's weight vector.
    prior = hand_prior({"signal_weights": {"def_bm25": 0.5}, "tested_modules_weight": 0.3})[0]
    cfg = RetrievalConfig.from_mapping(
        {"signal_weights": {"def_bm25": 0.5}, "tested_modules_weight": 0.3}
    )
    assert {n: prior[n] for n in COLUMNS} == hand_weights(cfg)
    assert hand_weights(cfg)["def_bm25"] == 0.5
    assert hand_weights(cfg)["tested_modules"] == 0.3


def test_every_signal_module_says_what_it_measures_why_and_what_it_did():
    modules = {_module_of(e) for e in (*FILE_SIGNALS, *LENDERS)}
    for entry in (*FILE_SIGNALS, *LENDERS):
        doc = _module_of(entry).__doc__ or ""
        assert f"``{entry.name}``" in doc, entry.name  # what it measures, by its name
        assert f"``{entry.switch}``" in doc, entry.name  # the setting that switches it
        assert "Why" in doc and "Measured" in doc, entry.name
    # Every module of the package is registered (a signal module left out of the list would
    # be dead code the docs still describe).
    package = Path(registry.__file__).parent
    found = {
        importlib.import_module(f"ctxfast.retrieval.signals.{m.name}")
        for m in pkgutil.iter_modules([str(package)])
        if m.name != "base"
    }
    assert found == modules


def test_no_signal_module_imports_localize():
    package = Path(registry.__file__).parent
    for path in package.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                assert "localize" not in (node.module or ""), path.name
                assert not any("localize" in a.name for a in node.names), path.name


def test_every_signal_reads_the_fixture_task(repo):
    res = repo.retrieve(TASK)
    for entry in (*FILE_SIGNALS, *LENDERS):
        assert entry.name in res.signals, entry.name
        if entry.name != "included":  # a Rust include!: none in a Python fixture
            assert res.signals[entry.name], entry.name
    assert list(res.signals) == [e.name for e in (*FILE_SIGNALS, *LENDERS)]


@pytest.mark.parametrize("entry", (*FILE_SIGNALS, *LENDERS), ids=lambda e: e.name)
def test_each_signal_is_switched_off_by_its_setting(repo, entry):
    off = {entry.switch: 0.0 if entry.switch == "include_lending" else False}
    cfg = RetrievalConfig.from_mapping(off)
    assert not entry.enabled(cfg)
    assert entry.enabled(RetrievalConfig())
    res = repo.retrieve(TASK, config=off)
    assert entry.name not in res.signals
    assert entry.name in repo.retrieve(TASK).signals


@pytest.mark.parametrize(
    "settings",
    [
        {},
        {
            "signal_weights": {"file_bm25": 0.7, "goal_bm25": 1.3, "literals": 0.1},
            "tested_modules_weight": 0.4,
            "include_lending": 0.9,
        },
    ],
)
def test_the_file_score_is_the_weighted_sum_of_the_registered_signals(repo, settings):
    cfg = RetrievalConfig.from_mapping(settings)
    res = repo.retrieve(TASK, config=cfg)
    total: dict[str, float] = defaultdict(float)
    for signal in FILE_SIGNALS:
        for f, s in res.signals.get(signal.name, {}).items():
            total[f] += signal.weight(cfg) * s
    for lender in LENDERS:
        for f, s in res.signals.get(lender.name, {}).items():
            total[f] += lender.weight(cfg) * s
    scored = dict(res.file_ranking)
    assert total
    for f, s in total.items():
        assert scored[f] == s, f  # to the bit: the same sums in the same order
