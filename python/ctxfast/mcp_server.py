"""``ctxfast mcp``: ctxfast as a Model Context Protocol server, for agents that attach context
engines over MCP (Claude Code, Cursor, OpenHands, most agent frameworks).

The server is long-lived, so it keeps one :class:`~ctxfast.recon.Repository` per root and
with it the in-memory retrieval state: after the first call a query takes milliseconds.
Every tool refreshes the index first (an agent edits files between calls) and answers
within the token budget the client asks for. A tool that fails (a bad path, an unknown
symbol, a budget out of range) returns an MCP tool error with one plain line; the server
keeps serving. Built on the official ``mcp`` SDK (``pip install 'ctxfast[mcp]'``); it uses
only ctxfast's public API.
"""

# No ``from __future__ import annotations``: the SDK reads the tools' annotations to build
# their JSON schemas, and the budget and root aliases are local to ``build_server``.
import dataclasses
import threading
from pathlib import Path
from typing import Annotated, Any

try:  # pydantic builds the output schemas and needs this TypedDict before Python 3.12
    from typing_extensions import TypedDict
except ImportError:  # without the mcp extra: the types still import, the server cannot run
    from typing import TypedDict

from ctxfast.errors import CtxfastError, InvalidArgumentError
from ctxfast.repository import Repository
from ctxfast.tokens import count_tokens, truncate_to_tokens

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


class Repositories:
    """One :class:`Repository` per root, each used by one tool call at a time (the SDK runs
    synchronous tools on worker threads, and a repository's in-memory state is not shared
    between concurrent refreshes)."""

    def __init__(self, default_root: Path | None, default_index_dir: Path | None) -> None:
        self.default_root = default_root.resolve() if default_root else None
        self.default_index_dir = default_index_dir
        self._repos: dict[Path, tuple[Repository, threading.Lock]] = {}
        self._lock = threading.Lock()

    def get(self, root: str | None) -> tuple[Repository, threading.Lock]:
        if root is None:
            if self.default_root is None:
                raise InvalidArgumentError("no root given and the server was started without one")
            path = self.default_root
        else:
            path = Path(root).expanduser().resolve()
        with self._lock:
            if path not in self._repos:
                index_dir = self.default_index_dir if path == self.default_root else None
                self._repos[path] = (Repository(path, index_dir), threading.Lock())
            return self._repos[path]


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


