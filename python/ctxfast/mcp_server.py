"""``ctxfast mcp``: ctxfast as a Model Context Protocol server, for agents that attach context
engines over MCP (Claude Code, Cursor, OpenHands, most agent frameworks).

The server is long-lived, so it keeps one :class:`~ctxfast.recon.Repository` per root and
with it the in-memory retrieval state: after the first call a query takes milliseconds.
Every tool refreshes the index first (an agent edits files between calls) and answers
within the token budget the client asks for. A tool that fails (a bad path, an unknown
symbol, a budget out of range) returns an MCP tool error with one plain line; the server
keeps serving. Built on the official ``mcp`` SDK (``pip install 'ctxfast[mcp]'``); it uses
ctxfast's public API and its confined file reader (``ctxfast.confine``).

The client is not trusted. A ``root`` it names must lie inside a root the operator allowed
(the directory the server started in, the served repository, and every ``--root``); files
are read by file descriptor, never through a link, and never over the indexer's size cap;
every request's text is bounded and its run time too (``request_timeout_s``); at most
``max_roots`` repositories are kept. Over HTTP every request needs the bearer token, and
only loopback addresses are served unless the operator passes ``--allow-remote``.
"""

# No ``from __future__ import annotations``: the SDK reads the tools' annotations to build
# their JSON schemas, and the budget and root aliases are local to ``build_server``.
import dataclasses
import functools
import hmac
import os
import re
import secrets
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, cast

try:  # pydantic builds the output schemas and needs this TypedDict before Python 3.12
    from typing_extensions import TypedDict
except ImportError:  # without the mcp extra: the types still import, the server cannot run
    from typing import TypedDict

from ctxfast.confine import decode, read_confined
from ctxfast.errors import CtxfastError, InvalidArgumentError
from ctxfast.repository import Repository
from ctxfast.tokens import count_tokens, truncate_to_tokens

if TYPE_CHECKING:  # the command line's parser reads this module's defaults: no pipeline
    from ctxfast.retrieval.pipeline import RetrievalResult

#: The server's name as MCP clients show it.
SERVER_NAME = "ctxfast"
#: Default budgets, the same as the library's own defaults.
DEFAULT_COMPOSE_CEILING = 24_000
DEFAULT_RETRIEVE_TOKENS = 4_000
DEFAULT_MAP_TOKENS = 1_024
DEFAULT_EXCERPT_TOKENS = 2_000
DEFAULT_GRAPH_TOKENS = 3_500
#: Default address of the streamable HTTP transport (loopback only).
DEFAULT_HTTP_HOST = "127.0.0.1"
DEFAULT_HTTP_PORT = 8765
#: The addresses served without ``--allow-remote`` (the SDK's DNS-rebinding check covers them).
LOOPBACK_HOSTS = ("127.0.0.1", "::1", "localhost")
#: The environment variable holding the HTTP bearer token (generated when unset).
TOKEN_ENV = "CTXFAST_MCP_TOKEN"

#: Seconds one tool call may run before it returns a tool error.
DEFAULT_REQUEST_TIMEOUT_S = 120.0
#: Repositories kept in memory at once (least recently used dropped first).
DEFAULT_MAX_ROOTS = 8
#: Characters of text one request may carry (each text argument, and all of them together).
MAX_TEXT_CHARS = 200_000
#: Items of one list argument (errors, tracebacks, test outputs, identifiers).
MAX_LIST_ITEMS = 64
#: Characters of one path, root, symbol or identifier.
MAX_NAME_CHARS = 4_096
#: Distinct names the identifiers of one excerpt expand to (``a.b`` is ``a.b``, ``a`` and
#: ``b``): the excerpt's cost is lines × names (20,000 identifiers took 94 s of CPU; 128
#: names over a file at the 1 MB cap take a few seconds).
MAX_IDENTIFIER_NAMES = 128

