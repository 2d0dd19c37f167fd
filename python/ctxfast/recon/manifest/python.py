"""Python manifests: ``pyproject.toml`` (tomllib), ``setup.py`` (``ast`` — never executed),
``setup.cfg`` (configparser), ``requirements*.txt``, and the test-tool configs ``pytest.ini``,
``tox.ini`` and ``noxfile.py`` that let the pytest/tox/nox conventions be evidenced instead of
guessed."""

from __future__ import annotations

import ast
import configparser
import re
from typing import Any

from ctxfast.recon.manifest._common import (
    Collector,
    ManifestParseError,
    Source,
    load_toml,
    split_requirement,
)
from ctxfast.recon.manifest._locate import TomlLines, ini_entries

#: Optional-dependency / group names treated as development-only.
DEV_GROUPS = frozenset(
    {
        "dev",
        "develop",
        "development",
        "test",
        "tests",
        "testing",
        "lint",
        "linting",
        "docs",
        "doc",
        "typing",
        "types",
        "ci",
        "check",
        "style",
        "bench",
        "benchmark",
    }
)

# package_manager priorities: lower wins across the whole repository.
PM_POETRY, PM_SETUPTOOLS_PYPROJECT, PM_PIP_PYPROJECT, PM_SETUPTOOLS, PM_PIP = 0, 1, 2, 3, 4


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _req_deps(col: Collector, reqs: Any, kind: str, locate: Any) -> None:
    for req in reqs if isinstance(reqs, list) else []:
        if not isinstance(req, str):
            continue
        parsed = split_requirement(req)
        if parsed:
            col.dependency(parsed[0], parsed[1], kind, locate(req))


def parse_pyproject(col: Collector, src: Source) -> None:
    """Languages, package manager, dependencies, scripts and tool conventions of PEP 621 and
    Poetry projects."""
    data = load_toml(src)
    t = TomlLines(src)
    project = _dict(data.get("project"))
    tool = _dict(data.get("tool"))
    poetry = _dict(tool.get("poetry"))
    bs = _dict(data.get("build-system"))
    backend = str(bs.get("build-backend", ""))

    if "project" in data:
        col.language(
            "python",
            _str(project.get("requires-python")),
            src.ev(t.best(("project",), "requires-python")),
        )
    elif "poetry" in tool:
        py = _dict(poetry.get("dependencies")).get("python")
        col.language(
            "python", _str(py), src.ev(t.best(("tool", "poetry", "dependencies"), "python"))
        )
    elif bs:
        col.language("python", None, src.ev(t.best(("build-system",))))

    if "poetry" in tool:
        col.package_manager(PM_POETRY, "poetry", src.ev(t.best(("tool", "poetry"))))
    elif "poetry" in backend:
        col.package_manager(PM_POETRY, "poetry", src.ev(t.best(("build-system",), "build-backend")))
    elif backend.startswith("setuptools"):
        col.package_manager(
            PM_SETUPTOOLS_PYPROJECT,
            "setuptools",
            src.ev(t.best(("build-system",), "build-backend")),
        )
    elif project or bs:
        col.package_manager(
            PM_PIP_PYPROJECT, "pip", src.ev(t.best(("project",) if project else ("build-system",)))
        )

    _pyproject_dependencies(col, src, t, data, project)
    _poetry_dependencies(col, src, t, poetry)
    _pyproject_entry_points(col, src, t, project, poetry)
    _pyproject_conventions(col, src, t, tool, bs)


def _pyproject_dependencies(
    col: Collector, src: Source, t: TomlLines, data: dict[str, Any], project: dict[str, Any]
) -> None:
    """Record the PEP 621 dependencies, its optional groups (dev-only when the group's name
    says so) and the PEP 735 ``dependency-groups`` (always dev), each at its array entry."""

    def in_array(path: tuple[str, ...], key: str) -> Any:
        return lambda req: src.ev(t.value(path, key, req) or t.best(path, key))

    _req_deps(col, project.get("dependencies"), "runtime", in_array(("project",), "dependencies"))
    for group, reqs in _dict(project.get("optional-dependencies")).items():
        kind = "dev" if group.lower() in DEV_GROUPS else "runtime"
        _req_deps(col, reqs, kind, in_array(("project", "optional-dependencies"), group))
    for group, reqs in _dict(data.get("dependency-groups")).items():
        _req_deps(col, reqs, "dev", in_array(("dependency-groups",), group))


