"""The single LLM step: relevance ranking of the gate's unresolved residue.

The harness, not the model, decides: the prompt carries the obligation, the decision
question and residue *signatures* (never bodies); the reply is validated strictly against
the ranking schema; a score ≥ threshold admits. Anything malformed, out of range, oversize
or late rejects the whole residue, and there is never a second call.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

from ctxfast.construct.schema import EvidenceItem, LogEntry, PlanNode
from ctxfast.errors import CtxfastError, InvalidArgumentError

if TYPE_CHECKING:
    from ctxfast.construct.config import ConstructConfig


@dataclass(frozen=True)
class RankerSettings:
    """How the residue is ranked (``ConstructConfig.ranking``): by a model ranker when the
    caller gives one (``compose(ranker=)``), else from the retrieval evidence."""

    FLAT_NAMES: ClassVar[Mapping[str, str]] = {}

    #: Without a model ranker, rank the residue once, deterministically, from the retrieval
    #: evidence. Off keeps the frugal window: only what the gate admitted.
    evidence_ranker: bool = True
    #: A model ranker is called only when the residue holds at most this many items (32):
    #: the cap bounds the prompt and the reply. A larger residue is folded without a call.
    residue_cap: int = 32
    #: A model's pick is kept when it scores at least this (0.5, in [0, 1]).
    score_threshold: float = 0.5
    #: The most tokens the model may reply with (1,024): enough for 32 scored items.
    max_completion_tokens: int = 1024
    #: The model's sampling temperature (0: the same residue gets the same ranking).
    temperature: float = 0.0
    #: A reply longer than this many bytes (64 KB) is refused as malformed.
    ranker_max_response_bytes: int = 64 * 1024
    #: Each residue item is shown to the model as one signature line cut to this many
    #: characters (200): a long parameter list cannot swell the prompt.
    residue_signature_chars: int = 200

    def __post_init__(self) -> None:
        for name in ("residue_cap", "max_completion_tokens"):
            if getattr(self, name) < 0:
                raise InvalidArgumentError(f"{name} must be non-negative")
        if not 0.0 <= self.score_threshold <= 1.0:
            raise InvalidArgumentError("score_threshold must lie in [0, 1]")


RANKING_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["rankings"],
    "properties": {
        "rankings": {
            "type": "array",
            "maxItems": 32,
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["candidate_id", "relevance_score"],
                "properties": {
                    "candidate_id": {"type": "string"},
                    "relevance_score": {"type": "number", "minimum": 0, "maximum": 1},
                },
            },
        }
    },
}

SYSTEM_PROMPT = (
    "You rank candidate context for one coding decision. For each candidate id, give a "
    "relevance_score in [0,1] for how much the decision needs it. Reply with JSON only, "
    'exactly {"rankings": [{"candidate_id": str, "relevance_score": number}]}.'
)


class RankerError(CtxfastError):
    """The ranking call failed (transport, status, timeout or an oversize response)."""


@dataclass(frozen=True)
class RankRequest:
    """The deterministic prompt of the one call, with the parameters it must be sent with."""

    messages: tuple[dict[str, str], ...]
    candidate_ids: tuple[str, ...]
    temperature: float
    max_completion_tokens: int
    schema: dict[str, Any]


@runtime_checkable
class Ranker(Protocol):
    """Anything that performs the one ranking call and returns the model's raw reply text."""

    def rank(self, request: RankRequest) -> str: ...


@dataclass(frozen=True)
class RankOutcome:
    """What the ranking step decided: admitted ids with scores, calls made (0 or 1), log."""

    admitted: dict[str, float]
    calls: int
    log: tuple[LogEntry, ...]


def residue_signature(item: EvidenceItem, max_chars: int) -> str:
    """The signature line the model sees for a residue item (never its body)."""
    if item.meta.signature:
        sig = item.meta.signature
    else:
        first = next((ln.strip() for ln in item.content.splitlines() if ln.strip()), "")
        sig = first
    if item.meta.entity and item.meta.entity not in sig:
        sig = f"{item.meta.entity}: {sig}"
    sig = " ".join(sig.split())
    return sig[:max_chars]