INSTALL_HINT = "the MCP server needs the mcp package: pip install 'ctxfast[mcp]'"


class Window(TypedDict):
    """A budgeted text and its exact token count."""

    text: str
    token_count: int
    max_tokens: int


class ComposeAnswer(Window):
    stable_core_only: bool
    model_calls: int


class Hit(TypedDict):
    file: str
    qualname: str | None
    kind: str
    start_line: int
    end_line: int
    score: float


class RetrieveAnswer(Window):
    candidates: list[Hit]
    ranked_files: list[str]


class Definition(TypedDict):
    qualname: str
    kind: str
    file: str
    line: int
    end_line: int


class GraphAnswer(Window):
    definition: Definition
    callers: list[Definition]
    callees: list[Definition]


class IndexAnswer(TypedDict):
    """:class:`~ctxfast.recon.IndexStats` as data."""

    files_seen: int
    files_parsed: int
    files_removed: int
    nodes: int
    edges: int
    seconds: float
    errors: list[dict[str, str]]
    files_resolved: int


def _real(path: str | os.PathLike[str]) -> Path:
    """``path`` with every link resolved: the allow-list compares real paths, so a link
    inside an allowed root that points out of it is outside."""
    return Path(os.path.realpath(os.path.expanduser(os.fspath(path))))


def _identity(path: Path) -> tuple[int, int]:
    """Device and inode of the directory at ``path``: a tree deleted and recreated under the
    same name is another tree (its cached state is stale)."""
    st = os.stat(path)
    return st.st_dev, st.st_ino


@dataclasses.dataclass(eq=False)
class Entry:
    """A cached repository. ``lock`` serialises the calls on it (its in-memory state is not
    shared between concurrent refreshes); ``users`` counts the calls holding or waiting for
    it, so the cache never drops a repository a call still works on."""

    repo: Repository
    identity: tuple[int, int]
    lock: threading.Lock = dataclasses.field(default_factory=threading.Lock)
    users: int = 0


