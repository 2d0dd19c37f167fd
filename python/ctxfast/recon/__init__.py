"""Repository reconnaissance (spec-03): the line-level code graph and its read API."""

from ctxfast.recon.graph import CodeGraph, Edge, FileRecord, Node, Signature, Unresolved
from ctxfast.recon.parse_cache import ParseCache

__all__ = [
    "CodeGraph",
    "Edge",
    "FileRecord",
    "Node",
    "ParseCache",
    "Signature",
    "Unresolved",
]
