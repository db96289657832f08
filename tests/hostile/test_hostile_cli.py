"""The command line under hostile input: one line and an exit code, never a traceback; no
terminal escape obeyed; a question too long for the budget is cut, not packed whole."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import make_repo

from ctxtui.cli import main
from ctxtui.cli.common import visible_controls
from engine import load_tokenizer

FILES = {
    "cart.py": "def cart_total(items):\n    return sum(items)\n",
    "banner.txt": "cart banner \x1b]0;pwned\x07\x1b[2J\x1b[31mred\x9b31m\rhidden\r\nok\n",
}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", FILES)


def ctxtui(
    *argv: str | bytes, stdout: int | None = subprocess.PIPE
) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONIOENCODING": ""}
    return subprocess.run(
        [sys.executable, "-m", "ctxtui", *argv], stdout=stdout, capture_output=stdout is None,
        stderr=subprocess.PIPE, env=env, check=False, timeout=300,
    )  # fmt: skip


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full here")
@pytest.mark.parametrize(
    "command",
    [
        ["pack", "cart", "{repo}", "--no-cache"],
        ["rank", "cart", "{repo}", "--no-cache"],
        ["index", "{repo}", "--no-cache"],
        ["config", "{repo}"],  # session 32: config, eval (and bench) wrote to stdout directly:
        ["config", "{repo}", "--json"],  # a traceback of OSError: [Errno 28] on a full disk
        ["eval", "{cases}", "{repo}"],
        ["eval", "{cases}", "{repo}", "--json"],
    ],
)
def test_a_full_stdout_is_one_line_and_exit_1(
    repo: Path, tmp_path: Path, command: list[str]
) -> None:
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps({"id": "c1", "query": "cart total", "gold": ["cart.py"]}) + "\n")
    argv = [part.format(repo=repo, cases=cases) for part in command]
    with open("/dev/full", "wb") as full:
        done = subprocess.run(
            [sys.executable, "-m", "ctxtui", *argv],
            stdout=full, stderr=subprocess.PIPE, check=False, timeout=300,
        )  # fmt: skip
    err = done.stderr.decode()
    assert done.returncode == 1
    assert "ctxtui: cannot write to stdout: No space left on device" in err
    assert "Traceback" not in err and "Exception ignored" not in err


def _full_disk() -> None:
    """In the child: files may not grow past 200 bytes (EFBIG, as a full disk's ENOSPC)."""
    import resource
    import signal

    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (200, 200))


def test_a_pack_the_disk_cannot_hold_leaves_the_old_file_whole(repo: Path, tmp_path: Path) -> None:
    # review: -o into a full disk left 12 KB of a pack cut mid-line where the old one was
    target = tmp_path / "pack.md"
    target.write_text("the old pack\n")
    done = subprocess.run(
        [sys.executable, "-m", "ctxtui", "pack", "cart", str(repo), "--no-cache", "-o", target],
        capture_output=True, check=False, timeout=300, preexec_fn=_full_disk,
    )  # fmt: skip
    err = done.stderr.decode()
    assert done.returncode == 1 and "Traceback" not in err
    assert f"ctxtui: cannot write {target}: File too large" in err
    assert target.read_text() == "the old pack\n"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".pack.md")]


def test_a_pack_written_to_a_device_or_through_a_link_goes_there(
    repo: Path, tmp_path: Path
) -> None:
    real = tmp_path / "real.md"
    real.write_text("old\n")
    real.chmod(0o640)
    link = tmp_path / "link.md"
    link.symlink_to(real)
    assert main(["pack", "cart", str(repo), "--no-cache", "-o", str(link)]) == 0
    assert link.is_symlink() and "## cart.py" in real.read_text()
    assert real.stat().st_mode & 0o777 == 0o640
    assert main(["pack", "cart", str(repo), "--no-cache", "-o", os.devnull]) == 0
    assert Path(os.devnull).is_char_device()


def test_a_question_that_is_not_utf8_gives_valid_utf8_everywhere(
    repo: Path, tmp_path: Path
) -> None:
    question = os.fsencode("caf\udce9 cart")  # the byte 0xe9 alone, as a shell passes it
    done = ctxtui(b"pack", question, os.fsencode(repo), b"--format", b"json", b"--no-cache")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.decode("utf-8"))["query"] == "caf\ufffd cart"
    target = tmp_path / "out.md"
    done = ctxtui(b"pack", question, os.fsencode(repo), b"-o", os.fsencode(target), b"--no-cache")
    assert done.returncode == 0 and b"Traceback" not in done.stderr
    assert "> caf\ufffd cart" in target.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("content", "code", "message"),
    [
        (
            b'{"query": "cart", "gold": ["cart.py"]}\n\x89PNG\r\n\x1a\n\x00\xff\n',
            1,
            ":2: not UTF-8",
        ),
        (b'{"query": "cart", "gold": ["cart.py"]}\n{"query": \n', 1, ":2: not JSON lines"),
        (b'{"query": 5, "gold": ["cart.py"]}\n', 2, ":1: 'query' must be a non-empty string"),
        (b'{"query": "cart", "gold": "cart.py"}\n', 2, ":1: 'gold' must be a non-empty list"),
        (b'{"query": "cart", "gold": []}\n', 2, ":1: 'gold' must be a non-empty list"),
        (b'\n\n["cart"]\n', 2, ":3: a case must be a JSON object"),
    ],
)
def test_eval_names_the_line_of_a_bad_case(
    repo: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    content: bytes,
    code: int,
    message: str,
) -> None:
    cases = tmp_path / "cases.jsonl"
    cases.write_bytes(content)
    assert main(["eval", str(cases), str(repo)]) == code
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"cases.jsonl{message}" in err