class Repositories:
    """The repositories the tools work on: one :class:`Repository` per root, for roots
    inside the allow-list only, at most ``max_roots`` of them (least recently used dropped).

    The allow-list is ``roots`` (default: the current directory when the server starts) plus
    ``default_root``. A client-supplied root is resolved (links followed) and accepted only
    when it is an allowed root or a directory inside one: a client cannot read ``/etc``,
    ``/proc/self`` or write an index into a directory the operator did not give it.
    """

    def __init__(
        self,
        default_root: Path | None,
        default_index_dir: Path | None = None,
        *,
        roots: Sequence[str | os.PathLike[str]] | None = None,
        max_roots: int = DEFAULT_MAX_ROOTS,
    ) -> None:
        if max_roots < 1:
            raise InvalidArgumentError(f"max_roots must be at least 1, got {max_roots}")
        self.default_root = _real(default_root) if default_root else None
        self.default_index_dir = default_index_dir
        allowed = [Path.cwd()] if roots is None else list(roots)
        if self.default_root is not None:
            allowed.append(self.default_root)
        self.allowed: tuple[Path, ...] = tuple(dict.fromkeys(_real(r) for r in allowed))
        self.max_roots = max_roots
        self._repos: OrderedDict[Path, Entry] = OrderedDict()
        self._lock = threading.Lock()

    def resolve(self, root: str | None) -> Path:
        """The real path of the root a call names; refused (one plain line) unless it lies
        within an allowed root and is a directory now."""
        if root is None:
            if self.default_root is None:
                raise InvalidArgumentError("no root given and the server was started without one")
            path = self.default_root
        else:
            path = _real(root)
        if not any(path.is_relative_to(a) for a in self.allowed):
            raise InvalidArgumentError(
                f"root {root} is outside the roots this server may read "
                f"({', '.join(map(str, self.allowed))}); the operator adds more with --root"
            )
        if not path.is_dir():
            raise InvalidArgumentError(f"repository root is not a directory (deleted?): {path}")
        return path

    def acquire(self, root: str | None) -> Entry:
        """The cached entry of ``root`` (opened on first use), counted as in use until
        :meth:`release`."""
        path = self.resolve(root)
        identity = _identity(path)
        with self._lock:
            entry = self._repos.get(path)
            if entry is None or entry.identity != identity:
                entry = self._open(path, identity)
            self._repos.move_to_end(path)
            entry.users += 1
            return entry

    def release(self, entry: Entry) -> None:
        with self._lock:
            entry.users -= 1

    def check_unchanged(self, entry: Entry) -> None:
        """Refuses a call whose root was deleted or replaced since it was resolved: indexing
        a deleted tree would answer an empty window and recreate the root as a side effect
        of creating its index directory."""
        root = entry.repo.root
        try:
            same = _identity(root) == entry.identity
        except OSError:
            same = False
        if not same:
            with self._lock:
                if self._repos.get(root) is entry:
                    del self._repos[root]
            raise InvalidArgumentError(f"repository root was deleted or replaced: {root}")

    def cached(self) -> list[Path]:
        """The roots held in memory, least recently used first."""
        with self._lock:
            return list(self._repos)

    def _open(self, path: Path, identity: tuple[int, int]) -> Entry:
        """A new entry for ``path`` (called with the lock held); a replaced tree's old entry
        is dropped here and lives on only until its calls finish."""
        self._repos.pop(path, None)
        self._make_room()
        index_dir = self.default_index_dir if path == self.default_root else None
        entry = Entry(Repository(path, index_dir), identity)
        self._repos[path] = entry
        return entry

    def _make_room(self) -> None:
        """Drops least recently used idle repositories until one more fits; refuses when
        every cached one is in use (memory stays bounded by ``max_roots``)."""
        while len(self._repos) >= self.max_roots:
            idle = next((p for p, e in self._repos.items() if e.users == 0), None)
            if idle is None:
                raise InvalidArgumentError(
                    f"all {self.max_roots} cached repositories are in use (max_roots); "
                    "retry when a call finishes"
                )
            del self._repos[idle]


def run_on(
    repos: Repositories,
    root: str | None,
    fn: Callable[[Repository], Any],
    deadline: float,
    cancelled: threading.Event,
) -> Any:
    """``fn`` on the repository of ``root``, under its lock: what a tool's worker thread runs.

    Python cannot stop a thread, so a call that timed out or was cancelled while ``fn`` runs
    finishes in the background and keeps the root's lock until then. What it can do is not
    start: waiting for the lock ends at ``deadline`` (the call's own time bound), and a call
    cancelled while it waited returns without running ``fn``.
    """
    if cancelled.is_set():
        return None
    entry = repos.acquire(root)
    try:
        if not entry.lock.acquire(timeout=max(deadline - time.monotonic(), 0.0)):
            raise TimeoutError("the repository stayed busy with another call")
        try:
            if cancelled.is_set():
                return None
            repos.check_unchanged(entry)
            return fn(entry.repo)
        finally:
            entry.lock.release()
    finally:
        repos.release(entry)


def one_line(exc: BaseException) -> str:
    """The plain one-line message a tool error carries: a file error names the file and the
    reason (not an errno tuple), and no message spans lines."""
    if isinstance(exc, OSError) and exc.strerror:
        text = f"{exc.filename}: {exc.strerror}" if exc.filename else exc.strerror
    else:
        text = str(exc) or type(exc).__name__
    return " ".join(text.split())


def identifier_names(identifiers: Sequence[str]) -> int:
    """How many distinct names ``identifiers`` expand to in an excerpt (each one, and its
    dotted or ``::`` parts): the excerpt scans every line once per name."""
    names: set[str] = set()
    for ident in identifiers:
        ident = ident.strip()
        if ident:
            names.add(ident)
            names.update(part for part in re.split(r"\.|::", ident) if part)
    return len(names)


