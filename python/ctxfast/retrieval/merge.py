"""Structure-aware dedup/merge.

1. Hits resolve to their innermost enclosing definition; entries with the same qualname
   collapse, provenance concatenated.
2. A line span inside another entry's span in the same file is absorbed into it; overlapping
   line ranges merge into their union. A class does not absorb its methods: a class is a
   namespace, and swallowing methods would erase the method-level identity that function
   localisation is measured on.
3. The same identifier at the same ``file:line`` is one hit.
4. Spans end on definition boundaries (the graph's ``end_line``) or whole statements.
"""

from __future__ import annotations

from ctxfast.retrieval.candidates import Candidate, RawCandidate
from ctxfast.retrieval.repoindex import RepoIndex


def merge(index: RepoIndex, raws: list[RawCandidate]) -> list[Candidate]:
    by_key: dict[tuple[str, str], Candidate] = {}
    seen_hits: set[tuple[str, str, int, str]] = set()
    by_qualname = index.defs_by_qualname.get
    innermost = index.innermost
    # Every hit of a query passes here (about 900 on Django): its fields are unpacked once
    # and the helpers bound once.
    for raw in raws:
        source, term, file, start, end, qualname, kind, score = raw
        hit_key = (source, file, start, term)
        if hit_key in seen_hits:
            continue
        seen_hits.add(hit_key)
        if qualname is None:
            d = innermost(file, start)
            if d is not None:
                qualname, kind, start, end = d.qualname, d.kind, d.line, d.end_line
            if qualname is None:
                start = raw.start_line
                end = max(raw.end_line, index.statement_end(file, start))
        if qualname is not None:
            # A name the file defines several times is one entry, spanning the definition
            # the table gives the name (the implementation, not an ``@overload`` stub).
            d = by_qualname(qualname)
            if d is not None and d.file == file:
                start, end, kind = d.line, d.end_line, d.kind if kind == "lines" else kind
        key = (file, qualname) if qualname else (file, f"@{start}-{end}")
        prov = f"{source}:{term}"
        cand = by_key.get(key)
        if cand is not None:
            if prov not in cand.provenance:
                cand.provenance.append(prov)
            if score > cand.score:
                cand.score = score
            if source == "traceback" and score > cand.anchor:
                cand.anchor = score
            continue
        by_key[key] = Candidate(
            qualname,
            kind,
            file,
            start,
            end,
            index.signature_line(qualname) if qualname else "",
            "",
            [prov],
            score=score,
            anchor=score if source == "traceback" else 0.0,
        )
    return _absorb_line_spans(list(by_key.values()))


def _absorb_line_spans(cands: list[Candidate]) -> list[Candidate]:
    """Line-only entries fold into a containing entry, or merge with overlapping ones."""
    defs = [c for c in cands if c.qualname]
    spans = [c for c in cands if not c.qualname]
    # Hosts are looked up among the same file's entries only (candidate order kept, so the
    # first host found is the one a scan of all entries would find).
    defs_in: dict[str, list[Candidate]] = {}
    for d in defs:
        defs_in.setdefault(d.file, []).append(d)
    kept_spans: list[Candidate] = []
    for span in sorted(spans, key=lambda c: (c.file, c.start_line)):
        host = next(
            (
                d
                for d in defs_in.get(span.file, ())
                if d.start_line <= span.start_line and span.end_line <= d.end_line
            ),
            None,
        )
        if host is not None:
            host.provenance.extend(p for p in span.provenance if p not in host.provenance)
            host.anchor = max(host.anchor, span.anchor)
            continue
        if (
            kept_spans
            and kept_spans[-1].file == span.file
            and span.start_line <= kept_spans[-1].end_line + 1
        ):
            prev = kept_spans[-1]
            prev.end_line = max(prev.end_line, span.end_line)
            prev.provenance.extend(p for p in span.provenance if p not in prev.provenance)
            prev.anchor = max(prev.anchor, span.anchor)
            continue
        kept_spans.append(span)
    # Nested functions fold into their enclosing function (not into classes): the hosts
    # are each file's function entries, in candidate order.
    functions_in = {
        f: [d for d in entries if d.kind == "function"] for f, entries in defs_in.items()
    }
    out: list[Candidate] = []
    for c in defs:
        host = next(
            (
                d
                for d in functions_in[c.file]
                if d is not c
                and d.start_line <= c.start_line
                and c.end_line <= d.end_line
                and (d.start_line, d.end_line) != (c.start_line, c.end_line)
            ),
            None,
        )
        if host is not None:
            host.provenance.extend(p for p in c.provenance if p not in host.provenance)
            host.anchor = max(host.anchor, c.anchor)
            continue
        out.append(c)
    return out + kept_spans
