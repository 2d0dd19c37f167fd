"""The public API a new user discovers with ``help()``: exported types, real return types,
and a ``compose`` docstring that documents every parameter."""

from __future__ import annotations

import inspect
import typing

import ctxfast
from ctxfast.retrieval import pipeline


def test_the_window_and_retrieval_types_are_exported():
    for name in (
        "DecisionContext",
        "WindowEntry",
        "LogEntry",
        "PlanNode",
        "ImpactEdge",
        "ConstructConfig",
        "DefaultsConfig",
        "RetrievalResult",
        "RetrievalConfig",
        "Candidate",
        "Query",
    ):
        assert name in ctxfast.__all__ and isinstance(getattr(ctxfast, name), type), name


def test_retrieve_and_compose_are_typed_with_their_real_results():
    hints = typing.get_type_hints(ctxfast.Repository.retrieve, vars(pipeline))
    assert hints["return"] is ctxfast.RetrievalResult
    assert typing.get_type_hints(ctxfast.compose)["return"] is ctxfast.DecisionContext


def test_compose_documents_every_parameter():
    doc = inspect.getdoc(ctxfast.compose) or ""
    for name in inspect.signature(ctxfast.compose).parameters:
        assert f"\n    {name}: " in doc.split("Args:", 1)[1], name