def test_terminal_escapes_are_shown_not_obeyed_on_a_terminal(
    repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    assert main(["pack", "cart banner", str(repo), "--no-cache"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x9b" not in out and "\x07" not in out
    assert "␛]0;pwned␇␛[2J␛[31mred\\x9b31m␍hidden" in out


def test_escapes_reach_a_file_or_a_pipe_unchanged(repo: Path, tmp_path: Path) -> None:
    assert main(["pack", "cart banner", str(repo), "-o", str(tmp_path / "p.md")]) == 0
    assert "\x1b]0;pwned\x07" in (tmp_path / "p.md").read_text(encoding="utf-8")
    assert visible_controls("a\tb\r\nc\n") == "a\tb\r\nc\n"


def test_a_question_over_the_budget_is_cut_and_the_pack_fits(
    repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    report = "Traceback at cart_total\n" + "  noise line of a long log\n" * 20_000 + "why?\n"
    monkeypatch.setattr(sys, "stdin", io.StringIO(report))
    assert main(["pack", "-", str(repo), "-b", "2000", "--no-cache"]) == 0
    out, err = capsys.readouterr()
    assert load_tokenizer().count(out) <= 2000
    assert "> Traceback at cart_total" in out and "> why?" in out
    assert "tokens of the question left out" in out
    assert "the question takes" in err and "quotes its start and end" in err


def _cpu_seconds(limit: int) -> Callable[[], None]:
    """In the child: killed (SIGXCPU) once it has used `limit` seconds of CPU."""

    def limited() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_CPU, (limit, limit))

    return limited


def test_a_rewritten_data_file_under_changed_costs_seconds_not_minutes(tmp_path: Path) -> None:
    # review: `pack --changed` with a csv rewritten spent its time splitting git's patch into
    # hunks (each hunk grew by `+=`, copied at every line: quadratic): 2.7 MB here took 50 s
    # of CPU (3.2 s now), 15 MB over ten minutes (5.9 s now), the pack the same to the byte.
    # The limit is CPU seconds, six times what it takes now
    rows = lambda seed: "".join(f"{n},{(n * seed) % 1000003}\n" for n in range(200_000))  # noqa: E731
    repo = make_repo(tmp_path / "repo", {**FILES, "data.csv": rows(7)}, git=True)
    (repo / "data.csv").write_text(rows(11))  # every line changed: one hunk of 400,000 lines
    done = subprocess.run(
        [sys.executable, "-m", "ctxtui", "pack", "cart", str(repo), "--changed", "--no-cache"],
        capture_output=True, check=False, timeout=600, preexec_fn=_cpu_seconds(20),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr.decode()
    out = done.stdout.decode()
    assert "1 file changed" in out and "1 of 1 hunks left out to fit the budget" in out
    assert "diff --git a/data.csv b/data.csv\n" in out


def _closing(*descriptors: int) -> Callable[[], None]:
    """In the child: start with these standard streams closed (`>&-`, `<&-`, `2>&-`)."""

    def close() -> None:
        for descriptor in descriptors:
            os.close(descriptor)

    return close


def test_streams_closed_before_the_start_are_one_line_or_silence_never_a_traceback(
    repo: Path, tmp_path: Path
) -> None:
    # session 32: each of these was a traceback (sys.stdout, sys.stdin, sys.stderr were None)
    def run(*argv: str | Path, closed: tuple[int, ...]) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            [sys.executable, "-m", "ctxtui", *argv], capture_output=True, check=False,
            timeout=300, preexec_fn=_closing(*closed),
        )  # fmt: skip

    for argv in (["rank", "cart", repo], ["index", repo], ["config", repo]):
        done = run(*argv, closed=(1,))
        assert (done.returncode, done.stderr) == (
            1,
            b"ctxtui: cannot write to stdout: it is closed\n",
        )
    target = tmp_path / "pack.md"
    done = run("pack", "cart", repo, "-o", target, closed=(1,))  # -o needs no stdout
    assert done.returncode == 0 and target.read_text().startswith("# Context pack")
    done = run("rank", "-", repo, closed=(0,))
    assert (done.returncode, done.stderr) == (2, b"ctxtui: the question is empty\n")
    done = run("pack", "cart", repo, closed=(2,))  # nowhere to say anything; the pack is whole
    assert done.returncode == 0 and done.stdout.startswith(b"# Context pack")
