"""Shared test settings: hypothesis profiles (CI runs the same examples every time) and a
private configuration directory."""

import os
import tempfile

from hypothesis import HealthCheck, settings

# Hermetic: the per-user key that stamps indexes (ctxfast.userkey) lives in a directory of
# this run, never in the developer's ~/.config; child processes inherit it.
os.environ.setdefault("CTXFAST_CONFIG_DIR", tempfile.mkdtemp(prefix="ctxfast-test-config-"))

settings.register_profile(
    "ci",
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci" if os.environ.get("CI") else "dev")
