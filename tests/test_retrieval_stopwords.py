"""Query-side stopwords: the task's prose words do not score files or definitions."""

from __future__ import annotations

from recon_fixture import indexed_repo

from ctxfast.bm25 import tokenize_code
from ctxfast.retrieval.config import RetrievalConfig
from ctxfast.retrieval.query import query_terms
from ctxfast.text import LUCENE_ENGLISH_STOPWORDS as ENGLISH_STOPWORDS


def test_the_stop_set_is_lucenes_english_set_and_on_by_default():
    assert len(ENGLISH_STOPWORDS) == 33
    assert {"the", "to", "a", "is", "not", "with"} <= ENGLISH_STOPWORDS
    assert not {"self", "none", "return", "value"} & ENGLISH_STOPWORDS
    assert RetrievalConfig().task.stopwords == ENGLISH_STOPWORDS
    # A JSON config gives a list; it becomes a set (an empty one switches the filter off).
    assert RetrievalConfig.from_mapping({"query_stopwords": ["x"]}).task.stopwords == {"x"}


def test_query_terms_drop_stopwords_and_keep_identifiers():
    text = "It is the value of to_dict() that is not in the list"
    # "to_dict" is kept whole and split; its part "to" is a stopword.
    assert query_terms(text, ENGLISH_STOPWORDS) == ["value", "to_dict", "dict", "list"]
    assert query_terms(text, frozenset()) == tokenize_code(text)


FILES = {
    "app/__init__.py": "",
    # A quick-start wizard: prompts full of prose, no code the task is about.
    "app/wizard.py": (
        "def prompts():\n"
        "    return [\n"
        + "".join(
            f"        'Enter the path to the {w} that is to be used, or press Enter if it is not "
            "in the list.',\n"
            for w in ("source", "target", "theme", "index", "output", "layout", "locale")
        )
        + "    ]\n"
    ),
    "app/header.py": (
        "def split_header(raw):\n"
        "    name, _, rest = raw.partition(':')\n"
        "    return name.strip().lower(), rest.strip().lower()\n"
    ),
}
TASK = (
    "Text gets lowered\n\n"
    "It is the case that it is lower-cased when it is read in. It is not what is in the "
    "file, and it is not what is expected: it is to be kept as it is, not changed, if it is "
    "in the file. It is the same in the latest release, and in the one before it.\n"
)


def test_prose_words_no_longer_rank_a_prose_file_first(tmp_path):
    repo = indexed_repo(tmp_path, FILES)
    off = repo.retrieve(TASK, config={"query_stopwords": []})
    on = repo.retrieve(TASK)
    assert off.ranked_files()[0] == "app/wizard.py"
    assert off.signals["file_bm25"]["app/wizard.py"] == 1.0
    assert off.signals["def_bm25"]["app/wizard.py"] == 1.0
    assert off.candidates[0].qualname == "app.wizard.prompts"
    assert on.ranked_files()[0] == "app/header.py"
    assert on.signals["file_bm25"] == {"app/header.py": 1.0}
    assert on.candidates[0].qualname == "app.header.split_header"
