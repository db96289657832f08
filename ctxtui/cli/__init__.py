"""The command line: `ctxtui [PATH]` opens the app; subcommands answer for scripts.

`main(argv) -> int` parses, dispatches and turns every expected failure into one line on
stderr and an exit code: 0 success, 1 a failure of the work (EngineError, unreadable input),
2 bad usage. Data goes to stdout, progress and errors to stderr. Textual is imported only
when the app starts.
"""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

from ctxtui import collector
from ctxtui.errors import UsageFailure

SUBCOMMANDS = ("index", "rank", "pack", "eval", "bench", "mcp", "config")
USAGE = (
    "\n  ctxtui [PATH]              open the app on the repository at PATH (default: .)"
    "\n  ctxtui COMMAND [ARGS...]   index, rank, pack, eval, bench, mcp or config"
    " (`ctxtui COMMAND -h`)"
)
"""The first lines of `ctxtui --help`: opening the app comes first."""
ENCODINGS = ("o200k_base", "cl100k_base")
FORMATS = ("markdown", "xml", "json")
"""The values of `engine.Format` (a test keeps them equal): named here, so that importing the
command line does not import the engine before `main_entry` has paused the collector."""
SETTINGS_HINT = "default: the settings' value (see `ctxtui config`)"


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of exiting, so main() owns every exit code."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageFailure(f"{self.prog}: {message}")