def build_server(repos: Repositories) -> Any:
    """The MCP server with ctxfast's tools registered over ``repos``."""
    try:
        from mcp.server.mcpserver import MCPServer
        from mcp.server.mcpserver.exceptions import ToolError
        from pydantic import Field
    except ImportError as exc:
        raise CtxfastError(INSTALL_HINT) from exc

    Budget = Annotated[int, Field(ge=1, le=1_000_000, description="token budget of the answer")]
    Root = Annotated[
        str | None,
        Field(description="repository root; default: the root the server was started on"),
    ]
    server = MCPServer(
        SERVER_NAME,
        instructions=(
            "Context for coding tasks in a local repository. `compose` builds the whole "
            "budgeted window for the next step; `retrieve`, `repo_map`, `excerpt` and `graph` "
            "answer narrower questions. Every tool re-reads files edited since the last call."
        ),
    )

    def call(root: str | None, fn: Any) -> Any:
        try:
            repo, lock = repos.get(root)
            with lock:
                return fn(repo)
        except (CtxfastError, OSError, ValueError) as exc:
            raise ToolError(str(exc)) from exc

    @server.tool()
    def compose(
        task: Annotated[str, Field(min_length=1, description="what the agent is asked to do")],
        ceiling: Budget = DEFAULT_COMPOSE_CEILING,
        errors: list[str] | None = None,
        tracebacks: list[str] | None = None,
        test_outputs: list[str] | None = None,
        patch: str | None = None,
        root: Root = None,
    ) -> ComposeAnswer:
        """The budgeted context window for the next step on `task`: the code it points at,
        its callers and the plan, never over `ceiling` tokens."""
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
            )
            return ComposeAnswer(
                text=ctx.render(),
                token_count=ctx.token_count,
                max_tokens=ctx.ceiling,
                stable_core_only=ctx.stable_core_only,
                model_calls=ctx.model_calls,
            )

        return call(root, go)  # type: ignore[no-any-return]

    @server.tool()
    def retrieve(
        task: Annotated[str, Field(min_length=1, description="issue or instruction text")],
        error: str | None = None,
        test: str | None = None,
        max_tokens: Budget = DEFAULT_RETRIEVE_TOKENS,
        root: Root = None,
    ) -> RetrieveAnswer:
        """The code a task (and its error or failing test) points at, ranked, with the
        files in rank order."""

        def go(repo: Repository) -> RetrieveAnswer:
            res = repo.retrieve(task, error=error, test=test, max_tokens=max_tokens)
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

        return call(root, go)  # type: ignore[no-any-return]

    @server.tool()
    def repo_map(
        query: str | None = None,
        max_tokens: Budget = DEFAULT_MAP_TOKENS,
        root: Root = None,
    ) -> Window:
        """The repository's most central files with their key signatures, ranked toward
        `query` when given."""
        return call(  # type: ignore[no-any-return]
            root, lambda repo: _fit(repo.repo_map(query, max_tokens=max_tokens), max_tokens)
        )

    @server.tool()
    def excerpt(
        file: Annotated[str, Field(min_length=1, description="path relative to the root")],
        identifiers: list[str] | None = None,
        max_tokens: Budget = DEFAULT_EXCERPT_TOKENS,
        root: Root = None,
    ) -> Window:
        """A file, whole if it fits, else the lines around `identifiers` (or its outline)."""

        def go(repo: Repository) -> Window:
            path = (repo.root / file).resolve()
            if not path.is_relative_to(repo.root):
                raise InvalidArgumentError(f"{file} is outside the repository")
            from ctxfast.harness.excerpt import excerpt as make_excerpt

            ex = make_excerpt(path, identifiers or (), max_tokens, display_path=file)
            return Window(text=ex.text, token_count=ex.token_count, max_tokens=max_tokens)

        return call(root, go)  # type: ignore[no-any-return]

    @server.tool()
    def graph(
        symbol: Annotated[str, Field(min_length=1, description="qualified name or name")],
        max_tokens: Budget = DEFAULT_GRAPH_TOKENS,
        root: Root = None,
    ) -> GraphAnswer:
        """A definition with what it calls and what calls it, from the code graph."""

        def go(repo: Repository) -> GraphAnswer:
            ego = repo.ego_graph(symbol)
            win = _fit(ego.render(max_tokens), max_tokens)
            invokes = [e for e in ego.edges if e.type == "invoke"]
            return GraphAnswer(
                **win,
                definition=_definition(ego.root),
                callers=[_definition(e.target) for e in invokes if e.direction == "in"],
                callees=[_definition(e.target) for e in invokes if e.direction == "out"],
            )

        return call(root, go)  # type: ignore[no-any-return]

    @server.tool()
    def status(root: Root = None) -> dict[str, Any]:
        """Where the index lives, what it holds and when it was last refreshed."""
        from ctxfast.cli.status import index_status

        return call(root, index_status)  # type: ignore[no-any-return]

    @server.tool()
    def index(root: Root = None) -> IndexAnswer:
        """Build or refresh the index now (every other tool also refreshes it first)."""

        def go(repo: Repository) -> IndexAnswer:
            return IndexAnswer(**dataclasses.asdict(repo.index()))  # type: ignore[typeddict-item]

        return call(root, go)  # type: ignore[no-any-return]

    return server


def serve(
    root: Path | None,
    index_dir: Path | None = None,
    *,
    http: bool = False,
    host: str = DEFAULT_HTTP_HOST,
    port: int = DEFAULT_HTTP_PORT,
) -> None:
    """Runs the server until the client disconnects: over stdin/stdout by default, or as
    streamable HTTP on ``host:port`` (loopback by default)."""
    server = build_server(Repositories(root, index_dir))
    if http:
        server.run("streamable-http", host=host, port=port)
    else:
        server.run("stdio")


__all__ = ["Repositories", "build_server", "serve"]
