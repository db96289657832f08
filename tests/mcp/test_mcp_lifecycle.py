"""`ctxtui mcp` over its whole life: calls an agent sends at once, and the client hanging up.

The server runs in a subprocess, driven with raw JSON-RPC lines on its stdin, so a test can
send several calls before reading any answer, and close stdin whenever it likes.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from conftest import make_repo

from ctxtui.cli import main

FILES = {
    "app/auth.py": "def login(user, password):\n    return check_password(user, password)\n",
    "app/views.py": "from app.auth import login\n\n\ndef login_view(request):\n    return 1\n",
    "app/models.py": "class User:\n    name: str\n",
    "README.md": "# demo\n\nHow login works.\n",
}


def _default_interrupt() -> None:
    """In the server's process before it starts: Ctrl-C as a terminal delivers it (a test
    worker may run with SIGINT ignored, which the server would inherit)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class RawServer:
    """`ctxtui mcp ROOT` in a subprocess, spoken to in JSON-RPC lines."""

    def __init__(self, root: Path, env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "ctxtui", "mcp", str(root)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            preexec_fn=_default_interrupt,
        )
        self.sent = 0
        self.request(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"},
            },
        )
        self.answers([self.sent])
        self.write({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def write(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()

    def request(self, method: str, params: dict[str, Any]) -> int:
        self.sent += 1
        self.write({"jsonrpc": "2.0", "id": self.sent, "method": method, "params": params})
        return self.sent

    def call(self, tool: str, arguments: dict[str, Any]) -> int:
        """Send a tool call without waiting for its answer; return its id."""
        return self.request("tools/call", {"name": tool, "arguments": arguments})

    def answers(self, ids: list[int]) -> dict[int, dict[str, Any]]:
        """Read until every id in `ids` is answered."""
        assert self.process.stdout is not None
        got: dict[int, dict[str, Any]] = {}
        while len(got) < len(ids):
            line = self.process.stdout.readline()
            assert line, f"the server hung up: {self.hang_up()[1]}"
            message = json.loads(line)
            if message.get("id") in ids:
                got[message["id"]] = message
        return got

    def hang_up(self) -> tuple[int, str]:
        """Close stdin as a client does when it leaves; the exit code and stderr."""
        _out, err = self.process.communicate(timeout=120)
        return self.process.returncode, err


@contextmanager
def watched(repo: Path) -> Iterator[RawServer]:
    """`ctxtui mcp repo` (semantic off), killed after 120 s (an answer that never comes fails
    the test, it does not hang it) and at the end."""
    server = RawServer(repo, {**os.environ, "CTXTUI_SEMANTIC": "off"})
    watchdog = threading.Timer(120, server.process.kill)
    watchdog.start()
    try:
        yield server
    finally:
        watchdog.cancel()
        server.process.kill()
        server.hang_up()


def test_calls_sent_at_once_to_a_fresh_server_index_the_repository_once(
    tmp_path: Path, isolated_dirs: Path
) -> None:
    # review: four calls sent together before the first answer each opened the repository
    # and indexed it from scratch side by side (flask: 20 s for the four instead of 6 s;
    # with the semantic extra, four models loaded and embedding the same files)
    repo = make_repo(tmp_path / "demo", FILES, git=True)
    assert main(["index", str(repo)]) == 0
    [cache] = (isolated_dirs / "xdg_cache_home").rglob("index-*.bin")
    cache.write_bytes(b"not an index")  # each opening of the repository says so on stderr
    server = RawServer(repo, dict(os.environ))
    ids = [
        server.call("rank_files", {"question": "login"}),
        server.call("build_pack", {"question": "login view", "budget": 2000}),
        server.call("file_outline", {"path": "app/auth.py"}),
        server.call("rank_files", {"question": "user model"}),
    ]
    answers = server.answers(ids)
    code, err = server.hang_up()
    assert all(not answers[i]["result"]["isError"] for i in ids), answers
    assert err.count("index cache discarded") == 1, err
    assert code == 0


@pytest.mark.parametrize(("stop", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_ends_the_server_while_its_client_keeps_stdin_open(
    tmp_path: Path, stop: signal.Signals, code: int
) -> None:
    # review: `ctxtui mcp` said "terminated" (or nothing, on Ctrl-C in a terminal) and went
    # on running until its stdin was closed: the SDK's stdin reader held the exit
    repo = make_repo(tmp_path / "demo", FILES, git=True)
    server = RawServer(repo, dict(os.environ))
    asked = server.call("rank_files", {"question": "login"})
    assert not server.answers([asked])[asked]["result"]["isError"]
    server.process.send_signal(stop)
    try:
        assert server.process.wait(timeout=60) == code
    finally:
        server.process.kill()
        server.hang_up()


def _files_with_vectors(capsys: pytest.CaptureFixture[str], repo: Path) -> int:
    capsys.readouterr()
    assert main(["index", str(repo)]) == 0
    found = re.search(r"^semantic\s+(\d+)\s+of", capsys.readouterr().out, re.MULTILINE)
    assert found is not None
    return int(found.group(1))


def test_hanging_up_stops_the_background_embedding_and_keeps_its_vectors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # review: with the semantic extra, a client leaving while the server embedded the
    # repository in the background ended it with SIGABRT ("terminate called without an
    # active exception", onnxruntime torn down under the thread), and every vector made
    # since the last periodic save (30 s) was lost: 300 files, 5 with vectors after the
    # session (the question's), 51 with this fix
    pytest.importorskip("onnxruntime", reason="the semantic extra is not installed")
    monkeypatch.setenv("CTXTUI_SEMANTIC", "on")
    body = "".join(
        f"    total_{line} = request.value * {line} + offset_{line}\n" for line in range(24)
    )
    files = {  # one chunk a file, of the model's whole window: seconds of embedding a slice
        f"pkg/mod{n:03}.py": f"def handle_{n}(request):\n{body}    return {n}\n" for n in range(600)
    }
    repo = make_repo(tmp_path / "many", files)
    server = RawServer(repo, dict(os.environ))
    asked = server.call("rank_files", {"question": "handle the request value"})
    assert not server.answers([asked])[asked]["result"]["isError"]
    before = _files_with_vectors(capsys, repo)  # the question's files, saved with its answer
    code, err = server.hang_up()
    assert code == 0, err
    assert "terminate called" not in err
    assert before < _files_with_vectors(capsys, repo)


@pytest.mark.parametrize("escaped", ["\udcff", "\ud800", "caf\udce9 login"])
def test_a_call_whose_json_escapes_a_lone_surrogate_is_answered(
    tmp_path: Path, escaped: str
) -> None:
    # session 33: `"\udcff"` (half a surrogate pair, as json.dumps or JSON.stringify escapes
    # a file name's odd byte) made the SDK's reader drop the line: no answer, ever, and the
    # client waited. It is now read with U+FFFD in its place, as an odd byte on the wire is
    repo = make_repo(tmp_path / "demo", FILES, git=True)
    with watched(repo) as server:
        asked = server.call("rank_files", {"question": f"{escaped} login"})
        assert "\\ud" in json.dumps(escaped)  # sent as the escape, not as UTF-8 bytes
        answer = server.answers([asked])[asked]["result"]
        assert not answer["isError"]
        question = answer["structuredContent"]["question"]
        assert question == re.sub("[\ud800-\udfff]", "\ufffd", f"{escaped} login")
        assert "app/auth.py" in [f["path"] for f in answer["structuredContent"]["files"]]
        assert not server.answers([server.request("ping", {})])[server.sent].get("error")


def test_a_line_that_is_no_request_is_answered_and_the_server_serves_on(tmp_path: Path) -> None:
    # session 34: a line that was not JSON, or JSON but no message, got no answer (the SDK's
    # reader drops it): a client waiting for it waited for ever. JSON-RPC 2.0 answers a
    # parse error (-32700) or an invalid request (-32600), id null when it has none
    repo = make_repo(tmp_path / "demo", FILES, git=True)
    with watched(repo) as server:
        assert server.process.stdin is not None and server.process.stdout is not None
        server.process.stdin.write('not json {\n\n{"jsonrpc": "2.0", "id": 41}\n[]\n')
        server.process.stdin.flush()
        errors = [json.loads(server.process.stdout.readline()) for _ in range(3)]
        assert [(e["id"], e["error"]["code"]) for e in errors] == [
            (None, -32700),
            (41, -32600),
            (None, -32600),
        ]
        asked = server.call("rank_files", {"question": "login"})
        assert not server.answers([asked])[asked]["result"]["isError"]


def test_a_client_that_closes_the_server_s_stdout_ends_it_quietly(tmp_path: Path) -> None:
    # session 34: a client that closed its end of the server's stdout (it reads no more)
    # killed the server at its next answer with the SDK's ExceptionGroup traceback, 40 lines
    # of it on stderr, exit 1, and only once it read another line (the SDK's stdin reader
    # held it till then): the client left, as when it closes stdin, and nothing is wrong
    repo = make_repo(tmp_path / "demo", FILES, git=True)
    with watched(repo) as server:
        assert server.process.stdout is not None and server.process.stderr is not None
        server.process.stdout.close()
        server.call("rank_files", {"question": "login"})  # its answer meets the closed pipe
        assert server.process.wait() == 0  # stdin still open, no other line sent
        assert "Traceback" not in server.process.stderr.read()
