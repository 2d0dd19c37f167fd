"""Incremental refresh == cold build where resolution reads function signatures.

Java, TypeScript and Rust resolve a call on what a function returns through that function's
declared return type (``make1().run()``), and C keeps a ``static`` function out of other
files' reach. Both facts live in another file's signature, so a refresh resolving a changed
file against the unchanged files' stored interfaces must see those signatures as a cold
build does, and an edit of a return type or of ``static`` must re-resolve the callers.
Hypothesis builds small trees of one language whose modules return each other's classes and
call through those returns, edits them (rewrite, delete), and compares after every step —
refreshing from what the last run left in the process or, when another writer touched the
index, from the stored blobs.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from hostile_repos import cold_dump, dump
from hypothesis import given, settings
from hypothesis import strategies as st

import ctxfast

MODULES = [0, 1, 2, 3]
METHODS = ["run", "size"]
LANGS = ["java", "typescript", "rust", "c"]

#: Per language with classes: a method named ``{x}``, a call of method ``{x}`` on what
#: module ``{o}``'s factory returns, and module ``{m}``: its class with ``{body}``, its
#: factory returning module ``{returns}``'s class, and a function making the ``{uses}``.
CLASSES = {
    "java": (
        "    public void {x}() {{}}\n",
        "M{o}.make().{x}();",
        "package p;\npublic class M{m} {{\n{body}"
        "    public static M{returns} make() {{ return null; }}\n"
        "    static void use() {{ {uses} }}\n}}\n",
    ),
    "typescript": (
        "  {x}(): void {{}}\n",
        "make{o}().{x}();",
        "{imports}export class M{m} {{\n{body}}}\n"
        "export function make{m}(): M{returns} {{\n  return null;\n}}\n"
        "export function use{m}() {{\n  {uses}\n}}\n",
    ),
    "rust": (
        "    pub fn {x}(&self) {{}}\n",
        "crate::m{o}::make().{x}();",
        "pub struct M{m};\nimpl M{m} {{\n{body}}}\n"
        "pub fn make() -> crate::m{returns}::M{returns} {{\n    todo!()\n}}\n"
        "pub fn user() {{\n    {uses}\n}}\n",
    ),
}


def path_of(lang: str, m: int) -> str:
    return {
        "java": f"p/M{m}.java",
        "typescript": f"m{m}.ts",
        "rust": f"src/m{m}.rs",
        "c": f"m{m}.c",
    }[lang]


@st.composite
def module_source(draw: st.DrawFn, lang: str, m: int) -> str:
    """Module ``m``: a class with some methods, a factory returning some module's class, and
    a function calling a method on what other modules' factories return. In C: functions,
    each ``static`` or not, calling other modules' functions."""
    others = [o for o in MODULES if o != m]
    methods = draw(st.lists(st.sampled_from(METHODS), max_size=2, unique=True))
    returns = draw(st.sampled_from(MODULES))
    calls = [
        (o, draw(st.sampled_from(METHODS)))
        for o in draw(st.lists(st.sampled_from(others), max_size=3, unique=True))
    ]
    if lang in CLASSES:
        method, call, module = CLASSES[lang]
        names = {f"M{returns}"} | {f"make{o}" for o, _ in calls}
        imports = "".join(
            f"import {{ {n} }} from './m{n[-1]}';\n" for n in sorted(names) if n[-1] != str(m)
        )
        return module.format(
            m=m,
            returns=returns,
            body="".join(method.format(x=x) for x in methods),
            uses=" ".join(call.format(o=o, x=x) for o, x in calls),
            imports=imports if lang == "typescript" else "",
        )
    lines = []
    for f in draw(st.lists(st.sampled_from(["f", "g"]), min_size=1, max_size=2, unique=True)):
        static = "static " if draw(st.booleans()) else ""
        lines.append(f"{static}int {f}{m}(void) {{ return 1; }}")
    uses = " + ".join(f"{'fg'[i % 2]}{o}()" for i, (o, _) in enumerate(calls)) or "0"
    lines.append(f"int use{m}(void) {{ return {uses}; }}")
    return "\n".join(lines) + "\n"


@st.composite
def scenario(draw: st.DrawFn) -> tuple[str, dict[int, str], list[tuple[int, str | None, bool]]]:
    """A language, its starting modules and edits: (module, new source or ``None`` to delete
    it, whether another writer touched the index before the refresh)."""
    lang = draw(st.sampled_from(LANGS))
    start = {m: draw(module_source(lang, m)) for m in MODULES}
    edits = []
    for _ in range(draw(st.integers(1, 5))):
        m = draw(st.sampled_from(MODULES))
        src = None if draw(st.integers(0, 4)) == 0 else draw(module_source(lang, m))
        edits.append((m, src, draw(st.booleans())))
    return lang, start, edits


def write_tree(root: Path, lang: str, files: dict[int, str]) -> None:
    for m in MODULES:
        p = root / path_of(lang, m)
        p.parent.mkdir(parents=True, exist_ok=True)
        if m in files:
            p.write_text(files[m])
        elif p.exists():
            p.unlink()
    if lang == "rust":
        (root / "src" / "lib.rs").write_text("".join(f"pub mod m{m};\n" for m in MODULES))


def touch_as_another_writer(db: Path) -> None:
    """Records a run this process did not make (as another process's refresh would), so the
    next refresh reads the stored interfaces instead of what the last run left in memory."""
    con = sqlite3.connect(db)
    try:
        con.execute("UPDATE meta SET value = CAST(value AS INTEGER) - 1 WHERE key = 'run_start_ns'")
        con.commit()
    finally:
        con.close()


@settings(max_examples=40)
@given(case=scenario())
def test_refresh_through_signatures_equals_a_cold_build(tmp_path_factory, case) -> None:
    lang, start, edits = case
    base = tmp_path_factory.mktemp("sig")
    tree, scratch = base / "tree", base / "cold"
    files = dict(start)
    write_tree(tree, lang, files)
    repo = ctxfast.Repository(tree)
    repo.index()
    db = tree / ".ctxfast" / "recon.db"
    for step, (m, src, other_writer) in enumerate(edits):
        if src is None:
            files.pop(m, None)
        else:
            files[m] = src
        write_tree(tree, lang, files)
        if other_writer:
            touch_as_another_writer(db)
        repo.index()
        assert dump(db) == cold_dump(tree, scratch), f"{lang} step {step}: m{m} -> {src!r}"
