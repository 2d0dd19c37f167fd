"""The MCP server against a hostile client: each security defect of the MCP issue as a case.

The client is the SDK's own (``mcp.Client`` on the server in-process, the stdio client on a
server process, real HTTP on 127.0.0.1). A case that could hang the test process (a call
stuck behind a held lock, a disconnect waiting for a thread) runs in a child process under
the hostile watchdog (``hostile_guard.run_guarded``); the others carry an anyio watchdog.
Nothing asserts a duration: time bounds are set small and a generous watchdog catches a hang.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from hostile_guard import run_guarded
from hostile_repos import SECRET, outside_file, pager_repo
from mcp import Client

from ctxfast import confine
from ctxfast.confine import ConfinementError, read_confined
from ctxfast.mcp_server import (
    MAX_IDENTIFIER_NAMES,
    MAX_LIST_ITEMS,
    MAX_TEXT_CHARS,
    TOKEN_ENV,
    Repositories,
    build_server,
)
from ctxfast.repository import DEFAULT_MAX_FILE_BYTES

HERE = Path(__file__).resolve().parent
#: Seconds an in-process case may take before its watchdog calls it a hang.
WATCHDOG_S = 120


def session(server: Any, body: Any) -> Any:
    """``body(client)`` on an SDK client connected to ``server`` in-process, under a
    watchdog."""

    async def main() -> Any:
        with anyio.fail_after(WATCHDOG_S):
            async with Client(server, mode="legacy") as client:
                return await body(client)

    return anyio.run(main)


def text(result: Any) -> str:
    return "\n".join(getattr(c, "text", "") for c in result.content)


def refused(result: Any) -> str:
    """The one plain line of a tool error (the call must have failed)."""
    assert result.is_error, result.structured_content
    return text(result)


def answered(result: Any) -> dict[str, Any]:
    assert not result.is_error, text(result)
    return result.structured_content  # type: ignore[no-any-return]


# 6 -- client-chosen roots, HTTP without authentication ---------------------------------------


def test_a_root_outside_the_allowed_roots_is_a_tool_error(tmp_path: Path) -> None:
    """``excerpt {"root": "/etc"}`` read any file, ``/proc/self`` the server's environment,
    and ``index`` wrote ``.ctxfast/`` anywhere: only allowed roots (and directories inside
    them, links resolved) are served now."""
    secret = outside_file(tmp_path)
    area = tmp_path / "area"
    pager_repo(area / "repo")
    pager_repo(area / "other")
    (area / "repo" / "escape").symlink_to(secret.parent, target_is_directory=True)
    server = build_server(Repositories(area / "repo", roots=[area]))

    async def body(c: Any) -> None:
        attacks = [
            ("excerpt", {"root": "/etc", "file": "passwd"}),
            ("excerpt", {"root": "/proc/self", "file": "environ"}),
            ("excerpt", {"root": str(secret.parent), "file": secret.name}),
            ("excerpt", {"root": str(area / "repo" / "escape"), "file": secret.name}),
            ("excerpt", {"root": str(area / ".." / "outside"), "file": secret.name}),
            ("index", {"root": str(secret.parent)}),
        ]
        for name, args in attacks:
            line = refused(await c.call_tool(name, args))
            assert "outside the roots" in line and "\n" not in line, line
            assert SECRET not in line
        assert not (secret.parent / ".ctxfast").exists()
        # Allowed: the default root, a sibling inside the allowed area, the area itself.
        assert "next_page" in answered(await c.call_tool("excerpt", {"file": "pager.py"}))["text"]
        other = {"root": str(area / "other"), "file": "pager.py"}
        assert "next_page" in answered(await c.call_tool("excerpt", other))["text"]
        answered(await c.call_tool("status", {"root": str(area)}))

    session(server, body)


def test_the_cli_allows_its_start_directory_path_and_each_root_option(tmp_path: Path) -> None:
    """``ctxfast mcp PATH --root DIR`` over stdio: PATH, the start directory and DIR (and
    what is inside them) are served, nothing else."""
    from mcp.client.stdio import StdioServerParameters

    secret = outside_file(tmp_path)
    start = tmp_path / "start"
    pager_repo(start / "sub")
    extra = tmp_path / "extra"
    pager_repo(extra)
    repo = tmp_path / "repo"
    pager_repo(repo)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "ctxfast", "mcp", str(repo), "--root", str(extra)],
        cwd=start,
    )

    async def body(c: Any) -> None:
        for root in (repo, start / "sub", extra):
            got = await c.call_tool("excerpt", {"root": str(root), "file": "pager.py"})
            assert "next_page" in answered(got)["text"]
        bad = await c.call_tool("excerpt", {"root": str(secret.parent), "file": secret.name})
        assert "outside the roots" in refused(bad)

    session(params, body)


def _free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def _start_http(
    tmp_path: Path, *extra: str, host: str = "127.0.0.1", env: dict[str, str] | None = None
) -> tuple[subprocess.Popen[bytes], int, Path]:
    """A ``ctxfast mcp --http`` process (stderr to a file, read while it runs) once it
    listens."""
    repo = pager_repo(tmp_path / "repo").parent
    port = _free_port(host)
    log = tmp_path / "stderr.txt"
    args = ["mcp", str(repo), "--http", "--host", host, "--port", str(port), *extra]
    environ = {k: v for k, v in os.environ.items() if k != TOKEN_ENV} | (env or {})
    with log.open("wb") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "ctxfast", *args],
            cwd=repo,
            env=environ,
            stdout=subprocess.DEVNULL,
            stderr=err,
            start_new_session=True,
        )
    deadline = time.monotonic() + WATCHDOG_S
    while True:
        try:
            socket.create_connection((host, port), timeout=1).close()
            return proc, port, log
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                _stop(proc)
                pytest.fail(f"the HTTP server never listened:\n{log.read_text()}")
            time.sleep(0.2)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "hostile", "version": "0"},
    },
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}


def test_http_needs_the_bearer_token_printed_at_start(tmp_path: Path) -> None:
    """``--http`` had no authentication: any local process (or a browser page) could call
    the tools. Now every request without the token is 401; the generated token is printed
    once to stderr; the Host check against DNS rebinding still applies with the token."""
    proc, port, log = _start_http(tmp_path)
    try:
        lines = [ln for ln in log.read_text().splitlines() if "Bearer " in ln]
        assert len(lines) == 1, log.read_text()
        token = lines[0].split("Bearer ", 1)[1].split("'")[0]
        url = f"http://127.0.0.1:{port}/mcp"
        with httpx.Client(timeout=60) as http:
            for auth in (None, "Bearer wrong", f"Basic {token}", f"Bearer {token}x"):
                headers = MCP_HEADERS | ({"Authorization": auth} if auth else {})
                assert http.post(url, json=INITIALIZE, headers=headers).status_code == 401
            assert http.get(url).status_code == 401
            good = MCP_HEADERS | {"Authorization": f"Bearer {token}"}
            assert http.post(url, json=INITIALIZE, headers=good).status_code == 200
            rebound = good | {"Host": "attacker.example"}
            assert http.post(url, json=INITIALIZE, headers=rebound).status_code == 421
            foreign = good | {"Origin": "http://attacker.example"}
            assert http.post(url, json=INITIALIZE, headers=foreign).status_code == 403
        assert proc.poll() is None
    finally:
        _stop(proc)
    assert token not in log.read_text().split(token, 1)[1]  # printed once


def test_a_non_loopback_host_needs_allow_remote_and_then_warns(tmp_path: Path) -> None:
    refused_run = subprocess.run(
        [sys.executable, "-m", "ctxfast", "mcp", str(tmp_path), "--http", "--host", "0.0.0.0"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=WATCHDOG_S,
    )
    assert refused_run.returncode != 0
    assert "--allow-remote" in refused_run.stderr and "0.0.0.0" in refused_run.stderr
    # 127.0.0.2 is not one of the three loopback names the server accepts, yet it stays on
    # this machine: the test can serve it.
    env = {TOKEN_ENV: "a-token-from-the-environment"}
    proc, port, log = _start_http(tmp_path, "--allow-remote", host="127.0.0.2", env=env)
    try:
        err = log.read_text()
        assert "WARNING" in err and "127.0.0.2" in err
        assert "a-token-from-the-environment" not in err  # a chosen token is not printed
        with httpx.Client(timeout=60) as http:
            url = f"http://127.0.0.2:{port}/mcp"
            assert http.post(url, json=INITIALIZE, headers=MCP_HEADERS).status_code == 401
            good = MCP_HEADERS | {"Authorization": "Bearer a-token-from-the-environment"}
            assert http.post(url, json=INITIALIZE, headers=good).status_code == 200
    finally:
        _stop(proc)


# 7 -- check-then-read through a link -------------------------------------------------------


def test_excerpt_never_follows_a_link_even_one_inside_the_root(tmp_path: Path) -> None:
    """The path was checked, then opened following a final link: a link is now never
    followed (the file is opened by descriptor, component by component, O_NOFOLLOW)."""
    secret = outside_file(tmp_path)
    repo = tmp_path / "repo"
    pager_repo(repo)
    (repo / "inside_link.py").symlink_to(repo / "pager.py")
    (repo / "outside_link.py").symlink_to(secret)
    (repo / "sub").mkdir()
    (repo / "sub" / "up.py").symlink_to(secret)
    server = build_server(Repositories(repo, roots=[]))

    async def body(c: Any) -> None:
        for rel in ("inside_link.py", "outside_link.py", "sub/up.py", "sub/../pager.py"):
            line = refused(await c.call_tool("excerpt", {"file": rel}))
            assert SECRET not in line and "\n" not in line

    session(server, body)


def test_excerpt_never_leaks_a_file_swapped_for_a_link(tmp_path: Path) -> None:
    """The reported race: a file swapped for a link to an outside file while ``excerpt``
    ran. A swapper thread flips the file atomically while the client asks, many times."""
    secret = outside_file(tmp_path)
    repo = tmp_path / "repo"
    target = pager_repo(repo)
    regular, link = repo / ".regular", repo / ".link"
    stop = threading.Event()

    def swap() -> None:
        while not stop.is_set():
            shutil.copyfile(target.with_name("util.py"), regular)
            os.replace(regular, target)
            link.symlink_to(secret)
            os.replace(link, target)

    server = build_server(Repositories(repo, roots=[]))

    async def body(c: Any) -> None:
        for _ in range(300):  # before the fix, a few of 300 calls leaked the outside file
            res = await c.call_tool("excerpt", {"file": "pager.py"})
            assert SECRET not in text(res)

    swapper = threading.Thread(target=swap, daemon=True)
    swapper.start()
    try:
        session(server, body)
    finally:
        stop.set()
        swapper.join()


def test_read_confined_refuses_a_file_that_grew_past_the_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cap was checked on ``fstat`` and then ``max_bytes`` read: a file growing in
    between came back silently cut. At most cap+1 bytes are read now, and more is refused."""
    (tmp_path / "grows.py").write_bytes(b"x" * 100)
    real_fstat = os.fstat

    def stale_fstat(fd: int) -> os.stat_result:  # the size before the file grew
        st = list(real_fstat(fd))
        st[6] = 10
        return os.stat_result(st)

    monkeypatch.setattr(confine.os, "fstat", stale_fstat)
    with pytest.raises(ConfinementError, match="cap"):
        read_confined(tmp_path, "grows.py", max_bytes=50)
    assert read_confined(tmp_path, "grows.py", max_bytes=100) == b"x" * 100


