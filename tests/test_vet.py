"""The vetting rule: >90% token overlap after whitespace normalisation is rejected."""

from __future__ import annotations

import pytest

import ctxfast
from ctxfast.errors import InvalidArgumentError
from ctxfast.retrieval.vet import VERBATIM_REASON, vet

BLOCK = "\n".join(f"    value_{i} = compute(value_{i - 1}, {i})" for i in range(1, 11))


def test_vet_is_public():
    assert ctxfast.vet is vet


def test_verbatim_copy_with_other_whitespace_is_rejected():
    copy = "  ".join(BLOCK.split())  # same tokens, different whitespace
    v = vet(copy, ["unrelated block", BLOCK])
    assert not v.accepted
    assert v.reason == VERBATIM_REASON
    assert v.block_index == 1
    assert v.overlap == pytest.approx(1.0)


def test_fresh_artifact_is_accepted():
    v = vet("def add(a, b):\n    return a + b", [BLOCK])
    assert v.accepted and v.reason is None
    assert v.overlap < 0.5


def test_threshold_is_strictly_greater_than_ninety_percent():
    # 20 tokens; Indel similarity = 2·LCS / (20 + 20). Changing t tokens in place leaves
    # LCS = 20 − t, so 2 changed tokens give exactly 0.9 (accepted: not > 0.9) and 1 gives 0.95.
    block = " ".join(f"t{i}" for i in range(20))
    two = block.replace("t3", "X").replace("t9", "Y")
    one = block.replace("t3", "X")
    v2 = vet(two, [block])
    assert v2.overlap == pytest.approx(0.9) and v2.accepted
    v1 = vet(one, [block])
    assert v1.overlap == pytest.approx(0.95) and not v1.accepted
    assert vet(two, [block], threshold=0.85).reason == VERBATIM_REASON


def test_short_artifact_inside_long_block_is_not_a_reproduction():
    assert vet("return None", [BLOCK + "\n    return None"]).accepted


def test_edge_cases():
    assert vet("", [BLOCK]).accepted
    assert vet("anything", []).accepted
    v = vet("x", ["", "   "])
    assert v.accepted and v.overlaps == (0.0, 0.0)
    with pytest.raises(InvalidArgumentError):
        vet("x", [b"bytes"])  # type: ignore[list-item]
    with pytest.raises(InvalidArgumentError):
        vet("x", ["y"], threshold=1.5)
