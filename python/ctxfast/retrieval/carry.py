"""The previous index state's retrieval pieces, carried over to the state a refresh made.

An agent edits a file and asks for the next window. The refresh re-parses that one file,
but the retrieval state is keyed by the whole content, so every piece of it was built again
from every file's text: on sympy, 2.6 s after a one-line edit against 0.46 s for the
graph's own refresh. A :class:`Carry` holds the pieces the replaced state stored and makes
the new state's from them, counting only the files whose content changed: the whole-file
and definition BM25 indexes are spliced (``BM25Index.spliced``: the kept documents'
postings carried over, the statistics recomputed), the bundle scan's line sets likewise,
and the literal fragments and Rust includes are patched file by file. Each carried piece
equals the one a build from the texts makes (the same scores to the bit, the same entries;
``tests/test_state_carry.py`` checks it edit by edit), so a window never depends on
whether its state was carried.

Which state was replaced: every state stores its rows (path and content hash, in the order
of ``RepoIndex.files``) as the piece ``rows``; the first write under a new key sweeps the
other states' files, so a carry reads the pieces it may use before that, through the same
HMAC-checked store (a forged piece is never read). A piece the old state lacks, or one it
cannot decode, is built from the texts as before. A new index seeded from a sibling tree's
(``Repository(seed=...)``) carries that index's state the same way: the paths are the
same relative paths, and only the files whose content differs are read.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from ctxfast import _native
from ctxfast.bm25 import BM25Index, SymbolSet
from ctxfast.retrieval.literals import LiteralIndex
from ctxfast.state_store import StateStore

log = logging.getLogger(__name__)

T = TypeVar("T")

#: The piece holding a state's rows: ``[[path, content hash], ...]`` in file order.
ROWS = "rows"
#: The piece holding a state's definition table.
DEFTABLE = "deftable"
#: What the pieces a carry reads are called: the whole-file BM25 index, the line sets, the
#: includes, the definition table, the definition BM25 indexes and the literal indexes
#: (these two of any settings), the API descriptions' places and BM25 index.
CARRIED = (
    "file_bm25",
    "line-sets-",
    "included-",
    DEFTABLE,
    "def_bm25-",
    "literals-",
    "api_where",
    "api_bm25",
)

Keep = list[int | None]


class Carry:
    """The replaced state's stored pieces and how its files map onto the new state's.

    ``payloads`` are the verified bytes of the pieces read before the new state's first
    write; ``old_files`` are the replaced state's files in order; ``keep`` maps each new
    file to its position among them when its content is unchanged (else ``None``). Each
    piece method returns ``None`` when the piece is missing or does not decode: the caller
    then builds it from the texts."""

    def __init__(self, payloads: dict[str, bytes], new_rows: Sequence[tuple[str, str]]) -> None:
        """``payloads`` holds the verified ``rows`` piece; ``ValueError`` when it is not a
        list of ``[path, hash]`` pairs."""
        self._payloads = payloads
        try:
            listed = [(str(p), str(sha)) for p, sha in json.loads(payloads[ROWS])]
        except (TypeError, KeyError) as exc:
            raise ValueError("stored rows are not [path, hash] pairs") from exc
        self.old_files = [p for p, _ in listed]
        old_at = {p: i for i, p in enumerate(self.old_files)}
        old_sha = dict(listed)
        self.keep: Keep = [old_at[p] if old_sha.get(p) == sha else None for p, sha in new_rows]
        self.new_files = [p for p, _ in new_rows]
        #: The new state's files whose content is new (changed or added), in file order.
        pairs = list(zip(self.new_files, self.keep, strict=True))
        self.changed = [p for p, k in pairs if k is None]
        #: Those whose content is as it was.
        self.unchanged = [p for p, k in pairs if k is not None]

    @classmethod
    def find(
        cls,
        store: StateStore,
        new_rows: Sequence[tuple[str, str]],
        siblings: Sequence[Path] = (),
    ) -> Carry | None:
        """The carry from the most recent other state of ``store``'s directory that stored
        its rows, else from a state of one of the ``siblings`` (other index directories),
        holding its pieces named as in :data:`CARRIED`; ``None`` when there is none (a
        first build). Called for a state whose pieces are not stored yet."""
        elsewhere = [
            other
            for sibling in siblings
            for other in StateStore(sibling, "").others()
            if sibling.resolve() != store.dir.parent.resolve()
        ]
        for old in [*store.others(), *elsewhere]:
            rows = old.read(ROWS)
            if rows is None:
                continue
            payloads = {ROWS: rows}
            for name in old.names():
                if not name.startswith(CARRIED):
                    continue
                data = old.read(name)
                if data is not None:
                    payloads[name] = data
            try:
                carry = cls(payloads, new_rows)
            except ValueError:
                continue
            log.debug(
                "index: carrying the retrieval state over %d changed of %d files",
                len(carry.changed),
                len(carry.new_files),
            )
            return carry
        return None

    def _carried(self, name: str, make: Callable[[bytes], T]) -> T | None:
        """``make(payload)`` of the stored piece ``name``; ``None`` when it is missing or
        ``make`` fails on it (a cache: the caller builds the piece from the texts)."""
        data = self._payloads.get(name)
        if data is None:
            return None
        try:
            return make(data)
        except Exception as exc:
            log.info("retrieval state %s not carried: %s", name, exc)
            return None

    def deftable(self) -> _native.DefTable | None:
        """The replaced state's definition table."""
        return self._carried(DEFTABLE, _native.DefTable.from_bytes)

    def plain(self, name: str) -> Any | None:
        """The stored JSON piece ``name``, decoded."""
        return self._carried(name, json.loads)

    def bm25(
        self,
        name: str,
        keep: Keep,
        new_docs: Callable[[list[int]], list[str]],
        symbols: SymbolSet | set[str],
    ) -> BM25Index | None:
        """The stored index ``name`` spliced: document ``i`` is the old ``keep[i]``, or one
        of ``new_docs(positions)`` (the documents at the unkept positions, in order)."""

        def splice(data: bytes) -> BM25Index:
            fresh = new_docs([i for i, k in enumerate(keep) if k is None])
            return BM25Index.from_bytes(data, symbols).spliced(keep, fresh, symbols=symbols)

        return self._carried(name, splice)

    def line_sets(
        self, name: str, texts: Callable[[list[str]], list[str]]
    ) -> _native.LineSets | None:
        """The stored line sets ``name``, the changed files' hashed from ``texts``."""
        return self._carried(
            name,
            lambda data: _native.LineSets.from_bytes(data).spliced(self.keep, texts(self.changed)),
        )

    def literals(self, name: str, texts: Callable[[list[str]], list[str]]) -> dict[str, Any] | None:
        """The stored literal index ``name`` (as ``LiteralIndex.to_plain`` gives it) with the
        entries of changed and removed files dropped and the changed files' added."""

        def patch(data: bytes) -> dict[str, Any]:
            plain = json.loads(data)
            fresh = LiteralIndex(
                zip(self.changed, texts(self.changed), strict=True),
                plain["min_chars"],
                plain["name_max_chars"],
            )
            return patched_literals(plain, fresh, self._gone())

        return self._carried(name, patch)

    def includes(
        self, name: str, scan: Callable[[list[str]], dict[str, list[str]]]
    ) -> dict[str, list[str]] | None:
        """The stored Rust includes ``name`` with the changed files scanned again by
        ``scan`` (what the whole scan does, over some files). Which files exist decides
        which includes count, so a refresh that added or removed a file is scanned whole."""
        if self.new_files != self.old_files:
            return None

        def patch(data: bytes) -> dict[str, list[str]]:
            changed = set(self.changed)
            out = {f: t for f, t in json.loads(data).items() if f not in changed}
            out.update(scan(self.changed))
            return {f: out[f] for f in self.new_files if f in out}

        return self._carried(name, patch)

    def _gone(self) -> set[str]:
        """The old state's files whose entries no longer hold: changed or removed."""
        kept = {self.old_files[k] for k in self.keep if k is not None}
        return set(self.old_files) - kept


