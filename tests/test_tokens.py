"""Token engine: exact parity with real tiktoken, and the budget-fitting contracts."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from oracles import reference as _reference

import ctxfast
from ctxfast import _native, _tiktoken_ref
from ctxfast.bench import stdlib_sources
from ctxfast.errors import CtxfastError, EncodingError, InternalError, InvalidArgumentError

REAL = ("cl100k_base", "o200k_base")


@pytest.fixture(scope="module", params=REAL)
def encoding(request):
    return request.param


def tk(name):
    return _tiktoken_ref.get_encoding(name)


def test_stdlib_parity_every_file(encoding):
    texts = stdlib_sources()
    assert len(texts) > 500
    ours = ctxfast.count_tokens_batch(texts, encoding)
    theirs = [len(ids) for ids in tk(encoding).encode_ordinary_batch(texts)]
    mismatches = [i for i, (a, b) in enumerate(zip(ours, theirs, strict=True)) if a != b]
    assert mismatches == []


SPECIAL_CASES = [
    "",
    " ",
    "\n\n\n",
    "   \t\t  \n  \r\n x",
    "a" * 10_000,
    "🎉" * 500 + "世界" * 300,
    "<|endoftext|> <|fim_prefix|>",
    "x" + " " * 5000 + "y",
    "def f():\n" + "    return 1\n" * 2000,
    "I'll we've they're DON'T Can'T",
    "12345678901234567890 3.14159 0xDEADBEEF",
    "ﬁ ǅ ß ẞ İ ı",
    "\u200b\u200d\ufeff zero width",
    "line\u2028sep\u2029para\x85nel",
]


@pytest.mark.parametrize("text", SPECIAL_CASES)
def test_special_cases_parity(encoding, text):
    assert ctxfast.encode(text, encoding) == tk(encoding).encode(text, disallowed_special=())
    assert ctxfast.count_tokens(text, encoding) == len(
        tk(encoding).encode(text, disallowed_special=())
    )


@given(st.text(max_size=400))
def test_random_unicode_parity(text):
    for name in REAL:
        assert ctxfast.count_tokens(text, name) == len(tk(name).encode(text, disallowed_special=()))


@given(
    st.lists(
        st.sampled_from([" ", "\t", "\n", "\r", "\r\n", "a", "1", "é", "🎉", "'s", "."]),
        max_size=80,
    )
)
def test_whitespace_heavy_parity(parts):
    text = "".join(parts)
    for name in REAL:
        assert ctxfast.encode(text, name) == tk(name).encode(text, disallowed_special=())


@given(st.text(max_size=200))
def test_decode_roundtrip(text):
    for name in REAL:
        assert ctxfast.decode(ctxfast.encode(text, name), name) == text


def test_batch_equals_single(encoding):
    texts = ["a b c", "", "世界 🎉", "def x(): pass\n" * 50]
    assert ctxfast.count_tokens_batch(texts, encoding) == [
        ctxfast.count_tokens(t, encoding) for t in texts
    ]


def test_approx_is_ceil_chars_over_four():
    assert ctxfast.count_tokens("", "approx") == 0
    assert ctxfast.count_tokens("abcd", "approx") == 1
    assert ctxfast.count_tokens("abcde", "approx") == 2
    assert ctxfast.count_tokens("世界🎉", "approx") == 1  # chars, not bytes


def test_unknown_encoding_and_bad_ids():
    with pytest.raises(EncodingError, match="unknown encoding"):
        ctxfast.count_tokens("x", "p50k_base")
    with pytest.raises(EncodingError):
        ctxfast.decode([10**9])
    with pytest.raises(InvalidArgumentError):
        ctxfast.encode("x", "approx")
    assert issubclass(EncodingError, CtxfastError)


def test_panic_becomes_python_exception():
    with pytest.raises(InternalError, match="deliberate test panic"):
        _native._panic_for_test()
    # The interpreter is still alive and the engine still works.
    assert ctxfast.count_tokens("still alive") == 2


@given(st.text(max_size=300), st.integers(min_value=0, max_value=120))
def test_fits_agrees_with_count(text, limit):
    for name in (*REAL, "approx"):
        assert ctxfast.fits(text, limit, name) == (ctxfast.count_tokens(text, name) <= limit)


def test_fits_negative_limit():
    assert ctxfast.fits("", -1) is False


@given(
    st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=300),
    st.integers(min_value=0, max_value=80),
    st.sampled_from(["word", "line", "token"]),
)
def test_truncate_never_exceeds_budget(text, limit, cut):
    for name in (*REAL, "approx"):
        out = ctxfast.truncate_to_tokens(text, limit, encoding=name, cut=cut)
        assert ctxfast.count_tokens(out, name) <= limit
        if out and out != text:
            head = out.removesuffix(" […]")
            assert text.startswith(head)


@given(
    st.text(alphabet=st.sampled_from("ab cd\nef 世 🎉\t"), max_size=200),
    st.integers(min_value=0, max_value=60),
    st.sampled_from(["word", "line"]),
)
def test_truncate_matches_reference(text, limit, cut):
    for name in (*REAL, "approx"):
        ours = ctxfast.truncate_to_tokens(text, limit, encoding=name, cut=cut)
        ref = _reference.truncate_to_tokens(text, limit, encoding=name, elision=" […]", cut=cut)
        assert ours == ref


def test_truncate_contracts():
    text = " ".join(f"word{i}" for i in range(2000))
    assert ctxfast.truncate_to_tokens("short", 10) == "short"
    out = ctxfast.truncate_to_tokens(text, 100)
    assert out.endswith(" […]") and ctxfast.count_tokens(out) <= 100
    # The head is the longest: one more word would not fit.
    head = out.removesuffix(" […]")
    nxt = text[: text.index(" ", len(head) + 1)]
    assert ctxfast.count_tokens(nxt + " […]") > 100
    assert ctxfast.truncate_to_tokens(text, 0) == ""
    assert ctxfast.truncate_to_tokens(text, -5) == ""
    custom = ctxfast.truncate_to_tokens(text, 50, elision="\n...")
    assert custom.endswith("\n...")
    with pytest.raises(InvalidArgumentError):
        ctxfast.truncate_to_tokens(text, 50, cut="sentence")


def test_truncate_token_cut_never_splits_characters():
    text = "世界🎉" * 200
    for limit in range(1, 40):
        out = ctxfast.truncate_to_tokens(text, limit, cut="token", elision="")
        assert text.startswith(out)
        assert ctxfast.count_tokens(out) <= limit
