"""File-ranking rules of the multi-language work (benches/README.md, "Multi-language dev set"):
a file a Rust ``include!`` pulls in gains its includer's evidence, example and benchmark code
is demoted, and code gated on an operating system the task names is a file signal. Each is
shown on a fixture repository built for it, with the setting off and on."""

from __future__ import annotations

from recon_fixture import indexed_repo

from ctxfast.retrieval.config import RetrievalConfig
from ctxfast.retrieval.repoindex import RepoIndex
from ctxfast.retrieval.sources import LexicalRecall, lexical_source
from ctxfast.retrieval.task import goal_rest_terms, parse_task
from ctxfast.text import is_example_path, is_generated_path

INCLUDE_FILES = {
    "build.rs": (
        'include!("src/app.rs");\n\n'
        "fn main() {\n"
        "    let mut app = build_app();\n"
        "    for shell in [Shell::Zsh, Shell::Bash, Shell::Fish] {\n"
        '        app.gen_completions("fd", shell, "completions");\n'
        "    }\n"
        "}\n"
    ),
    "src/app.rs": (
        "pub fn build_app() -> App {\n"
        '    App::new("fd").arg(Arg::with_name("hidden").long("hidden"))\n'
        "}\n"
    ),
    "src/main.rs": "mod app;\nmod walk;\n\nfn main() {\n    walk::scan(app::build_app());\n}\n",
    "src/walk.rs": 'pub fn scan(app: App) {\n    let zsh_history = app.value_of("path");\n}\n',
}


def test_a_file_included_by_a_scored_file_gains_its_evidence(tmp_path):
    repo = indexed_repo(tmp_path, INCLUDE_FILES)
    task = "Fix zsh completions problem"
    off = repo.retrieve(task, config={"include_lending": 0.0, "rank_fill": 0})
    assert "src/app.rs" not in off.ranked_files()
    on = repo.retrieve(task, config={"include_lending": 0.5, "rank_fill": 0})
    assert on.ranked_files()[:2] == ["build.rs", "src/app.rs"]
    # The includer's total, lent at ``include_lending``.
    assert on.signals["included"] == {"src/app.rs": dict(off.file_ranking)["build.rs"]}
    assert dict(on.file_ranking)["src/app.rs"] == 0.5 * dict(off.file_ranking)["build.rs"]
    ix = RepoIndex(repo.root, repo.graph_db, repo.index_dir)
    assert ix.included_files() == {"build.rs": ["src/app.rs"]}


EXAMPLE_FILES = {
    "examples/colors.go": (
        'package main\n\nfunc main() {\n    theme := ParseTheme("dark")\n    theme.Color()\n}\n'
    ),
    "themes.go": (
        "package fzf\n\n"
        "// ParseTheme reads a color theme by name.\n"
        "func ParseTheme(name string) *Theme {\n"
        '    if name == "dark" {\n'
        "        return darkColors\n"
        "    }\n"
        "    return lookup(name)\n"
        "}\n"
    ),
}


def test_example_code_is_demoted_like_tests(tmp_path):
    assert is_example_path("examples/colors.go")
    assert is_example_path("playground/ssr/src/entry.ts")
    assert not is_example_path("src/example.rs")  # a file name, not a directory
    assert is_example_path("doc/usage/extensions/example_google.py")  # documentation
    assert is_example_path("asv_bench/benchmarks/dataset_io.py")
    assert not is_example_path("sphinx/ext/autodoc/__init__.py")
    # Tutorials and samples beside the product: FastAPI's docs_src/, a samples/ tree.
    assert is_example_path("docs_src/security/tutorial003.py")
    assert is_example_path("samples/bootstrap/js/app.js")
    assert not is_example_path("fastapi/security/api_key.py")
    assert is_example_path(".github/REPRODUCTION_SCRIPT.rb")  # an issue template's script
    assert is_example_path(".phpstorm.meta.php")  # an IDE's metadata
    assert not is_example_path("src/Handler/Stream.php")
    repo = indexed_repo(tmp_path, EXAMPLE_FILES)
    task = "Fix dark color theme"
    # (A one-line task is its own goal sentence: the goal query is left out for clarity.)
    off = repo.retrieve(task, config={"example_penalty": 0.0, "goal_signals": False})
    assert off.ranked_files()[0] == "examples/colors.go"
    on = repo.retrieve(task, config={"example_penalty": 1.0, "goal_signals": False})
    assert on.ranked_files()[0] == "themes.go"