def build_request(
    residue: Sequence[EvidenceItem], plan: PlanNode, config: ConstructConfig
) -> RankRequest:
    """Assemble the prompt in one fixed order: obligation, question, residue."""
    obligation = plan.obligation
    if plan.acceptance_criteria:
        obligation += "\nAcceptance criteria:\n" + "\n".join(
            f"- {c}" for c in plan.acceptance_criteria
        )
    records = [
        {
            "id": it.id,
            "kind": it.kind.value,
            "signature": residue_signature(it, config.ranking.residue_signature_chars),
        }
        for it in residue
    ]
    user = (
        f"current_obligation:\n{obligation}\n\n"
        f"decision_question:\n{plan.question()}\n\n"
        f"residue:\n{json.dumps(records, ensure_ascii=False, sort_keys=True)}"
    )
    schema = json.loads(json.dumps(RANKING_SCHEMA))
    schema["properties"]["rankings"]["maxItems"] = config.ranking.residue_cap
    return RankRequest(
        messages=({"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}),
        candidate_ids=tuple(it.id for it in residue),
        temperature=config.ranking.temperature,
        max_completion_tokens=config.ranking.max_completion_tokens,
        schema=schema,
    )


def parse_reply(
    reply: str, candidate_ids: Sequence[str], config: ConstructConfig
) -> dict[str, float]:
    """Strictly validate a reply; raises ``ValueError`` describing the first violation."""
    if len(reply.encode("utf-8")) > config.ranking.ranker_max_response_bytes:
        raise ValueError("reply exceeds the response size cap")
    data = json.loads(reply)
    if not isinstance(data, dict) or set(data) != {"rankings"}:
        raise ValueError("reply must be an object with exactly the key 'rankings'")
    rankings = data["rankings"]
    if not isinstance(rankings, list):
        raise ValueError("'rankings' must be an array")
    if len(rankings) > config.ranking.residue_cap:
        raise ValueError(
            f"{len(rankings)} records exceed the residue cap {config.ranking.residue_cap}"
        )
    allowed = set(candidate_ids)
    scores: dict[str, float] = {}
    for rec in rankings:
        if not isinstance(rec, dict) or set(rec) != {"candidate_id", "relevance_score"}:
            raise ValueError("each record must hold exactly candidate_id and relevance_score")
        cid, score = rec["candidate_id"], rec["relevance_score"]
        if not isinstance(cid, str) or cid not in allowed:
            raise ValueError(f"candidate_id {cid!r} is not a residual candidate")
        if cid in scores:
            raise ValueError(f"candidate_id {cid!r} ranked twice")
        if isinstance(score, bool) or not isinstance(score, int | float):
            raise ValueError(f"relevance_score of {cid} is not a number")
        if not 0.0 <= float(score) <= 1.0:
            raise ValueError(f"relevance_score {score} of {cid} is outside [0, 1]")
        scores[cid] = float(score)
    return scores


def rank_residue(
    residue: Sequence[EvidenceItem], plan: PlanNode, ranker: Ranker | None, config: ConstructConfig
) -> RankOutcome:
    """Run the ranking step: fire only on a non-empty residue ≤ cap with a ranker, call once."""
    ids = [it.id for it in residue]
    if not residue:
        return RankOutcome({}, 0, ())
    if len(residue) > config.ranking.residue_cap:
        raise InvalidArgumentError("an oversize residue must be folded, never ranked")
    if ranker is None:
        none = tuple(
            LogEntry("rank", i, "rejected", "no ranker configured (frugal window)") for i in ids
        )
        return RankOutcome({}, 0, none)
    request = build_request(residue, plan, config)
    try:
        reply = ranker.rank(request)
        scores = parse_reply(reply, ids, config)
    except Exception as exc:  # fail-soft boundary: any failure is the frugal window
        reason = f"ranking call failed, residue rejected, no retry: {type(exc).__name__}: {exc}"
        return RankOutcome({}, 1, tuple(LogEntry("rank", i, "rejected", reason) for i in ids))
    admitted: dict[str, float] = {}
    log: list[LogEntry] = []
    for i in ids:
        s = scores.get(i)
        if s is not None and s >= config.ranking.score_threshold:
            admitted[i] = s
            log.append(LogEntry("rank", i, "admitted", f"ranker score {s:.3f}"))
        else:
            shown = "unranked" if s is None else f"{s:.3f}"
            log.append(
                LogEntry(
                    "rank",
                    i,
                    "rejected",
                    f"ranker score {shown} < {config.ranking.score_threshold}",
                )
            )
    return RankOutcome(admitted, 1, tuple(log))


class OpenAICompatibleRanker:
    """A :class:`Ranker` over any OpenAI-compatible ``/chat/completions`` endpoint.

    Sends JSON-schema ``response_format``, ``temperature`` and ``max_completion_tokens`` from
    the request; reads at most ``max_response_bytes`` of the HTTP body (an endless or huge
    reply cannot exhaust memory); never retries. The API key is read from the environment
    variable ``api_key_env`` at call time, so it is never stored on the object.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key_env: str | None = "OPENAI_API_KEY",
        *,
        timeout_s: float = 30.0,
        max_response_bytes: int = 64 * 1024,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key_env = api_key_env
        self.timeout_s = timeout_s
        self.max_response_bytes = max_response_bytes

    def _payload(self, request: RankRequest) -> dict[str, Any]:
        return {
            "model": self.model,
            "messages": list(request.messages),
            "temperature": request.temperature,
            "max_completion_tokens": request.max_completion_tokens,
            "response_format": {
                "type": "json_schema",
                "json_schema": {
                    "name": "relevance_rankings",
                    "strict": True,
                    "schema": request.schema,
                },
            },
        }

    def rank(self, request: RankRequest) -> str:
        """POST once; return ``choices[0].message.content`` or raise :class:`RankerError`.

        ``timeout_s`` bounds the whole exchange, not each socket read: httpx's timeouts are
        per operation, so a server trickling one header byte at a time never tripped them
        (40 s with ``timeout_s=3``). The exchange runs on a helper thread; past the deadline
        the call fails and the client is closed under the thread (its next read fails, so it
        ends within one read timeout). The
        body is read raw with ``Accept-Encoding: identity``: a compressed reply is refused
        rather than inflated, so a gzip bomb costs at most ``max_response_bytes``."""
        import httpx  # here, not at import: it costs a fifth of a second of every cold start

        headers = {"Content-Type": "application/json", "Accept-Encoding": "identity"}
        key = os.environ.get(self.api_key_env) if self.api_key_env else None
        if key:
            headers["Authorization"] = f"Bearer {key}"
        url = f"{self.base_url}/chat/completions"
        body = bytearray()
        failure: list[BaseException] = []
        client = httpx.Client(timeout=self.timeout_s, transport=httpx.HTTPTransport(retries=0))

        def exchange() -> None:
            try:
                with client.stream(
                    "POST", url, json=self._payload(request), headers=headers
                ) as resp:
                    if resp.status_code != 200:
                        raise RankerError(f"ranker endpoint returned HTTP {resp.status_code}")
                    encoding = resp.headers.get("content-encoding", "identity").strip().lower()
                    if encoding not in ("", "identity"):
                        raise RankerError(f"ranker response is {encoding}-encoded (refused)")
                    for chunk in resp.iter_raw():
                        body.extend(chunk)
                        if len(body) > self.max_response_bytes:
                            raise RankerError(
                                f"ranker response exceeds {self.max_response_bytes} bytes"
                            )
            except RankerError as exc:
                failure.append(exc)
            except httpx.HTTPError as exc:
                failure.append(RankerError(f"ranker call failed: {type(exc).__name__}: {exc}"))

        worker = threading.Thread(target=exchange, name="ctxfast-ranker", daemon=True)
        worker.start()
        worker.join(self.timeout_s)
        late = worker.is_alive()
        client.close()
        if late:
            raise RankerError(f"ranker exchange took over {self.timeout_s} s")
        if failure:
            raise failure[0]
        try:
            data = json.loads(body)
            content = data["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise RankerError("ranker response is not a chat-completions object") from exc
        if not isinstance(content, str):
            raise RankerError("ranker message content is not a string")
        return content


__all__ = [
    "RANKING_SCHEMA",
    "OpenAICompatibleRanker",
    "RankOutcome",
    "RankRequest",
    "Ranker",
    "RankerError",
    "build_request",
    "parse_reply",
    "rank_residue",
    "residue_signature",
]