def build_parser() -> argparse.ArgumentParser:
    """The parser of every subcommand."""
    parser = _Parser(
        prog="ctxtui",
        usage=USAGE,
        description="Hand an AI assistant the right code. `ctxtui PATH` opens the app: type a "
        "question, watch the files re-rank, set levels and pins, copy the pack. The commands "
        "below answer the same questions for scripts.",
    )
    sub = parser.add_subparsers(
        dest="command", parser_class=_Parser, metavar="COMMAND", prog="ctxtui"
    )

    index = sub.add_parser("index", help="build or refresh the index; print counts and timings")
    index.add_argument("path", nargs="?", default=".")
    index.add_argument("--verbose", "-v", action="store_true", help="list skipped files")
    index.add_argument("--no-cache", action="store_true", help="index from scratch, save nothing")
    index.add_argument("--encoding", choices=ENCODINGS, help=SETTINGS_HINT)
    index.add_argument(
        "--semantic",
        action="store_true",
        help="also embed every file for the semantic re-rank (the extra; minutes on 1,000 files)",
    )
    _secret_file_flag(index)

    rank = sub.add_parser("rank", help="rank files for a question, with reasons")
    rank.add_argument("question", help="the question, or - to read it from stdin")
    rank.add_argument("path", nargs="?", default=".")
    rank.add_argument("--json", action="store_true", help="print a JSON list")
    rank.add_argument("--limit", type=int, default=20, help="files to show (default 20)")
    rank.add_argument("--focus", action="append", default=[], metavar="FILE")
    rank.add_argument("--exclude", action="append", default=[], metavar="GLOB", type=_glob)
    rank.add_argument("--no-cache", action="store_true")
    rank.add_argument(
        "--no-semantic", action="store_true", help="rank by words only, even with the extra"
    )
    _secret_file_flag(rank)

    pack = sub.add_parser("pack", help="print a context pack for a question")
    pack.add_argument("question", help="the question, or - to read it from stdin")
    pack.add_argument("path", nargs="?", default=".")
    pack.add_argument(
        "-b",
        "--budget",
        type=_token_count,
        help="token budget: 8000, 12,000, 12k, 1.5k (8000 unless a settings file says)",
    )
    pack.add_argument("--format", choices=FORMATS, help=SETTINGS_HINT)
    pack.add_argument("-o", "--output", metavar="FILE", help="write the pack to FILE (- is stdout)")
    pack.add_argument("--copy", action="store_true", help="also copy the pack to the clipboard")
    pack.add_argument("--focus", action="append", default=[], metavar="FILE")
    pack.add_argument("--exclude", action="append", default=[], metavar="GLOB", type=_glob)
    pack.add_argument("-n", "--line-numbers", action="store_true", default=None)
    pack.add_argument("--encoding", choices=ENCODINGS, help=SETTINGS_HINT)
    pack.add_argument(
        "--changed",
        nargs="?",
        const="",
        metavar="BASE",
        help="pin the files changed against BASE (default: the work tree against HEAD) "
        "and add their diff; put it after the question, or write --changed=BASE",
    )
    pack.add_argument("--no-cache", action="store_true")
    pack.add_argument(
        "--no-semantic", action="store_true", help="rank by words only, even with the extra"
    )
    _secret_file_flag(pack)
    pack.add_argument(
        "--no-redact",
        action="store_true",
        help="leave the secrets found in the pack in it (each is still named on stderr)",
    )

    evaluate = sub.add_parser("eval", help="retrieval metrics on benchmark cases")
    evaluate.add_argument(
        "cases", help="a .jsonl file of cases (shared/bench format); - reads them from stdin"
    )
    evaluate.add_argument(
        "path",
        nargs="?",
        help="repository for every case (default: each "
        "case's checkout under $CTXBENCH_CACHE, as materialise.py makes them)",
    )
    evaluate.add_argument("-b", "--budget", type=_token_count, default=8000)
    evaluate.add_argument("--json", action="store_true", help="print the summary as JSON")
    evaluate.add_argument(
        "--no-semantic", action="store_true", help="rank by words only, even with the extra"
    )

    bench = sub.add_parser(
        "bench",
        help="measure ranking and planning speed while typing (rank with the reasons of the "
        "first 25 rows, as the app works them out; plan with those of the files it packs)",
    )
    bench.add_argument("path", nargs="?", default=".")
    bench.add_argument("--question", action="append", default=[], help="questions to type")
    bench.add_argument("-b", "--budget", type=_token_count, default=8000)
    bench.add_argument(
        "--app",
        action="store_true",
        help="drive the real app headless: key -> list and last key -> exact meter latencies",
    )
    bench.add_argument(
        "--interval", type=int, default=120, metavar="MS", help="ms between keys with --app (120)"
    )
    bench.add_argument(
        "--repeat", type=int, default=1, metavar="N", help="type the questions N times (--app)"
    )

    mcp = sub.add_parser("mcp", help="serve rank_files, build_pack, ... to agents over MCP (stdio)")
    mcp.add_argument("path", nargs="?", default=".")

    config = sub.add_parser("config", help="print the effective settings and their sources")
    config.add_argument("path", nargs="?", default=".")
    config.add_argument("--json", action="store_true", help="print them as JSON")
    return parser


def parse_command_line(args_list: Sequence[str]) -> argparse.Namespace:
    """The arguments of a subcommand, its flags anywhere among its positionals.

    argparse fills every positional at the first run of them: in `rank QUESTION --json PATH`
    it took QUESTION alone for both (PATH is optional) and then refused PATH ("unrecognized
    arguments"), though scripts and agents write flags where they like. Each subcommand's
    own parser parses intermixed: flags first, then the positionals left in their order.
    """
    parser = build_parser()
    name = args_list[0] if args_list else ""
    commands: dict[str, argparse.ArgumentParser] = next(
        (a.choices for a in parser._actions if isinstance(a, argparse._SubParsersAction)), {}
    )
    command = commands.get(name)
    if command is None or "--" in args_list:  # -h; `--` before a question that starts with
        return parser.parse_args(args_list)  # a dash, which intermixed parsing mistakes
    try:
        args = command.parse_intermixed_args(args_list[1:])
    except UsageFailure as failure:
        told = str(failure)
        if "unrecognized arguments: -" not in told or "unrecognized arguments: --" in told:
            raise
        # a word with one dash (`rank -login`) is most often a question that starts with a
        # dash, taken for a flag: say how to write it (cli report, session 34)
        hint = f" (a question that starts with - goes after --: {name} -- QUESTION)"
        raise UsageFailure(f"{failure}{hint}") from None
    args.command = name
    return args


