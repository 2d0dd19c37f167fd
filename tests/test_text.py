"""The shared text rules: file roles, the one pruned-directory list, and the repo map's use
of file roles (vendored, minified, test and doc files never take its top slots)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxfast import Repository, _native
from ctxfast.retrieval.lexical import DEFAULT_EXCLUDE_ANY_DEPTH
from ctxfast.text import (
    PRUNED_DIRS,
    FileRole,
    attached_above,
    file_role,
    identifiers,
    is_product_path,
    is_test_code,
    is_test_path,
    split_identifier,
)


@pytest.mark.parametrize(
    ("path", "role"),
    [
        ("astropy/extern/js/jquery.min.js", FileRole.VENDORED),
        ("extern/js/jquery.min.js", FileRole.VENDORED),
        ("third-party/zlib/inflate.c", FileRole.VENDORED),
        ("web/node_modules/left-pad/index.js", FileRole.VENDORED),
        (".ctxfast/recon.db", FileRole.VENDORED),
        ("sphinx/themes/basic/static/jquery-3.5.1.min.js", FileRole.GENERATED),
        ("proto/api_pb2.py", FileRole.GENERATED),
        ("tests/test_core.py", FileRole.TEST),
        ("src/app.spec.ts", FileRole.TEST),
        ("pkg/store_test.go", FileRole.TEST),
        ("docs/conf.py", FileRole.DOC),
        ("pkg/doc/guide.py", FileRole.DOC),
        ("pkg/core.py", FileRole.SOURCE),
        ("extension/loader.py", FileRole.SOURCE),  # a name starting "ext" is not vendored
        ("latest/mini.js", FileRole.SOURCE),
    ],
)
def test_file_roles(path, role):
    assert file_role(path) is role


def test_is_test_path_is_the_test_role_without_the_directory_precedence():
    assert is_test_path("vendor/lib/tests/test_x.py")
    assert file_role("vendor/lib/tests/test_x.py") is FileRole.VENDORED
    assert not is_test_path("pkg/testing.py") and not is_test_path("pkg/contest.py")


@pytest.mark.parametrize(
    "path", ["src/addDays/test.ts", "src/addDays/test.js", "shop/tests.py", "src/parse/tests.rs"]
)
def test_a_file_named_test_or_tests_beside_the_code_is_a_test(path):
    assert is_test_path(path) and not is_product_path(path)


@pytest.mark.parametrize(
    "path",
    [
        "conftest.py",
        "pkg/conftest.py",
        "app_test/views.py",
        "integration_tests/dataset_tests/read.py",
        "test_projects/rails/config/application.rb",
        "shop/cart_tests.py",
        "src/core/arena_test.cc",
        "src/core/arena_unittest.cpp",
        "app/src/CartTest.kt",
        "Shop/CartTests.cs",
        "Sources/CartTests.swift",
    ],
)
def test_pytest_s_fixtures_and_tests_named_for_what_they_test_are_tests(path):
    assert is_test_path(path) and not is_product_path(path)


@pytest.mark.parametrize(
    "path",
    [
        "src/addDays/index.ts",
        "lib/Tests.php",
        "src/attest.ts",
        "lib/adapter/test.rb",
        "u/test.py",
        "utils/tests_fetcher.py",
        "contest/scoring.py",
        "latest_version/check.py",
        "src/attest_tool/run.py",
    ],
)
def test_a_name_that_only_holds_test_is_not(path):
    assert not is_test_path(path)


def test_one_pruned_directory_list_for_every_walk():
    assert PRUNED_DIRS == tuple(_native.vendored_dirs()) == DEFAULT_EXCLUDE_ANY_DEPTH
    assert {"vendor", "node_modules", "site-packages", "third_party", "external"} <= set(
        PRUNED_DIRS
    )
    assert {".git", ".ctxfast"} <= set(PRUNED_DIRS)


def test_identifier_helpers():
    assert identifiers("a.bc(def_1) 9xy", min_len=2) == ["bc", "def_1", "xy"]
    assert split_identifier("HTTPServer_v2Parse") == ["http", "server", "v", "2", "parse"]


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def test_repo_map_puts_the_projects_source_above_vendored_minified_test_and_doc_files(
    tmp_path,
):
    # A vendored helper every module imports collects the most references (as
    # astropy/extern/ does on the real tree); a minified bundle, tests and docs sit beside it.
    uses_six = "from pkg.extern.six import add_metaclass, moves\n\n"
    files = {
        "pkg/__init__.py": "",
        "pkg/extern/__init__.py": "",
        "pkg/extern/six.py": "def moves():\n    return 1\n\n\ndef add_metaclass(m):\n"
        "    return m\n",
        "extern/js/jquery.min.js": "function jQuery(s){return s}function ready(f){return f()}\n",
        "docs/conf.py": uses_six + "def setup(app):\n    return moves()\n",
        "tests/helpers.py": uses_six + "def make():\n    return add_metaclass(moves())\n",
        "tests/test_core.py": "from tests.helpers import make\nfrom pkg.core import run\n\n"
        "def test_run():\n    assert run(make())\n",
    }
    for name in ("core", "api", "cli", "store"):
        files[f"pkg/{name}.py"] = (
            uses_six + f"def {'run' if name == 'core' else name + '_main'}(x=None):\n"
            "    return add_metaclass(moves())\n"
        )
    repo = Repository(_write(tmp_path / "repo", files))
    repo.index()
    text = repo.repo_map(max_tokens=4096)
    listed = [line[:-1] for line in text.splitlines() if not line.startswith(" ")]
    roles = [file_role(p) for p in listed]
    assert "pkg/extern/six.py" in listed and "tests/helpers.py" in listed
    first_other = roles.index(next(r for r in roles if r is not FileRole.SOURCE))
    assert all(r is FileRole.SOURCE for r in roles[:first_other])
    assert all(r is not FileRole.SOURCE for r in roles[first_other:])
    assert set(listed[:first_other]) == {
        "pkg/core.py",
        "pkg/api.py",
        "pkg/cli.py",
        "pkg/store.py",
        "pkg/__init__.py",
    }


def test_a_top_level_testing_directory_holds_tests_a_nested_one_library_code():
    # pytest's own suite lives in ``testing/``; ``sympy/testing`` and
    # ``lib/matplotlib/testing`` are helpers the library ships (a fix may land there).
    assert is_test_path("testing/python/collect.py")
    assert not is_test_path("sympy/testing/pytest.py")
    assert not is_test_path("lib/matplotlib/testing/decorators.py")


def test_a_test_module_inside_a_library_file_is_test_code():
    assert is_test_code("src/lib.rs", "lib.tests.parses_wide_glyphs")
    assert is_test_code("src/exec/input.rs", "exec.input.path_tests.dirname_root")
    assert not is_test_code("src/lib.rs", "lib.latest_tests_x.parses")  # a suffix, not a part
    assert not is_test_code("a/decorators.py", "a.decorators.user_passes_test._wrapped_view")
    assert is_test_code("tests/test_a.py", "tests.test_a.test_x")
    assert not is_test_code("src/lib.rs", "lib.parse_width")
    assert not is_test_code("src/lib.rs", "tests")  # the module itself, not inside one
    assert is_test_code("src/tests.rs", "tests")  # but a file named tests is a test file
    assert not is_test_code("src/lib.rs", None)


def test_the_lines_above_a_definition_that_belong_to_it():
    prefixes = ("@", "#[", "#", "//", "/*", "*")
    rust = ["#[cfg(any(", "    unix,", "    windows,", "))]", "/// Opens it.", "pub fn open() {}"]
    assert attached_above(rust, 5, prefixes, 10) == 0  # the attribute's inner lines too
    assert attached_above(rust, 5, prefixes, 3) == 4  # within three lines: the doc comment
    java = ["  @Override public String toString() {", '    return "x";', "  }", "  void next() {"]
    assert attached_above(java, 3, prefixes, 10) == 3  # the method before is not an annotation
    call = ["x = configure(", "    1,", ")", "def run():"]
    assert attached_above(call, 3, prefixes, 10) == 3  # nor is a call that opens no decorator


def test_a_block_comment_above_a_definition_is_taken_whole_or_not_at_all():
    prefixes = ("@", "#[", "#", "//", "/*", "*")
    doc = ["  }", "", "  /**", "   * Parses it.", "", "   * @return it", "   */", "  @Override"]
    java = [*doc, "  Object parse() {"]
    assert attached_above(java, 8, prefixes, 10, True) == 2  # the blank line inside is kept
    assert attached_above(java, 8, prefixes, 10) == 5  # line by line, the blank line ends it
    assert attached_above(java, 8, prefixes, 4, True) == 7  # too long: only the annotation
    assert attached_above(java, 8, prefixes, 5, True) == 7  # not its last lines without /**
    short = ["int x;", "/* one line */", "void f() {"]
    assert attached_above(short, 2, prefixes, 10, True) == 1
    # a line ending in */ that closes no comment above: nothing attached
    stray = ["x = 1;", "  y(); */", "void f() {"]
    assert attached_above(stray, 2, prefixes, 10, True) == 2