def check_total_text(*texts: str | Sequence[str] | None) -> None:
    """Refuses a request whose text arguments together exceed :data:`MAX_TEXT_CHARS`
    (each is bounded by its schema; this bounds their sum)."""
    total = 0
    for t in texts:
        if t is None:
            continue
        total += len(t) if isinstance(t, str) else sum(len(x) for x in t)
    if total > MAX_TEXT_CHARS:
        raise InvalidArgumentError(
            f"the request carries {total} characters of text; the limit is {MAX_TEXT_CHARS}"
        )


def _definition(node: Any) -> Definition:
    return Definition(
        qualname=node.qualname,
        kind=node.kind,
        file=node.file,
        line=node.line,
        end_line=node.end_line,
    )


def _fit(text: str, max_tokens: int) -> Window:
    """``text`` cut to ``max_tokens`` (exact count) with its count."""
    if count_tokens(text) > max_tokens:
        text = truncate_to_tokens(text, max_tokens)
    return Window(text=text, token_count=count_tokens(text), max_tokens=max_tokens)


def _retrieve_answer(res: "RetrievalResult", max_tokens: int) -> RetrieveAnswer:
    """The ``retrieve`` tool's answer: the slice, each candidate as a plain :class:`Hit` (a
    client reads JSON, not ctxfast's objects) and the top files in rank order."""
    return RetrieveAnswer(
        text=res.render(),
        token_count=res.token_count,
        max_tokens=max_tokens,
        candidates=[
            Hit(
                file=c.file,
                qualname=c.qualname,
                kind=c.kind,
                start_line=c.start_line,
                end_line=c.end_line,
                score=float(c.score),
            )
            for c in res.candidates
        ],
        ranked_files=res.ranked_files()[:20],
    )


def _graph_answer(ego: Any, max_tokens: int) -> GraphAnswer:
    """The ``graph`` tool's answer: the ego graph rendered within ``max_tokens``, with the
    definition and its invoke neighbours (callers in, callees out) as plain records."""
    win = _fit(ego.render(max_tokens), max_tokens)
    invokes = [e for e in ego.edges if e.type == "invoke"]
    return GraphAnswer(
        **win,
        definition=_definition(ego.root),
        callers=[_definition(e.target) for e in invokes if e.direction == "in"],
        callees=[_definition(e.target) for e in invokes if e.direction == "out"],
    )


def _excerpt_window(repo: Repository, file: str, idents: list[str], max_tokens: int) -> Window:
    """The ``excerpt`` tool's answer: ``file`` read safely and cut around ``idents``."""
    from ctxfast.harness.excerpt import excerpt as make_excerpt

    # Read by descriptor, inside the root, no link followed, never over the indexer's
    # size cap: a file swapped for a link between a check and the read stays unread.
    data = read_confined(repo.root, file, max_bytes=repo.max_file_bytes)
    ex = make_excerpt(file, idents, max_tokens, display_path=file, content=decode(data))
    return Window(text=ex.text, token_count=ex.token_count, max_tokens=max_tokens)


