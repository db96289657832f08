"""`ctxtui mcp [PATH]`: the tools of `ctxtui.mcp.tools` served over stdio with the MCP SDK.

Each tool's arguments carry a JSON schema with a description an agent can act on; its result
is the text to read (a pack, an outline) plus structured data (files, levels, tokens). A bad
argument comes back as an error result with one clear line, and the server keeps serving.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Annotated, Any, Literal

import anyio
from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.stdio import stdio_server
from mcp_types import CallToolResult, ContentBlock, TextContent, ToolAnnotations
from pydantic import BaseModel, Field, ValidationError

from ctxtui.mcp.tools import MAX_LIMIT, Tools
from ctxtui.mcp.warm import WarmRepository
from ctxtui.mcp.wire import SurrogatesReplaced
from engine import EngineError

INSTRUCTIONS = """\
ctxtui ranks the files of one repository for a question and packs the right code into a
token budget. Start with rank_files to see what matters and why; call build_pack for the
code itself (changed=true adds the work tree's diff and pins the changed files); use
file_outline or file_focused to look into one file cheaply. current_selection returns the
pack the person picked by hand in the ctxtui app for this repository: prefer it when they
say "what I selected" or "my context".\
"""

READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)


class RankedFileOut(BaseModel):
    """One ranked file."""

    path: str = Field(description="Path relative to the repository root.")
    score: float = Field(description="Ranking score; only order and ratios matter.")
    tokens: int = Field(description="Tokens of the whole file.")
    reasons: list[str] = Field(description="Why it ranks here, strongest first.")
    pinned: bool = Field(description="Pinned by the person (always first).")


class RankOut(BaseModel):
    """The ranking of a question."""

    question: str
    encoding: str = Field(description="Tokenizer encoding of every token count.")
    files: list[RankedFileOut]


class PackedFileOut(BaseModel):
    """One file in a pack."""

    path: str
    level: str = Field(description="full, focused or outline.")
    tokens: int


class PackOut(BaseModel):
    """What a pack holds."""

    format: str
    budget: int
    tokens: int = Field(description="Exact tokens of the pack text.")
    over_budget: bool
    changes_tokens: int = Field(description="Tokens of the Changes diff (0 without one).")
    files: list[PackedFileOut]
    notes: list[str]
    summary: str
    question: str | None = None
    pinned: list[str] | None = None
    levels: dict[str, str] | None = None


class FileOut(BaseModel):
    """One file rendered at a level."""

    path: str
    level: str = Field(
        description="The level shown: the one asked for, or a richer one that costs no more."
    )
    asked: str = Field(description="The level asked for.")
    language: str
    tokens: int
    declarations: int


Question = Annotated[
    str,
    Field(
        description="The question or task in plain words, any length (a bug report, a "
        "stack trace, a feature request); identifiers in it weigh most.",
        min_length=1,
    ),
]
Path_ = Annotated[
    str,
    Field(description="A file of the repository, relative to its root (e.g. src/app.py)."),
]


class _Server(MCPServer):
    """The SDK's server, with arguments that do not fit a tool's schema told in one line,
    a request that escapes a lone surrogate answered, and a line that is no request answered
    with its JSON-RPC error (ctxtui.mcp.wire)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.ended = threading.Event()
        """Set when serving over stdio ends, or when the transport cancelled it (`serve`)."""
        self.cancelled = False
        """The transport cancelled the serving: its writer failed (set before `ended`)."""

    async def run_stdio_async(self) -> None:
        """The SDK's own, with the transport's read stream in `SurrogatesReplaced` (the SDK
        has no hook for the lines its reader could not read: it drops them)."""
        async with stdio_server() as (read_stream, write_stream):
            try:
                await self._lowlevel_server.run(
                    SurrogatesReplaced(read_stream, write_stream),
                    write_stream,
                    self._lowlevel_server.create_initialization_options(),
                )
            except anyio.get_cancelled_exc_class():
                # the transport's writer failed (the client closed stdout) and its task group
                # cancelled the serving; the group then waits for its stdin reader's thread,
                # which only a line or the end of stdin frees: `serve` need not wait for it
                self.cancelled = True
                self.ended.set()
                raise

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as error:
            cause = error.__cause__
            if isinstance(error, UnexpectedToolError) or not isinstance(cause, ValidationError):
                raise
            raise ToolError(f"Error executing tool {name}: {argument_problems(cause)}") from cause


def argument_problems(error: ValidationError) -> str:
    """pydantic's multi-line report of a call's arguments as one line: each argument and what
    was wrong with it, the value given cut short (e.g. `limit: input should be a valid
    integer, unable to parse string as an integer (got 'five')`)."""
    problems = []
    for problem in error.errors(include_url=False):
        name = ".".join(str(part) for part in problem["loc"]) or "arguments"
        if problem["type"] == "missing":
            problems.append(f"{name} is required")
            continue
        message = problem["msg"][:1].lower() + problem["msg"][1:]
        given = repr(problem.get("input"))
        given = given if len(given) <= 40 else given[:39] + "…"
        problems.append(f"{name}: {message} (got {given})")
    return "; ".join(problems)


def build_server(
    root: Path, *, state_dir: Path | None = None, repository: WarmRepository | None = None
) -> _Server:
    """The MCP server for the repository at root (nothing is indexed until a call)."""
    tools = Tools(repository or WarmRepository(root), state_dir)
    server = _Server("ctxtui", instructions=INSTRUCTIONS)

    @server.tool(annotations=READ_ONLY)
    def rank_files(
        question: Question,
        limit: Annotated[int, Field(description=f"How many files to return, 1-{MAX_LIMIT}.")] = 20,
    ) -> RankOut:
        """Rank the repository's files for a question, best first: each with its score, its
        whole-file token cost and the reasons in words (matched words and fields,
        declarations, import links, git recency). Cheap; call it before build_pack to
        decide what to focus on."""
        return RankOut.model_validate(_guard(tools.rank_files, question, limit))

    @server.tool(annotations=READ_ONLY)
    def build_pack(
        question: Question,
        budget: Annotated[
            int | None,
            Field(
                description="Token budget of the pack (default: the repository's setting, "
                "8000 unless set)."
            ),
        ] = None,
        format: Annotated[
            Literal["markdown", "xml", "json"] | None,
            Field(
                description="markdown (default unless set), xml (each file escaped in "
                "<file>), or json."
            ),
        ] = None,
        focus: Annotated[
            list[str],
            Field(description="Files to rank first and always include, relative paths."),
        ] = [],  # noqa: B006 - pydantic copies defaults; the schema shows []
        exclude: Annotated[
            list[str],
            Field(description="Gitignore-style patterns to leave out, e.g. ['docs/', '*.lock']."),
        ] = [],  # noqa: B006
        changed: Annotated[
            bool,
            Field(
                description="Pin every file changed in the work tree and add their unified "
                "diff as a 'Changes' section."
            ),
        ] = False,
        base: Annotated[
            str | None,
            Field(
                description="With changed=true: the branch or commit to diff against (its "
                "merge base with HEAD); default HEAD."
            ),
        ] = None,
    ) -> Annotated[CallToolResult, PackOut]:
        """Build a context pack for a question: the best code of the repository fitted to a
        token budget, each file whole, focused on the question, or outlined. Returns the
        pack text (exactly what `ctxtui pack` prints) and a summary of files, levels and
        tokens."""
        text, summary = _guard(
            tools.build_pack, question, budget, format, focus, exclude, changed, base
        )
        return _text_and_data(text, summary)

    @server.tool(annotations=READ_ONLY)
    def file_outline(path: Path_) -> Annotated[CallToolResult, FileOut]:
        """One file as an outline: its declarations' signatures and first doc sentences,
        nested by class. A cheap look at a file's shape before asking for its code (where
        the outline would cost as much as the focused view or the whole file, that one)."""
        return _text_and_data(*_guard(tools.file_outline, path))

    @server.tool(annotations=READ_ONLY)
    def file_focused(path: Path_, question: Question) -> Annotated[CallToolResult, FileOut]:
        """One file focused on a question: its imports, the declarations that match the
        question in full, the others as signatures, with the lines left out marked (where
        that would cost as much as the whole file, the whole file)."""
        return _text_and_data(*_guard(tools.file_focused, path, question))

    @server.tool(annotations=READ_ONLY)
    def current_selection() -> Annotated[CallToolResult, PackOut]:
        """The pack the person built by hand in the ctxtui app for this repository: their
        question, pinned files, chosen levels, budget and format, as the app last saved
        them. Use it when they refer to 'my selection' or 'the context I picked'."""
        text, summary = _guard(tools.current_selection)
        return _text_and_data(text, summary)

    return server


def _guard(function: Any, *args: Any) -> Any:
    """Call a tool; an engine error becomes a tool error with its one line."""
    try:
        return function(*args)
    except EngineError as error:
        raise ToolError(str(error)) from None
    except OSError as error:
        where = f": {error.filename}" if error.filename else ""
        raise ToolError(f"{error.strerror or error}{where}") from None


def _text_and_data(text: str, data: dict[str, Any]) -> CallToolResult:
    """The text for the agent to read first, and the data for the client."""
    content: list[ContentBlock] = [TextContent(type="text", text=text)]
    if "summary" in data:
        content.append(TextContent(type="text", text=f"[ctxtui] {data['summary']}"))
    return CallToolResult(content=content, structured_content=data)


def serve(root: Path) -> None:
    """Serve the repository at root over stdio until the client hangs up or a signal
    stops it; then stop the background embedding, which saves the vectors it made (see
    `WarmRepository.close`).

    The server runs in a thread of its own, so that a signal (SIGTERM from the client,
    Ctrl-C) ends the wait in the main thread: in the main thread, asyncio took Ctrl-C over
    and only cancelled the server, which then waited for the SDK's thread reading stdin, and
    a SIGTERM now and then did the same. `ctxtui.cli.QUICK_EXIT` then ends the process
    without waiting for that thread either.

    Raises:
        BrokenPipeError: the client closed the server's stdout (main() ends quietly, exit 0).
    """
    repository = WarmRepository(root)
    server = build_server(root, repository=repository)
    failed: list[BaseException] = []

    def run() -> None:
        try:
            server.run("stdio")
        except BaseException as error:  # handed to the main thread, raised there
            failed.append(error)
        finally:
            server.ended.set()

    thread = threading.Thread(target=run, name="ctxtui-mcp", daemon=True)
    thread.start()
    try:
        server.ended.wait()  # interrupted by a signal's exception (ctxtui.cli._terminate_as_exit)
    finally:
        repository.close()
    if not failed and server.cancelled:  # by the transport, its stdin reader's thread held
        raise BrokenPipeError("the client closed the server's stdout")
    if failed and _client_stopped_reading(failed[0]):
        # the SDK's writer met a closed stdout (the client closed its end and reads no more):
        # the client left, as when it closes stdin; said as `rank | head` is (ctxtui.cli.main)
        raise BrokenPipeError("the client closed the server's stdout") from None
    if failed:
        raise failed[0]


def _client_stopped_reading(error: BaseException) -> bool:
    """Whether the server stopped only on broken pipes (the SDK's task group wraps them)."""
    group = getattr(error, "exceptions", None)  # an exception group (builtin from 3.11)
    if isinstance(group, tuple) and group:
        return all(_client_stopped_reading(inner) for inner in group)
    return isinstance(error, BrokenPipeError)