def _token_count(text: str) -> int:
    """A `-b` value, written as the app's budget key takes it ("12000", "12,000", "12k",
    "1.5k"); the range is checked in `_dispatch`."""
    from ctxtui.state import read_token_count  # deliberate: not needed for --help

    try:
        return read_token_count(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _glob(text: str) -> str:
    """A GLOB flag's value: an empty one means nothing (it was accepted and matched nothing,
    while a settings file's empty pattern is reported and MCP refuses one)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty pattern")
    return text


def _secret_file_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--include-secret",
        action="append",
        default=[],
        metavar="GLOB",
        type=_glob,
        help="index a secret file (.env, a key, credentials) that is left out by default",
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code."""
    from engine import EngineError  # deliberate: see FORMATS

    args_list = list(sys.argv[1:] if argv is None else argv)
    _closed_streams_on_devnull()
    _tolerant_streams()
    try:
        if not args_list or args_list[0] not in (*SUBCOMMANDS, "-h", "--help"):
            return _run_app(args_list)
        args = parse_command_line(args_list)
        with _terminate_as_exit():
            return _dispatch(args)
    except UsageFailure as exc:
        print(str(exc), file=sys.stderr)
        return 2
    except SystemExit as exc:  # --help
        return int(exc.code or 0) if isinstance(exc.code, int) else 0
    except EngineError as exc:
        print(f"ctxtui: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("ctxtui: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        from ctxtui.cli.output import silence_stdout  # deliberate: only on this path

        silence_stdout()
        return 0  # `ctxtui rank ... | head`: the reader left, nothing is wrong


@contextmanager
def _terminate_as_exit() -> Iterator[None]:
    """Turn SIGTERM into SystemExit(143) while a subcommand runs, so it unwinds like Ctrl-C:
    an index's worker pool is stopped and a half-written cache file removed."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def terminated(signum: int, frame: FrameType | None) -> None:
        print("ctxtui: terminated", file=sys.stderr)
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _closed_streams_on_devnull() -> None:
    """A standard stream closed before the start (`>&-`, `<&-`, `2>&-`, as a crontab or a
    supervisor may leave it) is None in Python, and the first print was a traceback (of the
    progress bar's `sys.stderr.isatty()`, of `sys.stdout.write`). Each gets /dev/null in its
    place, on its own descriptor number so no file opened later takes it: stdin reads
    nothing (`-` is an empty question), stderr says nothing (the exit code still does), and
    stdout is opened read-only, so that data written to it fails as on a full disk (one line,
    exit 1) instead of vanishing; `pack -o FILE` needs no stdout and works."""
    for name, flags in (("stdin", os.O_RDONLY), ("stdout", os.O_RDONLY), ("stderr", os.O_WRONLY)):
        if getattr(sys, name) is not None:
            continue
        descriptor = os.open(os.devnull, flags)  # the lowest free number: its own if free
        mode = "r" if name == "stdin" else "w"
        setattr(sys, name, open(descriptor, mode, encoding="utf-8"))  # noqa: SIM115 (for good)


def _tolerant_streams() -> None:
    """Never die on bytes: a pasted report that is not UTF-8 is read with replacement, and a
    file name that is not UTF-8 is written back as the very bytes it has on disk."""
    for stream, errors in ((sys.stdin, "replace"), (sys.stdout, "surrogateescape"),
                           (sys.stderr, "backslashreplace")):  # fmt: skip
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors=errors)


QUICK_EXIT = ("index", "rank", "pack", "mcp")
"""Subcommands whose work is all done (caches written, worker pools stopped, the clipboard
tool finished) when main() returns: the process then ends without the interpreter's
teardown, whose garbage collections over every imported module's objects cost 50-170 ms of a
warm `ctxtui index` of 16,000 files (0.5-0.7 s in all). `mcp` needs it to end at all when a
signal stops it (SIGTERM from its client, Ctrl-C): the SDK's thread reading stdin is not a
daemon and waits for a line, so the teardown waited for the client to close stdin."""


BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "1")
"""numpy's OpenBLAS starts a pool of threads when numpy is imported, one per core, whose
start costs 20-40 ms of CPU at every process start (numpy's import 187 -> 164 ms of CPU,
median of 10, on this 2-core machine under load). ctxtui's numpy work is gathers, sorts,
bincounts and products of a few columns, which the pool does not speed up (keystroke rank
CPU the same either way on the 16,000-file tree): one thread, unless the environment says
otherwise."""


def main_entry() -> None:
    """Console-script entry point."""
    collector.hold_until_started()
    os.environ.setdefault(*BLAS_THREADS)  # before numpy loads (it loads lazily, see above)
    code = main()
    if sys.argv[1:2] and sys.argv[1] in QUICK_EXIT:
        _exit_now(code)
    sys.exit(code)


def _exit_now(code: int) -> None:
    """End the process with `code` once what it printed is written (os._exit flushes nothing);
    if a stream refuses (a reader that left, a full disk), return and let the usual exit say
    so as it always did."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return
    os._exit(code)


HANDLERS = {
    "index": "ctxtui.cli.index:run_index",
    "rank": "ctxtui.cli.rank:run_rank",
    "pack": "ctxtui.cli.pack:run_pack",
    "eval": "ctxtui.cli.evaluate:run_eval",
    "bench": "ctxtui.cli.bench:run_bench",
    "mcp": "ctxtui.cli.serve:run_mcp",
    "config": "ctxtui.cli.config:run_config",
}
"""Each subcommand's module and function, imported only when it runs (keeps `--help` fast)."""


def _dispatch(args: argparse.Namespace) -> int:
    if args.command is None:
        raise UsageFailure("ctxtui: give a command, or a folder to open the app")
    budget = getattr(args, "budget", None)
    if budget is not None and budget <= 0:
        raise UsageFailure("ctxtui: the budget must be a positive number of tokens")
    if budget is not None:
        from ctxtui.state import MAX_BUDGET  # deliberate: not needed for --help

        if budget > MAX_BUDGET:  # as the app's and the MCP server's
            raise UsageFailure(f"ctxtui: the budget must be at most {MAX_BUDGET:,} tokens")
    if getattr(args, "limit", 1) <= 0:
        raise UsageFailure("ctxtui: --limit must be positive")
    if getattr(args, "repeat", 1) <= 0:
        raise UsageFailure("ctxtui: --repeat must be positive")
    if getattr(args, "interval", 0) < 0:
        raise UsageFailure("ctxtui: --interval must be 0 ms or more")
    module_name, _, function = HANDLERS[args.command].partition(":")
    handler = getattr(importlib.import_module(module_name), function)
    collector.started()  # the imports are done (the app's start ends at its first list)
    return int(handler(args))


def _run_app(args_list: list[str]) -> int:
    parser = _Parser(prog="ctxtui", description="Open the live ranking app on a folder.")
    parser.add_argument("path", nargs="?", default=".")
    args = parser.parse_args(args_list)
    from engine.errors import ScanError  # deliberate: see FORMATS
    from engine.scan import check_root

    root = Path(args.path).expanduser()
    try:
        check_root(os.path.expanduser(args.path))  # as given: Path("") is the current folder
    except ScanError as exc:
        print(f"ctxtui: {exc}", file=sys.stderr)
        return 1
    from ctxtui.app import make_app  # deliberate: Textual loads only for the app

    app = make_app(root.resolve())
    app.run()
    return int(app.return_code or 0)


if __name__ == "__main__":
    main_entry()
