"""Time the app from process start to its first ranked list, in a real terminal (tmux).

    .venv/bin/python scripts/app_start.py PATH [--question Q] [--repeat 5]

Each run starts `ctxtui PATH` in a fresh tmux server of its own (160 x 45), types the question
as soon as the window exists (the app takes typing while it opens), and reads the screen every
20 ms until the first ranked row shows. It prints, per run and then as median and max: the
first paint (the question box on screen) and the first ranked list, in seconds from the
process start. Run once first to make the cache warm (that first run is the cold start and is
printed apart). The cache and settings folders are those of the environment (set
XDG_CACHE_HOME to measure in a clean place); the state folder is a new empty one per run, so
no run starts from a question an earlier one saved.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CTXTUI = Path(sys.executable).with_name("ctxtui")
RANKED = re.compile(r"^│\s+1 [█▉▊▋▌▍▎▏ ]+\s+(full|focused|outline)\b", re.MULTILINE)
"""The first row of the ranked list."""
PAINTED = "Ask about the code"
POLL = 0.02
TIMEOUT = 600.0


def one_run(root: Path, question: str, socket: str) -> tuple[float, float]:
    """Seconds from the start to the first paint and to the first ranked row."""
    tmux = ["tmux", "-L", socket]
    state = tempfile.mkdtemp(prefix="ctxtui-start-")
    env = {**os.environ, "XDG_STATE_HOME": state}
    started = time.perf_counter()
    window = ["new-session", "-d", "-s", "app", "-x", "160", "-y", "45"]
    subprocess.run([*tmux, *window, shlex.join([str(CTXTUI), str(root)])], check=True, env=env)
    painted = ranked = 0.0
    try:
        while not ranked:
            now = time.perf_counter() - started
            if now > TIMEOUT:
                raise SystemExit(f"no ranked list after {TIMEOUT:.0f} s")
            screen = subprocess.run(
                [*tmux, "capture-pane", "-p", "-t", "app"], capture_output=True, text=True
            ).stdout
            if not painted and PAINTED in screen:
                painted = now
                subprocess.run([*tmux, "send-keys", "-t", "app", "-l", question], check=True)
            if painted and RANKED.search(screen):
                ranked = now
            time.sleep(POLL)
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True)
        shutil.rmtree(state, ignore_errors=True)
    return painted, ranked


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("path", type=Path)
    parser.add_argument("--question", default="where is the configuration loaded")
    parser.add_argument("--repeat", type=int, default=5, help="warm runs (default 5)")
    args = parser.parse_args(argv)
    if shutil.which("tmux") is None:
        parser.error("tmux is not installed")
    if not args.path.is_dir():
        parser.error(f"not a folder: {args.path}")
    socket = f"ctxtui-start-{os.getpid()}"
    paint, rank = one_run(args.path, args.question, f"{socket}-0")
    print(f"first run (cache as found): paint {paint:.2f} s, ranked list {rank:.2f} s")
    paints: list[float] = []
    ranks: list[float] = []
    for n in range(args.repeat):
        # a server of its own per run: a new one on the socket just killed may fail to start
        paint, rank = one_run(args.path, args.question, f"{socket}-{n + 1}")
        paints.append(paint)
        ranks.append(rank)
        print(f"warm run {n + 1}: paint {paint:.2f} s, ranked list {rank:.2f} s")
    print(
        f"warm, {args.repeat} runs: first paint median {statistics.median(paints):.2f} s"
        f" (max {max(paints):.2f}); first ranked list median {statistics.median(ranks):.2f} s"
        f" (max {max(ranks):.2f})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
