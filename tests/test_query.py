"""Query construction: the identifier and error-line patterns and caps, goal, traceback frames."""

from __future__ import annotations

import pytest

from ctxfast.errors import InvalidArgumentError
from ctxfast.retrieval.query import (
    Frame,
    QueryConfig,
    build_query,
    goal_hint,
    innermost_depths,
    parse_frames,
)

TASK = """Fix MemStore.remember crash when kind is missing.

Calling `memstore.MemStore.remember("hi")` in src/memstore.py raises KeyError: 'kind'.
The helper _ensure_open() and parse_args are involved; see tests/test_x.py::TestY::test_z.
Config in settings.yaml and data.json, not data.js (also lib.cpp is C++).
"""


def test_extraction_without_name_index():
    q = build_query(TASK, test="tests/test_a.py::test_b")
    assert q.identifiers[:3] == ["MemStore.remember", "memstore.MemStore.remember", "MemStore"]
    assert "_ensure_open" in q.identifiers and "parse_args" in q.identifiers
    assert "remember" in q.identifiers  # a backticked call is code
    assert "the" not in q.identifiers and "Fix" not in q.identifiers
    assert q.unresolved_terms == []
    assert q.test_names == ["tests/test_a.py::test_b", "tests/test_x.py::TestY::test_z"]
    assert q.file_paths == [
        "src/memstore.py",
        "tests/test_x.py",
        "settings.yaml",
        "data.json",
        "data.js",
    ]
    assert q.error_strings[0].startswith("Calling `memstore.MemStore.remember")
    assert "kind" in q.error_strings and "hi" in q.error_strings
    assert q.goal_hint == "MemStore.remember crash when kind is missing"


def test_name_index_splits_resolved_and_unresolved():
    q = build_query(TASK, name_index={"remember", "MemStore", "parse_args", "kind"})
    assert "MemStore.remember" in q.identifiers  # resolves through its suffix
    assert "parse_args" in q.identifiers
    assert "kind" in q.identifiers  # resolved names are kept even when prose-like
    assert "_ensure_open" in q.unresolved_terms
    assert "_ensure_open" not in q.identifiers
    assert "missing" not in q.unresolved_terms  # prose that resolves nowhere is not a term
    terms = q.recall_terms()
    assert terms.index("MemStore.remember") < terms.index("_ensure_open")


def test_caps_and_truncation():
    many = " ".join(f"name_{i}" for i in range(100))
    long_id = "a_" + "b" * 300
    q = build_query(many + " " + long_id[:200])
    assert len(q.identifiers) == 32
    assert all(len(s) <= 120 for s in q.identifiers)
    errs = "\n".join(f"ValueError: bad {i}" for i in range(20))
    assert len(build_query("x", error=errs).error_strings) == 8
    tests = " ".join(f"t/test_{i}.py::test_{i}" for i in range(20))
    assert len(build_query(tests).test_names) == 8
    paths = " ".join(f"src/f{i}.py" for i in range(20))
    assert len(build_query(paths).file_paths) == 8
    custom = QueryConfig(max_identifiers=3, max_file_paths=1)
    assert len(build_query(many, config=custom).identifiers) == 3
    assert len(build_query(paths, config=custom).file_paths) == 1
    small = QueryConfig(max_error_strings=2, max_test_names=1)
    assert len(build_query("x", error=errs, config=small).error_strings) == 2
    assert len(build_query(tests, config=small).test_names) == 1
    short = QueryConfig(max_item_chars=10)
    assert build_query(long_id[:200], config=short).identifiers == [long_id[:10]]
    assert goal_hint("x" * 500, QueryConfig(max_goal_chars=7)) == "x" * 7
    # The capitalised-identifier pattern decides which prose words are identifiers.
    assert build_query("the MemStore breaks").identifiers == ["MemStore"]
    no_camel = QueryConfig(camel_re=r"(?!)")
    assert build_query("the MemStore breaks", config=no_camel).identifiers == []