GENERATED_FILES = {
    # A protobuf stub: many short message types sharing the task's words.
    "lb/load_balancer.pb.go": "".join(
        f"type DropStats{i} struct {{\n\tDropped bool\n\tReady int64\n}}\n\n" for i in range(6)
    ),
    # The product's own picker, where the fix goes.
    "lb/picker.go": (
        "// Pick drops a call and counts it in the dropped stats.\n"
        "func (p *picker) Pick() error {\n"
        "\tif p.drop && p.ready == 0 {\n"
        "\t\treturn errDropped\n"
        "\t}\n"
        "\treturn nil\n"
        "}\n"
    ),
}


def test_generated_and_vendored_code_is_demoted_like_examples(tmp_path):
    assert is_generated_path("lb/load_balancer.pb.go") and is_generated_path("api/x_pb2.py")
    assert is_generated_path("static/app.min.js") and is_generated_path("vendor/pkg/a.go")
    assert not is_generated_path("lb/picker.go") and not is_generated_path("src/protobuf.go")
    repo = indexed_repo(tmp_path, GENERATED_FILES)
    task = "Drop only when a connection is ready: dropped stats"
    flat = {"goal_signals": False}
    off = repo.retrieve(task, config={**flat, "generated_penalty": 0.0})
    assert off.ranked_files()[0] == "lb/load_balancer.pb.go"
    on = repo.retrieve(task, config=flat)
    assert on.ranked_files()[0] == "lb/picker.go"
    assert on.candidates[0].file == "lb/picker.go"


MACHINE_MADE_FILES = {
    # The index skips both by header and by name; a text search still finds their lines.
    "lb/a_mock.go": (
        "// Code generated by MockGen. DO NOT EDIT.\n"
        "package lb\n\n" + "".join(f"// drop_connection_stats mock call {i}\n" for i in range(30))
    ),
    "web/app.min.js": "var drop_connection_stats=function(){return 1};" * 40 + "\n",
    "lb/stats.go": (
        "package lb\n\n"
        "func drop_connection_stats(ready bool) int {\n"
        "\tif ready {\n\t\treturn 1\n\t}\n\treturn 0\n}\n"
    ),
}


def test_files_the_index_skipped_as_machine_made_are_not_searched_as_text(tmp_path):
    repo = indexed_repo(tmp_path, MACHINE_MADE_FILES)
    skipped = {f.path for f in repo.graph.files() if f.parse_error}
    assert skipped == {"lb/a_mock.go", "web/app.min.js"}
    recall = LexicalRecall(RepoIndex(repo.root, repo.graph_db, None))
    cfg = RetrievalConfig()
    task = "drop_connection_stats() returns the wrong count"
    tq = parse_task(task, None, None, cfg.query, frozenset())
    # The first search walks the disk, later ones search the files held in memory.
    for _ in range(2):
        hits = lexical_source(recall, tq, max_hits=5)
        assert [(h.file, h.start_line) for h in hits] == [("lb/stats.go", 3)]


def _c_source(name: str, n: int) -> str:
    """A C file of ``n`` distinct functions, each line long enough to be distinctive."""
    return "".join(
        f"int {name}_step_{i}(struct parser_state *state, int value_{i}) {{\n"
        f"    state->counter_{i} = compute_{name}_value(state, value_{i} + {i});\n"
        f"    return check_{name}_bounds(state->counter_{i}, value_{i});\n}}\n\n"
        for i in range(n)
    )


