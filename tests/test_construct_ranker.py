"""The single model ranking call against a real OpenAI-shaped HTTP server, counting calls."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from construct_fixtures import cand

from ctxfast.construct import (
    ConstructConfig,
    OpenAICompatibleRanker,
    PlanNode,
    RankerError,
    construct,
)
from ctxfast.construct.pool import PoolInputs, build_pool
from ctxfast.construct.ranker import build_request, rank_residue

PLAN = PlanNode(
    "N1",
    "make session timeout honoured",
    "app.s.load",
    acceptance_criteria=("session timeout test passes",),
)


class _Server:
    """A chat-completions endpoint whose reply the test chooses; records every request."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.reply: str = ""
        self.raw_body: bytes | None = None
        self.delay = 0.0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                n = int(self.headers.get("Content-Length", "0"))
                outer.requests.append(
                    {
                        "path": self.path,
                        "auth": self.headers.get("Authorization"),
                        "body": json.loads(self.rfile.read(n)),
                    }
                )
                if outer.delay:
                    time.sleep(outer.delay)
                body = (
                    outer.raw_body
                    or json.dumps(
                        {
                            "choices": [
                                {
                                    "message": {"role": "assistant", "content": outer.reply},
                                    "finish_reason": "stop",
                                }
                            ]
                        }
                    ).encode()
                )
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join()


@pytest.fixture
def server():
    s = _Server()
    yield s
    s.close()


def _residue(n: int):
    cands = [
        cand(
            f"app.s.helper{i}",
            "app/s.py",
            10 * i + 1,
            f"def helper{i}(session, timeout):\n    secret_body_{i} = 1",
        )
        for i in range(n)
    ]
    pool = build_pool(PoolInputs("t", PLAN, candidates=cands), ConstructConfig())
    return [it for it in pool.items if it.meta.entity and it.meta.entity.startswith("app.s.h")]


def _reply(ids_scores):
    return json.dumps(
        {"rankings": [{"candidate_id": i, "relevance_score": s} for i, s in ids_scores]}
    )


def test_good_reply_admits_by_threshold_with_one_call(server, monkeypatch):
    monkeypatch.setenv("CTXFAST_TEST_KEY", "sk-test")
    res = _residue(3)
    server.reply = _reply([(res[0].id, 0.9), (res[1].id, 0.5), (res[2].id, 0.49)])
    ranker = OpenAICompatibleRanker(server.url, "m", "CTXFAST_TEST_KEY")
    out = rank_residue(res, PLAN, ranker, ConstructConfig())
    assert out.calls == 1 and len(server.requests) == 1
    assert out.admitted == {res[0].id: 0.9, res[1].id: 0.5}
    req = server.requests[0]
    assert req["path"] == "/v1/chat/completions" and req["auth"] == "Bearer sk-test"
    body = req["body"]
    assert body["temperature"] == 0 and body["max_completion_tokens"] == 1024
    assert body["response_format"]["type"] == "json_schema"
    user = body["messages"][1]["content"]
    # Obligation, then question, then residue signatures — never bodies.
    assert (
        user.index("current_obligation") < user.index("decision_question") < user.index("residue")
    )
    assert "def helper0(session, timeout)" in user and "secret_body" not in user


@pytest.mark.parametrize(
    "reply",
    [
        "not json",
        json.dumps({"rankings": "nope"}),
        json.dumps({"rankings": [], "extra": 1}),
        json.dumps({"rankings": [{"candidate_id": "E0", "relevance_score": 0.9}]}),
        "OUT_OF_RANGE",
        "TOO_MANY",
        "BOOL_SCORE",
        "DUPLICATE",
    ],
)
def test_malformed_reply_rejects_whole_residue_without_retry(server, reply):
    res = _residue(3)
    if reply == "OUT_OF_RANGE":
        reply = _reply([(res[0].id, 1.5)])
    elif reply == "TOO_MANY":
        reply = _reply([(res[0].id, 0.9)] * 33)
    elif reply == "BOOL_SCORE":
        reply = _reply([(res[0].id, True)])
    elif reply == "DUPLICATE":
        reply = _reply([(res[0].id, 0.9), (res[0].id, 0.8)])
    server.reply = reply
    out = rank_residue(res, PLAN, OpenAICompatibleRanker(server.url, "m", None), ConstructConfig())
    assert out.admitted == {} and out.calls == 1
    assert len(server.requests) == 1  # never a second call
    assert all(e.decision == "rejected" and "no retry" in e.driver for e in out.log)


def test_slow_reply_times_out_and_rejects(server):
    res = _residue(2)
    server.reply = _reply([(res[0].id, 0.9)])
    server.delay = 2.0
    ranker = OpenAICompatibleRanker(server.url, "m", None, timeout_s=0.3)
    out = rank_residue(res, PLAN, ranker, ConstructConfig())
    assert out.admitted == {} and out.calls == 1 and len(server.requests) == 1


def test_oversize_response_is_cut_and_rejected(server):
    res = _residue(2)
    server.raw_body = b'{"choices": [{"message": {"content": "' + b"x" * 200_000 + b'"}}]}'
    ranker = OpenAICompatibleRanker(server.url, "m", None, max_response_bytes=64 * 1024)
    with pytest.raises(RankerError, match="exceeds"):
        ranker.rank(build_request(res, PLAN, ConstructConfig()))
    out = rank_residue(res, PLAN, ranker, ConstructConfig())
    assert out.admitted == {} and out.calls == 1


def test_unreachable_endpoint_is_a_clean_rejection():
    res = _residue(2)
    ranker = OpenAICompatibleRanker("http://127.0.0.1:9/v1", "m", None, timeout_s=1.0)
    out = rank_residue(res, PLAN, ranker, ConstructConfig())
    assert out.admitted == {} and out.calls == 1


def test_pipeline_calls_once_only_on_small_residue(server):
    cands = [cand("app.s.load", "app/s.py", 500, "def load(session, timeout): pass", 0.9)]
    cands += [
        cand(f"app.s.helper{i}", "app/s.py", 10 * i + 1, f"def helper{i}(session, timeout): pass")
        for i in range(3)
    ]
    pool = build_pool(PoolInputs("t", PLAN, candidates=cands), ConstructConfig())
    helper_ids = [it.id for it in pool.items if it.meta.entity == "app.s.helper1"]
    server.reply = _reply([(helper_ids[0], 0.95)])
    ranker = OpenAICompatibleRanker(server.url, "m", None)
    ctx = construct(
        "fix session timeout",
        candidates=cands,
        plan=PLAN,
        ranker=ranker,
        config=ConstructConfig(drop_filler=False),
    )
    assert ctx.model_calls == 1 and len(server.requests) == 1
    assert any(helper_ids[0] in e.item_id.split("+") for e in ctx.window)
    # No ranker and the evidence ranker off: the residue is rejected, zero calls (the
    # frugal window).
    frugal = ConstructConfig(evidence_ranker=False)
    ctx0 = construct("fix session timeout", candidates=cands, plan=PLAN, config=frugal)
    assert ctx0.model_calls == 0
    assert not any(helper_ids[0] in e.item_id.split("+") for e in ctx0.window)
    # An oversize residue (>32) is folded or rejected without any call.
    many = cands + [
        cand(f"app.s.h{i}x", "app/s.py", 1000 + 10 * i, f"def h{i}x(session, timeout): pass")
        for i in range(40)
    ]
    ctx2 = construct("fix session timeout", candidates=many, plan=PLAN, ranker=ranker)
    assert ctx2.model_calls == 0 and len(server.requests) == 1
    assert any(e.stage == "fold" for e in ctx2.admission_log)