def patched_literals(plain: dict[str, Any], fresh: LiteralIndex, gone: set[str]) -> dict[str, Any]:
    """``plain`` without the entries of the files in ``gone``, with ``fresh``'s added: the
    index :class:`LiteralIndex` makes over the new files (same names, same places; the
    word-pair rows hold the same fragments)."""
    names: dict[str, list[str]] = {}
    for n, paths in plain["names"].items():
        left = [p for p in paths if p not in gone]
        if left:
            names[n] = left
    for n, paths in fresh.names.items():
        names[n] = sorted({*names.get(n, ()), *paths})
    places: dict[str, list[Any]] = {}
    for frag, where in plain["places"].items():
        left = [w for w in where if w[0] not in gone]
        if left:
            places[frag] = left
    for frag, where in fresh.places.items():
        merged = {(p, line) for p, line in places.get(frag, ())} | set(where)
        places[frag] = [list(w) for w in sorted(merged)]
    heads: dict[tuple[str, str], list[str]] = {}
    for a, b, frags in plain["by_head"]:
        heads[(a, b)] = [f for f in frags if f in places]
    fresh_plain = fresh.to_plain()
    for a, b, frags in fresh_plain["by_head"]:
        row = heads.setdefault((a, b), [])
        row.extend(f for f in frags if f not in row)
    by_head = [[a, b, frags] for (a, b), frags in heads.items() if frags]
    return {
        "min_chars": plain["min_chars"],
        "name_max_chars": plain["name_max_chars"],
        "names": names,
        "places": places,
        "by_head": by_head,
    }


__all__ = ["CARRIED", "DEFTABLE", "ROWS", "Carry", "patched_literals"]
