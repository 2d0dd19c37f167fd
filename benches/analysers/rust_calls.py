"""Call sites of a Rust tree with the definitions rust-analyzer resolves them to: the
independent reference of ``ctxfast eval fidelity`` for Rust.

usage: python rust_calls.py ROOT   (one JSON object per line on stdout)

rust-analyzer's ``lsif`` command (the rustup component ``rust-analyzer``) loads the Cargo
workspace the way the editor does, macro expansion and trait resolution included, and writes
every reference with its definition as LSIF. A reference is a call when its name is followed
by ``(`` or a turbofish ``::<…>(`` in the source and its definition is a ``fn``; the build
products go to a temporary directory, never into the tree. Files under ``tests``/``benches``
directories are left out, as by the other analysers.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlparse

SKIP_DIRS = {"tests", "benches", "target"}
CALL_AFTER = re.compile(r"\s*(::\s*<[^()]*>\s*)?\(")
FN_AT = re.compile(r"\bfn\s+$")


def lsif(root: Path) -> list[dict]:
    tool = shutil.which("rust-analyzer")
    if tool is None:
        sys.exit("Rust fidelity needs rust-analyzer: rustup component add rust-analyzer")
    with tempfile.TemporaryDirectory(prefix="ra-target-") as target:
        env = dict(os.environ, CARGO_TARGET_DIR=target)
        out = subprocess.run(
            [tool, "lsif", str(root)], capture_output=True, text=True, env=env, check=False
        )
    if out.returncode != 0 and not out.stdout:
        sys.exit(out.stderr[-400:])
    return [json.loads(line) for line in out.stdout.splitlines() if line.strip()]


def utf16_index(text: str, units: int) -> int:
    """The index into ``text`` of the character ``units`` UTF-16 code units in."""
    return len(text.encode("utf-16-le")[: 2 * units].decode("utf-16-le", errors="ignore"))


@dataclass
class Graph:
    """The parts of rust-analyzer's LSIF dump a call site is resolved through: documents,
    ranges, and the edges from a range to its result set's definition result and from that
    result to the ranges (with their documents) it lists."""

    docs: dict[int, str] = field(default_factory=dict)  # document id → path
    ranges: dict[int, dict] = field(default_factory=dict)
    next_of: dict[int, int] = field(default_factory=dict)
    definition_of: dict[int, int] = field(default_factory=dict)
    #: definition result → the (range, document) pairs it lists
    items: dict[int, list[tuple[int, int]]] = field(default_factory=lambda: defaultdict(list))
    contains: dict[int, list[int]] = field(default_factory=lambda: defaultdict(list))

    def definition(self, rid: int) -> int | None:
        """The definition result of range ``rid``, following ``next`` edges to the result
        set that holds it (a cycle ends the walk)."""
        seen = set()
        while rid is not None and rid not in seen:
            seen.add(rid)
            if rid in self.definition_of:
                return self.definition_of[rid]
            rid = self.next_of.get(rid)
        return None


def read_graph(objects: list[dict]) -> Graph:
    """The :class:`Graph` of the LSIF objects; every other vertex and edge is ignored."""
    g = Graph()
    for o in objects:
        label = o["label"]
        if o["type"] == "vertex":
            if label == "document":
                g.docs[o["id"]] = unquote(urlparse(o["uri"]).path)
            elif label == "range":
                g.ranges[o["id"]] = o
        elif label == "next":
            g.next_of[o["outV"]] = o["inV"]
        elif label == "textDocument/definition":
            g.definition_of[o["outV"]] = o["inV"]
        elif label == "item":
            for r in o["inVs"]:
                g.items[o["outV"]].append((r, o["document"]))
        elif label == "contains":
            g.contains[o["outV"]].extend(o["inVs"])
    return g


def called_name(text: str, r: dict) -> tuple[int, str] | None:
    """The column and the name of the one-line range ``r`` on source line
    ``text`` when it is called there (followed by ``(`` or a turbofish), else ``None``:
    a mention that is not a call, and a ``fn``'s own name, are no call sites."""
    # LSIF columns count UTF-16 code units: an emoji before a call is two of them.
    col = utf16_index(text, r["start"]["character"])
    end = utf16_index(text, r["end"]["character"])
    name = text[col:end]
    if not name.isidentifier() or not CALL_AFTER.match(text, end):
        return None
    if FN_AT.search(text[:col]):
        return None  # the definition's own name
    return col, name


def call_targets(
    g: Graph,
    res: int | None,
    rel: Callable[[str], str | None],
    lines: Callable[[str], list[str]],
) -> list[dict]:
    """The definitions the definition result ``res`` lists inside the tree, each with
    whether it is a ``fn`` (a call may resolve to a struct or a variable)."""
    targets = []
    for target, tdoc in g.items.get(res, []) if res is not None else []:
        t = g.ranges.get(target)
        tfile = rel(g.docs.get(tdoc, ""))
        if t is None or tfile is None:
            continue
        tline = lines(g.docs[tdoc])[t["start"]["line"]]
        tcol = utf16_index(tline, t["start"]["character"])
        callable_ = bool(FN_AT.search(tline[:tcol]))
        targets.append({"file": tfile, "line": t["start"]["line"] + 1, "callable": callable_})
    return targets


def main(root: Path) -> None:
    root = root.resolve()
    g = read_graph(lsif(root))
    texts: dict[str, list[str]] = {}

    def rel(path: str) -> str | None:
        try:
            r = Path(path).resolve().relative_to(root)
        except ValueError:
            return None
        return None if SKIP_DIRS & set(r.parts[:-1]) else r.as_posix()

    def lines(path: str) -> list[str]:
        if path not in texts:
            try:
                texts[path] = Path(path).read_text(encoding="utf-8", errors="replace").split("\n")
            except OSError:
                texts[path] = []
        return texts[path]

    for doc_id, path in sorted(g.docs.items(), key=lambda kv: kv[1]):
        file = rel(path)
        if file is None or not file.endswith(".rs"):
            continue
        src = lines(path)
        for rid in g.contains.get(doc_id, ()):
            r = g.ranges.get(rid)
            if r is None or r["start"]["line"] != r["end"]["line"]:
                continue
            line = r["start"]["line"]
            text = src[line] if line < len(src) else ""
            called = called_name(text, r)
            if called is None:
                continue
            col, name = called
            res = g.definition(rid)
            print(
                json.dumps(
                    {
                        "file": file,
                        "line": line + 1,
                        "col": col,
                        "name": name,
                        "targets": call_targets(g, res, rel, lines),
                        "resolved": res is not None,
                    }
                )
            )


if __name__ == "__main__":
    main(Path(sys.argv[1]))