def _poetry_dependencies(col: Collector, src: Source, t: TomlLines, poetry: dict[str, Any]) -> None:
    """Record Poetry's dependency tables: the main and legacy dev tables, and every group
    (dev unless it is ``main``). The ``python`` entry is the interpreter, not a package."""
    poetry_tables: list[tuple[tuple[str, ...], Any, str]] = [
        (("tool", "poetry", "dependencies"), poetry.get("dependencies"), "runtime"),
        (("tool", "poetry", "dev-dependencies"), poetry.get("dev-dependencies"), "dev"),
    ]
    for gname, group in _dict(poetry.get("group")).items():
        kind = "runtime" if gname == "main" else "dev"
        gpath: tuple[str, ...] = ("tool", "poetry", "group", gname, "dependencies")
        poetry_tables.append((gpath, _dict(group).get("dependencies"), kind))
    for path, table, kind in poetry_tables:
        for name, spec in _dict(table).items():
            if name.lower() == "python":
                continue
            version = spec if isinstance(spec, str) else _str(_dict(spec).get("version"))
            col.dependency(name, version, kind, src.ev(t.best(path, name)))


def _pyproject_entry_points(
    col: Collector, src: Source, t: TomlLines, project: dict[str, Any], poetry: dict[str, Any]
) -> None:
    """Record the console scripts of PEP 621 (``scripts``, ``gui-scripts``) and of Poetry,
    whose script may be a table naming its ``callable``."""
    for key, table in (
        ("scripts", project.get("scripts")),
        ("gui-scripts", project.get("gui-scripts")),
    ):
        for name, target in _dict(table).items():
            col.entry_point(
                name, "console-script", src.ev(t.best(("project", key), name)), _str(target)
            )
    for name, target in _dict(poetry.get("scripts")).items():
        tgt = target if isinstance(target, str) else _str(_dict(target).get("callable"))
        col.entry_point(
            name, "console-script", src.ev(t.best(("tool", "poetry", "scripts"), name)), tgt
        )


def _pyproject_conventions(
    col: Collector, src: Source, t: TomlLines, tool: dict[str, Any], bs: dict[str, Any]
) -> None:
    """Record what the ``[tool.*]`` tables and the build system evidence: pytest and its test
    paths, ruff as the linter, ``python -m build`` as the build, and a ``src`` layout."""
    pytest_cfg = _dict(tool.get("pytest"))
    if "ini_options" in pytest_cfg:
        col.test_framework("pytest", src.ev(t.best(("tool", "pytest", "ini_options"))))
        for tp in _list(pytest_cfg["ini_options"].get("testpaths")):
            line = t.value(("tool", "pytest", "ini_options"), "testpaths", str(tp))
            col.convention(f"tests-dir: {tp}/", src.ev(line or 1))
    if "ruff" in tool:
        col.runner(2, "lint", "lint", "ruff check .", src.ev(t.best(("tool", "ruff"))))
    if bs:
        col.runner(2, "build", "build", "python -m build", src.ev(t.best(("build-system",))))
    for where in _list(
        _dict(_dict(_dict(tool.get("setuptools")).get("packages")).get("find")).get("where")
    ):
        if where == "src":
            line = t.value(("tool", "setuptools", "packages", "find"), "where", "src")
            col.convention("src-layout", src.ev(line or 1))


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _list(value: Any) -> list[Any]:
    if isinstance(value, str):
        return [value]
    return value if isinstance(value, list) else []


# --- setup.py --------------------------------------------------------------------------------


def _module_assigns(tree: ast.Module) -> dict[str, ast.expr]:
    """Each module-level ``NAME = value``, so a ``setup()`` keyword given as a name (the
    common ``install_requires=REQUIREMENTS``) can be read through to its literal."""
    assigns: dict[str, ast.expr] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    assigns[target.id] = node.value
    return assigns


def _setup_call(tree: ast.Module) -> ast.Call:
    """The first ``setup(...)`` (or ``setuptools.setup(...)``) call anywhere in the file; a
    ``setup.py`` without one declares nothing, which is a parse error."""
    for sub in ast.walk(tree):
        if isinstance(sub, ast.Call):
            f = sub.func
            name = (
                f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            )
            if name == "setup":
                return sub
    raise ManifestParseError("no setup(...) call found")


def _resolve(node: ast.expr, assigns: dict[str, ast.expr]) -> ast.expr:
    """``node``, or the value assigned to it at module level when it is a name."""
    return assigns.get(node.id, node) if isinstance(node, ast.Name) else node


