"""File excerpts: windows around identifiers, real line numbers, gap markers, exact budget."""

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxfast import count_tokens, excerpt
from ctxfast.errors import ConfigError


def _big_file(tmp_path, target_line=300, total=600):
    lines = [f"filler_{i} = {i} * 2  # padding line number {i}" for i in range(1, total + 1)]
    lines[target_line - 1] = "def compute_total(items):"
    lines[target_line] = "    return sum(i.price for i in items)"
    lines[min(499, total - 1)] = "x = compute_total(cart)"
    p = tmp_path / "shop.py"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return p, lines


def test_windows_around_identifier_with_real_line_numbers(tmp_path):
    p, lines = _big_file(tmp_path)
    ex = excerpt(p, ["compute_total"], 300)
    assert ex.mode == "windows"
    assert ex.token_count == count_tokens(ex.text) <= 300
    # The definition in the middle of the file is shown with its real line number.
    assert re.search(r"^300\tdef compute_total\(items\):$", ex.text, re.M)
    assert re.search(r"^500\tx = compute_total\(cart\)$", ex.text, re.M)
    # Never head-truncated: line 1 is not shown, and elided gaps are marked with their ranges.
    assert not re.search(r"^1\t", ex.text, re.M)
    assert "elided: 1-" in ex.text
    assert ex.windows and all(lo <= hi for lo, hi in ex.windows)
    # Every numbered line matches the file.
    for m in re.finditer(r"^(\d+)\t(.*)$", ex.text, re.M):
        assert lines[int(m.group(1)) - 1] == m.group(2)


def test_small_file_is_returned_whole(tmp_path):
    p = tmp_path / "a.py"
    p.write_text("a = 1\nb = 2\n", encoding="utf-8")
    ex = excerpt(p, ["zzz"], 100)
    assert ex.mode == "full"
    assert "\n1\ta = 1" in ex.text and "\n2\tb = 2" in ex.text and "elided" not in ex.text


def test_no_mentions_gives_signature_outline(tmp_path):
    body = ["class Cart:"] + [f"    x{i} = {i}" for i in range(200)] + ["def checkout(cart):"]
    body += [f"    y{i} = {i}" for i in range(200)]
    p = tmp_path / "c.py"
    p.write_text("\n".join(body), encoding="utf-8")
    ex = excerpt(p, ["nothing_here"], 120)
    assert ex.mode == "outline"
    assert "\n1\tclass Cart:" in ex.text and "\n202\tdef checkout(cart):" in ex.text
    assert "x5 = 5" not in ex.text


def test_identifier_only_role_gets_signatures_not_bodies(tmp_path):
    p, _ = _big_file(tmp_path, total=60, target_line=30)
    ex = excerpt(p, ["compute_total"], 10_000, role="explore")
    assert ex.mode == "outline"
    assert "\n30\tdef compute_total(items):" in ex.text
    assert "return sum" not in ex.text
    ex2 = excerpt(p, ["compute_total"], 10_000, role="implement")
    assert ex2.mode == "full"


def test_tiny_budget_and_errors(tmp_path):
    p, _ = _big_file(tmp_path)
    assert excerpt(p, ["compute_total"], 0).text == ""
    ex = excerpt(p, ["compute_total"], 30)
    assert ex.token_count <= 30
    with pytest.raises(ConfigError):
        excerpt(tmp_path / "missing.py", ["x"], 100)
    with pytest.raises(ConfigError):
        excerpt(p, ["x"], -1)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 400), st.lists(st.sampled_from(["compute_total", "cart", "filler_7"])))
def test_budget_always_holds(tmp_path_factory, budget, idents):
    p, _ = _big_file(tmp_path_factory.mktemp("ex"))
    ex = excerpt(p, idents, budget)
    assert count_tokens(ex.text) <= budget
