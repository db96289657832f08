"""`ctxtui mcp`: the real server in a subprocess, driven over stdio by the MCP SDK's client.

One server serves the whole module (starting it costs seconds: the SDK is heavy to import);
each test states what it needs of the repository and the saved app state itself.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
from collections.abc import Coroutine, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

import pytest
from conftest import make_repo
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp_types import CallToolResult, TextContent

from ctxtui.cli import main
from ctxtui.mcp.tools import summary_line
from ctxtui.state import RepoState, StateStore
from engine.model import Format, Level, Plan, Rendered

T = TypeVar("T")

AUTH = (
    '"""Sessions and logins."""\n\n\n'
    "def login(user: str, password: str) -> bool:\n"
    '    """Check a password and open a session."""\n'
    "    return check_password(user, password) and open_session(user)\n\n\n"
    "def check_password(user: str, password: str) -> bool:\n"
    "    return password == 'secret-' + user\n\n\n"
    "def open_session(user: str) -> bool:\n"
    "    return True\n"
)
FILES = {
    "app/auth.py": AUTH,
    "app/views.py": "from app.auth import login\n\n\ndef login_view(request):\n"
    "    return login(request.user, request.password)\n",
    "app/models.py": "class User:\n    name: str\n    email: str\n",
    "docs/guide.md": "# Guide\n\nHow login works: call login with a password.\n",
    "README.md": "# demo\n",
}


class McpSession:
    """A client session held open by one task in a background event loop."""

    def __init__(self, root: Path, env: dict[str, str]) -> None:
        self.params = StdioServerParameters(
            command=sys.executable, args=["-m", "ctxtui", "mcp", str(root)], env=env
        )
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.ready = threading.Event()
        self.client: Client | None = None
        self.closing: asyncio.Event | None = None
        self.main = asyncio.run_coroutine_threadsafe(self._hold(), self.loop)
        if not self.ready.wait(timeout=180):
            raise TimeoutError("the MCP server did not start")
        if self.main.done():
            self.main.result()

    async def _hold(self) -> None:
        self.closing = asyncio.Event()
        try:
            async with Client(self.params, read_timeout_seconds=120) as client:
                self.client = client
                self.ready.set()
                await self.closing.wait()
        finally:
            self.ready.set()

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout=180)

    def call(self, name: str, arguments: dict[str, Any] | None = None) -> CallToolResult:
        assert self.client is not None
        return self.run(self.client.call_tool(name, arguments or {}))

    def close(self) -> None:
        assert self.closing is not None
        self.loop.call_soon_threadsafe(self.closing.set)
        self.main.result(timeout=60)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("mcp-home")


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_repo(tmp_path_factory.mktemp("mcp") / "demo", FILES, git=True)


@pytest.fixture(scope="module")
def server(repo: Path, home: Path) -> Iterator[McpSession]:
    # module-scoped: started before the autouse fixture turns the semantic stage off
    env = {**os.environ, **_xdg(home), "CTXTUI_SEMANTIC": "off"}
    session = McpSession(repo, env)
    yield session
    session.close()


@pytest.fixture(autouse=True)
def same_dirs_as_the_server(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI run in this process reads the same settings and state folders as the server."""
    for name, value in _xdg(home).items():
        monkeypatch.setenv(name, value)


XDG = ("XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME")


def _xdg(home: Path) -> dict[str, str]:
    return {name: str(home / name.lower()) for name in XDG}


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(list(argv)) == 0
    return capsys.readouterr().out


