"""Model profiles and the pack budget: how many tokens a context pack may really use.

A pack shares the model's window with things the packer never sees — the system prompt, the
tool schemas, the model's own answer — so the budget is the window minus those reserves minus
a slack for tokenizer disagreement and chat scaffolding. A 32K model packed as if it had 32K of
room silently loses its answer; one packed with a guessed 3.2K is a 3.2K model.

Profiles resolve ``exact name → family substring → size bucket → default`` so an unseen tag
such as ``qwen2.5-coder:14b-instruct-q4`` still gets a sensible window. Users extend or
override the built-in table with a TOML file (:func:`load_profiles`).
"""

from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ctxfast.errors import ConfigError
from ctxfast.tokens import DEFAULT_ENCODING, ENCODINGS

#: Below this a specialist cannot see anything useful at all; budgets never go lower.
MIN_PACK_TOKENS = 512


@dataclass(frozen=True)
class Reserves:
    """Tokens held back from the window for content the packer does not assemble."""

    system: int = 500  # the specialist system prompt
    tools: int = 900  # the tool JSON schemas
    response: int = 2048  # the model still has to answer
    slack_percent: float = 10.0  # tokenizer disagreement + chat scaffolding, % of the window

    def __post_init__(self) -> None:
        for name in ("system", "tools", "response"):
            if getattr(self, name) < 0:
                raise ConfigError(f"reserve {name} must be >= 0, got {getattr(self, name)}")
        if not 0 <= self.slack_percent < 100:
            raise ConfigError(f"slack_percent must be in [0, 100), got {self.slack_percent}")


#: Share of the pack budget per role. Implementation roles get everything — a worker that
#: cannot see the function it edits cannot produce an exact ``old_str``; exploring and
#: summarising roles work from identifiers and docs, and less irrelevant text helps a small
#: model follow instructions.
DEFAULT_ROLE_SHARES: Mapping[str, float] = MappingProxyType(
    {
        "implement": 1.0,
        "fix": 1.0,
        "test": 0.9,
        "review": 0.75,
        "plan": 0.6,
        "explore": 0.5,
        "summarize": 0.4,
    }
)
DEFAULT_ROLE_SHARE = 1.0

#: Roles that receive paths + signatures instead of file bodies (see :func:`ctxfast.excerpt`).
IDENTIFIER_ONLY_ROLES: frozenset[str] = frozenset({"explore", "plan", "summarize"})


@dataclass(frozen=True)
class ModelProfile:
    """What the packer needs to know about a model: its window and its tokenizer."""

    name: str
    context_limit: int
    encoding: str = DEFAULT_ENCODING
    role_shares: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.context_limit <= 0:
            raise ConfigError(f"profile {self.name!r}: context_limit must be > 0")
        if self.encoding not in ENCODINGS:
            raise ConfigError(
                f"profile {self.name!r}: unknown encoding {self.encoding!r}; "
                f"expected one of {', '.join(ENCODINGS)}"
            )
        for role, share in self.role_shares.items():
            if not 0 < share <= 1:
                raise ConfigError(f"profile {self.name!r}: share of {role!r} must be in (0, 1]")


_SIZE_RE = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)b(?![a-z0-9])")


def size_bucket(name: str) -> str | None:
    """The parameter-count tag of a model name (``"qwen2.5-coder:7b-q4"`` → ``"7b"``)."""
    m = _SIZE_RE.search(name.lower())
    return f"{m.group(1)}b" if m else None


class ProfileRegistry:
    """Profiles by exact name, family substring and size bucket, plus a default."""

    def __init__(
        self,
        *,
        exact: Mapping[str, ModelProfile] | None = None,
        families: Mapping[str, ModelProfile] | None = None,
        sizes: Mapping[str, ModelProfile] | None = None,
        default: ModelProfile | None = None,
    ) -> None:
        self.exact: dict[str, ModelProfile] = {k.lower(): v for k, v in (exact or {}).items()}
        self.families: dict[str, ModelProfile] = {k.lower(): v for k, v in (families or {}).items()}
        self.sizes: dict[str, ModelProfile] = {k.lower(): v for k, v in (sizes or {}).items()}
        self.default = default or ModelProfile("default", 8192)

    def copy(self) -> ProfileRegistry:
        return ProfileRegistry(
            exact=self.exact, families=self.families, sizes=self.sizes, default=self.default
        )

    def resolve(self, name: str) -> ModelProfile:
        """The profile for ``name``; the returned profile carries the requested name.

        Family matching prefers the longest matching key, so ``qwen2.5-coder`` beats ``qwen``.
        """
        key = name.strip().lower()
        if key in self.exact:
            return self.exact[key]
        families = [f for f in self.families if f in key]
        if families:
            best = max(families, key=lambda f: (len(f), f))
            return replace(self.families[best], name=name)
        bucket = size_bucket(key)
        if bucket is not None and bucket in self.sizes:
            return replace(self.sizes[bucket], name=name)
        return replace(self.default, name=name)

    def load_toml(self, path: str | Path) -> ProfileRegistry:
        """Extends (and overrides) this registry with a TOML file, in place; returns self.

        Layout::

            [default]
            context_limit = 8192
            [profiles."my-finetune:7b"]     # exact names
            context_limit = 16384
            encoding = "o200k_base"
            [families.qwen3]                 # substrings of a model name
            context_limit = 40960
            [sizes."7b"]                     # parameter-count buckets
            context_limit = 32768
            [families.qwen3.role_shares]     # optional per-profile role shares
            explore = 0.3
        """
        p = Path(path)
        try:
            data = tomllib.loads(p.read_text(encoding="utf-8"))
        except OSError as exc:
            raise ConfigError(f"cannot read profiles file {p}: {exc}") from exc
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"malformed profiles file {p}: {exc}") from exc
        unknown = set(data) - {"default", "profiles", "families", "sizes"}
        if unknown:
            raise ConfigError(f"{p}: unknown tables {sorted(unknown)}")
        if "default" in data:
            self.default = _profile_from("default", data["default"], p)
        for table, target in (
            ("profiles", self.exact),
            ("families", self.families),
            ("sizes", self.sizes),
        ):
            entries = data.get(table, {})
            if not isinstance(entries, dict):
                raise ConfigError(f"{p}: [{table}] must be a table of tables")
            for key, value in entries.items():
                target[key.lower()] = _profile_from(key, value, p)
        return self


