"""Shared test settings: hypothesis profiles (CI runs the same examples every time) and a
private configuration directory."""

import atexit
import os
import shutil
import tempfile

from hypothesis import HealthCheck, settings

# Hermetic: the per-user key that stamps indexes (ctxfast.userkey) lives in a directory of
# this run, never in the developer's ~/.config; child processes inherit it.
# The directory is removed when the run ends, so runs leave nothing in the temporary directory.
if "CTXFAST_CONFIG_DIR" not in os.environ:
    _config_dir = tempfile.mkdtemp(prefix="ctxfast-test-config-")
    os.environ["CTXFAST_CONFIG_DIR"] = _config_dir
    atexit.register(shutil.rmtree, _config_dir, ignore_errors=True)

settings.register_profile(
    "ci",
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci" if os.environ.get("CI") else "dev")