def _caller(
    repos: Repositories, request_timeout_s: float
) -> Callable[[str | None, Callable[[Repository], Any]], Awaitable[Any]]:
    """How every tool runs its work: ``call(root, fn)`` runs ``fn`` on the repository of
    ``root`` off the event loop, bounded by ``request_timeout_s``, and turns ctxfast's errors
    into tool errors (the mcp SDK is importable: :func:`build_server` checked)."""
    import anyio
    from mcp.server.mcpserver.exceptions import ToolError

    async def call(root: str | None, fn: Callable[[Repository], Any]) -> Any:
        """``fn`` on a worker thread, awaited: the event loop keeps serving, a client that
        cancels or goes away cancels the wait, and the time bound ends it.

        It returns what ``fn`` returns, or ``None`` for a call cancelled before ``fn`` ran
        (whose client no longer reads the answer), so it is typed ``Any``: that is what the
        tools' ``# type: ignore[no-any-return]`` in :func:`build_server` stand for."""
        cancelled = threading.Event()
        deadline = time.monotonic() + request_timeout_s
        work = functools.partial(run_on, repos, root, fn, deadline, cancelled)
        try:
            with anyio.fail_after(request_timeout_s):
                return await anyio.to_thread.run_sync(work, abandon_on_cancel=True)
        except TimeoutError as exc:
            raise ToolError(
                f"timed out after {request_timeout_s:g} s (the server's request_timeout_s): "
                f"{one_line(exc) if str(exc) else 'the call ran too long'}"
            ) from exc
        except (CtxfastError, OSError, ValueError) as exc:
            raise ToolError(one_line(exc)) from exc
        finally:
            cancelled.set()

    return call


