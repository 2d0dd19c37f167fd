"""The vetting rule: retrieved content is untrusted data, never a template.

Every artifact the model emits (an edit, an ``execute`` payload, a proposed tool) is compared
with each retrieved block; if the token overlap with any block exceeds 90% after whitespace
normalisation, the artifact is rejected with one fixed reason. The check is harness-side
and deterministic because the model cannot be trusted to enforce it on itself.

*Token overlap* is defined precisely here, so that the rule is reproducible: both texts are
whitespace-normalised and split into whitespace tokens, and the overlap is the Indel
(longest-common-subsequence) similarity of the two token sequences,
``2·LCS / (len(artifact) + len(block))``, computed by rapidfuzz in C++. It is symmetric, so
a short artifact that merely *occurs* inside a long block (``return None``) is not a
reproduction of it, while a copy with a few tokens changed, added or dropped is.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from rapidfuzz.distance import Indel
from rapidfuzz.process import cdist

from ctxfast.errors import InvalidArgumentError

#: The rejection reason, fixed so that a harness can match it exactly.
VERBATIM_REASON = "verbatim reproduction of untrusted retrieved content"
#: Reject when the overlap is strictly greater than this.
DEFAULT_OVERLAP_THRESHOLD = 0.9


@dataclass(frozen=True, slots=True)
class Verdict:
    """The outcome: ``accepted`` or rejected with ``reason``; ``overlap`` is the largest
    overlap found and ``block_index`` the block it was found with (``None`` if no blocks)."""

    accepted: bool
    reason: str | None
    overlap: float
    block_index: int | None
    overlaps: tuple[float, ...]


def normalize_tokens(text: str) -> list[str]:
    """Whitespace-normalised tokens: any run of whitespace is one separator."""
    return text.split()


def vet(
    artifact_text: str,
    retrieved_blocks: Iterable[str],
    *,
    threshold: float = DEFAULT_OVERLAP_THRESHOLD,
) -> Verdict:
    """Reject ``artifact_text`` if it reproduces any of ``retrieved_blocks`` (overlap >
    ``threshold``); accept otherwise. An empty artifact or an empty block never overlaps."""
    if not isinstance(artifact_text, str):
        raise InvalidArgumentError("artifact_text must be str")
    blocks = list(retrieved_blocks)
    if not all(isinstance(b, str) for b in blocks):
        raise InvalidArgumentError("retrieved_blocks must be str")
    if not 0.0 <= threshold <= 1.0:
        raise InvalidArgumentError(f"threshold must be in [0, 1], got {threshold!r}")
    art = normalize_tokens(artifact_text)
    if not blocks:
        return Verdict(True, None, 0.0, None, ())
    block_toks = [normalize_tokens(b) for b in blocks]
    if art:
        import numpy as np  # imported here: `import ctxfast` must not require numpy

        matrix = cdist([art], block_toks, scorer=Indel.normalized_similarity, dtype=np.float64)
        overlaps = tuple(
            float(v) if toks else 0.0 for v, toks in zip(matrix[0], block_toks, strict=True)
        )
    else:
        overlaps = tuple(0.0 for _ in blocks)
    best = max(range(len(overlaps)), key=lambda i: (overlaps[i], -i))
    top = overlaps[best]
    if top > threshold:
        return Verdict(False, VERBATIM_REASON, top, best, overlaps)
    return Verdict(True, None, top, best, overlaps)


__all__ = [
    "DEFAULT_OVERLAP_THRESHOLD",
    "VERBATIM_REASON",
    "Verdict",
    "normalize_tokens",
    "vet",
]