def _profile_from(name: str, value: Any, path: Path) -> ModelProfile:
    if not isinstance(value, dict):
        raise ConfigError(f"{path}: entry {name!r} must be a table")
    extra = set(value) - {"context_limit", "encoding", "role_shares"}
    if extra:
        raise ConfigError(f"{path}: entry {name!r} has unknown keys {sorted(extra)}")
    limit = value.get("context_limit")
    if not isinstance(limit, int) or isinstance(limit, bool):
        raise ConfigError(f"{path}: entry {name!r} needs an integer context_limit")
    shares = value.get("role_shares", {})
    if not isinstance(shares, dict) or not all(
        isinstance(v, int | float) and not isinstance(v, bool) for v in shares.values()
    ):
        raise ConfigError(f"{path}: entry {name!r}: role_shares must map roles to numbers")
    encoding = value.get("encoding", DEFAULT_ENCODING)
    if not isinstance(encoding, str):
        raise ConfigError(f"{path}: entry {name!r}: encoding must be a string")
    return ModelProfile(name, limit, encoding, {k: float(v) for k, v in shares.items()})


def _builtin() -> ProfileRegistry:
    p = ModelProfile
    return ProfileRegistry(
        exact={
            "gpt-4o": p("gpt-4o", 128_000, "o200k_base"),
            "gpt-4o-mini": p("gpt-4o-mini", 128_000, "o200k_base"),
        },
        families={
            "qwen2.5-coder": p("qwen2.5-coder", 32_768),
            "qwen3": p("qwen3", 40_960),
            "qwen": p("qwen", 32_768),
            "llama3": p("llama3", 131_072),
            "codellama": p("codellama", 16_384),
            "deepseek-coder": p("deepseek-coder", 16_384),
            "mistral": p("mistral", 32_768),
            "gemma": p("gemma", 8_192),
            "phi": p("phi", 4_096),
        },
        sizes={
            "0.5b": p("0.5b", 4_096),
            "1.5b": p("1.5b", 8_192),
            "3b": p("3b", 8_192),
            "7b": p("7b", 16_384),
            "8b": p("8b", 16_384),
            "14b": p("14b", 32_768),
            "32b": p("32b", 32_768),
            "70b": p("70b", 65_536),
        },
        default=p("default", 8_192),
    )


#: The built-in registry; copy it (``DEFAULT_REGISTRY.copy()``) before extending.
DEFAULT_REGISTRY = _builtin()


def resolve_profile(name: str, registry: ProfileRegistry | None = None) -> ModelProfile:
    """Resolve a model name to a profile: exact → family substring → size bucket → default."""
    return (registry or DEFAULT_REGISTRY).resolve(name)


def load_profiles(path: str | Path, base: ProfileRegistry | None = None) -> ProfileRegistry:
    """A new registry: ``base`` (default: the built-ins) extended by the TOML file at ``path``."""
    return (base or DEFAULT_REGISTRY).copy().load_toml(path)


def role_share(
    profile: ModelProfile, role: str, shares: Mapping[str, float] | None = None
) -> float:
    """The share of ``role``: caller overrides, then the profile's, then the defaults."""
    for table in (shares or {}, profile.role_shares, DEFAULT_ROLE_SHARES):
        if role in table:
            share = float(table[role])
            if not 0 < share <= 1:
                raise ConfigError(f"share of role {role!r} must be in (0, 1], got {share}")
            return share
    return DEFAULT_ROLE_SHARE


def pack_budget(
    profile: ModelProfile,
    role: str = "implement",
    *,
    reserves: Reserves | None = None,
    shares: Mapping[str, float] | None = None,
    min_tokens: int = MIN_PACK_TOKENS,
) -> int:
    """Tokens a pack for ``role`` may use on ``profile``.

    ``(context_limit − system − tools − response − ceil(slack% × context_limit)) × share``,
    rounded down and floored at ``min_tokens`` (:data:`MIN_PACK_TOKENS`).
    """
    r = reserves or Reserves()
    slack = math.ceil(profile.context_limit * r.slack_percent / 100)
    available = profile.context_limit - r.system - r.tools - r.response - slack
    return max(min_tokens, math.floor(available * role_share(profile, role, shares)))


__all__ = [
    "DEFAULT_REGISTRY",
    "DEFAULT_ROLE_SHARE",
    "DEFAULT_ROLE_SHARES",
    "IDENTIFIER_ONLY_ROLES",
    "MIN_PACK_TOKENS",
    "ModelProfile",
    "ProfileRegistry",
    "Reserves",
    "load_profiles",
    "pack_budget",
    "resolve_profile",
    "role_share",
    "size_bucket",
]
