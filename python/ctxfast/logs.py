"""ctxfast's logging: every module logs under the ``ctxfast`` logger, silent by default.

A library must not print: the ``ctxfast`` logger has only a ``NullHandler`` until the host
application configures logging. Recoverable trouble is logged there (a repo map that could
not be built, a state file that could not be stored) instead of being swallowed, and so are
the Rust core's messages (``ctxfast.native``: stage timings of every index run, at debug).
The command line shows warnings on stderr; ``CTXFAST_LOG=debug|info|warning|error`` changes
the level.
"""

from __future__ import annotations

import logging
import os
import sys

LOGGER_NAME = "ctxfast"
#: The environment variable that sets the command line's log level.
LEVEL_ENV = "CTXFAST_LOG"
DEFAULT_CLI_LEVEL = "warning"

#: Where the native core's messages (e.g. stage timings of an index run) are logged.
NATIVE_LOGGER_NAME = f"{LOGGER_NAME}.native"

logging.getLogger(LOGGER_NAME).addHandler(logging.NullHandler())


def drain_native() -> None:
    """Logs the native core's queued messages under ``ctxfast.native`` (the core never
    prints; it queues, and every native run of note is followed by this drain)."""
    from ctxfast import _native

    log = logging.getLogger(NATIVE_LOGGER_NAME)
    for level, message in _native.drain_log():
        log.log(logging.getLevelNamesMapping()[level.upper()], message)


def configure_cli_logging() -> None:
    """Log ``ctxfast`` records to stderr at ``$CTXFAST_LOG`` (warning by default), unless
    the embedding program already gave the logger a handler of its own."""
    logger = logging.getLogger(LOGGER_NAME)
    if any(not isinstance(h, logging.NullHandler) for h in logger.handlers):
        return
    name = os.environ.get(LEVEL_ENV, DEFAULT_CLI_LEVEL).strip().upper()
    level = logging.getLevelNamesMapping().get(name, logging.WARNING)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("ctxfast: %(levelname)s: %(message)s"))
    logger.addHandler(handler)
    logger.setLevel(level)


__all__ = [
    "LEVEL_ENV",
    "LOGGER_NAME",
    "NATIVE_LOGGER_NAME",
    "configure_cli_logging",
    "drain_native",
]
