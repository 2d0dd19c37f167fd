"""Repository manifest: per-family extraction on fixture repositories, with
every evidence pointer opened and checked against the line it names."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from ctxfast.errors import InvalidArgumentError
from ctxfast.recon.manifest import (
    ManifestConfig,
    build_manifest,
    load_schema,
    render_manifest_header,
    render_manifest_json,
)
from ctxfast.tokens import count_tokens

FIXTURES = Path(__file__).parent / "fixtures" / "manifest"
ECOSYSTEMS = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir())
VALIDATOR = jsonschema.Draft202012Validator(load_schema())

#: Package-manager-convention commands → a word the evidenced line must contain.
CONVENTION_NEEDLES = {
    "pytest": ("pytest",),
    "tox": ("tox",),
    "nox": ("nox",),
    "python -m build": ("build-system",),
    "ruff check .": ("ruff",),
    "flake8": ("flake8",),
    "cargo test": ("[package]", "[workspace]"),
    "cargo build": ("[package]", "[workspace]"),
    "cargo clippy": ("[package]", "[workspace]"),
    "go test ./...": ("module",),
    "go build ./...": ("module",),
    "go vet ./...": ("module",),
    "mvn test": ("surefire", "artifactId"),
    "mvn package": ("artifactId",),
    "mvn compile": ("maven-compiler",),
    "mvn checkstyle:check": ("checkstyle",),
}


def line_at(root: Path, evidence: str) -> str:
    path, _, num = evidence.rpartition(":")
    lines = (root / path).read_text(encoding="utf-8").splitlines()
    n = int(num)
    assert 1 <= n <= max(1, len(lines)), evidence
    return lines[n - 1] if lines else ""


def _command_stated(root: Path, command: str, evidence: str) -> None:
    text = line_at(root, evidence)
    first = command.split(" && ")[0]
    if first in text or first in " ".join(text.split()):
        return
    if command in CONVENTION_NEEDLES:
        assert any(n in text for n in CONVENTION_NEEDLES[command]), (command, evidence, text)
        return
    # package.json scripts: `<pm> test` / `<pm> run build` is stated by the script's key line.
    script = command.split()[-1]
    if command.split()[0] in ("npm", "yarn", "pnpm"):
        assert f'"{script}"' in text, (command, evidence, text)
        return
    # exec-form CMD/ENTRYPOINT: every word of the command is on the line
    if all(w in text for w in command.split()):
        return
    # a target without a recipe runs as `make X` / `just X`, stated by the `X:` line
    tool, _, target = command.partition(" ")
    if tool in ("make", "just") and text.lstrip("@").startswith(target + ":"):
        return
    # folded CI block / backslash continuation: the first physical line starts the command
    head = text.strip().removesuffix("\\").strip()
    assert head and command.startswith(head), (command, evidence, text)


def assert_evidence(root: Path, m: dict[str, Any]) -> None:
    """Open every pointer and check that the line states the claim."""
    for d in m["dependencies"]:
        assert d["name"].split(":")[-1].lower() in line_at(root, d["evidence"]).lower(), d
    for lang in m["languages"]:
        text = line_at(root, lang["evidence"])
        if lang["version_hint"]:
            assert lang["version_hint"].removeprefix("edition ") in text, lang
    for r in m["runners"]:
        _command_stated(root, r["command"], r["evidence"])
    for t in m["tests"]:
        _command_stated(root, t["command"], t["evidence"])
    for e in m["entry-points"]:
        text = line_at(root, e["evidence"])
        words = e["name"].split()
        assert (
            e["name"] in text or e.get("target", "\0") in text or all(w in text for w in words)
        ), e
    for c in m["components"]:
        text = line_at(root, c["evidence"])
        assert c["evidence"].startswith(c["path"]) or c["name"].rsplit("/", 1)[-1] in text, c
    for x in m["external-packages"]:
        text = line_at(root, x["evidence"])
        assert x["evidence"].startswith(x["path"]) or x["path"] in text or x["name"] in text, x
    for ev in m["layout"]["evidence_list"]:
        line_at(root, ev)
    pm = m["package_manager"]
    if pm["name"]:
        text = line_at(root, pm["evidence"])
        needles = {
            "poetry": ("poetry",),
            "setuptools": ("setuptools",),
            "go": ("module",),
            "cargo": ("[package]", "[workspace]"),
            "maven": ("artifactId",),
            "pip": ("[project]", "=", ">"),
        }.get(pm["name"], ())
        if pm["name"] in ("npm", "yarn", "pnpm"):
            assert pm["name"] in pm["evidence"] or "packageManager" in text
        else:
            assert any(n in text for n in needles) or text.strip(), (pm, text)


def build(root: Path, **cfg: Any) -> dict[str, Any]:
    m = build_manifest(root, ManifestConfig(**cfg)) if cfg else build_manifest(root)
    VALIDATOR.validate(m)
    return m


def runner(m: dict[str, Any], name: str) -> dict[str, Any] | None:
    return next((r for r in m["runners"] if r["name"] == name), None)


def deps(m: dict[str, Any]) -> set[tuple[str, str | None, str]]:
    return {(d["name"], d["version"], d["kind"]) for d in m["dependencies"]}


@pytest.mark.parametrize("eco", ECOSYSTEMS)
def test_every_fixture_validates_and_every_pointer_states_its_claim(eco: str) -> None:
    root = FIXTURES / eco
    m = build(root)
    assert m["errors"] == []
    assert_evidence(root, m)
    assert count_tokens(render_manifest_json(m)) <= 5000
    assert count_tokens(render_manifest_header(m)) <= 500


def test_python_pep621_family() -> None:
    m = build(FIXTURES / "python")
    assert m["languages"] == [
        {"name": "python", "version_hint": ">=3.10", "evidence": "pyproject.toml:8"}
    ]
    assert m["package_manager"] == {"name": "setuptools", "evidence": "pyproject.toml:3"}
    assert {
        ("requests", ">=2.28", "runtime"),
        ("click", None, "runtime"),
        ("pydantic", ">=2,<3", "runtime"),
        ("pytest", ">=7", "dev"),
        ("psycopg", ">=3.1", "runtime"),
    } <= deps(m)
    assert m["entry-points"] == [
        {
            "name": "memstore",
            "kind": "console-script",
            "evidence": "pyproject.toml:20",
            "target": "memstore.cli:main",
        }
    ]
    assert m["components"][0]["path"] == "src/memstore"
    assert "src-layout" in m["layout"]["conventions"]
    assert "tests/ mirrors src/memstore/" in m["layout"]["conventions"]
    assert m["external-packages"] == [
        {
            "name": "vendor/minijson",
            "path": "vendor/minijson",
            "evidence": "vendor/minijson/setup.py:1",
        }
    ]
    # vendored code is recognized and left alone: its setup.py contributes no claims
    assert all(not d["evidence"].startswith("vendor/") for d in m["dependencies"])


def test_poetry_family() -> None:
    m = build(FIXTURES / "poetry")
    assert m["package_manager"]["name"] == "poetry"
    assert m["languages"][0]["version_hint"] == "^3.11"
    assert {
        ("fastapi", "^0.110", "runtime"),
        ("sqlalchemy", "^2.0", "runtime"),
        ("pytest", "^8.0", "dev"),
    } <= deps(m)
    assert all(d["name"] != "python" for d in m["dependencies"])
    assert m["entry-points"][0]["target"] == "svc.main:run"


def test_setup_py_cfg_requirements_family() -> None:
    root = FIXTURES / "setuptools"
    m = build(root)
    assert m["package_manager"]["name"] == "setuptools"
    got = deps(m)
    # setup.py: a module-level REQUIREMENTS name is resolved statically, extras keep their kind
    assert {
        ("numpy", ">=1.20", "runtime"),
        ("scipy", None, "runtime"),
        ("pytest", None, "dev"),
        ("matplotlib", None, "runtime"),
    } <= got
    # setup.cfg multi-line values, requirements pins, -e #egg=, hash continuation
    assert {
        ("attrs", ">=21", "runtime"),
        ("six", None, "runtime"),
        ("numpy", "==1.26.4", "runtime"),
        ("exampletool", None, "runtime"),
        ("coverage", ">=7", "dev"),
    } <= got
    assert not any(d["name"] in ("local-package", "git") for d in m["dependencies"])
    names = {e["name"] for e in m["entry-points"]}
    assert names == {"legacy-run", "legacy-cfg"}
    assert runner(m, "lint")["command"] == "flake8"
    assert [t["framework"] for t in m["tests"]] == ["pytest", "tox"]


def test_node_family() -> None:
    m = build(FIXTURES / "node")
    assert [lang["name"] for lang in m["languages"]] == ["javascript", "typescript"]
    assert m["languages"][0]["version_hint"] == ">=18"
    assert m["package_manager"] == {"name": "pnpm", "evidence": "pnpm-lock.yaml:1"}
    assert runner(m, "test")["command"] == "pnpm test"
    assert runner(m, "build")["command"] == "pnpm run build"
    assert m["tests"][0]["framework"] == "vitest"
    assert ("express", "^4.19.2", "runtime") in deps(m)
    assert ("vitest", "^1.6.0", "dev") in deps(m)
    assert {(e["name"], e["kind"]) for e in m["entry-points"]} == {
        ("dist/index.js", "main"),
        ("webapp", "bin"),
    }
    assert m["components"] == [
        {
            "name": "@webapp/ui",
            "path": "packages/ui",
            "kind": "app",
            "evidence": "packages/ui/package.json:2",
        }
    ]


def test_go_family() -> None:
    m = build(FIXTURES / "go")
    assert m["languages"] == [{"name": "go", "version_hint": "1.22", "evidence": "go.mod:3"}]
    assert {
        ("github.com/spf13/cobra", "v1.8.0", "runtime"),
        ("golang.org/x/sync", "v0.7.0", "runtime"),
        ("github.com/stretchr/testify", "v1.9.0", "runtime"),
    } == deps(m)
    assert runner(m, "test")["command"] == "go test ./..."
    assert m["components"][0] == {
        "name": "gosvc",
        "path": "cmd/gosvc",
        "kind": "app",
        "evidence": "cmd/gosvc/main.go:2",
    }
    assert m["external-packages"][0]["evidence"] == "vendor/modules.txt:1"


def test_rust_family() -> None:
    m = build(FIXTURES / "rust")
    assert m["package_manager"]["name"] == "cargo"
    assert m["languages"][0]["version_hint"] == "edition 2021"
    assert ("serde", "1.0", "runtime") in deps(m)
    assert ("proptest", "1.4", "dev") in deps(m)
    assert [(e["name"], e["evidence"]) for e in m["entry-points"]] == [
        ("rtool", "Cargo.toml:14"),
        ("rtool-admin", "Cargo.toml:18"),
    ]
    assert runner(m, "lint")["command"] == "cargo clippy"


def test_java_family() -> None:
    m = build(FIXTURES / "java")
    assert m["languages"][0] == {"name": "java", "version_hint": "17", "evidence": "pom.xml:8"}
    assert m["package_manager"]["name"] == "maven"
    assert ("com.google.guava:guava", "33.0.0-jre", "runtime") in deps(m)
    assert ("org.junit.jupiter:junit-jupiter", "5.10.2", "dev") in deps(m)
    assert ("junit:junit", "4.13.2", "dev") in deps(m)  # build.gradle, regex-read
    assert runner(m, "test") == {"name": "test", "command": "mvn test", "evidence": "pom.xml:30"}
    assert runner(m, "lint")["command"] == "mvn checkstyle:check"
    assert m["components"][0]["path"] == "core"


def test_dockerfile_and_justfile_family() -> None:
    m = build(FIXTURES / "docker")
    assert m["languages"][0] == {
        "name": "python",
        "version_hint": "3.12",
        "evidence": "Dockerfile:1",
    }
    assert m["entry-points"] == [
        {
            "name": "python -m app.server",
            "kind": "main",
            "evidence": "Dockerfile:9",
            "target": "Dockerfile",
        }
    ]
    assert "container workdir: /srv" in m["layout"]["conventions"]
    assert runner(m, "lint") == {
        "name": "lint",
        "command": "ruff check .",
        "evidence": "justfile:12",
    }
    assert runner(m, "test")["command"] == "pytest {{ARGS}}"
    assert m["package_manager"] == {"name": None, "evidence": None}


# --- runner canonicalization ----------------------------------------------------------------


def test_makefile_beats_ci_beats_conventions_and_exact_name_beats_prefix() -> None:
    m = build(FIXTURES / "python")
    # Makefile `test:` (exact) wins over `test-unit:` (earlier, prefix), CI and [tool.pytest]
    assert runner(m, "test") == {
        "name": "test",
        "command": "pytest -q tests/",
        "evidence": "Makefile:15",
    }
    assert runner(m, "build")["evidence"] == "Makefile:5"
    assert runner(m, "lint")["command"] == "ruff check . && mypy src"
    assert [r["name"] for r in m["runners"][:3]] == ["build", "test", "lint"]
    assert [t["evidence"] for t in m["tests"]] == [
        "Makefile:15",
        "Makefile:12",
        ".github/workflows/ci.yml:11",
        "pyproject.toml:25",
    ]


def test_ci_beats_conventions_without_a_makefile() -> None:
    m = build(FIXTURES / "ci")
    assert runner(m, "test") == {
        "name": "test",
        "command": "pytest -x tests/unit",
        "evidence": ".github/workflows/test.yaml:11",
    }
    assert runner(m, "lint")["command"] == "ruff check src"
    # installs are runners (each run: step) but never classified as build/test/lint
    assert runner(m, "build") is None


def test_conventions_need_evidence_and_missing_runners_are_omitted(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\ndependencies = ["attrs"]\n')
    m = build(tmp_path)
    assert m["runners"] == [] and m["tests"] == []
    assert "test:" not in render_manifest_header(m)
    (tmp_path / "requirements-dev.txt").write_text("pytest==8\n")
    m = build(tmp_path)
    assert runner(m, "test") == {
        "name": "test",
        "command": "pytest",
        "evidence": "requirements-dev.txt:1",
    }


def test_check_target_maps_to_lint(tmp_path: Path) -> None:
    (tmp_path / "Makefile").write_text("check:\n\tblack --check .\n")
    m = build(tmp_path)
    assert runner(m, "lint") == {
        "name": "lint",
        "command": "black --check .",
        "evidence": "Makefile:2",
    }


# --- fail-soft ------------------------------------------------------------------------------


def _errors(m: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {e["file"]: e for e in m["errors"]}


def test_toml_syntax_error_is_recorded_and_other_files_still_parse(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\ndependencies = [\n')
    (tmp_path / "requirements.txt").write_text("flask==3.0\n")
    m = build(tmp_path)
    err = _errors(m)["pyproject.toml"]
    assert err["reason"].startswith("unparseable:")
    assert ("flask", "==3.0", "runtime") in deps(m)


def test_setup_py_syntax_error_is_recorded(tmp_path: Path) -> None:
    (tmp_path / "setup.py").write_text("from setuptools import setup\nsetup(name='x',\n")
    m = build(tmp_path)
    err = _errors(m)["setup.py"]
    assert err["reason"].startswith("unparseable:") and err["line"] is not None
    assert m["package_manager"]["name"] is None  # the file was skipped, not half-read


def test_setup_py_is_never_executed(tmp_path: Path) -> None:
    marker = tmp_path / "EXECUTED"
    (tmp_path / "setup.py").write_text(
        "from setuptools import setup\n"
        f"open({str(marker)!r}, 'w').write('pwned')\n"
        "import subprocess; subprocess.run(['touch', 'EXECUTED2'])\n"
        "setup(name='evil', install_requires=['requests'])\n"
    )
    m = build(tmp_path)
    assert not marker.exists() and not (tmp_path / "EXECUTED2").exists()
    assert not Path("EXECUTED2").exists()
    assert ("requests", None, "runtime") in deps(m)


def test_malformed_package_json(tmp_path: Path) -> None:
    (tmp_path / "package.json").write_text('{\n  "name": "x",\n  "dependencies": {\n')
    m = build(tmp_path)
    assert _errors(m)["package.json"]["reason"].startswith("unparseable:")
    assert m["languages"] == [] and m["dependencies"] == []


def test_empty_repository(tmp_path: Path) -> None:
    m = build(tmp_path)
    assert m["repo"] == tmp_path.name
    assert all(
        m[k] == []
        for k in (
            "languages",
            "components",
            "dependencies",
            "tests",
            "external-packages",
            "runners",
            "entry-points",
            "errors",
        )
    )
    assert m["package_manager"] == {"name": None, "evidence": None}
    assert m["layout"]["conventions"] == [] and m["layout"]["evidence"] is None
    assert count_tokens(render_manifest_header(m)) <= 500


@pytest.mark.parametrize(
    ("name", "payload", "reason"),
    [
        ("pyproject.toml", b"\x00\x01\x02\xff\xfe binary junk", "binary"),
        ("package.json", b'{"name": "\xff\xfe"}', "invalid UTF-8"),
        ("Cargo.toml", b"\x7fELF\x00\x00\x00", "binary"),
    ],
)
def test_binary_or_undecodable_manifest(
    tmp_path: Path, name: str, payload: bytes, reason: str
) -> None:
    (tmp_path / name).write_bytes(payload)
    m = build(tmp_path)
    assert reason in _errors(m)[name]["reason"]


def test_partial_parse_is_rolled_back(tmp_path: Path) -> None:
    (tmp_path / "go.mod").write_text(
        "module example.com/x\n\nrequire (\n\tgithub.com/a/b v1.0.0\n\tnot a requirement\n)\n"
    )
    m = build(tmp_path)
    assert _errors(m)["go.mod"]["line"] == 5
    assert m["dependencies"] == [] and m["runners"] == []


def test_yaml_tab_indentation_and_missing_jobs(tmp_path: Path) -> None:
    wf = tmp_path / ".github" / "workflows"
    wf.mkdir(parents=True)
    (wf / "bad.yml").write_text("jobs:\n\ttest:\n\t\truns-on: x\n")
    (wf / "notaworkflow.yaml").write_text("name: x\n")
    (wf / "quote.yml").write_text("jobs:\n  a:\n    steps:\n      - run: 'pytest\n")
    m = build(tmp_path)
    errs = _errors(m)
    assert errs[".github/workflows/bad.yml"]["line"] == 2
    assert "jobs" in errs[".github/workflows/notaworkflow.yaml"]["reason"]
    assert errs[".github/workflows/quote.yml"]["line"] == 4


def test_symlink_outside_repository_is_not_read(tmp_path: Path) -> None:
    outside = tmp_path / "outside.toml"
    outside.write_text('[project]\nname = "secret"\ndependencies = ["leak"]\n')
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "pyproject.toml").symlink_to(outside)
    m = build(repo)
    assert "outside" in _errors(m)["pyproject.toml"]["reason"]
    assert m["dependencies"] == []


def test_oversized_file_is_skipped(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("a==1\n" * 50)
    m = build(tmp_path, max_file_bytes=100)
    assert "exceeds" in _errors(m)["requirements.txt"]["reason"]


def test_not_a_directory_raises_clear_error(tmp_path: Path) -> None:
    with pytest.raises(InvalidArgumentError):
        build_manifest(tmp_path / "missing")


# --- caps -----------------------------------------------------------------------------------


def test_defaults_are_the_spec_values() -> None:
    cfg = ManifestConfig()
    assert (cfg.max_tokens, cfg.header_tokens, cfg.encoding) == (5000, 500, "cl100k_base")
    assert cfg.target_patterns == (
        ("build", r"^build"),
        ("test", r"^test"),
        ("lint", r"^(lint|check)"),
    )
    assert {"vendor", "third_party", "external", "site-packages"} <= set(cfg.vendored_dirs)


def test_oversize_manifest_trims_largest_list_first(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text(
        "".join(f"package-number-{i}>={i}.0\n" for i in range(1500))
    )
    (tmp_path / "Makefile").write_text(
        "".join(f"target{i}:\n\techo {i}\n" for i in range(20)) + "test:\n\tpytest\n"
    )
    m = build(tmp_path)
    text = render_manifest_json(m)
    assert count_tokens(text) <= 5000
    assert 0 < len(m["dependencies"]) < 1500
    # the first (highest-priority) entries survive; the smaller list is untouched
    assert m["dependencies"][0]["name"] == "package-number-0"
    assert len(m["runners"]) == 21 and runner(m, "test")["command"] == "pytest"
    notes = [e for e in m["errors"] if e["file"] == "<manifest>"]
    assert len(notes) == 1 and notes[0]["reason"].startswith("trimmed dependencies: kept ")
    # a tighter cap then reaches the next-largest list too
    small = build(tmp_path, max_tokens=800)
    assert count_tokens(render_manifest_json(small)) <= 800
    assert len(small["runners"]) < 21


def test_long_field_values_are_clipped(tmp_path: Path) -> None:
    (tmp_path / "Makefile").write_text("test:\n\tpytest " + "x" * 5000 + "\n")
    m = build(tmp_path)
    assert len(runner(m, "test")["command"]) == ManifestConfig().max_field_chars


# --- header ---------------------------------------------------------------------------------


def test_header_shape() -> None:
    m = build(FIXTURES / "poetry")
    assert render_manifest_header(m) == (
        "languages: python · package_manager: poetry · build: `python -m build` · test: `pytest`"
    )


@pytest.mark.parametrize("budget", [500, 60, 20, 5, 1])
def test_header_never_exceeds_budget(budget: int) -> None:
    m = build(FIXTURES / "python")
    m["runners"] = [
        {
            "name": n,
            "command": "run " + " ".join(f"arg{i}" for i in range(800)),
            "evidence": "Makefile:1",
        }
        for n in ("build", "test", "lint")
    ]
    m["languages"] = [
        {"name": f"lang{i}", "version_hint": None, "evidence": "x:1"} for i in range(40)
    ]
    text = render_manifest_header(m, max_tokens=budget)
    assert 0 < count_tokens(text) <= budget
    assert render_manifest_header(m, max_tokens=0) == ""


# --- packaging and CLI ----------------------------------------------------------------------


def test_schema_ships_with_the_package() -> None:
    from importlib import resources

    schema = json.loads(
        resources.files("ctxfast.recon").joinpath("manifest.schema.json").read_text("utf-8")
    )
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$schema"].endswith("2020-12/schema")


def test_schema_rejects_a_claim_without_evidence() -> None:
    m = build(FIXTURES / "go")
    del m["dependencies"][0]["evidence"]
    with pytest.raises(jsonschema.ValidationError):
        VALIDATOR.validate(m)


def test_cli_manifest(tmp_path: Path) -> None:
    root = str(FIXTURES / "rust")
    out = subprocess.run(
        [sys.executable, "-m", "ctxfast.cli", "manifest", root, "--json"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert json.loads(out) == build_manifest(root)
    human = subprocess.run(
        [sys.executable, "-m", "ctxfast.cli", "manifest", root],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "test: cargo test  [Cargo.toml:1]" in human
    bad = subprocess.run(
        [sys.executable, "-m", "ctxfast.cli", "manifest", str(tmp_path / "no")],
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 2 and "not a directory" in bad.stderr


def test_cargo_subtable_dependency_form(tmp_path: Path) -> None:
    # the form `cargo package` normalizes to: each dependency is its own table
    (tmp_path / "Cargo.toml").write_text(
        '[package]\nname = "x"\nedition = "2021"\n\n[dependencies.bstr]\nversion = "1.6.2"\n'
        'default-features = false\n\n[dev-dependencies.quickcheck]\nversion = "1"\n'
    )
    m = build(tmp_path)
    assert [(d["name"], d["version"], d["kind"], d["evidence"]) for d in m["dependencies"]] == [
        ("bstr", "1.6.2", "runtime", "Cargo.toml:5"),
        ("quickcheck", "1", "dev", "Cargo.toml:9"),
    ]


def test_the_walk_gives_relative_paths_in_path_component_order(tmp_path):
    """The walk yields strings, ordered as ``Path`` objects sort (by components: ``a/b``
    before ``a-b/c``, where a plain string sort puts ``-`` before ``/``)."""
    from ctxfast.recon.manifest._common import Collector, ManifestConfig, walk_files

    for rel in ("a-b/c.txt", "a/b.txt", "a/z/d.txt", "top.toml", ".hidden/x.txt"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x\n")
    found = walk_files(Collector(root=tmp_path.resolve(), config=ManifestConfig()))
    assert found == ["a/b.txt", "a/z/d.txt", "a-b/c.txt", "top.toml"]
    assert found == [
        p.relative_to(tmp_path).as_posix()
        for p in sorted(tmp_path.rglob("*.*"))
        if p.is_file() and not p.relative_to(tmp_path).as_posix().startswith(".")
    ]
