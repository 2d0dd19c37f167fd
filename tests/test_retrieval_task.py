"""The task is parsed once into one TaskQuery, and every signal reads that object."""

from __future__ import annotations

import ast
from pathlib import Path

from recon_fixture import indexed_repo

import ctxfast.retrieval.task as task_module
from ctxfast.retrieval.config import RetrievalConfig
from ctxfast.retrieval.query import build_query, query_terms
from ctxfast.retrieval.task import code_identifiers, parse_task, without_listings
from ctxfast.text import compound_words

TASK = (
    "Fix `Cart.total_price` so the discount applies when parse_args() gets an empty list.\n"
    "The shipping module is wrong too."
)
ERROR = 'Traceback (most recent call last):\n  File "shop/cart.py", line 3, in total_price\n'


def test_views_are_derived_from_the_text_once():
    cfg = RetrievalConfig()
    tq = parse_task(TASK, ERROR, None, cfg.query, cfg.task.stopwords)
    text = f"{TASK}\n{ERROR}"
    assert tq.query == build_query(TASK, ERROR, None, cfg.query)
    assert tq.text == text
    assert list(tq.terms) == query_terms(text, cfg.task.stopwords)
    assert list(tq.task_terms) == query_terms(TASK, cfg.task.stopwords)
    assert "the" not in tq.task_terms  # stopwords leave every BM25 query
    assert list(tq.named) == code_identifiers(TASK)
    assert {"Cart", "total_price", "parse_args"} <= tq.named_set
    assert list(tq.text_identifiers) == code_identifiers(text)
    assert "shipping" in tq.path_words and "file" not in tq.path_words
    api = query_terms(f"{tq.query.goal_hint}\n{TASK}", cfg.task.stopwords)
    assert list(tq.api_terms) == api
    assert tq.query.frames and tq.query.frames[0].path == "shop/cart.py"


def test_retrieve_parses_the_task_exactly_once(tmp_path, monkeypatch):
    cart = "def total_price(items):\n    return sum(items)\n"
    files = {"shop/cart.py": cart, "shop/x.py": "A = 1\n"}
    repo = indexed_repo(tmp_path, files)
    calls = []
    real = task_module.parse_task

    def counting(*args, **kwargs):
        calls.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr("ctxfast.retrieval.pipeline.parse_task", counting)
    res = repo.retrieve(TASK, error=ERROR, refresh=False)
    assert calls == [TASK]
    assert res.ranked_files()[0] == "shop/cart.py"


def test_signal_modules_never_parse_the_text_themselves():
    """The signals take the TaskQuery: none of them imports a text parser."""
    parsers = {"build_query", "query_terms", "code_identifiers", "tokenize_code"}
    root = Path(task_module.__file__).parent
    for name in ("localize.py", "sources.py", "pipeline.py"):
        tree = ast.parse((root / name).read_text(encoding="utf-8"))
        imported = {
            a.asname or a.name
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom)
            for a in node.names
        }
        assert not (imported & parsers), (name, imported & parsers)


def test_two_prose_words_also_match_a_path_as_one():
    text = "Generate man page section dirs.\nThe type hints, of a tool."
    assert compound_words(text) == {
        "generateman",
        "manpage",
        "pagesection",
        "sectiondirs",
        "thetype",
        "typehints",
    }
    # "dirs. The": punctuation ends a phrase; "of a": parts under three letters.
    cfg = RetrievalConfig()
    tq = parse_task(text, None, None, cfg.query, cfg.task.stopwords)
    assert {"manpage", "typehints"} <= tq.path_words
    off = parse_task(text, None, None, cfg.query, cfg.task.stopwords, compounds=False)
    assert "manpage" not in off.path_words


def test_a_compound_ranks_the_file_it_names(tmp_path):
    files = {
        "docs/builders/manpage.py": "def write(doc):\n    return doc\n",
        "docs/builders/latex.py": "def write(doc):\n    return doc\n",
        "docs/builders/html.py": "def write(doc):\n    return doc\n",
    }
    repo = indexed_repo(tmp_path, files)
    task = "Generated man page output goes to one directory"
    ranking = dict(repo.retrieve(task).file_ranking)
    assert ranking["docs/builders/manpage.py"] > ranking["docs/builders/html.py"]
    off = dict(repo.retrieve(task, config={"path_compounds": False}).file_ranking)
    assert off["docs/builders/manpage.py"] == off["docs/builders/html.py"]  # nothing tells


LISTING = (
    "Rendering fails for empty tables.\n"
    "Versions:\n"
    "numpy 1.19.2\n"
    "- pytest 6.0.0rc1\n"
    "h5netcdf: None\n"
    "python: 3.7.3 (default, Mar 27 2019, 22:11:17)\n"
    "Django 3.1\n"
    "scipy 1.5.2\n"
    "The table module is to blame."
)


SHOW_VERSIONS = (
    "Chunked arrays are computed on update.\n"
    "commit: None\n"
    "python-bits: 64\n"
    "OS: Darwin\n"
    "OS-release: 19.6.0\n"
    "byteorder: little\n"
    "LC_ALL: None\n"
    "libhdf5: 1.10.6\n"
    "\n"
    "Mode: fast\n"
    "Format: wide\n"
    "numpy 1.19.2\n"
    "The update helper is to blame."
)


def test_setting_lines_go_with_the_listing_they_sit_in():
    """``OS: Darwin`` inside a ``show_versions()`` report is the same report; two setting
    lines beside one version line are prose's business."""
    machine_half = SHOW_VERSIONS.split("\n")[1:8]
    assert without_listings(SHOW_VERSIONS, 3) == SHOW_VERSIONS.replace(
        "\n".join(machine_half) + "\n", ""
    )
    cfg = RetrievalConfig()
    tq = parse_task(SHOW_VERSIONS, None, None, cfg.query, cfg.task.stopwords)
    assert "byteorder" not in tq.terms and "darwin" not in tq.terms
    assert "mode" in tq.terms and "update" in tq.terms


def test_an_environment_listing_is_left_out_of_the_query():
    kept = without_listings(LISTING, 3)
    assert kept.split("\n") == [
        "Rendering fails for empty tables.",
        "Versions:",
        "python: 3.7.3 (default, Mar 27 2019, 22:11:17)",  # not a listing line
        "Django 3.1",  # a run of two is prose's business
        "scipy 1.5.2",
        "The table module is to blame.",
    ]
    assert without_listings(LISTING, 2).count("\n") == 3
    cfg = RetrievalConfig()
    assert cfg.task.listing_min_lines == 3
    tq = parse_task(LISTING, None, None, cfg.query, cfg.task.stopwords)
    assert "numpy" not in tq.terms and "h5netcdf" not in tq.terms and "table" in tq.terms
    kept_all = parse_task(LISTING, None, None, cfg.query, cfg.task.stopwords, listing_min_lines=0)
    assert "numpy" in kept_all.terms


def test_an_issue_template_comment_is_left_out_of_the_query():
    text = "<!--\nThanks for submitting an issue! Provide a minimal example.\n-->\nCart drifts"
    cfg = RetrievalConfig()
    assert cfg.task.drop_html_comments is True
    tq = parse_task(text, None, None, cfg.query, cfg.task.stopwords)
    assert "cart" in tq.terms and "submitting" not in tq.terms and "minimal" not in tq.terms
    kept = parse_task(text, None, None, cfg.query, cfg.task.stopwords, drop_html_comments=False)
    assert "submitting" in kept.terms
