"""A change target's file imports, in every graph language (``defaults.import_lines``)."""

from __future__ import annotations

import ctxfast
from ctxfast.construct import ConstructConfig, DefaultsConfig
from ctxfast.construct.defaults import import_lines

GO = """package main

import (
\t"fmt"
\t"os"
)

var greeting = "hello"

// run prints the greeting to stdout.
func run(name string) {
\tfmt.Fprintln(os.Stdout, greeting, name)
}

func main() {
\trun("world")
}
"""


def test_import_lines_of_each_language():
    go = GO.splitlines()
    assert import_lines(go, 30) == [3, 4, 5, 6]  # the whole parenthesised block
    rust = [
        "//! Walks the tree.",
        "use std::io;",
        "use clap::{",
        "    Arg, ArgAction,",
        "};",
        "pub use crate::walk::scan;",
        "pub(crate) use crate::exit::ExitCode;",
        "extern crate libc;",
        "",
        "fn main() {",
        "    use std::fmt;",
        "}",
    ]
    assert import_lines(rust, 30, first_definition=10) == [2, 3, 4, 5, 6, 7, 8]
    ts = [
        "import {",
        "  cleanUrl,",
        "  slash,",
        "} from '../utils'",
        "import type { Logger } from '../logger'",
        "const used = cleanUrl",
    ]
    assert import_lines(ts, 30) == [1, 2, 3, 4, 5]
    java = ["package org.demo;", "", "import java.util.List;", "import static x.Y.z;", "class A {}"]
    assert import_lines(java, 30, first_definition=5) == [3, 4]
    assert import_lines(java, 1) == [3]  # the cap
    # A name that merely starts like a keyword is no import.
    assert import_lines(["use = 3", "important = 1", "imports()"], 30) == []
    python = ["import os", "from a import (", "    b,", ")", "", "def f():", "    import re"]
    assert import_lines(python, 30) == [1, 2, 3, 4]


def test_a_function_target_is_shown_with_its_files_imports(tmp_path):
    (tmp_path / "main.go").write_text(GO, encoding="utf-8")
    repo = ctxfast.Repository(tmp_path)
    task = "the greeting should go to stderr, not stdout"
    no_whole = {"whole_file_share": 0.0}

    def shown(**defaults):
        ctx = ctxfast.compose(
            repo,
            task,
            localization=["root.run"],
            defaults=DefaultsConfig(**no_whole, **defaults),
            config=ConstructConfig(target_tokens=1),  # the change target alone, no fill
        )
        return {n for e in ctx.window if e.file == "main.go" for n in e.shown_lines()}

    assert {3, 4, 5, 6, 11, 12, 13} <= shown()
    assert not {3, 4, 5, 6} & shown(definition_imports=False)
    assert DefaultsConfig().definition_imports is True


def _routes_project(root):
    """A small library: the function the task names, and a 220-line table retrieval ranks
    (a file no retrieved definition shows whole) beside a test."""
    (root / "app").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "app/server.py").write_text(
        "from app.routes import lookup\n\n\n"
        "def serve_folder(path):\n"
        '    """Serve the files of one folder."""\n'
        "    return lookup(path)\n",
        encoding="utf-8",
    )
    rows = "".join(f'    "/page/{i}": "view_{i}",\n' for i in range(210))
    (root / "app/routes.py").write_text(
        "def home():\n    return 'index'\n\n\nTABLE = {\n"
        + rows
        + "}\n\n\ndef lookup(path):\n    return TABLE.get(path)\n",
        encoding="utf-8",
    )
    (root / "tests/test_server.py").write_text(
        "from app.server import serve_folder\n\n\n"
        "def test_serve():\n"
        '    assert serve_folder("/a") is None\n',
        encoding="utf-8",
    )
    return ctxfast.Repository(root)


def test_the_room_the_fill_leaves_shows_the_best_ranked_files_whole(tmp_path):
    repo = _routes_project(tmp_path / "routes")
    task = "serve_folder misses nested pages"
    assert "app/routes.py" in repo.retrieve(task).ranked_files()

    def shown(config=None, **defaults):
        ctx = ctxfast.compose(repo, task, defaults=DefaultsConfig(**defaults), config=config)
        return {n for e in ctx.window if e.file == "app/routes.py" for n in e.shown_lines()}

    # Whole, past the 200 lines where any other body is cut to a 40-line window.
    assert shown() == set(range(1, 221))
    assert len(shown(spare_files=0)) < 10
    assert DefaultsConfig().spare_files == 3