# 8 -- no bounds per request ----------------------------------------------------------------


def test_excerpt_of_a_file_over_the_indexer_cap_is_refused(tmp_path: Path) -> None:
    """A 500 MB file took 4.8 GB and 40 s: a file over the indexer's cap is not read."""
    repo = tmp_path / "repo"
    pager_repo(repo)
    (repo / "huge.py").write_bytes(b"x = 1\n" * (DEFAULT_MAX_FILE_BYTES // 6 + 1))
    server = build_server(Repositories(repo, roots=[]))

    async def body(c: Any) -> None:
        line = refused(await c.call_tool("excerpt", {"file": "huge.py"}))
        assert str(DEFAULT_MAX_FILE_BYTES) in line
        answered(await c.call_tool("excerpt", {"file": "pager.py"}))

    session(server, body)


def test_oversized_arguments_are_tool_errors_naming_the_limit(tmp_path: Path) -> None:
    """20,000 identifiers took 94 s of CPU: every text and list argument is bounded, and
    the refusal names the limit."""
    repo = tmp_path / "repo"
    pager_repo(repo)
    server = build_server(Repositories(repo, roots=[]))
    many_names = [".".join(f"n{i}_{j}" for j in range(8)) for i in range(20)]  # 180 names
    cases = [
        ("compose", {"task": "x" * (MAX_TEXT_CHARS + 1)}, MAX_TEXT_CHARS),
        ("compose", {"task": "fix", "errors": ["e"] * (MAX_LIST_ITEMS + 1)}, MAX_LIST_ITEMS),
        ("compose", {"task": "t" * 150_000, "patch": "p" * 60_000}, MAX_TEXT_CHARS),
        ("retrieve", {"task": "fix", "error": "e" * (MAX_TEXT_CHARS + 1)}, MAX_TEXT_CHARS),
        ("excerpt", {"file": "pager.py", "identifiers": ["a"] * 20_000}, MAX_LIST_ITEMS),
        ("excerpt", {"file": "pager.py", "identifiers": many_names}, MAX_IDENTIFIER_NAMES),
    ]

    async def body(c: Any) -> None:
        for name, args, limit in cases:
            assert str(limit) in refused(await c.call_tool(name, args)), (name, limit)
        answered(await c.call_tool("excerpt", {"file": "pager.py", "identifiers": ["next_page"]}))

    session(server, body)


def test_the_root_cache_keeps_at_most_max_roots(tmp_path: Path) -> None:
    """Every root asked about was kept forever: the cache is an LRU of ``max_roots``."""
    for name in "abc":
        pager_repo(tmp_path / name)
    repos = Repositories(tmp_path / "a", roots=[tmp_path], max_roots=2)
    server = build_server(repos)

    async def body(c: Any) -> None:
        for name in "abca":
            answered(await c.call_tool("status", {"root": str(tmp_path / name)}))

    session(server, body)
    assert repos.cached() == [(tmp_path / "c").resolve(), (tmp_path / "a").resolve()]


# The two cases below run in a child process (``_guarded``): before the fix the first hung
# behind the held lock, the second deadlocked on disconnect.


def _guarded(scenario: str, tmp_path: Path) -> None:
    code = f"""
        import sys
        sys.path[:0] = [{str(HERE)!r}, {str(HERE.parent)!r}]
        import test_mcp_hostile as t
        t.{scenario}(t.Path({str(tmp_path)!r}))
        print("ok")
        """
    assert run_guarded(code, cwd=tmp_path).strip().endswith("ok")


def scenario_timeout(tmp_path: Path) -> None:
    """A call behind a held root lock (another call's long refresh) and a call whose work runs
    long: each returns a tool error at ``request_timeout_s``; the server keeps serving. The
    long call's work cannot be stopped: it finishes in the background, its root busy until
    then. The work is held on an event, not on a slow input, so no machine is too fast."""
    import ctxfast.harness.excerpt as excerpt_module

    repo = tmp_path / "repo"
    pager_repo(repo)
    pager_repo(tmp_path / "other")
    repos = Repositories(repo, roots=[tmp_path])
    server = build_server(repos, request_timeout_s=0.3)
    busy = repos.acquire(None)
    release = threading.Event()
    real_excerpt = excerpt_module.excerpt

    def held_excerpt(*args: Any, **kwargs: Any) -> Any:
        release.wait(WATCHDOG_S)
        return real_excerpt(*args, **kwargs)

    excerpt_module.excerpt = held_excerpt

    async def body(c: Any) -> None:
        busy.lock.acquire()
        line = refused(await c.call_tool("status", {}))
        assert "request_timeout_s" in line, line
        busy.lock.release()
        repos.release(busy)
        answered(await c.call_tool("status", {}))
        held = {"file": "pager.py", "max_tokens": 50}
        assert "request_timeout_s" in refused(await c.call_tool("excerpt", held))
        release.set()
        other = {"root": str(tmp_path / "other"), "file": "pager.py"}
        answered(await c.call_tool("excerpt", other))

    session(server, body)


def test_a_call_past_request_timeout_returns_a_tool_error(tmp_path: Path) -> None:
    _guarded("scenario_timeout", tmp_path)


def _wait_idle(repos: Repositories, entry: Any, users: int) -> None:
    """Until ``entry`` has ``users`` users (the cancelled worker gave up), watchdog-bound."""
    deadline = time.monotonic() + WATCHDOG_S
    while entry.users != users:
        assert time.monotonic() < deadline, "the cancelled call's worker never returned"
        time.sleep(0.05)


def scenario_cancel(tmp_path: Path) -> None:
    """A call waiting for a busy root, then cancelled (``notifications/cancelled``) or left
    by a client that disconnects: the handler returns at once and the work never starts
    (no index is built once the root frees up)."""
    repo = tmp_path / "repo"
    pager_repo(repo)
    repos = Repositories(repo, roots=[], max_roots=2)
    server = build_server(repos, request_timeout_s=WATCHDOG_S)
    busy = repos.acquire(None)
    busy.lock.acquire()

    async def cancel_one(c: Any) -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(c.call_tool, "index", {})
            while busy.users < 2:  # the call's worker waits for the lock
                await anyio.sleep(0.01)
            tg.cancel_scope.cancel()
        await c.list_tools()  # the cancel notification was read before this request
        await anyio.sleep(0.2)

    async def disconnect() -> None:
        async def call(c: Any) -> None:
            with contextlib.suppress(Exception):  # its session goes away under it
                await c.call_tool("index", {})

        with anyio.fail_after(WATCHDOG_S):
            async with anyio.create_task_group() as tg:
                async with Client(server, mode="legacy") as c:
                    tg.start_soon(call, c)
                    while busy.users < 2:
                        await anyio.sleep(0.01)
                # Leaving the session closed the transport with the call in flight: the
                # server cancelled it (before the fix, leaving waited for the worker).
                tg.cancel_scope.cancel()

    for run in (lambda: session(server, cancel_one), lambda: anyio.run(disconnect)):
        run()
        busy.lock.release()
        _wait_idle(repos, busy, 1)
        assert not (repo / ".ctxfast" / "recon.db").exists()
        busy.lock.acquire()


def test_a_cancelled_or_abandoned_call_never_starts_its_work(tmp_path: Path) -> None:
    _guarded("scenario_cancel", tmp_path)


# 13 -- a deleted tree ----------------------------------------------------------------------


def test_a_deleted_root_is_a_tool_error_and_is_not_recreated(tmp_path: Path) -> None:
    """Deleting the tree under a running server gave an empty window with isError=false
    and recreated the root (its index directory was made with ``parents=True``)."""
    repo = tmp_path / "repo"
    pager_repo(repo)
    server = build_server(Repositories(repo, roots=[]))

    async def body(c: Any) -> None:
        answered(await c.call_tool("retrieve", {"task": "fix next_page in the pager"}))
        shutil.rmtree(repo)
        for name, args in [("retrieve", {"task": "fix next_page"}), ("index", {})]:
            line = refused(await c.call_tool(name, args))
            assert "\n" not in line and str(repo) in line
        assert not repo.exists()
        pager_repo(repo)  # a new tree under the same name is served afresh
        answered(await c.call_tool("retrieve", {"task": "fix next_page in the pager"}))

    session(server, body)