@pytest.mark.parametrize(
    ("task", "hint"),
    [
        ("Please fix the crash in foo.bar when saving.", "the crash in foo.bar when saving"),
        ("We need to add retries\nmore text", "retries"),
        ("When given an empty list, sum() fails. More.", "an empty list, sum() fails"),
        ("# Implement: caching\n", "caching"),
        ("Fixture loading is slow.", "Fixture loading is slow"),
        ("", ""),
        ("x" * 500, "x" * 200),
    ],
)
def test_goal_hint(task, hint):
    assert goal_hint(task) == hint


def test_error_strings_prefer_the_final_exception():
    err = (
        'Traceback (most recent call last):\n  File "a.py", line 3, in f\n'
        "    assert x\nValueError: first\nKeyError: 'kind'\n"
    )
    q = build_query("something broke", error=err)
    assert q.error_strings[:4] == [
        "KeyError: 'kind'",
        "ValueError: first",
        "assert x",
        "Traceback (most recent call last):",
    ]
    assert q.error_strings[4:6] == ["a.py", "kind"]  # quoted strings, quotes dropped
    qualified = build_query("x", error=PY_TB).error_strings
    assert qualified[0] == "django.core.exceptions.ObjectDoesNotExist: x"
    assert build_query("x", error="Note: nothing here").error_strings == []
    # Apostrophes in prose are not quotes.
    assert build_query("don't do it's thing").error_strings == []


PY_TB = """Traceback (most recent call last):
  File "/usr/lib/python3.11/site-packages/django/db/models/query.py", line 42, in get
    raise self.model.DoesNotExist
  File "src/app.py", line 7, in <module>
django.core.exceptions.ObjectDoesNotExist: x
"""
IPY_OLD = """---------------------------------------------------------------------------
ValueError                                Traceback (most recent call last)
<ipython-input-3-abc> in <module>()
----> 1 clone(est)

~/miniconda3/lib/python3.6/site-packages/sklearn/base.py in clone(estimator, safe)
     60     new_object_params = estimator.get_params(deep=False)
---> 61     for name, param in six.iteritems(new_object_params):
     62         new_object = klass(**new_object_params)
"""
IPY8 = """Cell In[2], line 1
----> 1 f()
File ~/venv/lib/python3.10/site-packages/xarray/core/dataset.py:1234, in Dataset.merge(self)
"""
PYTEST = "tests/test_store.py:88: AssertionError\n"
NODE = """TypeError: x is not a function
    at Object.render (/app/src/view.js:10:5)
    at /app/src/index.js:3:1
    at Module._compile (node:internal/modules/cjs/loader:1105:14)
"""
GO = """panic: runtime error: index out of range
goroutine 1 [running]:
main.lookup(...)
\t/home/u/proj/main.go:12 +0x1d
main.main()
\t/home/u/proj/main.go:20 +0x25
"""
RUST = """thread 'main' panicked at src/parser.rs:55:9:
attempt to subtract with overflow
stack backtrace:
   3: mycrate::parser::parse
             at ./src/parser.rs:55:9
"""
JAVA = """Exception in thread "main" java.lang.NullPointerException
\tat com.example.app.Store$Inner.remember(Store.java:42)
\tat Main.main(Main.java:5)
"""
RUBY = """/home/u/.gem/gems/puma-3.10.0/lib/puma/server.rb:526:in `block in run': boom (Error)
\tfrom /home/u/.gem/gems/puma-3.10.0/lib/puma/server.rb:580:in `process_client'
\tfrom lib/app.rb:9:in 'App#call'
     # ./lib/faraday/error.rb:32:in `initialize'
"""
PHP = """PHP Fatal error:  Uncaught RuntimeException: boom in /var/www/src/Http/Client.php:42
Stack trace:
#0 /var/www/vendor/acme/lib/src/Handler.php(509): SplFileInfo->getType()
#1 phar:///usr/local/bin/composer/src/Platform/Runtime.php(34): foo()
#2 {main}
  thrown in /var/www/src/Http/Client.php on line 42
Warning: bar() in C:\\xampp\\htdocs\\src\\View.php on line 7
"""
CSHARP = """System.NullReferenceException: Object reference not set to an instance of an object.
   at Acme.Store.Save(Item item) in C:\\src\\Acme\\Store.cs:line 42
   at Acme.Program.Main(String[] args) in /src/Program.cs:line 7
"""