def build_server(
    repos: Repositories, *, request_timeout_s: float = DEFAULT_REQUEST_TIMEOUT_S
) -> Any:
    """The MCP server with ctxfast's tools registered over ``repos``; a tool call that runs
    longer than ``request_timeout_s`` seconds returns a tool error (see :func:`run_on`)."""
    try:
        import anyio  # noqa: F401  (fail here, with the hint, not in the first tool call)
        from mcp.server.mcpserver import MCPServer
        from mcp.server.mcpserver.exceptions import ToolError
        from pydantic import Field
    except ImportError as exc:
        raise CtxfastError(INSTALL_HINT) from exc
    if not request_timeout_s > 0:
        raise InvalidArgumentError(f"request_timeout_s must be positive, got {request_timeout_s}")

    Budget = Annotated[int, Field(ge=1, le=1_000_000, description="token budget of the answer")]
    Root = Annotated[
        str | None,
        Field(
            max_length=MAX_NAME_CHARS,
            description="repository root (inside the roots the server allows); "
            "default: the root the server was started on",
        ),
    ]
    Text = Annotated[str, Field(max_length=MAX_TEXT_CHARS)]
    Texts = Annotated[list[Text], Field(max_length=MAX_LIST_ITEMS)]
    Name = Annotated[str, Field(max_length=MAX_NAME_CHARS)]
    server = MCPServer(
        SERVER_NAME,
        instructions=(
            "Context for coding tasks in a local repository. `compose` builds the whole "
            "budgeted window for the next step; `retrieve`, `repo_map`, `excerpt` and `graph` "
            "answer narrower questions. Every tool re-reads files edited since the last call."
        ),
    )

    call = _caller(repos, request_timeout_s)

    def bounded(*texts: str | Sequence[str] | None) -> None:
        """The request's texts within :data:`MAX_TEXT_CHARS` together, or a tool error."""
        try:
            check_total_text(*texts)
        except InvalidArgumentError as exc:
            raise ToolError(one_line(exc)) from exc

    @server.tool()
    async def compose(
        task: Annotated[
            str,
            Field(
                min_length=1, max_length=MAX_TEXT_CHARS, description="what the agent is asked to do"
            ),
        ],
        ceiling: Budget = DEFAULT_COMPOSE_CEILING,
        errors: Texts | None = None,
        tracebacks: Texts | None = None,
        test_outputs: Texts | None = None,
        patch: Text | None = None,
        root: Root = None,
        target: Annotated[
            int | None,
            Field(ge=1, description="tokens the window fills toward (default 8,000; ≤ ceiling)"),
        ] = None,
    ) -> ComposeAnswer:
        """The budgeted context window for the next step on `task`: the code it points at,
        its callers and the plan, filled toward `target` tokens and never over `ceiling`."""
        from ctxfast.construct.compose import compose as run

        def go(repo: Repository) -> ComposeAnswer:
            ctx = run(
                repo,
                task,
                errors=errors or (),
                tracebacks=tracebacks or (),
                test_outputs=test_outputs or (),
                patch=patch,
                ceiling=ceiling,
                target=target,
            )
            return ComposeAnswer(
                text=ctx.render(),
                token_count=ctx.token_count,
                max_tokens=ctx.ceiling,
                stable_core_only=ctx.stable_core_only,
                model_calls=ctx.model_calls,
            )

        bounded(task, errors, tracebacks, test_outputs, patch)
        return await call(root, go)  # type: ignore[no-any-return]

    @server.tool()
    async def retrieve(
        task: Annotated[
            str,
            Field(min_length=1, max_length=MAX_TEXT_CHARS, description="issue or instruction text"),
        ],
        error: Text | None = None,
        test: Text | None = None,
        max_tokens: Budget = DEFAULT_RETRIEVE_TOKENS,
        root: Root = None,
    ) -> RetrieveAnswer:
        """The code a task (and its error or failing test) points at, ranked, with the
        files in rank order."""

        def go(repo: Repository) -> RetrieveAnswer:
            res = repo.retrieve(task, error=error, test=test, max_tokens=max_tokens)
            return _retrieve_answer(res, max_tokens)

        bounded(task, error, test)
        return await call(root, go)  # type: ignore[no-any-return]

    @server.tool()
    async def repo_map(
        query: Text | None = None,
        max_tokens: Budget = DEFAULT_MAP_TOKENS,
        root: Root = None,
    ) -> Window:
        """The repository's most central files with their key signatures, ranked toward
        `query` when given."""
        return await call(  # type: ignore[no-any-return]
            root, lambda repo: _fit(repo.repo_map(query, max_tokens=max_tokens), max_tokens)
        )

    @server.tool()
    async def excerpt(
        file: Annotated[
            str,
            Field(min_length=1, max_length=MAX_NAME_CHARS, description="path relative to the root"),
        ],
        identifiers: Annotated[list[Name], Field(max_length=MAX_LIST_ITEMS)] | None = None,
        max_tokens: Budget = DEFAULT_EXCERPT_TOKENS,
        root: Root = None,
    ) -> Window:
        """A file, whole if it fits, else the lines around `identifiers` (or its outline)."""
        idents = identifiers or []
        names = identifier_names(idents)
        if names > MAX_IDENTIFIER_NAMES:
            raise ToolError(
                f"identifiers name {names} distinct names; the limit is {MAX_IDENTIFIER_NAMES}"
            )
        return await call(  # type: ignore[no-any-return]
            root, lambda repo: _excerpt_window(repo, file, idents, max_tokens)
        )

    @server.tool()
    async def graph(
        symbol: Annotated[
            str,
            Field(min_length=1, max_length=MAX_NAME_CHARS, description="qualified name or name"),
        ],
        max_tokens: Budget = DEFAULT_GRAPH_TOKENS,
        root: Root = None,
    ) -> GraphAnswer:
        """A definition with what it calls and what calls it, from the code graph."""

        return await call(  # type: ignore[no-any-return]
            root, lambda repo: _graph_answer(repo.ego_graph(symbol), max_tokens)
        )

    @server.tool()
    async def status(root: Root = None) -> dict[str, Any]:
        """Where the index lives, what it holds and when it was last refreshed."""
        from ctxfast.cli.status import index_status

        return await call(root, index_status)  # type: ignore[no-any-return]

    @server.tool()
    async def index(root: Root = None) -> IndexAnswer:
        """Build or refresh the index now (every other tool also refreshes it first)."""

        # IndexStats' fields as a plain dict (the TypedDict names the ones clients read).
        return await call(  # type: ignore[no-any-return]
            root, lambda repo: cast(IndexAnswer, dataclasses.asdict(repo.index()))
        )

    return server