def text_of(result: CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


def test_the_five_tools_are_listed_with_described_arguments(server: McpSession) -> None:
    assert server.client is not None
    tools = {tool.name: tool for tool in server.run(server.client.list_tools()).tools}
    assert set(tools) == {
        "rank_files",
        "build_pack",
        "file_outline",
        "file_focused",
        "current_selection",
    }
    for tool in tools.values():
        assert tool.description and len(tool.description) > 60
        for name, schema in tool.input_schema.get("properties", {}).items():
            assert schema.get("description"), f"{tool.name}.{name} has no description"
    pack_args = tools["build_pack"].input_schema["properties"]
    assert set(pack_args) == {"question", "budget", "format", "focus", "exclude", "changed", "base"}
    assert "xml" in json.dumps(pack_args["format"])
    assert tools["build_pack"].input_schema["required"] == ["question"]
    assert tools["build_pack"].output_schema is not None


def test_build_pack_is_byte_identical_to_ctxtui_pack(
    server: McpSession, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    question = "how does login check the password"
    result = server.call("build_pack", {"question": question})
    assert not result.is_error
    assert text_of(result) == cli(capsys, "pack", question, str(repo))
    summary = result.structured_content
    assert summary is not None
    assert summary["files"][0]["path"] == "app/auth.py"
    assert summary["format"] == "markdown" and summary["budget"] == 8000


def test_build_pack_with_every_argument_matches_the_same_flags(
    server: McpSession, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    arguments = {
        "question": "login view",
        "budget": 600,
        "format": "xml",
        "focus": ["app/models.py"],
        "exclude": ["docs/"],
    }
    result = server.call("build_pack", arguments)
    expected = cli(
        capsys, "pack", "login view", str(repo), "-b", "600", "--format", "xml",
        "--focus", "app/models.py", "--exclude", "docs/",
    )  # fmt: skip
    assert text_of(result) == expected
    assert "docs/guide.md" not in expected and 'path="app/models.py"' in expected


def test_build_pack_changed_pins_the_changes_like_the_cli(
    server: McpSession, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    views = repo / "app" / "views.py"
    original = views.read_text()
    views.write_text(original + "\n\ndef logout_view(request):\n    return None\n")
    try:
        result = server.call("build_pack", {"question": "user email", "changed": True})
        expected = cli(capsys, "pack", "user email", str(repo), "--changed")
    finally:
        views.write_text(original)
    assert text_of(result) == expected
    assert "## Changes" in expected and "+def logout_view(request):" in expected
    assert result.structured_content is not None
    assert result.structured_content["changes_tokens"] > 0


def test_the_secret_file_hints_say_what_an_agent_can_do(
    server: McpSession, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Review, session 33: the note in place of a changed secret file's diff said
    "--include-secret NAME packs it", a flag an agent cannot pass; the command line keeps it."""
    secret = repo / "app" / ".env"
    secret.write_text("API_TOKEN=abc\n")
    try:
        result = server.call("build_pack", {"question": "login", "changed": True})
        outline = server.call("file_outline", {"path": "app/.env"})
        expected = cli(capsys, "pack", "login", str(repo), "--changed")
    finally:
        secret.unlink()
    text = text_of(result)
    assert "… secret file: its diff left out (!NAME in .ctxtuiignore packs it)" in text
    assert "--include-secret" not in text and "API_TOKEN" not in text
    assert "… secret file: its diff left out (--include-secret NAME packs it)" in expected
    assert outline.is_error
    assert text_of(outline).endswith(
        "app/.env is not indexed (secret file): !app/.env in .ctxtuiignore packs it"
    )


def test_rank_files_gives_paths_costs_and_reasons_in_the_cli_order(
    server: McpSession, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    result = server.call("rank_files", {"question": "login password", "limit": 3})
    assert not result.is_error and result.structured_content is not None
    files = result.structured_content["files"]
    ranked = json.loads(cli(capsys, "rank", "login password", str(repo), "--json", "--limit", "3"))
    assert [f["path"] for f in files] == [r["path"] for r in ranked]
    assert files[0]["path"] == "app/auth.py"
    assert files[0]["tokens"] > 0
    assert "declaration: login" in files[0]["reasons"]


def test_rank_files_echoes_a_long_question_as_one_short_line(server: McpSession) -> None:
    # review: a 1.5 MB question came back whole in the answer
    question = "login password\n" + "where is the session opened? " * 3000
    result = server.call("rank_files", {"question": question, "limit": 1})
    assert not result.is_error and result.structured_content is not None
    echoed = result.structured_content["question"]
    assert "\n" not in echoed and len(echoed) <= 200
    assert echoed.startswith("login password where is the session opened?")
    assert echoed.endswith(f"… ({len(question):,} characters)")
    short = server.call("rank_files", {"question": "login", "limit": 1}).structured_content
    assert short is not None and short["question"] == "login"


def test_file_outline_and_file_focused_return_one_file_at_that_level(
    server: McpSession,
) -> None:
    outline = server.call("file_outline", {"path": "app/auth.py"})
    assert not outline.is_error
    assert "def login(user: str, password: str) -> bool:" in text_of(outline)
    assert "return check_password" not in text_of(outline)
    assert outline.structured_content is not None
    assert outline.structured_content["level"] == "outline"

    focused = server.call("file_focused", {"path": "app/auth.py", "question": "open_session"})
    assert not focused.is_error
    assert "    return True" in text_of(focused)  # the matching declaration, whole
    # login calls open_session (a match too); check_password does not: left out
    assert "return password ==" not in text_of(focused)


def test_a_relative_path_that_climbs_back_inside_is_that_file(server: McpSession) -> None:
    # session 32: "app/../app/auth.py" was refused as "outside the repository"
    for path in ("app/../app/auth.py", "./app//auth.py", "docs/../app/./auth.py"):
        result = server.call("file_outline", {"path": path})
        assert not result.is_error, text_of(result)
        assert result.structured_content is not None
        assert result.structured_content["path"] == "app/auth.py"
    result = server.call("file_outline", {"path": "app/../../auth.py"})
    assert result.is_error and "outside the repository" in text_of(result)


def selection_of(server: McpSession, store: StateStore, state: RepoState) -> CallToolResult:
    """current_selection while `state` is the app's saved state (removed afterwards)."""
    store.save(state)
    try:
        return server.call("current_selection")
    finally:
        store.path.unlink()


def test_current_selection_is_the_pack_the_person_built_in_the_app(
    server: McpSession, repo: Path, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = RepoState(
        pinned=frozenset({"app/models.py"}),
        overrides={"app/views.py": Level.OUTLINE},
        budget=1500,
        fmt=Format.JSON,
        query="login password",
    )
    result = selection_of(server, StateStore(repo, home / "xdg_state_home" / "ctxtui"), state)
    assert not result.is_error
    document = json.loads(text_of(result))
    assert document["query"] == "login password" and document["budget"] == 1500
    levels = {f["path"]: (f["level"], f.get("pinned", False)) for f in document["files"]}
    assert levels["app/models.py"][1] is True
    assert levels["app/views.py"][0] == "outline"
    summary = result.structured_content
    assert summary is not None
    assert summary["pinned"] == ["app/models.py"]
    assert summary["levels"] == {"app/views.py": "outline"}


def test_current_selection_names_the_chosen_files_that_are_gone(
    server: McpSession, repo: Path, home: Path
) -> None:
    # review: pins and levels of files deleted or renamed since the app saved them were left
    # out of the pack without a word, while the summary still listed them as pinned.
    # Session 33: the app drops them when it opens (screens/host.py drop_gone_choices); the
    # note said they were still "pinned or given a level" and the summary still listed them:
    # they are dropped from the selection returned, in the app's words, the state left be
    state = RepoState(
        pinned=frozenset({"app/models.py", "app/billing_old.py"}),
        overrides={"app/legacy.py": Level.OUTLINE, "app/views.py": Level.OUTLINE},
        query="login password",
    )
    store = StateStore(repo, home / "xdg_state_home" / "ctxtui")
    store.save(state)
    saved = store.path.read_bytes()
    try:
        result = server.call("current_selection")
        assert store.path.read_bytes() == saved  # the app's to change, at its next open
    finally:
        store.path.unlink()
    assert not result.is_error
    assert "## app/models.py" in text_of(result) and "billing_old" not in text_of(result)
    summary = result.structured_content
    assert summary is not None
    assert summary["notes"] == [
        "unpinned 1 file and dropped the level of 1 file no longer in the repository's index"
        " (deleted, renamed or skipped): app/billing_old.py, app/legacy.py"
    ]
    assert summary["pinned"] == ["app/models.py"]
    assert summary["levels"] == {"app/views.py": "outline"}


def test_current_selection_without_a_saved_selection_says_how_to_make_one(
    server: McpSession,
) -> None:
    result = server.call("current_selection")
    assert result.is_error
    assert "No selection saved" in text_of(result)


def test_current_selection_leaves_an_unreadable_saved_state_where_it_is(
    server: McpSession, repo: Path, home: Path
) -> None:
    # cli review, session 31: the read-only tool moved the person's state file aside
    store = StateStore(repo, home / "xdg_state_home" / "ctxtui")
    store.path.parent.mkdir(parents=True, exist_ok=True)
    store.path.write_text("{not json")
    try:
        result = server.call("current_selection")
        assert result.is_error and "The saved state is unreadable" in text_of(result)
        assert store.path.read_text() == "{not json"
        assert list(store.path.parent.glob("*.corrupt-*")) == []
    finally:
        store.path.unlink()


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [
        ("build_pack", {"question": "login", "budget": 0}, "budget must be between 1"),
        ("build_pack", {"question": "login", "format": "yaml"}, "'markdown', 'xml' or 'json'"),
        ("build_pack", {"question": "login", "focus": ["../etc/passwd"]}, "outside the repo"),
        ("build_pack", {"question": "login", "changed": True, "base": "nope"}, "unknown base"),
        ("build_pack", {"question": "  "}, "question is empty"),
        ("file_outline", {"path": "/etc/passwd"}, "outside the repository"),
        ("file_outline", {"path": "app/missing.py"}, "no such file"),
        ("file_outline", {"path": "app/"}, "app is a folder: give the path of one of its files"),
        ("file_outline", {"path": "."}, ". is a folder"),
        ("file_outline", {"path": " "}, "path is empty"),
        ("file_outline", {"path": "app/au\0th.py"}, "app/au\\x00th.py: a path cannot hold a NUL"),
        ("file_outline", {"path": "/tmp/a\0b"}, "/tmp/a\\x00b: a path cannot hold a NUL"),
        ("file_outline", {"path": "app/auth.py\n"}, "app/auth.py\\n: no such file"),
        ("file_focused", {"path": "app/auth.py"}, "question"),
        ("rank_files", {"question": "login", "limit": 0}, "limit must be between 1"),
        ("build_pack", {"question": "login", "exclude": ["[z-a]"]}, "bad pattern '[z-a]'"),
        ("no_such_tool", {}, "no_such_tool"),
    ],
)
def test_bad_arguments_get_a_clear_error_and_the_server_keeps_serving(
    server: McpSession, tool: str, arguments: dict[str, Any], message: str
) -> None:
    result = server.call(tool, arguments)
    assert result.is_error
    assert message in text_of(result)
    assert "\n" not in text_of(result)  # a name with a line break is shown escaped
    assert not server.call("rank_files", {"question": "login"}).is_error


def test_a_full_path_through_a_symlink_loop_gets_a_clear_error(
    server: McpSession, repo: Path
) -> None:
    # session 32: Path.resolve raised RuntimeError, which the server reported as a bug with
    # no words ("Error executing tool file_outline")
    (repo / "loop_a").symlink_to("loop_b")
    (repo / "loop_b").symlink_to("loop_a")
    try:
        for path in (repo / "loop_a", repo / "loop_a" / "inner.py"):
            result = server.call("file_outline", {"path": str(path)})
            assert result.is_error
            said = text_of(result)
            assert path.relative_to(repo).as_posix() in said and "outside" not in said
    finally:
        (repo / "loop_a").unlink()
        (repo / "loop_b").unlink()
    assert not server.call("rank_files", {"question": "login"}).is_error


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [
        ("rank_files", {}, "question is required"),
        ("rank_files", {"question": "login", "limit": "five"}, "limit: input should be a valid"),
        ("rank_files", {"question": "login", "limit": 2.5}, "limit: input should be a valid"),
        ("file_outline", {"path": 3}, "path: input should be a valid string (got 3)"),
        ("file_focused", {"path": "app/auth.py", "question": None}, "question: input should"),
        ("build_pack", {"question": "login", "focus": "app/auth.py"}, "focus: input should be"),
        ("build_pack", {"question": "login", "focus": [1]}, "focus.0: input should be"),
        ("build_pack", {"question": "login", "format": "yaml"}, "'markdown', 'xml' or 'json'"),
        ("build_pack", {"question": 5, "budget": "lots"}, "budget: input should be a valid"),
        ("build_pack", {"question": "x", "budget": "9" * 5000}, "(got '99999"),
    ],
)
def test_an_argument_of_the_wrong_type_gets_one_line(
    server: McpSession, tool: str, arguments: dict[str, Any], message: str
) -> None:
    # review: these came back as pydantic's multi-line message with a web address
    result = server.call(tool, arguments)
    assert result.is_error
    text = text_of(result)
    assert "\n" not in text and "pydantic" not in text and len(text) < 300
    assert message in text
    assert text.startswith(f"Error executing tool {tool}: ")


def test_a_file_changed_on_disk_is_seen_by_the_next_call(server: McpSession, repo: Path) -> None:
    added = repo / "app" / "billing.py"
    added.write_text("def refund_invoice(invoice_id: int) -> None:\n    pass\n")
    try:
        result = server.call("rank_files", {"question": "refund invoice"})
    finally:
        added.unlink()
    assert result.structured_content is not None
    assert result.structured_content["files"][0]["path"] == "app/billing.py"


@pytest.fixture
def cafe(repo: Path) -> Iterator[Path]:
    """An untracked file whose name holds the byte 0xe9 alone (not UTF-8)."""
    added = Path(os.fsdecode(bytes(repo) + b"/app/caf\xe9.py"))
    added.write_text("def login_cafe():\n    pass\n")
    yield added
    added.unlink()


@pytest.fixture
def damaged_index(repo: Path) -> Iterator[None]:
    """The repository's git index cut short, put back afterwards."""
    index = repo / ".git" / "index"
    kept = index.read_bytes()
    index.write_bytes(b"garbage")
    yield
    index.write_bytes(kept)


@pytest.mark.usefixtures("damaged_index")
def test_build_pack_changed_with_a_failing_git_is_an_error_not_no_changes(
    server: McpSession,
) -> None:
    # session 33: a damaged index made build_pack(changed=true) say "no changes against HEAD"
    result = server.call("build_pack", {"question": "login", "changed": True})
    assert result.is_error
    assert text_of(result) == (
        "Error executing tool build_pack: git diff failed, so the changes are unknown:"
        " .git/index: index file smaller than expected"
    )


def test_a_changed_file_whose_name_is_not_utf8_is_packed_and_the_server_lives(
    server: McpSession, cafe: Path
) -> None:
    # review: build_pack with changed=true here ended the server (a surrogate in the pack)
    result = server.call("build_pack", {"question": "login", "changed": True})
    assert not result.is_error
    assert "app/caf\ufffd.py" in text_of(result)
    assert not server.call("rank_files", {"question": "login"}).is_error


def test_a_file_whose_name_is_not_utf8_is_opened_by_the_name_the_server_shows(
    server: McpSession, cafe: Path
) -> None:
    # review: rank_files shows app/caf\ufffd.py, file_outline did not know that name
    ranked = server.call("rank_files", {"question": "login_cafe", "limit": 1})
    assert ranked.structured_content is not None
    shown = ranked.structured_content["files"][0]["path"]
    assert shown == "app/caf\ufffd.py"
    outline = server.call("file_outline", {"path": shown})
    focused = server.call("file_focused", {"path": shown, "question": "cafe"})
    pack = server.call("build_pack", {"question": "x", "focus": [shown], "budget": 500})
    for result in (outline, focused):
        assert not result.is_error, text_of(result)
        assert "def login_cafe():" in text_of(result)
        assert result.structured_content is not None
        assert result.structured_content["path"] == shown
    assert not pack.is_error and "def login_cafe():" in text_of(pack)


def test_the_summary_line_says_one_file_in_the_singular() -> None:
    plan = Plan("q", 8000, (), 0, False, False)
    one = Rendered("x", Format.MARKDOWN, 12, 1)
    assert summary_line(plan, one) == "1 file, 12 of 8,000 tokens, markdown"  # not "1 files"
    assert summary_line(plan, replace(one, files=2)).startswith("2 files, ")
