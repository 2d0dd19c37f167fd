"""Every setting of ``ConstructConfig`` and ``RetrievalConfig`` is shown to change what the
code does (issue #44): each leaf setting is either changed in one of the parametrized lists
of ``test_settings_effect.py`` (the result must differ from the default's) or named here
with the tests that change it and assert what differs. A setting added without such a test
fails this file; a setting that changes nothing has no place in the config."""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest
from test_settings_effect import CONSTRUCT_CHANGES, MODEL_CHANGES, RETRIEVAL_CHANGES

from ctxfast.construct import ConstructConfig
from ctxfast.retrieval.config import RetrievalConfig
from ctxfast.settings import flat_names, group_fields

TESTS = Path(__file__).parent

#: Construction settings shown by a test of their own: setting path → the tests that change
#: it and assert the window differs ("tests/<file>.py::<test>").
CONSTRUCT_TESTED_ELSEWHERE: dict[str, tuple[str, ...]] = {
    "compress.named_line_uses": (
        "tests/test_construct_stages.py::"
        "test_a_cut_body_shows_the_line_naming_the_task_s_identifier_whole",
    ),
    "compress.named_line_context": (
        "tests/test_construct_stages.py::"
        "test_a_cut_body_shows_the_line_naming_the_task_s_identifier_whole",
    ),
    "pool.source_priority": (
        "tests/test_settings_effect.py::test_the_pool_cap_keeps_the_sources_first_in_source_priority",
    ),
    "gate.fold_oversize_residue": (
        "tests/test_settings_effect.py::"
        "test_an_oversize_residue_is_folded_into_its_obligation_bucket_only_when_switched_on",
    ),
    "gate.named_ambiguity": (
        "tests/test_construct_stages.py::"
        "test_a_bare_name_many_candidates_share_is_residue_unless_qualified",
    ),
    "represent.supersede_older_test_outputs": (
        "tests/test_settings_effect.py::"
        "test_a_newer_test_run_supersedes_the_older_only_when_switched_on",
    ),
    "compress.window_code_only": (
        "tests/test_construct_stages.py::test_a_cut_body_is_windowed_on_its_code_not_its_docstring",
    ),
    "compress.pointer_preview_chars": (
        "tests/test_settings_effect.py::"
        "test_a_masked_older_output_is_previewed_by_the_pointer_preview_cap",
    ),
    "budget.acceptance_trim_chars": (
        "tests/test_settings_effect.py::"
        "test_an_acceptance_criterion_is_trimmed_to_the_trim_cap_when_nothing_else_fits",
    ),
    "budget.gap_lines": (
        "tests/test_gaps.py::test_a_short_gap_between_shown_functions_is_filled_from_the_file",
        "tests/test_gaps.py::test_without_the_source_or_over_the_gap_limit_the_gap_stays",
    ),
}

#: Retrieval settings shown by a test of their own, most on a fixture repository built for
#: the situation the setting is about (a Rust ``include!``, a generated file, ...).
RETRIEVAL_TESTED_ELSEWHERE: dict[str, tuple[str, ...]] = {
    "ranker_model": (
        "tests/test_retrieval_learned.py::"
        "test_learned_ranker_orders_files_and_candidates_by_the_model",
    ),
    "task.path_compounds": (
        "tests/test_retrieval_task.py::test_a_compound_ranks_the_file_it_names",
    ),
    "sources.dispatch": (
        "tests/test_retrieval_dispatch.py::test_the_family_size_decides_which_names_are_dispatched",
        "tests/test_retrieval_dispatch.py::test_the_named_class_lifts_its_handlers",
    ),
    "sources.dispatch_family_min": (
        "tests/test_retrieval_dispatch.py::test_the_family_size_decides_which_names_are_dispatched",
    ),
    "files.def_bm25_lines_other": (
        "tests/test_retrieval_ranking.py::"
        "test_long_definitions_outside_python_are_searched_past_their_first_lines",
    ),
    "files.def_bm25_b_other": (
        "tests/test_retrieval_ranking.py::"
        "test_long_definitions_outside_python_are_scored_with_a_milder_length_penalty",
    ),
    "files.literal_names_quoted": (
        "tests/test_settings_effect.py::test_a_quoted_name_is_a_literal_name_only_when_switched_on",
    ),
    "files.literal_name_max_chars": (
        "tests/test_settings_effect.py::test_a_name_literal_longer_than_the_cap_is_no_evidence",
    ),
    "files.include_lending": (
        "tests/test_retrieval_file_rules.py::"
        "test_a_file_included_by_a_scored_file_gains_its_evidence",
    ),
    "files.platform_code": (
        "tests/test_retrieval_file_rules.py::"
        "test_code_gated_on_the_platform_the_task_names_is_a_file_signal",
    ),
    "rerank.dispatch_bonus": (
        "tests/test_retrieval_dispatch.py::test_the_bonus_is_what_a_dispatch_candidate_gains",
    ),
    "rerank.second_callee_bonus": (
        "tests/test_retrieval_anchoring.py::"
        "test_callees_of_lifted_callees_are_lifted_one_hop_further",
    ),
    "demotions.example_penalty": (
        "tests/test_retrieval_file_rules.py::test_example_code_is_demoted_like_tests",
    ),
    "demotions.generated_penalty": (
        "tests/test_retrieval_file_rules.py::"
        "test_generated_and_vendored_code_is_demoted_like_examples",
    ),
    "demotions.bundle_min_files": (
        "tests/test_retrieval_file_rules.py::test_a_file_that_bundles_others_whole_is_demoted",
    ),
    "demotions.bundle_penalty": (
        "tests/test_retrieval_file_rules.py::test_a_file_that_bundles_others_whole_is_demoted",
    ),
    "rules.module_header": (
        "tests/test_retrieval_ranking.py::test_module_header_of_best_library_file",
    ),
    "rules.module_header_lines": (
        "tests/test_retrieval_ranking.py::test_module_header_of_best_library_file",
    ),
}