BUNDLE_SOURCES = {
    # The fix goes in the product's output code; the amalgamated header copies it and
    # three other files whole, so it holds every word of them.
    "src/output.c": _c_source("output", 8)
    + "int message_stream_flush(struct parser_state *s) {\n    return s->stream_flush;\n}\n",
    "src/reporter.c": _c_source("reporter", 8),
    "src/session.c": _c_source("session", 8),
    "src/capture.c": _c_source("capture", 8),
}
BUNDLE_FILES = {
    **BUNDLE_SOURCES,
    "single_include/amalgamated.h": "\n".join(BUNDLE_SOURCES.values())
    + "\nint bundle_stream_flush_message(struct parser_state *s) { return s->stream_flush; }\n",
    # Two variants of one routine per numeric type hold each other, and bundle nothing.
    "lib/sgemm.c": _c_source("gemm", 8).replace("int ", "float "),
    "lib/dgemm.c": _c_source("gemm", 8).replace("int ", "double "),
}


def test_a_file_that_bundles_others_whole_is_demoted(tmp_path):
    repo = indexed_repo(tmp_path, BUNDLE_FILES)
    ix = RepoIndex(repo.root, repo.graph_db, None)
    assert ix.bundle_files(3) == {"single_include/amalgamated.h"}
    assert ix.bundle_files(5) == frozenset() and ix.bundle_files(0) == frozenset()
    task = "message stream flush"
    flat = {"goal_signals": False}
    off = repo.retrieve(task, config={**flat, "bundle_penalty": 0.0})
    assert off.ranked_files()[0] == "single_include/amalgamated.h"
    undetected = repo.retrieve(task, config={**flat, "bundle_min_files": 5})
    assert undetected.ranked_files()[0] == "single_include/amalgamated.h"
    on = repo.retrieve(task, config=flat)
    assert on.ranked_files()[0] == "src/output.c"
    assert on.candidates[0].file == "src/output.c"


PLATFORM_FILES = {
    # The task's words, no platform gate.
    "src/walk.rs": ("pub fn check_directory(path: &Path) -> bool {\n    path.exists()\n}\n"),
    # The Windows-only code of the fix.
    "src/filesystem.rs": (
        "// Path::is_dir() is no directory check for drives\n"
        "#[cfg(windows)]\n"
        "pub fn is_dir(path: &Path) -> bool {\n"
        "    path.canonicalize().is_ok()\n"
        "}\n\n"
        "#[cfg(not(windows))]\n"
        "pub fn is_dir(path: &Path) -> bool {\n"
        "    path.is_dir()\n"
        "}\n"
    ),
    # A module named for the platform is platform code throughout.
    "src/windows.rs": "pub fn drive_letter(p: &str) -> char {\n    p.chars().next().unwrap()\n}\n",
    "src/unix.rs": "pub fn mode(p: &str) -> u32 {\n    0o755\n}\n",
}


def test_code_gated_on_the_platform_the_task_names_is_a_file_signal(tmp_path):
    repo = indexed_repo(tmp_path, PLATFORM_FILES)
    task = "Fix directory check on Windows"
    off = repo.retrieve(task, config={"platform_code": False, "goal_signals": False})
    walk, fs = "src/walk.rs", "src/filesystem.rs"
    assert off.ranked_files().index(fs) > off.ranked_files().index(walk)
    assert "platform_code" not in off.signals
    on = repo.retrieve(task, config={"platform_code": True, "goal_signals": False})
    # Two gate lines name Windows in filesystem.rs; windows.rs counts as much.
    assert on.signals["platform_code"] == {"src/filesystem.rs": 1.0, "src/windows.rs": 1.0}
    assert on.ranked_files().index(fs) < on.ranked_files().index(walk)
    # The platform named only past the goal sentence (an environment report): no signal.
    body = "Fix directory check\n\nPlatform: Windows-10-10.0.19041"
    assert not repo.retrieve(body).signals["platform_code"]
    # A task naming no platform: no signal, the same ranking.
    plain = "Fix directory check"
    assert repo.retrieve(plain, config={"platform_code": True}).ranked_files() == (
        repo.retrieve(plain, config={"platform_code": False}).ranked_files()
    )


