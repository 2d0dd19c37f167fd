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
