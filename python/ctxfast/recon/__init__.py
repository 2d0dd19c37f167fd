"""Repository reconnaissance (spec-03): the line-level code graph and its read API."""

from ctxfast.recon.graph import CodeGraph, Edge, FileRecord, Node, Signature, Unresolved
from ctxfast.recon.parse_cache import ParseCache
from ctxfast.recon.repository import IndexStats, Repository

__all__ = [
    "CodeGraph",
    "Edge",
    "FileRecord",
    "IndexStats",
    "Node",
    "ParseCache",
    "Repository",
    "Signature",
    "Unresolved",
]