class BearerAuth:
    """ASGI middleware in front of the SDK's app: an HTTP request without
    ``Authorization: Bearer <token>`` gets 401, so another local user, a browser page or a
    remote host cannot call the tools. Lifespan events pass through untouched."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self._token = token.encode()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan" or self.authorized(scope):
            await self.app(scope, receive, send)
        elif scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
        else:
            await self.deny(send)

    @staticmethod
    async def deny(send: Any) -> None:
        """401 with a ``WWW-Authenticate: Bearer`` challenge (what HTTP clients expect)."""
        headers = [
            (b"content-type", b"text/plain; charset=utf-8"),
            (b"www-authenticate", b"Bearer"),
        ]
        await send({"type": "http.response.start", "status": 401, "headers": headers})
        await send({"type": "http.response.body", "body": b"missing or wrong bearer token\n"})

    def authorized(self, scope: Any) -> bool:
        """One ``Authorization`` header whose bearer token matches, compared in constant
        time (no timing leak of how much of a guess was right)."""
        values = [v for k, v in scope.get("headers", ()) if k.lower() == b"authorization"]
        if len(values) != 1:
            return False
        scheme, _, token = values[0].partition(b" ")
        return scheme.lower() == b"bearer" and hmac.compare_digest(token.strip(), self._token)


def http_token() -> str:
    """The bearer token HTTP clients must send: :data:`TOKEN_ENV` when set, else a fresh
    random one, printed once to stderr so the operator can hand it to the client."""
    token = os.environ.get(TOKEN_ENV, "").strip()
    if token:
        return token
    token = secrets.token_urlsafe(32)
    print(
        f"ctxfast mcp: HTTP clients must send 'Authorization: Bearer {token}' "
        f"(set {TOKEN_ENV} to choose the token)",
        file=sys.stderr,
        flush=True,
    )
    return token


def check_host(host: str, allow_remote: bool) -> None:
    """Refuses a non-loopback ``host`` unless the operator allowed it, then warns loudly:
    the tools read source trees, and plain HTTP with a bearer token is all that guards them."""
    if host in LOOPBACK_HOSTS:
        return
    if not allow_remote:
        raise InvalidArgumentError(
            f"refusing to serve MCP on {host}: only loopback addresses "
            f"({', '.join(LOOPBACK_HOSTS)}) are served unless --allow-remote is given"
        )
    print(
        f"WARNING: ctxfast mcp serves {host}, beyond this machine: anyone who can reach it "
        f"and knows the bearer token reads the allowed roots, over plain HTTP (no TLS)",
        file=sys.stderr,
        flush=True,
    )


def serve_http(server: Any, host: str, port: int) -> None:
    """Streamable HTTP on ``host:port`` behind :class:`BearerAuth`. The SDK keeps its
    Host/Origin (DNS-rebinding) check on for the loopback hosts."""
    import uvicorn

    app = BearerAuth(server.streamable_http_app(host=host), http_token())
    uvicorn.run(app, host=host, port=port, log_level=server.settings.log_level.lower())


def serve(
    root: Path | None,
    index_dir: Path | None = None,
    *,
    roots: Sequence[str | os.PathLike[str]] | None = None,
    http: bool = False,
    host: str = DEFAULT_HTTP_HOST,
    port: int = DEFAULT_HTTP_PORT,
    allow_remote: bool = False,
    request_timeout_s: float = DEFAULT_REQUEST_TIMEOUT_S,
    max_roots: int = DEFAULT_MAX_ROOTS,
) -> None:
    """Runs the server until the client disconnects: over stdin/stdout by default, or as
    streamable HTTP on ``host:port`` (loopback unless ``allow_remote``). Clients may name
    ``root``, ``roots`` (default: the current directory) and directories inside them."""
    if http:
        check_host(host, allow_remote)
    repos = Repositories(root, index_dir, roots=roots, max_roots=max_roots)
    server = build_server(repos, request_timeout_s=request_timeout_s)
    if http:
        serve_http(server, host, port)
    else:
        server.run("stdio")


__all__ = ["BearerAuth", "Repositories", "build_server", "serve"]