CLASSES = {
    "ConstructConfig": (
        ConstructConfig,
        [*CONSTRUCT_CHANGES, *MODEL_CHANGES],
        CONSTRUCT_TESTED_ELSEWHERE,
    ),
    "RetrievalConfig": (RetrievalConfig, RETRIEVAL_CHANGES, RETRIEVAL_TESTED_ELSEWHERE),
}


def leaf_settings(cls: type) -> Iterator[str]:
    """Every setting of ``cls`` by its nested path: ``"group.field"`` or a top-level name."""
    groups = group_fields(cls)
    for f in dataclasses.fields(cls):
        if f.name in groups:
            yield from (f"{f.name}.{g.name}" for g in dataclasses.fields(groups[f.name]))
        else:
            yield f.name


@cache
def _test_functions(path: str) -> dict[str, str]:
    """The module-level test functions of ``path`` (relative to the repository): name →
    source."""
    text = (TESTS.parent / path).read_text(encoding="utf-8")
    return {
        node.name: ast.get_source_segment(text, node) or ""
        for node in ast.parse(text).body
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")
    }


def _names(cls: type, path: str) -> set[str]:
    """The names a test may change the setting at ``path`` by: its field name and its flat
    name."""
    field = path.rpartition(".")[2]
    group = path.rpartition(".")[0] or None
    flat = {name for name, where in flat_names(cls).items() if where == (group, field)}
    return {field, *flat}


@pytest.mark.parametrize("what", sorted(CLASSES))
def test_every_setting_is_shown_to_change_behaviour(what):
    cls, changed, elsewhere = CLASSES[what]
    leaves = list(leaf_settings(cls))
    in_lists = [name for name, _ in changed]
    assert set(in_lists) <= set(leaves), "a behaviour list names no setting"
    unknown = sorted(set(elsewhere) - set(leaves))
    assert not unknown, f"{what}: the registry names settings that do not exist: {unknown}"
    both = sorted(set(elsewhere) & set(in_lists))
    assert not both, f"{what}: in a behaviour list and in the registry: {both}"
    missing = [name for name in leaves if name not in set(in_lists) | set(elsewhere)]
    assert not missing, (
        f"{what}: no test shows these settings change anything: {missing}. Add each to a "
        "list of test_settings_effect.py or name its test in test_settings_complete.py; a "
        "setting that changes nothing is to be removed."
    )


@pytest.mark.parametrize(
    ("what", "path"),
    [(what, path) for what, (_, _, elsewhere) in CLASSES.items() for path in elsewhere],
)
def test_every_test_the_registry_names_exists_and_changes_the_setting(what, path):
    cls, _, elsewhere = CLASSES[what]
    tests = elsewhere[path]
    assert tests
    sources = []
    for test_id in tests:
        file, sep, name = test_id.partition("::")
        assert sep and file.startswith("tests/") and file.endswith(".py"), test_id
        assert (TESTS.parent / file).is_file(), f"{test_id}: no such file"
        functions = _test_functions(file)
        assert name in functions, f"{test_id}: no such test function"
        sources.append(functions[name])
    # At least one of them sets it by name (nested field or flat name).
    names = _names(cls, path)
    assert any(n in src for n in names for src in sources), (path, names)


def test_a_behaviour_list_changes_each_setting_once():
    for changed in (RETRIEVAL_CHANGES, CONSTRUCT_CHANGES, MODEL_CHANGES):
        names = [name for name, _ in changed]
        assert len(names) == len(set(names))
