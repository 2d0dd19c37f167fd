"""Hostile LLM servers against the ranker, each a real HTTP server on 127.0.0.1 inside a
guarded child: a server that trickles its headers one byte at a time used to hold the call
for 40 s with ``timeout_s=3`` (the deadline was checked only in the body loop), and a
gzip-bombed reply cost +130 MB before the 64 KiB cap bit."""

from __future__ import annotations

from pathlib import Path

from hostile_guard import run_guarded

SERVER = """
import gzip, json, socket, threading, time
from ctxfast.construct.ranker import OpenAICompatibleRanker, RankerError, RankRequest

def serve(sock, behaviour):
    conn, _ = sock.accept()
    conn.recv(65536)
    if behaviour == "trickle":
        conn.sendall(b"HTTP/1.1 200 OK\\r\\n")
        try:
            while True:
                conn.sendall(b"X")
                time.sleep(0.2)
        except OSError:
            return
    if behaviour == "gzip-bomb":
        body = gzip.compress(bytes(64 << 20), compresslevel=1)
        head = (
            "HTTP/1.1 200 OK\\r\\nContent-Type: application/json\\r\\n"
            f"Content-Encoding: gzip\\r\\nContent-Length: {len(body)}\\r\\n\\r\\n"
        )
        conn.sendall(head.encode() + body)
        conn.close()

sock = socket.socket()
sock.bind(("127.0.0.1", 0))
sock.listen(1)
threading.Thread(target=serve, args=(sock, BEHAVIOUR), daemon=True).start()
ranker = OpenAICompatibleRanker(
    f"http://127.0.0.1:{sock.getsockname()[1]}", "m", None, timeout_s=1.0
)
request = RankRequest(messages=({"role": "user", "content": "rank"},), candidate_ids=("a",),
                      schema={}, temperature=0.0, max_completion_tokens=16)
try:
    ranker.rank(request)
    print("accepted")
except RankerError as exc:
    print(f"RankerError: {exc}")
"""


def run(behaviour: str, tmp_path: Path) -> str:
    return run_guarded(f"BEHAVIOUR = {behaviour!r}\n" + SERVER, cwd=tmp_path, timeout=30)


def test_a_server_trickling_its_headers_hits_the_overall_deadline(tmp_path: Path) -> None:
    assert run("trickle", tmp_path).strip() == "RankerError: ranker exchange took over 1.0 s"


def test_a_gzip_bombed_reply_is_refused_not_inflated(tmp_path: Path) -> None:
    out = run("gzip-bomb", tmp_path).strip()
    assert out == "RankerError: ranker response is gzip-encoded (refused)"