def _setup_strings(node: ast.expr | None, assigns: dict[str, ast.expr]) -> list[tuple[str, int]]:
    """The string literals of a keyword value with their lines: each line of a string (the
    ``setup.cfg``-like form, ``[section]`` headers skipped) or each string of a list/tuple."""
    node = _resolve(node, assigns) if node is not None else None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [
            (s.strip(), node.lineno + i)
            for i, s in enumerate(node.value.split("\n"))
            if s.strip() and not s.strip().startswith("[")
        ]
    if isinstance(node, ast.List | ast.Tuple):
        return [
            (e.value, e.lineno)
            for e in node.elts
            if isinstance(e, ast.Constant) and isinstance(e.value, str)
        ]
    return []


def _setup_dependencies(
    col: Collector, src: Source, kw: dict[str, ast.expr], assigns: dict[str, ast.expr]
) -> None:
    """Record ``install_requires`` (runtime), ``tests_require``/``setup_requires`` (dev) and
    each ``extras_require`` group (dev-only when the group's name says so)."""
    for key, kind in (
        ("install_requires", "runtime"),
        ("tests_require", "dev"),
        ("setup_requires", "dev"),
    ):
        for req, line in _setup_strings(kw.get(key), assigns):
            parsed = split_requirement(req)
            if parsed:
                col.dependency(parsed[0], parsed[1], kind, src.ev(line))
    extras = kw.get("extras_require")
    if isinstance(extras, ast.Dict):
        for k, v in zip(extras.keys, extras.values, strict=True):
            if isinstance(k, ast.Constant) and isinstance(k.value, str):
                kind = "dev" if k.value.lower() in DEV_GROUPS else "runtime"
                for req, line in _setup_strings(v, assigns):
                    parsed = split_requirement(req)
                    if parsed:
                        col.dependency(parsed[0], parsed[1], kind, src.ev(line))


def _setup_entry_points(
    col: Collector, src: Source, eps: ast.expr | None, assigns: dict[str, ast.expr]
) -> None:
    """Record the console and GUI scripts of ``entry_points``, given either as a dict of
    groups or as an ini-style string whose ``[section]`` headers pick the group."""
    if isinstance(eps, ast.Dict):
        for k, v in zip(eps.keys, eps.values, strict=True):
            if isinstance(k, ast.Constant) and k.value in ("console_scripts", "gui_scripts"):
                for spec, line in _setup_strings(v, assigns):
                    _entry_spec(col, src, spec, line)
    elif eps is not None:
        section = ""
        for spec, line in _setup_strings(eps, assigns):
            if spec.startswith("["):
                section = spec
            elif section in ("", "[console_scripts]", "[gui_scripts]"):
                _entry_spec(col, src, spec, line)


def parse_setup_py(col: Collector, src: Source) -> None:
    """Read ``setup(...)`` keyword literals with ``ast``. The file is parsed, never executed:
    a ``setup.py`` is arbitrary code and the manifest must be side-effect free."""
    try:
        tree = ast.parse(src.text, filename=src.rel)
    except SyntaxError as exc:
        raise ManifestParseError(f"unparseable: {exc.msg}", exc.lineno) from exc
    assigns = _module_assigns(tree)
    call = _setup_call(tree)
    kw = {k.arg: _resolve(k.value, assigns) for k in call.keywords if k.arg}
    import_line = src.find_line(r"^\s*(from|import)\s+(setuptools|distutils)")
    col.package_manager(PM_SETUPTOOLS, "setuptools", src.ev(import_line or call.lineno))
    pyreq = kw.get("python_requires")
    hint = pyreq.value if isinstance(pyreq, ast.Constant) and isinstance(pyreq.value, str) else None
    col.language("python", hint, src.ev(pyreq.lineno if hint and pyreq else call.lineno))
    _setup_dependencies(col, src, kw, assigns)
    _setup_entry_points(col, src, kw.get("entry_points"), assigns)


def _entry_spec(col: Collector, src: Source, spec: str, line: int) -> None:
    if "=" in spec:
        name, target = (p.strip() for p in spec.split("=", 1))
        col.entry_point(name, "console-script", src.ev(line), target)


# --- setup.cfg / tox.ini / pytest.ini ---------------------------------------------------------


def _ini(src: Source) -> dict[tuple[str, str], list[tuple[str, int]]]:
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(src.text, source=src.rel)
    except configparser.Error as exc:
        m = re.search(r"line (\d+)", str(exc))
        msg = " ".join(str(exc).split())
        raise ManifestParseError(f"unparseable: {msg}", int(m.group(1)) if m else None) from exc
    return ini_entries(src)


