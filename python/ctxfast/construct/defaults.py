"""The settings of the working defaults ``compose`` derives when a caller gives no planner,
impact analyser or localizer: :class:`DefaultsConfig`.

The derivations live beside what they decide, and so do their settings, one group each,
every field documented there with what it does and why its default:

- ``targets`` (:class:`~ctxfast.construct.targets.TargetSettings`): the change targets and
  how many retrieved candidates the window draws on;
- ``impact`` (:class:`~ctxfast.construct.impact.ImpactSettings`): what a change affects;
- ``context`` (:class:`~ctxfast.construct.context_lines.ContextSettings`): the lines shown
  around a definition;
- ``outlines`` (:class:`~ctxfast.construct.context_lines.OutlineSettings`): file outlines;
- ``whole_files`` (:class:`~ctxfast.construct.whole_files.WholeFileSettings`): the files
  and definitions shown whole;
- ``class_view`` (:class:`~ctxfast.construct.class_view.ClassViewSettings`): large classes.

Every setting is also known by its older flat name (``DefaultsConfig(outline_max_lines=0)``,
``{"outline_max_lines": 0}``); the measurements behind the defaults are in
``benches/README.md`` ("The measurements behind the settings' defaults").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ctxfast import settings
from ctxfast.construct.class_view import ClassViewSettings
from ctxfast.construct.context_lines import ContextSettings, OutlineSettings
from ctxfast.construct.impact import ImpactSettings
from ctxfast.construct.targets import TargetSettings
from ctxfast.construct.whole_files import WholeFileSettings


@settings.accept_flat_keywords("defaults")
@dataclass(frozen=True)
class DefaultsConfig:
    """Settings of the default derivations (see the module doc for the groups)."""

    targets: TargetSettings = field(default_factory=TargetSettings)
    impact: ImpactSettings = field(default_factory=ImpactSettings)
    context: ContextSettings = field(default_factory=ContextSettings)
    outlines: OutlineSettings = field(default_factory=OutlineSettings)
    whole_files: WholeFileSettings = field(default_factory=WholeFileSettings)
    class_view: ClassViewSettings = field(default_factory=ClassViewSettings)

    @classmethod
    def from_mapping(cls, data: dict[str, Any] | None) -> DefaultsConfig:
        """The defaults with the given settings overridden, in nested form
        (``{"outlines": {"max_lines": 0}}``), by their flat names
        (``{"outline_max_lines": 0}``) or both; an unknown name is a ``ConfigError``."""
        return settings.from_mapping(cls, data, "defaults")


__all__ = [
    "DefaultsConfig",
]
