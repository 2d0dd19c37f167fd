"""``ctxfast mcp`` end to end: the MCP SDK's own client drives the server as a subprocess
over stdio — list the tools, call each, edit a file between calls, send bad arguments."""

from __future__ import annotations

import sys

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from recon_fixture import FILES, write_project

import ctxfast

TOOLS = {"compose", "retrieve", "repo_map", "excerpt", "graph", "status", "index"}
TASK = "connect should reject an empty database uri"


async def _session_run(root, idx, body):
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "ctxfast", "mcp", str(root), "--index-dir", str(idx)],
        cwd=root,  # the server's start directory is an allowed root: keep it in tmp_path
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        return await body(session)


def _run(root, idx, body):
    return anyio.run(_session_run, root, idx, body)


def _ok(result):
    assert not result.is_error, result.content
    return result.structured_content


def test_every_tool_answers_over_stdio_and_sees_edits(tmp_path):
    root = write_project(tmp_path / "proj")
    idx = tmp_path / "idx"

    async def body(s):
        listed = await s.list_tools()
        by_name = {t.name: t for t in listed.tools}
        assert set(by_name) == TOOLS
        assert by_name["compose"].input_schema["required"] == ["task"]
        assert "token_count" in by_name["compose"].output_schema["properties"]

        built = _ok(await s.call_tool("index", {}))
        assert built["files_parsed"] == len([f for f in FILES if f.endswith(".py")])

        win = _ok(await s.call_tool("compose", {"task": TASK, "ceiling": 3000}))
        assert win["token_count"] <= 3000 == win["max_tokens"]
        assert win["token_count"] == ctxfast.count_tokens(win["text"])
        assert "def connect(uri: str):" in win["text"]
        # The fill size is the client's to set, separately from the ceiling (a fill size the
        # ceiling cannot hold is a tool error, below).
        sized = _ok(await s.call_tool("compose", {"task": TASK, "ceiling": 3000, "target": 400}))
        assert sized["token_count"] <= 3000 and "def connect(uri: str):" in sized["text"]

        got = _ok(await s.call_tool("retrieve", {"task": TASK, "max_tokens": 400}))
        assert got["token_count"] <= 400
        assert got["candidates"][0]["qualname"] == "pkg.db.connect"
        assert got["ranked_files"][0] == "pkg/db.py"

        m = _ok(await s.call_tool("repo_map", {"max_tokens": 200}))
        assert m["token_count"] <= 200 and "pkg/cli.py" in m["text"]

        ex = _ok(await s.call_tool("excerpt", {"file": "pkg/db.py", "identifiers": ["connect"]}))
        assert "def connect" in ex["text"]

        g = _ok(await s.call_tool("graph", {"symbol": "pkg.db.connect"}))
        assert g["definition"]["file"] == "pkg/db.py"
        assert [c["qualname"] for c in g["callers"]] == ["pkg.cli.main"]

        st = _ok(await s.call_tool("status", {}))
        assert st["indexed"] is True and st["index_dir"] == str(idx)

        # The agent edits a file between two calls: the next answer shows the edit.
        (root / "pkg" / "db.py").write_text(
            FILES["pkg/db.py"].replace("return uri", 'raise ValueError("uri is empty now")')
        )
        again = _ok(await s.call_tool("retrieve", {"task": TASK}))
        assert "uri is empty now" in again["text"]

        # Bad arguments and failing calls are tool errors; the server keeps serving.
        for name, args in [
            ("compose", {"task": ""}),
            ("compose", {"task": TASK, "ceiling": -5}),
            ("compose", {"task": TASK, "ceiling": 1000, "target": 2000}),
            ("retrieve", {"max_tokens": 10}),
            ("graph", {"symbol": "no.such.symbol"}),
            ("excerpt", {"file": "../outside.py"}),
            ("status", {"root": str(tmp_path / "missing")}),
        ]:
            res = await s.call_tool(name, args)
            assert res.is_error, (name, args)
            assert res.content and res.content[0].text
        return _ok(await s.call_tool("repo_map", {"max_tokens": 50}))

    last = _run(root, idx, body)
    assert last["token_count"] <= 50
    assert not (root / ".ctxfast").exists()  # the index went where it was told


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_the_tools_answer_over_streamable_http_on_loopback(tmp_path):
    """``ctxfast mcp --http``: the SDK's streamable HTTP client, sending the bearer token
    from ``CTXFAST_MCP_TOKEN``, reaches the same tools at ``http://127.0.0.1:PORT/mcp``, on a
    real server process."""
    import os
    import socket
    import subprocess
    import time

    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    root = write_project(tmp_path / "proj")
    port = _free_port()
    token = "test-token-for-this-server"
    args = ["mcp", str(root), "--index-dir", str(tmp_path / "idx"), "--http", "--port", str(port)]
    server = subprocess.Popen(
        [sys.executable, "-m", "ctxfast", *args],
        cwd=root,
        env={**os.environ, "CTXFAST_MCP_TOKEN": token},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        deadline = time.monotonic() + 60
        while True:  # until the server listens (a fresh interpreter, then uvicorn)
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert server.poll() is None, server.stderr.read() if server.stderr else ""
                assert time.monotonic() < deadline, "the HTTP server never listened"
                time.sleep(0.2)

        async def session_run():
            headers = {"Authorization": f"Bearer {token}"}
            async with (
                httpx2.AsyncClient(headers=headers, timeout=60) as http,
                streamable_http_client(url, http_client=http) as streams,
                ClientSession(streams[0], streams[1]) as s,
            ):
                await s.initialize()
                names = {t.name for t in (await s.list_tools()).tools}
                win = _ok(await s.call_tool("compose", {"task": TASK, "ceiling": 2000}))
                bad = await s.call_tool("compose", {"task": ""})
                return names, win, bad

        names, win, bad = anyio.run(session_run)
        assert names == TOOLS
        assert win["token_count"] <= 2000 and "def connect(uri: str):" in win["text"]
        assert bad.is_error and server.poll() is None  # a tool error, the server keeps serving
    finally:
        server.terminate()
        server.wait(timeout=30)