def parse_setup_cfg(col: Collector, src: Source) -> None:
    """Declarative setuptools metadata: ``[options]`` requirements, extras and entry points."""
    ini = _ini(src)
    if ("options", "") in ini or ("metadata", "") in ini:
        head = ini.get(("options", "")) or ini[("metadata", "")]
        col.package_manager(PM_SETUPTOOLS, "setuptools", src.ev(head[0][1]))
        pyreq = ini.get(("options", "python_requires"))
        col.language(
            "python", pyreq[0][0] if pyreq else None, src.ev(pyreq[0][1] if pyreq else head[0][1])
        )
    for key, kind in (("install_requires", "runtime"), ("tests_require", "dev")):
        for piece, line in ini.get(("options", key), []):
            parsed = split_requirement(piece) if piece else None
            if parsed:
                col.dependency(parsed[0], parsed[1], kind, src.ev(line))
    for (section, key), pieces in ini.items():
        if section == "options.extras_require" and key:
            kind = "dev" if key in DEV_GROUPS else "runtime"
            for piece, line in pieces:
                parsed = split_requirement(piece) if piece else None
                if parsed:
                    col.dependency(parsed[0], parsed[1], kind, src.ev(line))
        if section == "options.entry_points" and key in ("console_scripts", "gui_scripts"):
            for piece, line in pieces:
                if piece:
                    _entry_spec(col, src, piece, line)
    _ini_tools(col, src, ini)


def _ini_tools(
    col: Collector, src: Source, ini: dict[tuple[str, str], list[tuple[str, int]]]
) -> None:
    for section in ("pytest", "tool:pytest"):
        if (section, "") in ini:
            col.test_framework("pytest", src.ev(ini[(section, "")][0][1]))
            for piece, line in ini.get((section, "testpaths"), []):
                for tp in piece.split():
                    col.convention(f"tests-dir: {tp}/", src.ev(line))
    if ("flake8", "") in ini:
        col.runner(2, "lint", "lint", "flake8", src.ev(ini[("flake8", "")][0][1]))
    if ("tox", "") in ini or ("tox:tox", "") in ini:
        head = ini.get(("tox", "")) or ini[("tox:tox", "")]
        col.test_framework("tox", src.ev(head[0][1]))


def parse_test_ini(col: Collector, src: Source) -> None:
    """``pytest.ini`` / ``tox.ini``: test-framework evidence for the convention runners."""
    ini = _ini(src)
    if src.rel.endswith("pytest.ini") and ("pytest", "") not in ini:
        raise ManifestParseError("pytest.ini has no [pytest] section")
    _ini_tools(col, src, ini)


def parse_noxfile(col: Collector, src: Source) -> None:
    """``noxfile.py`` (parsed with ``ast`` only): evidence that ``nox`` runs the sessions."""
    try:
        ast.parse(src.text, filename=src.rel)
    except SyntaxError as exc:
        raise ManifestParseError(f"unparseable: {exc.msg}", exc.lineno) from exc
    line = src.find_line(r"@nox\.session")
    if line:
        col.test_framework("nox", src.ev(line))


# --- requirements*.txt ------------------------------------------------------------------------


def parse_requirements(col: Collector, src: Source) -> None:
    """One dependency per requirement line; options, includes and comments are skipped."""
    kind = (
        "dev"
        if re.search(r"dev|test|lint|doc|ci|check|type", src.rel.rsplit("/", 1)[-1])
        else "runtime"
    )
    first = None
    pending = ""
    pending_line = 0
    for i, raw in enumerate(src.lines, start=1):
        line = re.sub(r"(^|\s)#.*$", "", raw).strip()
        if pending:
            line, start = pending + " " + line, pending_line
        else:
            start = i
        if line.endswith("\\"):
            pending, pending_line = line[:-1].strip(), start
            continue
        pending = ""
        if not line:
            continue
        if line.startswith("-"):
            m = re.search(r"#egg=([A-Za-z0-9._-]+)", raw)
            if line.startswith(("-e", "--editable")) and m:
                col.dependency(m.group(1), None, kind, src.ev(start))
                first = first or start
            continue
        line = re.split(r"\s--?[a-z]", line, maxsplit=1)[0]
        if line.startswith((".", "/", "~")) or ("://" in line and " @ " not in line):
            continue  # a local path or bare URL names no package: nothing to claim
        parsed = split_requirement(line)
        if parsed is None:
            raise ManifestParseError(f"unparseable requirement: {line!r}", start)
        col.dependency(parsed[0], parsed[1], kind, src.ev(start))
        first = first or start
    if first is not None and "/" not in src.rel:
        col.package_manager(PM_PIP, "pip", src.ev(first))
        col.language("python", None, src.ev(first))