# How PHP, Ruby and Python code asks whether it runs on Windows, one gate per file, and a C
# file named for it; the notes name Windows on lines that gate nothing.
WINDOWS_GATES = {
    "src/CurlFactory.php": (
        "<?php\nif (\\strtoupper(\\substr(\\PHP_OS, 0, 3)) !== 'WIN') {\n    $x = 1;\n}\n"
    ),
    "src/Family.php": "<?php\nif (PHP_OS_FAMILY === 'Windows') {\n    $x = 1;\n}\n",
    "lib/launcher.rb": "if Gem.win_platform?\n  x = 1\nend\n",
    "lib/binder.rb": "if RUBY_PLATFORM =~ /mswin|mingw/\n  x = 1\nend\n",
    "lib/host.rb": "WIN = RbConfig::CONFIG['host_os'] =~ /mingw32|cygwin/\n",
    "lib/events.rb": "def run\n  return unless Puma.windows?\nend\n",
    "pkg/spawn.py": "import sys\nif sys.platform.startswith('win'):\n    x = 1\n",
    "src/util_win.c": "int drive(void) { return 0; }\n",
    "docs/notes.py": "# Windows is supported\nWINDOWS_NOTE = 'win'\n",
}


def test_php_ruby_and_python_windows_gates_count(tmp_path):
    repo = indexed_repo(tmp_path, WINDOWS_GATES)
    ix = RepoIndex(repo.root, repo.graph_db, None)
    gated = ix.platform_gates()["windows"]
    assert set(gated) == set(WINDOWS_GATES) - {"docs/notes.py"}
    assert all(n == 1 for n in gated.values())


def test_goal_rest_terms_leaves_out_the_request_verbs():
    cfg = RetrievalConfig()
    one_line = "fix: display color when NO_COLOR is an empty string"
    tq = parse_task(one_line, None, None, cfg.query, cfg.task.stopwords)
    assert tq.goal_terms  # the older rule: the stripped verb makes the task longer
    assert goal_rest_terms(tq.task_terms, tq.goal_terms, cfg.query) == 0
    kept = parse_task(one_line, None, None, cfg.query, cfg.task.stopwords, goal_rest_min=1)
    assert kept.goal_terms == ()
    body = one_line + "\n\nThe pager shows escape codes."
    tq = parse_task(body, None, None, cfg.query, cfg.task.stopwords, goal_rest_min=1)
    assert tq.goal_terms and goal_rest_terms(tq.task_terms, tq.goal_terms, cfg.query) == 4


def test_a_test_inside_a_library_file_is_demoted_like_a_test_file(tmp_path):
    """Rust keeps unit tests in ``mod tests`` of the library file itself; its path does not
    mark them, their qualname does (a ``tests`` segment)."""
    files = {
        "Cargo.toml": '[package]\nname = "p"\nversion = "0.1.0"\n',
        "src/lib.rs": (
            "pub fn parse_width(text: &str) -> usize {\n    text.len()\n}\n\n"
            "#[cfg(test)]\nmod tests {\n    use super::*;\n\n"
            "    #[test]\n    fn parse_width_of_wide_glyphs_wide_glyphs() {\n"
            '        assert_eq!(parse_width("wide glyphs"), 11);\n    }\n}\n'
        ),
    }
    repo = indexed_repo(tmp_path, files)
    task = "parse_width is wrong for wide glyphs"
    names = [c.qualname for c in repo.retrieve(task, config={"goal_signals": False}).candidates]
    test = next(q for q in names if q and q.endswith("parse_width_of_wide_glyphs_wide_glyphs"))
    assert "tests" in test.split(".")
    assert names.index(next(q for q in names if q and q.endswith(".parse_width"))) < names.index(
        test
    )
    off = repo.retrieve(task, config={"goal_signals": False, "demote_tests": False}).candidates
    assert off[0].qualname == test  # without the demotion the test's words win
