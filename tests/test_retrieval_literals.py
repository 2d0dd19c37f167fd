"""Message evidence: string literals of the code that a task quotes verbatim."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles import reference
from recon_fixture import indexed_repo

from ctxfast._native import literal_fragments, literal_names
from ctxfast.retrieval.config import RetrievalConfig
from ctxfast.retrieval.literals import LiteralIndex, file_scores, name_scores
from ctxfast.retrieval.task import literal_names as task_names

MIN = RetrievalConfig().files.literal_min_chars


def fragments(body: str) -> list[str]:
    """The kept fragments of one literal with this body (double-quoted on its own line)."""
    return [f for _, _, f in literal_fragments([f'x = "{body}"'], MIN)]


def test_fragments_split_at_placeholders_and_keep_only_prose():
    # "duplicate" is too short; edges lose their punctuation.
    assert fragments("duplicate %s description of %s, other instance in %s") == [
        "description of",
        "other instance in",
    ]
    assert fragments("Field %(name)r clashes with field {other!r} in model") == [
        "clashes with field",
    ]
    assert fragments("value is\\n   not    allowed here") == ["not allowed here"]
    # Code templates and short pieces are not messages.
    assert fragments("= models.DateField(") == []
    assert fragments("%s.%s(%s)") == []
    assert fragments("single_identifier_only") == []
    assert fragments("short one") == []


def test_literals_are_found_per_line_with_prefixes_and_escapes():
    text = (
        "a = 1\n"
        "b = rb'raw bytes message here' + x\"not a literal opening at all\"\n"
        "c = 'say \\'hello there\\' to everyone'  # 'comment text is a literal too'\n"
        "d = 'never closed on this line\n"
    )
    assert literal_fragments([text, "", "e = 'second file message'"], MIN) == [
        (0, 2, "raw bytes message here"),
        (0, 3, "say \\'hello there\\' to everyone"),
        (0, 3, "comment text is a literal too"),
        (2, 1, "second file message"),
    ]


_ALPHABET = st.sampled_from(
    [
        *list("abcXYZ rbfu'\"\\%(){}$.-#0+5sdntr,:;!?`_=\n\t\r\x1cé\u2028"),
        "%s",
        "%(name)r",
        "{0}",
        "${x}",
        "\\n",
        " is not ",
        " the value ",
    ]
)


@settings(max_examples=400)
@given(st.lists(st.lists(_ALPHABET, max_size=40).map("".join), max_size=4), st.integers(0, 20))
def test_native_scan_equals_the_reference(texts, min_chars):
    assert literal_fragments(texts, min_chars) == reference.literal_fragments(texts, min_chars)


@settings(max_examples=400)
@given(st.lists(st.lists(_ALPHABET, max_size=40).map("".join), max_size=4), st.integers(0, 12))
def test_native_names_equal_the_reference(texts, max_chars):
    assert literal_names(texts, max_chars) == reference.literal_names(texts, max_chars)


def test_names_are_whole_one_token_literals_once_per_file():
    texts = [
        'Arg::new("list-details").long("list-details"), case "--glob": x = "a b"',
        'env::var("NO_COLOR"); y = "x"; n = "1337"; p = "a/b"; f"{v}"',
    ]
    assert literal_names(texts, 40) == [
        (0, "list-details"),
        (0, "--glob"),
        (1, "NO_COLOR"),
    ]


def test_the_task_names_flags_environment_variables_and_quoted_names():
    text = "Fix `--show-all` with NO_COLOR set for files named 'cache' (--glob=*.rs, non--x)"
    assert task_names(text) == (
        ("--show-all", "show-all"),
        ("--glob", "glob"),
        ("NO_COLOR",),
        ("cache",),
    )
    assert task_names(text, flags=False, quoted=False) == (("NO_COLOR",),)


def test_a_name_scores_the_files_holding_it_unless_too_many_do():
    files = [
        ("src/cli.rs", 'Arg::new("glob").long("glob")\nenv::var("NO_COLOR")'),
        ("src/main.rs", 'if m.is_present("glob") {}'),
        ("src/walk.rs", 'let s = "glob pattern";'),
    ]
    ix = LiteralIndex(files, MIN)
    assert ix.name_files(("--glob", "glob")) == {"src/cli.rs", "src/main.rs"}
    assert name_scores(ix, [("--glob", "glob"), ("NO_COLOR",)], 5) == {
        "src/cli.rs": 1.5,
        "src/main.rs": 0.5,
    }
    assert name_scores(ix, [("--glob", "glob"), ("NO_COLOR",)], 1) == {"src/cli.rs": 1.0}


def test_the_file_reading_the_named_environment_variable_ranks_first(tmp_path):
    files = {
        "src/main.rs": 'fn main() {\n    let color = std::env::var_os("NO_COLOR").is_none();\n}\n',
        "src/printer.rs": (
            "/// Whether to display colour for this string.\n"
            "pub fn color(s: &str) -> bool {\n    s.is_empty()\n}\n"
        ),
    }
    repo = indexed_repo(tmp_path, files)
    task = "fix: display color when NO_COLOR is an empty string"
    on = repo.retrieve(task)
    off = repo.retrieve(task, config={"literal_names": False})
    assert on.signals["literal_names"] == {"src/main.rs": 1.0}
    assert on.ranked_files()[0] == "src/main.rs"
    assert off.ranked_files()[0] == "src/printer.rs"
    assert "literal_names" not in off.signals


def test_index_matches_quoted_messages_with_their_places():
    files = [
        ("a/checks.py", '    msg = "The field %s is used by multiple models"\nx = 1'),
        ("a/other.py", "print('is used by multiple models')\ny = 'unrelated text here'"),
        ("b/fmt.py", "HEADER = f'Data variables: {n}'"),
    ]
    ix = LiteralIndex(files, MIN)
    text = (
        "Running check gives:\n  app.Model: The field   'foo' is used by multiple\n"
        "models with 'Data variables' and more"
    )
    got = {m.fragment: m.places for m in ix.match(text)}
    assert got == {
        "is used by multiple models": (("a/checks.py", 1), ("a/other.py", 1)),
        "Data variables": (("b/fmt.py", 1),),
    }
    # Longest first; a fragment shared by two files counts half in each.
    matches = ix.match(text)
    assert [m.fragment for m in matches] == ["is used by multiple models", "Data variables"]
    assert file_scores(matches) == {"a/checks.py": 13.0, "a/other.py": 13.0, "b/fmt.py": 14.0}
    assert ix.match("nothing quoted from the code") == []


def test_no_literals_no_match_and_binary_garbage_is_harmless():
    ix = LiteralIndex([("x.py", "\x00\x01 '\udcff\udcfe' \"unterminated")], MIN)
    assert ix.places == {}
    assert ix.match("") == []


FILES = {
    "pkg/__init__.py": "",
    "pkg/registry.py": (
        "class Registry:\n"
        "    def register(self, model, models):\n"
        "        for other in models:\n"
        "            if other.table == model.table:\n"
        "                raise ValueError(\n"
        "                    'db_table %r is used by multiple models: %s' % (model.table, other)\n"
        "                )\n"
    ),
    # Shares the task's vocabulary (registering a model, tables) but holds no message.
    "pkg/base.py": (
        "class Model:\n"
        "    table = None\n"
        "\n"
        "    def register_model_table(self, registry):\n"
        "        '''Register this model table with the registry of models.\n"
        "\n"
        "        Registering a model table by its table name fails when the name is taken;\n"
        "        after upgrading, register each model table name once. Registering fails\n"
        "        when a model table name is registered twice after upgrading.\n"
        "        '''\n"
        "        registry.register(self, registry.models)\n"
    ),
}
TASK = (
    "Registering a model table fails after upgrading\n\n"
    "When I register a model with a table name, I get\n"
    "ValueError: db_table 'shared' is used by multiple models: shop.Item\n"
)


def test_the_file_holding_the_quoted_message_ranks_first(tmp_path):
    repo = indexed_repo(tmp_path, FILES)
    # The decoy shares the title's words too: the goal signals are held off to show this one.
    on = repo.retrieve(TASK, config={"goal_signals": False})
    off = repo.retrieve(TASK, config={"literals": False, "goal_signals": False})
    assert on.ranked_files()[0] == "pkg/registry.py"
    assert off.ranked_files()[0] == "pkg/base.py"
    assert on.signals["literals"] == {"pkg/registry.py": 1.0}
    assert "literals" not in off.signals


def test_common_fragments_are_ignored(tmp_path):
    # The message is held by more files than literal_max_files: no evidence at all.
    repo = indexed_repo(tmp_path, FILES)
    res = repo.retrieve(TASK, config={"literal_max_files": 0})
    assert res.signals["literals"] == {}


def test_the_definition_holding_the_quoted_message_is_a_candidate_with_a_bonus(tmp_path):
    files = dict(FILES)
    files["pkg/registry.py"] += (
        "\n"
        "    def registered_model_tables(self, models):\n"
        "        '''Every model table registered, by table name, after upgrading.'''\n"
        "        return [model.table for model in models if model.table]\n"
        "\n"
        "\n"
        "TEMPLATE = 'db_table %r is used by multiple models: %s'\n"
    )
    repo = indexed_repo(tmp_path, files)
    cfg = RetrievalConfig()
    assert (cfg.sources.literal_defs, cfg.rerank.literal_bonus) == (True, 0.5)
    on = repo.retrieve(TASK, config={"goal_signals": False})
    off = repo.retrieve(TASK, config={"goal_signals": False, "literal_defs": False})
    held = {
        (c.qualname, c.start_line)
        for c in on.candidates
        if any(p == "literal:is used by multiple models" for p in c.provenance)
    }
    # the method printing the message, and the module constant (a line of its own)
    assert held == {("pkg.registry.Registry.register", 2), (None, 14)}
    assert on.candidates[0].qualname == "pkg.registry.Registry.register"
    assert all(not p.startswith("literal:") for c in off.candidates for p in c.provenance)
    plain = repo.retrieve(TASK, config={"goal_signals": False, "literal_bonus": 0.0})

    def score(res):
        return next(
            c.score for c in res.candidates if c.qualname == "pkg.registry.Registry.register"
        )

    assert score(on) - score(plain) == pytest.approx(0.5)
