"""BM25Index and tokenize_code: pinned numbers, the spec's weighting, reference parity."""

from __future__ import annotations

import math
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles import reference as ref

import ctxfast
from ctxfast.bm25 import BM25Index, DocTerms, SymbolSet, tokenize_code
from ctxfast.errors import CtxfastError, InvalidArgumentError


def test_tokenizer_keeps_whole_and_parts():
    assert tokenize_code("MemStore.remember_all()") == [
        "memstore",
        "mem",
        "store",
        "remember_all",
        "remember",
        "all",
    ]
    assert tokenize_code("HTTPServer base64Encode 2to3 __init__") == [
        "httpserver",
        "http",
        "server",
        "base64encode",
        "base64",
        "encode",
        "2to3",
        "__init__",
    ]
    assert tokenize_code("see django/db/models/query.py") == [
        "see",
        "django/db/models/query.py",
        "django",
        "db",
        "models",
        "query",
        "py",
    ]
    assert tokenize_code("") == []
    assert ctxfast.tokenize_code is tokenize_code


def test_known_vector_pins_the_formula():
    # N=3, |d| = 3, 2, 1 → avgdl = 2.  k1 = 1.5, b = 0.75.
    docs = [["foo", "bar", "foo"], ["bar", "baz"], ["qux"]]
    ix = BM25Index(docs)
    assert ix.avgdl == 2.0 and ix.num_docs == 3 and ix.vocab_size == 4
    idf_foo = math.log((3 - 1 + 0.5) / (1 + 0.5) + 1)  # n(foo) = 1
    idf_bar = math.log((3 - 2 + 0.5) / (2 + 0.5) + 1)  # n(bar) = 2
    assert ix.idf("foo") == pytest.approx(idf_foo, rel=1e-12)
    assert ix.idf("nope") is None
    norm0 = 1.5 * (1 - 0.75 + 0.75 * 3 / 2)
    d0 = idf_foo * 2 * 2.5 / (2 + norm0) + idf_bar * 1 * 2.5 / (1 + norm0)
    d1 = idf_bar * 2.5 / (1 + 1.5 * (1 - 0.75 + 0.75 * 2 / 2))
    got = ix.query(["foo", "bar"], k=20)
    assert [i for i, _ in got] == [0, 1]
    assert got[0][1] == pytest.approx(d0, rel=1e-12)
    assert got[1][1] == pytest.approx(d1, rel=1e-12)
    # q∩d is a set: repeating terms changes nothing.
    assert ix.query(["foo", "foo", "bar"]) == got


def test_symbol_tokens_weigh_three_and_outrank_prose():
    docs = [
        "# remember to close the store",  # prose mention
        "def remember(self): pass",  # symbol definition
        "unrelated text here ok",
    ]
    plain = BM25Index(docs)
    weighted = BM25Index(docs, symbols={"remember"})
    assert weighted.term_weight("remember") == 3.0
    assert weighted.term_weight("store") == 1.0
    assert weighted.term_weight("a.b") == 1.0
    p = dict(plain.query("remember"))
    w = dict(weighted.query("remember"))
    for doc in (0, 1):
        assert w[doc] == pytest.approx(3.0 * p[doc], rel=1e-12)
    custom = BM25Index(docs, symbols=["remember"], symbol_weight=5.0)
    assert dict(custom.query("remember"))[1] == pytest.approx(5.0 * p[1], rel=1e-12)


def test_shared_symbol_set_scores_exactly_as_a_name_list():
    """A prebuilt SymbolSet is only a cheaper way to pass the names: identical weights and
    scores as the same names given as a list, across several indexes sharing it."""
    names = ["Remember", "MemStore", "a.b", "caf\u00e9", "x\ud800"]
    shared = SymbolSet(names)
    assert len(shared) == 5
    assert "remember" in shared and "MEMSTORE" in shared and "store" not in shared
    assert 3 not in shared
    docs_sets = [
        ["# remember to close the store", "def remember(self): pass", "class MemStore: ..."],
        ["memstore remember", "nothing", ""],
    ]
    for docs in docs_sets:
        a = BM25Index(docs, symbols=shared)
        b = BM25Index(docs, symbols=names)
        for q in ("remember the MemStore", "store a.b", ["remember", "memstore"]):
            assert a.scores(q) == b.scores(q)
            assert a.query(q) == b.query(q)
        for t in ("remember", "memstore", "store", "a.b"):
            assert a.term_weight(t) == b.term_weight(t)
    assert BM25Index(["remember"], symbols=shared).term_weight("remember") == 3.0


