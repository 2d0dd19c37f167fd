"""Model profiles, TOML extension and the pack budget formula."""

import pytest

from ctxfast import ModelProfile, pack_budget, resolve_profile
from ctxfast.errors import ConfigError, CtxfastError
from ctxfast.harness.profiles import (
    DEFAULT_REGISTRY,
    DEFAULT_ROLE_SHARES,
    MIN_PACK_TOKENS,
    Reserves,
    load_profiles,
    size_bucket,
)


def test_resolution_order_exact_family_size_default():
    assert resolve_profile("gpt-4o").context_limit == 128_000
    assert resolve_profile("GPT-4o").encoding == "o200k_base"  # exact is case-insensitive
    # Family substring; the longest family wins (qwen2.5-coder over qwen).
    p = resolve_profile("qwen2.5-coder:14b-instruct-q4_K_M")
    assert p.context_limit == 32_768 and p.name == "qwen2.5-coder:14b-instruct-q4_K_M"
    assert resolve_profile("qwen3:8b").context_limit == 40_960
    # Size bucket for an unknown family.
    assert resolve_profile("acme-coder-7b").context_limit == 16_384
    assert resolve_profile("acme-coder:70b").context_limit == 65_536
    # Default.
    assert resolve_profile("mystery-model").context_limit == 8_192


def test_size_bucket_parsing():
    assert size_bucket("qwen2.5-coder:7b-q4") == "7b"
    assert size_bucket("foo-1.5b") == "1.5b"
    assert size_bucket("llama-3-8B") == "8b"
    assert size_bucket("gpt2") is None
    assert size_bucket("bob") is None


def test_pack_budget_formula():
    p = ModelProfile("m", 32_768)
    # 32768 - 500 - 900 - 2048 - ceil(3276.8) = 26043
    assert pack_budget(p, "implement") == 26_043
    assert pack_budget(p, "explore") == int(26_043 * DEFAULT_ROLE_SHARES["explore"])
    assert pack_budget(p, "unknown-role") == 26_043


def test_pack_budget_floor_and_overrides():
    tiny = ModelProfile("tiny", 4_096)
    assert pack_budget(tiny, "implement") == MIN_PACK_TOKENS  # 4096-3448-410 < 512
    p = ModelProfile("m", 10_000)
    custom = Reserves(system=0, tools=0, response=0, slack_percent=0)
    assert pack_budget(p, "implement", reserves=custom) == 10_000
    assert pack_budget(p, "implement", reserves=custom, shares={"implement": 0.5}) == 5_000
    prof = ModelProfile("m", 10_000, role_shares={"review": 0.2})
    assert pack_budget(prof, "review", reserves=custom) == 2_000
    # Caller overrides beat the profile's shares.
    assert pack_budget(prof, "review", reserves=custom, shares={"review": 0.3}) == 3_000


def test_invalid_values_raise_config_error():
    with pytest.raises(ConfigError):
        ModelProfile("x", 0)
    with pytest.raises(ConfigError):
        ModelProfile("x", 100, encoding="nope")
    with pytest.raises(ConfigError):
        Reserves(slack_percent=100)
    with pytest.raises(ConfigError):
        pack_budget(ModelProfile("x", 1000), "r", shares={"r": 1.5})


def test_toml_extends_and_overrides(tmp_path):
    f = tmp_path / "profiles.toml"
    f.write_text(
        """
[default]
context_limit = 4096
[profiles."my-finetune"]
context_limit = 20000
encoding = "o200k_base"
[families.qwen]
context_limit = 1000000
[sizes."7b"]
context_limit = 12345
[families.acme]
context_limit = 50000
[families.acme.role_shares]
explore = 0.25
""",
        encoding="utf-8",
    )
    reg = load_profiles(f)
    assert reg.resolve("my-finetune").encoding == "o200k_base"
    assert reg.resolve("qwen-whatever").context_limit == 1_000_000
    assert reg.resolve("qwen2.5-coder:7b").context_limit == 32_768  # longer family still wins
    assert reg.resolve("other-7b").context_limit == 12_345
    assert reg.resolve("zzz").context_limit == 4_096
    assert reg.resolve("acme-1").role_shares == {"explore": 0.25}
    # The built-in registry is untouched.
    assert DEFAULT_REGISTRY.resolve("zzz").context_limit == 8_192


@pytest.mark.parametrize(
    "body",
    [
        "[profiles.x\ncontext_limit = 1",  # TOML syntax error
        "[profiles.x]\ncontext_limit = 'big'",
        "[profiles.x]\ncontext_limt = 100",
        "[bogus]\nx = 1",
        "profiles = 3",
        "[profiles.x]\ncontext_limit = 100\nrole_shares = {a = 'b'}",
    ],
)
def test_malformed_toml_is_config_error(tmp_path, body):
    f = tmp_path / "p.toml"
    f.write_text(body, encoding="utf-8")
    with pytest.raises(ConfigError):
        load_profiles(f)


def test_missing_file_is_config_error(tmp_path):
    with pytest.raises(CtxfastError):
        load_profiles(tmp_path / "absent.toml")
