"""Errors of the evaluation harness (bad benchmark files, failed downloads, hash mismatches)."""

from ctxfast.errors import CtxfastError


class EvalError(CtxfastError):
    """The benchmark, a source archive or a results file is unusable; the message says why."""


__all__ = ["EvalError"]