def test_frames_in_every_supported_format():
    frames = parse_frames(
        PY_TB + IPY_OLD + IPY8 + PYTEST + NODE + GO + RUST + JAVA + RUBY + PHP + CSHARP
    )
    assert frames == [
        Frame("/usr/lib/python3.11/site-packages/django/db/models/query.py", 42, "get", "python"),
        Frame("src/app.py", 7, "<module>", "python"),
        Frame("~/miniconda3/lib/python3.6/site-packages/sklearn/base.py", 61, "clone", "python"),
        Frame(
            "~/venv/lib/python3.10/site-packages/xarray/core/dataset.py",
            1234,
            "Dataset.merge",
            "python",
        ),
        Frame("tests/test_store.py", 88, None, "python"),
        Frame("/app/src/view.js", 10, "Object.render", "javascript"),
        Frame("/app/src/index.js", 3, None, "javascript"),
        Frame("/home/u/proj/main.go", 12, "main.lookup", "go"),
        Frame("/home/u/proj/main.go", 20, "main.main", "go"),
        Frame("src/parser.rs", 55, None, "rust"),
        Frame("./src/parser.rs", 55, "mycrate::parser::parse", "rust"),
        Frame("com/example/app/Store.java", 42, "com.example.app.Store$Inner.remember", "java"),
        Frame("Main.java", 5, "Main.main", "java"),
        # Ruby: the function after the last ` in `, `Class#method` as a dotted name.
        Frame("/home/u/.gem/gems/puma-3.10.0/lib/puma/server.rb", 526, "run", "ruby"),
        Frame("/home/u/.gem/gems/puma-3.10.0/lib/puma/server.rb", 580, "process_client", "ruby"),
        Frame("lib/app.rb", 9, "App.call", "ruby"),
        Frame("./lib/faraday/error.rb", 32, "initialize", "ruby"),
        # PHP: a trace line names the function it calls, not the one it is in: no name.
        # The `thrown in … on line 42` repeats the first frame and is dropped as a duplicate.
        Frame("/var/www/src/Http/Client.php", 42, None, "php"),
        Frame("/var/www/vendor/acme/lib/src/Handler.php", 509, None, "php"),
        Frame("///usr/local/bin/composer/src/Platform/Runtime.php", 34, None, "php"),
        Frame("\\xampp\\htdocs\\src\\View.php", 7, None, "php"),
        Frame("C:\\src\\Acme\\Store.cs", 42, "Acme.Store.Save", "csharp"),
        Frame("/src/Program.cs", 7, "Acme.Program.Main", "csharp"),
    ]
    # Ruby, PHP and .NET print the innermost frame first, as Java does.
    ruby = [f for f in frames if f.lang == "ruby"]
    assert innermost_depths(ruby) == [0, 1, 2, 3]


FASTAPI_TB = """decimal_encoder fails for Decimal NaN

Traceback (most recent call last):
  File "/Users/someone/projects/FastAPI/nan.py", line 5, in <module>
    print(jsonable_encoder(Decimal("NaN")))
  File "/Users/someone/.venv/lib/python3.11/site-packages/fastapi/encoders.py", line 6, \
in decimal_encoder
    if dec_value.as_tuple().exponent >= 0:
TypeError: '>=' not supported between instances of 'str' and 'int'
"""
#: The repository's names: its package, its classes ``File``, ``UploadFile`` and ``FastAPI``.
FASTAPI_NAMES = frozenset(
    {"fastapi", "File", "UploadFile", "FastAPI", "decimal_encoder", "jsonable_encoder", "Users"}
)