def test_rare_identifier_outranks_frequent_one():
    docs = ["common rare_name", *(["common filler"] * 8)]
    ix = BM25Index(docs)
    assert ix.idf("rare_name") > ix.idf("common")
    assert ix.query("rare_name common", k=1)[0][0] == 0


def test_tie_break_k_and_batch():
    ix = BM25Index([["a"], ["b", "a"], ["a"], ["c"]])
    assert [i for i, _ in ix.query(["a"], k=2)] == [0, 2]
    assert ix.query(["a"], k=0) == []
    assert ix.query("zzz") == []
    qs = [["a"], "c", ["b", "a"], []]
    assert ix.query_batch(qs, k=3) == [ix.query(q, k=3) for q in qs]
    scores = ix.scores(["c"])
    assert scores[:3] == [0.0, 0.0, 0.0] and scores[3] > 0


def test_mixed_docs_and_doc_len():
    ix = BM25Index(["fooBar", ["foobar"]])
    assert ix.doc_len(0) == 3 and ix.doc_len(1) == 1
    assert {i for i, _ in ix.query("foobar")} == {0, 1}
    with pytest.raises(InvalidArgumentError):
        ix.doc_len(2)
    with pytest.raises(InvalidArgumentError):
        ix.doc_len(-1)


@pytest.mark.parametrize(
    ("kwargs", "msg"),
    [({"k1": -1.0}, "k1"), ({"b": 2.0}, "b"), ({"symbol_weight": 0.0}, "symbol_weight")],
)
def test_bad_params(kwargs, msg):
    with pytest.raises(InvalidArgumentError, match=msg):
        BM25Index(["a"], **kwargs)


def test_bad_inputs_raise_ctxfast_errors():
    ix = BM25Index(["a b"])
    with pytest.raises(CtxfastError):
        ix.query(b"bytes")  # type: ignore[arg-type]
    with pytest.raises(CtxfastError):
        BM25Index([["a", 1]])  # type: ignore[list-item]
    with pytest.raises(CtxfastError):
        ix.query("a", k=-1)
    empty = BM25Index([])
    assert empty.query("a") == [] and empty.num_docs == 0 and len(empty) == 0


def test_lone_surrogates_do_not_crash():
    assert tokenize_code("foo\ud800bar") == ["foo", "bar"]
    ix = BM25Index(["foo\udc00bar", ["x\ud800"]], symbols=["foo\ud800"])
    assert ix.query("bar\ud800") == ix.query("bar")
    assert ix.query_batch(["foo\ud800"]) == [ix.query("foo")]
    assert ix.scores(["x\ud800"]) == [0.0, ix.scores(["x?"])[1]]


def test_concurrent_queries_from_python_threads_agree():
    """The index is shared read-only across threads (the GIL is released during queries)."""
    docs = [f"def f{i}(x): return x + {i} # helper number {i % 97}" for i in range(5_000)]
    ix = BM25Index(docs)
    qs = [f"helper number {i} return" for i in range(50)]
    want = ix.query_batch(qs, k=5)
    results: list[object] = [None] * 4

    def work(slot: int) -> None:
        results[slot] = [ix.query(q, k=5) for q in qs] if slot % 2 else ix.query_batch(qs, k=5)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [want] * 4


# --- parity with the pure-Python reference -----------------------------------------------

_text = st.text(
    alphabet=st.sampled_from(list("abcXYZ_019./\\- \n\té(")) | st.characters(),
    max_size=60,
)


