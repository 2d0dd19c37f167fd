"""Transcript compaction for OpenAI-format message lists, and a gate for model compactions.

Three mechanisms, cheapest first:

* :func:`elide_transcript` — live, deterministic elision. Once the transcript passes
  ``compact_at_percent`` of the window, the content of every tool result but the last
  ``keep_last`` becomes ``[tool result elided]``. Every tool call and ``tool_call_id`` pair, the
  system message and every user/assistant turn stay, so a legal transcript stays legal; and the
  elided prefix is a pure function of the tool-result positions, so it is byte-identical between
  iterations until the keep window slides (KV-cache reuse survives). Nothing is summarised.
* :func:`compact_checkpoint` — for a checkpointed or resumed transcript: elision first, then,
  if that is not enough, old messages are dropped and replaced by a structured must-preserve
  digest (files read, files edited, commands with exit status, failed calls, decisions — in
  that order, list-shaped, because state the model can act on comes before narrative). The kept
  tail never starts on or contains an orphaned ``role: "tool"`` message (every OpenAI-compatible
  server rejects that with HTTP 400). A compaction that does not open ``hysteresis_percent``
  points of headroom pauses auto-compaction instead of thrashing.
* :func:`accept_compaction` — a gate for *model-written* document compactions: a 7B asked to
  compress a document answers "Sure! Here is the compressed context:" or three bullets for
  30 KB. Length ratio, path-token retention and preamble patterns are checked; a failure keeps
  the original.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ctxfast.errors import ConfigError
from ctxfast.tokens import DEFAULT_ENCODING, count_tokens

Message = dict[str, Any]

ELIDED = "[tool result elided]"
KEEP_LAST = 5
COMPACT_AT_PERCENT = 80.0
HYSTERESIS_PERCENT = 5.0
#: Per-message framing tokens of the chat template (role markers, separators).
MESSAGE_OVERHEAD_TOKENS = 4


# --------------------------------------------------------------------------- estimation


def _content_text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # OpenAI content parts
        return "".join(
            str(p.get("text", "")) if isinstance(p, Mapping) else str(p) for p in content
        )
    return str(content)


def message_tokens(message: Mapping[str, Any], encoding: str = DEFAULT_ENCODING) -> int:
    """Tokens of one message: content, tool-call names and arguments, plus framing."""
    parts = [_content_text(message.get("content"))]
    for call in message.get("tool_calls") or ():
        fn = call.get("function", {}) if isinstance(call, Mapping) else {}
        parts.append(str(fn.get("name", "")))
        parts.append(str(fn.get("arguments", "")))
    return MESSAGE_OVERHEAD_TOKENS + sum(count_tokens(p, encoding) for p in parts if p)


def transcript_tokens(
    messages: Sequence[Mapping[str, Any]], encoding: str = DEFAULT_ENCODING
) -> int:
    """The estimated prompt size of ``messages`` (exact content counts + framing)."""
    return sum(message_tokens(m, encoding) for m in messages)


def _threshold(context_limit: int, percent: float) -> float:
    if context_limit <= 0:
        raise ConfigError(f"context_limit must be > 0, got {context_limit}")
    if not 0 < percent <= 100:
        raise ConfigError(f"compact_at_percent must be in (0, 100], got {percent}")
    return context_limit * percent / 100


# --------------------------------------------------------------------------- validity


def validate_transcript(messages: Sequence[Mapping[str, Any]]) -> list[str]:
    """Problems that an OpenAI-compatible server would reject (empty list = legal).

    Rules: a system message may only come first; every ``tool`` message answers a call of the
    nearest preceding assistant message with ``tool_calls`` with only tool messages between;
    no call is answered twice; every call is answered before the next non-tool message.
    """
    problems: list[str] = []
    pending: set[str] = set()
    answered: set[str] = set()
    open_calls = False
    for i, m in enumerate(messages):
        role = m.get("role")
        if role == "tool":
            tid = m.get("tool_call_id")
            if not open_calls:
                problems.append(f"message {i}: tool result without a preceding tool call")
            elif tid not in pending:
                problems.append(f"message {i}: tool_call_id {tid!r} answers no open call")
            else:
                pending.discard(tid)
                answered.add(tid)
            continue
        if pending:
            problems.append(f"message {i}: calls {sorted(pending)} were never answered")
        pending, answered, open_calls = set(), set(), False
        if role == "system" and i != 0:
            problems.append(f"message {i}: system message not first")
        if role == "assistant" and m.get("tool_calls"):
            ids = [c.get("id") for c in m["tool_calls"]]
            if len(set(ids)) != len(ids):
                problems.append(f"message {i}: duplicate tool call ids")
            pending, open_calls = set(ids), True
    if pending:
        problems.append(f"end: calls {sorted(pending)} were never answered")
    return problems


def safe_keep_start(messages: Sequence[Mapping[str, Any]], start: int) -> int:
    """The largest index ``<= start`` at which a kept tail is well-formed.

    Walks backwards past ``tool`` messages to the assistant message that made the calls, so the
    tail never begins on (and hence never contains) an orphaned tool result.
    """
    start = max(0, min(start, len(messages)))
    while 0 < start < len(messages) and messages[start].get("role") == "tool":
        start -= 1
    return start


# --------------------------------------------------------------------------- live elision


def elide_transcript(
    messages: Sequence[Mapping[str, Any]],
    context_limit: int,
    keep_last: int = KEEP_LAST,
    compact_at_percent: float = COMPACT_AT_PERCENT,
    *,
    encoding: str = DEFAULT_ENCODING,
    marker: str = ELIDED,
) -> list[Message]:
    """A copy of ``messages`` with old tool results elided once past the threshold.

    Under ``compact_at_percent`` of ``context_limit`` the copy is unchanged. Above it, the
    content of every ``tool`` message except the last ``keep_last`` is replaced by ``marker``;
    nothing else changes, and the input is never mutated (the agent's own conversation stays
    intact, so the rewrite is repeatable per request).
    """
    if keep_last < 0:
        raise ConfigError(f"keep_last must be >= 0, got {keep_last}")
    limit = _threshold(context_limit, compact_at_percent)
    out = [copy.deepcopy(dict(m)) for m in messages]
    if transcript_tokens(messages, encoding) <= limit:
        return out
    tool_idx = [i for i, m in enumerate(out) if m.get("role") == "tool"]
    cut = len(tool_idx) - keep_last
    for i in tool_idx[: max(cut, 0)]:
        out[i]["content"] = marker
    return out


# --------------------------------------------------------------------------- digest


@dataclass(frozen=True)
class DigestRules:
    """How tool calls are classified for the must-preserve digest (all configurable)."""

    read_tools: re.Pattern[str] = re.compile(r"read|view|open|cat|show|get_file", re.I)
    edit_tools: re.Pattern[str] = re.compile(
        r"write|edit|patch|replace|create|insert|delete|move|rename", re.I
    )
    command_tools: re.Pattern[str] = re.compile(r"bash|shell|run|exec|command|terminal", re.I)
    path_keys: tuple[str, ...] = ("path", "file_path", "file", "filename", "target", "paths")
    command_keys: tuple[str, ...] = ("command", "cmd", "script", "args")
    exit_status: re.Pattern[str] = re.compile(
        r"(?:exit(?:ed)?(?:[ _]?(?:code|status))?|return code|rc)\s*[:=]?\s*(-?\d+)", re.I
    )
    failure: re.Pattern[str] = re.compile(
        r"^\s*(?:error|fatal|exception)\b|Traceback \(most recent call last\)|"
        r"\bno such file\b|\bpermission denied\b|\bcommand not found\b|\bfailed\b",
        re.I | re.M,
    )
    decision: re.Pattern[str] = re.compile(
        r"^\s*(?:[-*]\s*)?(?:decision|decided|plan|i will|i'll|we will|we'll|next,? i|"
        r"going to|approach)\b.*$",
        re.I | re.M,
    )
    max_item_chars: int = 200


DEFAULT_RULES = DigestRules()


@dataclass(frozen=True)
class Digest:
    """What must survive a compaction, in the order it is rendered."""

    files_read: list[str] = field(default_factory=list)
    files_edited: list[str] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    failed_calls: list[str] = field(default_factory=list)
    decisions: list[str] = field(default_factory=list)

    def render(self, dropped: int) -> str:
        sections = (
            ("Files read", self.files_read),
            ("Files edited", self.files_edited),
            ("Commands (exit status)", self.commands),
            ("Failed calls", self.failed_calls),
            ("Decisions", self.decisions),
        )
        lines = [
            f"[checkpoint summary: {dropped} earlier messages were compacted; "
            "the work so far is preserved below]"
        ]
        for title, items in sections:
            lines.append(f"## {title}")
            lines.extend(f"- {x}" for x in items or ["(none)"])
        return "\n".join(lines)


def _args(call: Mapping[str, Any]) -> dict[str, Any]:
    raw = call.get("function", {}).get("arguments", "")
    if isinstance(raw, Mapping):
        return dict(raw)
    try:
        parsed = json.loads(raw) if raw else {}
    except (TypeError, ValueError):
        return {"_raw": str(raw)}
    return parsed if isinstance(parsed, dict) else {"_raw": str(parsed)}


def _first(args: Mapping[str, Any], keys: Sequence[str]) -> list[str]:
    for k in keys:
        v = args.get(k)
        if isinstance(v, str) and v:
            return [v]
        if isinstance(v, list) and v:
            return [" ".join(map(str, v))] if k in ("args",) else [str(x) for x in v]
    return []


def _short(text: str, n: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def build_digest(
    messages: Sequence[Mapping[str, Any]], rules: DigestRules = DEFAULT_RULES
) -> Digest:
    """The must-preserve digest of ``messages`` (typically the ones being dropped)."""
    results: dict[str, str] = {}
    for m in messages:
        if m.get("role") == "tool" and m.get("tool_call_id") is not None:
            results[str(m["tool_call_id"])] = _content_text(m.get("content"))
    read: dict[str, None] = {}
    edited: dict[str, None] = {}
    commands: list[str] = []
    failed: list[str] = []
    decisions: dict[str, None] = {}
    n = rules.max_item_chars
    for m in messages:
        if m.get("role") != "assistant":
            continue
        for line in rules.decision.findall(_content_text(m.get("content"))):
            decisions[_short(line.strip().lstrip("-* "), n)] = None
        for call in m.get("tool_calls") or ():
            name = str(call.get("function", {}).get("name", ""))
            args = _args(call)
            result = results.get(str(call.get("id")))
            status_m = rules.exit_status.search(result or "")
            if rules.command_tools.search(name):
                cmd = " ".join(_first(args, rules.command_keys)) or args.get("_raw", name)
                status = status_m.group(1) if status_m else "?"  # no result or no status printed
                commands.append(f"`{_short(str(cmd), n)}` → exit {status}")
            elif rules.edit_tools.search(name):
                for p in _first(args, rules.path_keys):
                    edited[p] = None
            elif rules.read_tools.search(name):
                for p in _first(args, rules.path_keys):
                    read[p] = None
            exit_failed = status_m is not None and status_m.group(1) != "0"
            if result is not None and (exit_failed or rules.failure.search(result)):
                first = next((ln for ln in result.splitlines() if ln.strip()), "")
                failed.append(
                    f"{name}({_short(json.dumps(args, sort_keys=True), 80)}): {_short(first, n)}"
                )
    return Digest(list(read), list(edited), commands, failed, list(decisions))


# --------------------------------------------------------------------------- checkpoint


@dataclass
class CompactionState:
    """Carries the hysteresis pause between :func:`compact_checkpoint` calls."""

    paused: bool = False
    paused_at_tokens: int = 0

    def reset(self) -> None:
        self.paused = False
        self.paused_at_tokens = 0


@dataclass(frozen=True)
class CompactionResult:
    messages: list[Message]
    before_tokens: int
    after_tokens: int
    action: str  # "none", "paused", "elided", "digest"
    dropped: int = 0
    digest: Digest | None = None
    paused: bool = False


def compact_checkpoint(
    messages: Sequence[Mapping[str, Any]],
    context_limit: int,
    *,
    keep_last: int = KEEP_LAST,
    compact_at_percent: float = COMPACT_AT_PERCENT,
    hysteresis_percent: float = HYSTERESIS_PERCENT,
    state: CompactionState | None = None,
    encoding: str = DEFAULT_ENCODING,
    rules: DigestRules = DEFAULT_RULES,
) -> CompactionResult:
    """Compacts a checkpointed transcript to below ``compact_at_percent − hysteresis_percent``.

    1. Under the threshold: nothing happens (``action="none"``); a pause is lifted once the
       transcript is back under the target.
    2. Paused (``state.paused``): nothing happens (``action="paused"``).
    3. Elision (as :func:`elide_transcript`); if that reaches the target, done.
    4. Otherwise keep the system message and the first user message (the task), replace the
       middle by a user message carrying the :class:`Digest` of what is dropped, and keep the
       longest tail that fits, moved back by :func:`safe_keep_start` so no tool result is
       orphaned. If the result still misses the target, ``state`` is paused.
    """
    if not 0 <= hysteresis_percent < compact_at_percent:
        raise ConfigError("hysteresis_percent must be in [0, compact_at_percent)")
    threshold = _threshold(context_limit, compact_at_percent)
    target = context_limit * (compact_at_percent - hysteresis_percent) / 100
    state = state if state is not None else CompactionState()
    before = transcript_tokens(messages, encoding)
    original = [copy.deepcopy(dict(m)) for m in messages]
    if before <= threshold:
        if before <= target:
            state.reset()
        return CompactionResult(original, before, before, "none", paused=state.paused)
    if state.paused:
        return CompactionResult(original, before, before, "paused", paused=True)

    elided = elide_transcript(
        messages, context_limit, keep_last, compact_at_percent, encoding=encoding
    )
    after = transcript_tokens(elided, encoding)
    if after <= target:
        return CompactionResult(elided, before, after, "elided")

    head_end = 1 if elided and elided[0].get("role") == "system" else 0
    if head_end < len(elided) and elided[head_end].get("role") == "user":
        head_end += 1
    head = elided[:head_end]
    costs = [message_tokens(m, encoding) for m in elided]
    head_cost = sum(costs[:head_end])
    # The digest is built from the original (unelided) messages so tool results still tell
    # exit statuses and failures; its size depends on the tail, so search from the longest tail.
    start = len(elided)
    budget = target - head_cost
    while start > head_end and costs[start - 1] <= budget:
        budget -= costs[start - 1]
        start -= 1
    start = safe_keep_start(elided, start)
    if start < head_end:
        start = head_end
    best: tuple[list[Message], Digest, int] | None = None
    for s in range(start, len(elided) + 1):
        if s < len(elided) and elided[s].get("role") == "tool":
            continue
        digest = build_digest(original[head_end:s], rules)
        note = {"role": "user", "content": digest.render(s - head_end)}
        candidate = [*head, note, *elided[s:]]
        best = (candidate, digest, s - head_end)
        if transcript_tokens(candidate, encoding) <= target:
            break
    assert best is not None  # s == len(elided) is always a legal start
    compacted, digest, dropped = best
    after = transcript_tokens(compacted, encoding)
    paused = after > target
    if paused:
        state.paused, state.paused_at_tokens = True, after
    return CompactionResult(compacted, before, after, "digest", dropped, digest, paused)


# --------------------------------------------------------------------------- acceptance gate


#: "Sure! Here is the compressed context:" and friends — a reply about the document, not it.
PREAMBLE_RE = re.compile(
    r"\A\s*(?:sure|certainly|of course|absolutely|okay|ok|great|here(?:'s| is| are)|"
    r"below is|i(?:'ve| have) (?:compressed|summari[sz]ed|condensed))\b",
    re.I,
)
PATH_TOKEN_RE = re.compile(
    r"(?<![\w/.-])(?:[\w.-]+/)+[\w.-]+|(?<![\w/.-])[\w-]+\.(?:py|rs|go|ts|tsx|js|jsx|java|c|h|"
    r"cc|cpp|hpp|md|toml|json|ya?ml|txt|sh|sql|cfg|ini|lock)\b"
)
MIN_LENGTH_RATIO = 0.15
MAX_LENGTH_RATIO = 1.0
MIN_PATH_RETENTION = 0.8


@dataclass(frozen=True)
class AcceptResult:
    accepted: bool
    text: str  # the candidate when accepted, the original otherwise
    reasons: list[str] = field(default_factory=list)
    length_ratio: float = 0.0
    path_retention: float = 1.0


def path_tokens(text: str) -> set[str]:
    """Path-like tokens (``a/b.py``, ``pkg/mod``, ``setup.cfg``) with trailing dots removed."""
    return {t.rstrip(".") for t in PATH_TOKEN_RE.findall(text)}


def accept_compaction(
    original: str,
    candidate: str,
    *,
    min_ratio: float = MIN_LENGTH_RATIO,
    max_ratio: float = MAX_LENGTH_RATIO,
    min_path_retention: float = MIN_PATH_RETENTION,
    preamble: re.Pattern[str] = PREAMBLE_RE,
) -> AcceptResult:
    """Accepts a model-written compaction of ``original`` only if it is plausibly complete.

    Rejects an empty candidate, one starting with a chat preamble, one shorter than
    ``min_ratio`` or longer than ``max_ratio`` times the original (in characters), and one
    keeping fewer than ``min_path_retention`` of the original's path tokens.
    """
    reasons: list[str] = []
    ratio = len(candidate) / len(original) if original else (1.0 if not candidate else 0.0)
    paths = path_tokens(original)
    kept = path_tokens(candidate)
    retention = len(paths & kept) / len(paths) if paths else 1.0
    if not candidate.strip():
        reasons.append("candidate is empty")
    if preamble.search(candidate):
        reasons.append("candidate opens with a chat preamble")
    if original and ratio < min_ratio:
        reasons.append(f"length ratio {ratio:.2f} < {min_ratio}")
    if original and ratio > max_ratio:
        reasons.append(f"length ratio {ratio:.2f} > {max_ratio}")
    if retention < min_path_retention:
        missing = sorted(paths - kept)[:5]
        reasons.append(f"kept {retention:.0%} of path tokens; missing e.g. {missing}")
    ok = not reasons
    return AcceptResult(ok, candidate if ok else original, reasons, ratio, retention)


__all__ = [
    "COMPACT_AT_PERCENT",
    "DEFAULT_RULES",
    "ELIDED",
    "HYSTERESIS_PERCENT",
    "KEEP_LAST",
    "AcceptResult",
    "CompactionResult",
    "CompactionState",
    "Digest",
    "DigestRules",
    "accept_compaction",
    "build_digest",
    "compact_checkpoint",
    "elide_transcript",
    "message_tokens",
    "path_tokens",
    "safe_keep_start",
    "transcript_tokens",
    "validate_transcript",
]
