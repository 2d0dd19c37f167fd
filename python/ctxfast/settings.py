"""How the settings classes are built: one top-level class per part of the pipeline
(``RetrievalConfig``, ``DefaultsConfig``, ...) holding one small frozen group per stage,
each group defined beside the stage that reads it.

Settings used to be flat, one long class per part; every old flat name still works. A group
says under which flat name each of its fields was known (``FLAT_NAMES``, only where the
name changed; a field not listed kept its name). This module routes those names:

- :func:`from_mapping` builds a top-level class from a mapping (a JSON ``--config`` file,
  ``compose(retrieval_config={...})``) in nested form (``{"whole_files": {"share": 0.5}}``),
  in flat form (``{"whole_file_share": 0.5}``) or both; an unknown name is a ``ConfigError``.
- :func:`accept_flat_keywords` lets the class be built with flat keywords as well
  (``DefaultsConfig(outline_max_lines=0)``); type checkers see the nested signature only.
- :func:`flat_value` reads a setting by its flat name, :func:`flat_names` lists them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeVar

from ctxfast.errors import ConfigError

T = TypeVar("T")


def _is_group(tp: object) -> bool:
    return isinstance(tp, type) and dataclasses.is_dataclass(tp)


def group_fields(cls: type) -> dict[str, type]:
    """The fields of ``cls`` that hold a group of settings: name → group class (read from
    each field's default, so string annotations need no resolving)."""
    out: dict[str, type] = {}
    for f in dataclasses.fields(cls):
        if f.default_factory is not dataclasses.MISSING and _is_group(f.default_factory):
            out[f.name] = f.default_factory  # type: ignore[assignment]
    return out


def _group_flat(group: type) -> Iterator[tuple[str, str]]:
    """``(flat name, field)`` of every field of ``group``."""
    renamed: Mapping[str, str] = getattr(group, "FLAT_NAMES", {})
    for f in dataclasses.fields(group):
        yield renamed.get(f.name, f.name), f.name


_FLAT: dict[type, dict[str, tuple[str | None, str]]] = {}


def flat_names(cls: type) -> dict[str, tuple[str | None, str]]:
    """Every flat name of ``cls``: → ``(group, field)``, group ``None`` for a field kept at
    the top level. A group held whole under a name of its own (``RetrievalConfig.query``)
    is only reachable by that name."""
    if cls not in _FLAT:
        groups = group_fields(cls)
        flat: dict[str, tuple[str | None, str]] = {}
        for f in dataclasses.fields(cls):
            if f.name not in groups:
                flat[f.name] = (None, f.name)
        for gname, group in groups.items():
            if getattr(group, "FLAT_NAMES", None) is None:
                flat[gname] = (None, gname)  # a group with no flat past: only its own name
                continue
            for name, fname in _group_flat(group):
                if name in flat or (name in groups and name != gname):
                    raise TypeError(f"{cls.__name__}: flat name {name!r} is not unique")
                flat[name] = (gname, fname)
        _FLAT[cls] = flat
    return _FLAT[cls]


def flat_value(obj: object, name: str) -> Any:
    """The value of the setting known by the flat name ``name`` (or a top-level field)."""
    group, fname = flat_names(type(obj))[name]
    return getattr(getattr(obj, group) if group else obj, fname)


def _build_group(group: type, value: Any, where: str) -> Any:
    if isinstance(value, group):
        return value
    if not isinstance(value, Mapping):
        raise ConfigError(f"{where} must be a mapping of its settings, not {value!r}")
    known = {f.name for f in dataclasses.fields(group)}
    unknown = sorted(set(value) - known)
    if unknown:
        raise ConfigError(f"unknown {where} settings: {', '.join(map(str, unknown))}")
    return group(**value)


def route(cls: type, data: Mapping[str, Any], what: str) -> dict[str, Any]:
    """The keyword arguments of ``cls`` for ``data`` given in nested form, flat form or
    both: each group built from its defaults, its nested mapping, then its flat names."""
    groups = group_fields(cls)
    flat = flat_names(cls)
    top = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(k for k in data if k not in top and k not in flat)
    if unknown:
        raise ConfigError(f"unknown {what} config keys: {', '.join(map(str, unknown))}")
    out: dict[str, Any] = {}
    by_group: dict[str, dict[str, Any]] = {}
    for key, value in data.items():
        routed = flat.get(key, (None, key))[0]
        if key in groups and (isinstance(value, (Mapping, groups[key])) or routed is None):
            out[key] = _build_group(groups[key], value, f"{what} config {key!r}")
        elif routed is not None:
            by_group.setdefault(routed, {})[flat[key][1]] = value
        else:
            out[key] = value
    for gname, changes in by_group.items():
        base = out.get(gname, groups[gname]())
        out[gname] = dataclasses.replace(base, **changes)
    return out


def from_mapping(cls: type[T], data: Mapping[str, Any] | None, what: str) -> T:
    """``cls`` with the settings ``data`` gives (see the module doc); ``ConfigError`` on an
    unknown name."""
    return cls(**route(cls, data or {}, what))


def accept_flat_keywords(what: str) -> Callable[[type[T]], type[T]]:
    """Class decorator (outside ``@dataclass``): the class's constructor also takes every
    flat name, routed to its group."""

    def wrap(cls: type[T]) -> type[T]:
        init = cls.__init__

        def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
            init(self, *args, **(route(cls, kwargs, what) if kwargs else kwargs))

        __init__.__doc__ = init.__doc__
        setattr(cls, "__init__", __init__)  # noqa: B010
        return cls

    return wrap


__all__ = ["accept_flat_keywords", "flat_names", "flat_value", "from_mapping", "route"]
