"""Repository reconnaissance: what the repository *is*.

The line-level code graph and its read API, the manifest, the repo map, the ego graph, the
escalation ladder and the six questions; ARCHITECTURE.md maps each module to its stage.
"""

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