@pytest.mark.parametrize("where", ["task", "error"])
def test_frame_boilerplate_and_paths_are_not_identifiers(where):
    """The ``File`` of ``File "…"`` and the components of a frame's path (the user's home,
    their script's folder, a virtualenv) resolved against the repository's classes
    (``File``, ``FastAPI``) and pulled them into the window."""
    q = (
        build_query(FASTAPI_TB, name_index=FASTAPI_NAMES)
        if where == "task"
        else build_query("decimal_encoder fails", error=FASTAPI_TB, name_index=FASTAPI_NAMES)
    )
    assert q.identifiers == ["decimal_encoder", "jsonable_encoder"]
    assert not {"File", "FastAPI", "fastapi", "Users", "someone", "venv"} & set(
        q.identifiers + q.unresolved_terms
    )
    # The frames keep their paths: retrieval maps the one inside the repository to its file.
    assert [(f.path, f.func) for f in q.frames] == [
        ("/Users/someone/projects/FastAPI/nan.py", "<module>"),
        (
            "/Users/someone/.venv/lib/python3.11/site-packages/fastapi/encoders.py",
            "decimal_encoder",
        ),
    ]


def test_frame_paths_of_every_format_are_left_out_of_identifiers():
    paths = {"proj", "src", "view", "models", "query", "sklearn", "home"}
    names = frozenset({*paths, "lookup", "render", "remember", "clone"})
    paths |= {"gems", "puma", "vendor", "acme", "www", "htdocs", "xampp"}
    names = frozenset({*paths, *names, "process_client", "Save"})
    traces = PY_TB + IPY_OLD + NODE + GO + RUST + JAVA + RUBY + PHP + CSHARP
    q = build_query("crash", error=traces, name_index=names)
    assert paths.isdisjoint(q.identifiers)
    assert {"lookup", "render", "remember", "clone", "process_client", "Save"} <= set(
        q.identifiers
    )  # the functions
    assert len(q.frames) == len(parse_frames(traces))
    prose = build_query("the File menu and `src/app.py` crash", name_index={"File", "app"})
    assert "File" in prose.identifiers  # outside a frame line, a word is a word


def test_links_to_a_line_of_a_file_are_frames():
    """A reporter's link to a line names the code as precisely as a frame: GitHub's
    ``blob/<ref>/<path>#L…`` (a range too), GitLab's ``/-/blob/``, several on a line, inside
    Markdown; a link without a line anchor or to a tree is only a path mention."""
    text = (
        "See https://github.com/o/r/blob/0123abc/pkg/core/run.py#L926 and\n"
        "[here](https://gitlab.com/g/p/-/blob/main/lib/x.rb#L3-L9), "
        "<https://github.com/o/r/blob/v1.2/src/a.go?plain=1#L40> or "
        "https://github.com/o/r/blob/main/README.md, https://github.com/o/r/tree/main/src#L2"
    )
    assert parse_frames(text) == [
        Frame("pkg/core/run.py", 926, None, "link"),
        Frame("lib/x.rb", 3, None, "link"),
        Frame("src/a.go", 40, None, "link"),
    ]
    assert innermost_depths(parse_frames(text)) == [0, 0, 0]  # each is where the user points
    assert innermost_depths(parse_frames(PY_TB + text))[-3:] == [0, 0, 0]


def test_build_query_collects_frames_from_error_then_task():
    q = build_query("Crash!\n" + JAVA, error=PY_TB)
    assert [f.lang for f in q.frames] == ["python", "python", "java", "java"]


def test_huge_pasted_log_is_bounded_and_keeps_the_tail():
    noise = ("x" * 5000 + "\n") * 100 + ("a" * 1_000_000)
    log = noise + "\n" + PY_TB + "ValueError: the final one\n"
    q = build_query("Fix the crash", error=log)
    assert Frame("src/app.py", 7, "<module>", "python") in q.frames
    assert q.error_strings[0] == "ValueError: the final one"
    q2 = build_query(("foo_bar." * 200_000) + " end", error="(" * 1_000_000)
    assert len(q2.identifiers) <= 32


def test_bad_and_empty_input():
    q = build_query("")
    assert (q.identifiers, q.error_strings, q.test_names, q.file_paths, q.goal_hint) == (
        [],
        [],
        [],
        [],
        "",
    )
    prose = build_query("the thing does not work as expected for me")
    assert prose.identifiers == [] and prose.goal_hint.startswith("the thing")
    with pytest.raises(InvalidArgumentError):
        build_query(b"bytes")  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError):
        build_query("x", error=3)  # type: ignore[arg-type]
    assert build_query("x").to_dict()["frames"] == []