@settings(max_examples=300, deadline=None)
@given(_text)
def test_tokenizer_matches_reference(text):
    assert tokenize_code(text) == ref.tokenize_code(text)


_tok = st.sampled_from(["foo", "bar", "baz", "qux", "x_y", "Foo", "a.b", "9z", "zz"])


@settings(max_examples=200, deadline=None)
@given(
    docs=st.lists(st.lists(_tok, max_size=12), max_size=12),
    query=st.lists(_tok, max_size=6),
    k1=st.floats(0.0, 3.0),
    b=st.floats(0.0, 1.0),
    symbols=st.frozensets(_tok, max_size=4),
    k=st.integers(0, 15),
)
def test_scores_match_reference(docs, query, k1, b, symbols, k):
    ix = BM25Index(docs, k1=k1, b=b, symbols=symbols)
    want = ref.bm25_scores(docs, query, k1=k1, b=b, symbols=symbols)
    got = ix.scores(query)
    assert got == pytest.approx(want, rel=1e-9, abs=0.0)
    matched = [any(t in d for t in query) for d in docs]
    want_top = ref.bm25_top_k(want, k, matched)
    got_top = ix.query(query, k=k)
    assert [i for i, _ in got_top] == [i for i, _ in want_top] or _same_up_to_ties(
        got_top, want_top
    )
    assert [s for _, s in got_top] == pytest.approx([s for _, s in want_top], rel=1e-9)


def _same_up_to_ties(a, b):
    """Scores equal to 1e-9 may order differently only if they are float-equal ties."""
    return len(a) == len(b) and all(
        math.isclose(x[1], y[1], rel_tol=1e-9) for x, y in zip(a, b, strict=True)
    )


@settings(max_examples=100, deadline=None)
@given(docs=st.lists(_text, max_size=8), query=_text)
def test_text_docs_match_reference_through_tokenizer(docs, query):
    ix = BM25Index(docs)
    want = ref.bm25_scores([ref.tokenize_code(d) for d in docs], ref.tokenize_code(query))
    assert ix.scores(query) == pytest.approx(want, rel=1e-9, abs=0.0)


@settings(max_examples=150, deadline=None)
@given(
    batches=st.lists(st.lists(_text, max_size=6), min_size=1, max_size=4),
    picks=st.lists(st.integers(0, 1000), max_size=10),
    query=_text,
    symbols=st.frozensets(st.sampled_from(["foo", "abc", "XYZ", "a_b"]), max_size=3),
)
def test_doc_terms_index_scores_as_the_index_built_from_its_texts(batches, picks, query, symbols):
    """An index assembled from stored term counts is the one built from the texts: same
    scores bit for bit, idf, weights and lengths, whatever batches stored the documents and
    whatever order (repeats included) selects them."""
    store = DocTerms()
    texts: list[str] = []
    ids: list[int] = []
    for batch in batches:
        ids += store.add(batch)
        texts += batch
    assert len(store) == len(texts)
    chosen = [p % len(texts) for p in picks] if texts else []
    got = store.index([ids[i] for i in chosen], 1.2, 0.5, symbol_weight=2.0, symbols=symbols)
    want = BM25Index([texts[i] for i in chosen], 1.2, 0.5, symbol_weight=2.0, symbols=symbols)
    assert got.scores(query) == want.scores(query)
    assert got.query(query, k=5) == want.query(query, k=5)
    assert (got.num_docs, got.avgdl, got.vocab_size) == (want.num_docs, want.avgdl, want.vocab_size)
    for t in tokenize_code(query):
        assert (got.idf(t), got.term_weight(t)) == (want.idf(t), want.term_weight(t))
    for d in range(got.num_docs):
        assert got.doc_len(d) == want.doc_len(d)


def test_doc_terms_scrub_lone_surrogates_and_reject_unknown_ids():
    store = DocTerms()
    ids = store.add(["bad \ud800 text", "plain text"])
    assert store.index(ids).scores("text bad") == BM25Index(["bad ? text", "plain text"]).scores(
        "text bad"
    )
    with pytest.raises(CtxfastError):
        store.index([len(store)])
