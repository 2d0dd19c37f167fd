"""Settings are nested per stage, and every flat name they had before still works: in a
mapping (a ``--config`` file, ``compose(retrieval_config={...})``) and as a keyword. Each
flat name sets exactly its one nested setting; an unknown name is a ``ConfigError``; every
setting is documented beside its stage."""

from __future__ import annotations

import dataclasses
import inspect
import json

import pytest

from ctxfast.construct.config import ConstructConfig
from ctxfast.construct.defaults import DefaultsConfig
from ctxfast.errors import ConfigError, InvalidArgumentError
from ctxfast.eval.systems import CtxfastConstruct
from ctxfast.retrieval.config import RetrievalConfig
from ctxfast.settings import flat_names, flat_value, group_fields

#: The fields of the flat classes before their settings were grouped.
FLAT_DEFAULTS = [
    "max_callers",
    "max_config_keys",
    "max_config_consumers",
    "max_config_files",
    "max_span_lines",
    "module_context_lines",
    "localized_definitions",
    "confidence_localization",
    "localization_margin",
    "localization_min",
    "localization_max",
    "target_context",
    "whole_file_prior",
    "whole_file_share",
    "whole_files_share",
    "whole_file_prior_power",
    "whole_target_share",
    "spare_files",
    "file_outlines",
    "outline_files",
    "outline_max_lines",
    "outline_header_lines",
    "retrieval_candidates",
    "candidates_per_1k_tokens",
    "max_import_lines",
    "margin_lines",
    "attached_lines",
    "class_view",
    "class_view_methods",
    "class_view_header_lines",
    "class_view_max_lines",
    "max_test_callers",
    "max_caller_sites",
]
FLAT_CONSTRUCT = [
    "ceiling",
    "encoding",
    "pool_cap",
    "content_cap_bytes",
    "provenance_cap_chars",
    "source_priority",
    "admitted_cap",
    "residue_cap",
    "residue_min_shared_terms",
    "fold_oversize_residue",
    "score_threshold",
    "max_completion_tokens",
    "temperature",
    "ranker_max_response_bytes",
    "residue_signature_chars",
    "compression_floor_bytes",
    "large_item_lines",
    "window_lines",
    "window_head_lines",
    "window_code_only",
    "named_line_uses",
    "named_line_context",
    "named_ambiguity",
    "insertion_gap_lines",
    "pointer_preview_chars",
    "min_term_len",
    "supersede_older_test_outputs",
    "drop_filler",
    "filler_score_below",
    "tier_shares",
    "acceptance_trim_chars",
    "target_tokens",
    "gap_lines",
    "evidence_ranker",
    "task_tokens",
]

CLASSES = [(DefaultsConfig, FLAT_DEFAULTS), (ConstructConfig, FLAT_CONSTRUCT)]


def _changed(value: object) -> object:
    if isinstance(value, bool):
        return not value
    if isinstance(value, float):
        return value / 2 if value else 0.5
    if isinstance(value, int):
        return value + 1
    return None


@pytest.mark.parametrize(("cls", "flat"), CLASSES)
def test_every_flat_name_sets_its_one_nested_setting(cls, flat):
    assert set(flat_names(cls)) == set(flat)
    default = cls()
    for name in flat:
        changed = _changed(flat_value(default, name))
        if changed is None:
            continue
        by_mapping = cls.from_mapping({name: changed})
        assert by_mapping == cls(**{name: changed})
        moved = [n for n in flat if flat_value(by_mapping, n) != flat_value(default, n)]
        assert moved == [name]


def test_nested_and_flat_forms_give_the_same_settings():
    nested = DefaultsConfig.from_mapping(
        {"whole_files": {"share": 0.5}, "outlines": {"max_lines": 0}}
    )
    assert nested == DefaultsConfig.from_mapping({"whole_file_share": 0.5, "outline_max_lines": 0})
    assert nested.whole_files.share == 0.5 and nested.outlines.max_lines == 0
    # A flat name over a nested group: both apply.
    both = DefaultsConfig.from_mapping({"outlines": {"files": 2}, "outline_max_lines": 3})
    assert (both.outlines.files, both.outlines.max_lines) == (2, 3)
    # A group's name that was a switch before is still that switch.
    assert DefaultsConfig(class_view=False).class_view.enabled is False
    assert (
        ConstructConfig.from_mapping({"compress": {"window_lines": 30}}).compress.window_lines == 30
    )


@pytest.mark.parametrize("cls", [RetrievalConfig, DefaultsConfig, ConstructConfig])
def test_an_unknown_name_is_a_config_error(cls):
    with pytest.raises(ConfigError, match=r"unknown .* config keys: no_such_setting"):
        cls.from_mapping({"no_such_setting": 1})
    with pytest.raises(ConfigError, match=r"unknown .* config keys: no_such_setting"):
        cls(no_such_setting=1)
    group = next(iter(group_fields(cls)))
    with pytest.raises(ConfigError, match="settings: no_such_setting"):
        cls.from_mapping({group: {"no_such_setting": 1}})


def test_an_eval_config_file_in_flat_form_still_loads(tmp_path):
    cfg = {
        "defaults": {"outline_header_lines": 8, "whole_files_share": 0.0},
        "construct": {"target_tokens": 4000, "window_lines": 30},
    }
    system = CtxfastConstruct(config=cfg["construct"], defaults=cfg["defaults"])
    construct, defaults = system.settings()
    assert construct.target_tokens == 4000 and construct.compress.window_lines == 30
    assert defaults.outlines.header_lines == 8 and defaults.whole_files.total_share == 0.0
    # Overrides equal to the default are dropped, by their flat names too.
    assert "outline_header_lines" not in system.defaults
    assert json.loads(json.dumps(system.defaults)) == {"whole_files_share": 0.0}


@pytest.mark.parametrize("cls", [RetrievalConfig, DefaultsConfig, ConstructConfig])
def test_every_setting_is_documented_beside_its_stage(cls):
    """Each field of each group (and each top-level field) has a ``#:`` comment: what it
    does, its default and why."""
    groups = group_fields(cls)
    for owner in [cls, *groups.values()]:
        source = inspect.getsource(owner)
        for f in dataclasses.fields(owner):
            if owner is cls and f.name in groups:
                continue
            above = source.split(f"\n    {f.name}:")[0].splitlines()[-1].strip()
            assert above.startswith("#:"), f"{owner.__name__}.{f.name}"


@pytest.mark.parametrize(
    ("name", "value"), [("window_lines", 0), ("large_item_lines", -1), ("ceiling", -1)]
)
def test_a_setting_out_of_its_range_is_an_error_when_the_config_is_built(name, value):
    with pytest.raises(InvalidArgumentError, match=name):
        ConstructConfig(**{name: value})
