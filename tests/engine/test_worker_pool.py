"""A killed index never leaves its worker processes behind.

Each test runs a real first index in a child process whose workers are slowed down (their
batch function sleeps), kills that child as a user or a supervisor would (SIGKILL, SIGTERM),
and checks through /proc that every worker it started is gone.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import make_repo

from engine.indexer import POOL_MIN_FILES

pytestmark = pytest.mark.skipif(
    not Path("/proc/self/stat").exists(), reason="reads process states from /proc"
)

CHILD = """
import os, struct, sys, time
from pathlib import Path
import engine.indexer
import engine.pool

def slow_batch(root, batch):
    if sys.argv[4] == "half-sent":
        # what a worker killed in the middle of sending its batch leaves in the result
        # pipe: a message's length, then only the start of the message
        frame = sys._getframe(1)
        while "result_queue" not in frame.f_locals:  # concurrent.futures' worker loop
            frame = frame.f_back
        results = frame.f_locals["result_queue"]
        os.write(results._writer.fileno(), struct.pack("!i", 1 << 20) + bytes(64))
    Path(sys.argv[2], f"worker-{os.getpid()}").touch()
    time.sleep(120)
    return []

engine.pool.analyse_in_worker = slow_batch
if sys.argv[3] == "engine":
    engine.indexer.build_index(sys.argv[1], workers=2)
else:
    from ctxtui.cli import main
    sys.exit(main(["index", sys.argv[1], "--no-cache"]))
"""
"""Index argv[1] with 2 workers whose batches sleep; each worker leaves a file named by its
pid in argv[2] once it holds a batch. argv[3] says how: the engine call or the CLI; argv[4]
"half-sent" makes each worker leave half a result in the pipe first."""


def alive(pid: int) -> bool:
    """True while the process exists and is not a zombie waiting to be reaped."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def wait_for(condition: Callable[[], bool], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


Started = tuple[subprocess.Popen[bytes], list[int]]
"""The indexing child process and the pids of its two workers."""


@pytest.fixture
def slow_index(tmp_path: Path) -> Iterator[Callable[[str], Started]]:
    """Start the child, wait until both workers hold a batch; kill leftovers at the end.
    The repository holds batches enough that some still wait when the child is stopped."""
    count = 4 * POOL_MIN_FILES
    files = {f"pkg/mod{i}.py": f"def f{i}():\n    return {i}\n" for i in range(count)}
    repo = make_repo(tmp_path / "repo", files)
    marks = tmp_path / "marks"
    marks.mkdir()
    processes: list[subprocess.Popen[bytes]] = []
    workers: list[int] = []

    def start(how: str, batch: str = "sleeps") -> Started:
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD, str(repo), str(marks), how, batch],
            stderr=subprocess.PIPE,
        )
        processes.append(child)
        assert wait_for(lambda: len(list(marks.iterdir())) == 2, 60), "workers never started"
        workers.extend(int(p.name.removeprefix("worker-")) for p in marks.iterdir())
        return child, workers

    yield start
    for child in processes:
        child.kill()
        child.wait()
    for pid in workers:
        if alive(pid):
            os.kill(pid, signal.SIGKILL)


def test_workers_end_when_the_indexing_process_is_killed(
    slow_index: Callable[[str], Started],
) -> None:
    child, workers = slow_index("engine")
    child.kill()
    child.wait()
    assert wait_for(lambda: not any(alive(pid) for pid in workers), 10), "orphaned workers"


@pytest.mark.parametrize("batch", ["sleeps", "half-sent"])
def test_sigterm_stops_ctxtui_index_and_its_workers(
    slow_index: Callable[..., Started], batch: str
) -> None:
    """One line and exit 143, with batches still waiting (the pool's thread once failed on
    them with a traceback) and with half a result in the pipe (the process once hung)."""
    child, workers = slow_index("cli", batch)
    child.send_signal(signal.SIGTERM)
    assert child.wait(timeout=20) == 128 + signal.SIGTERM
    assert child.stderr is not None
    assert child.stderr.read().decode().strip().splitlines() == ["ctxtui: terminated"]
    assert wait_for(lambda: not any(alive(pid) for pid in workers), 10), "orphaned workers"


COLLECTOR = """
import gc, json, sys
import engine.pool

def collector_of(root, batch):
    return gc.get_threshold()[0], gc.get_freeze_count()

engine.pool.analyse_in_worker = collector_of
young = gc.get_threshold()[0]
found = list(engine.pool.analyse_batches(sys.argv[1], [[], []], 2, "o200k_base", lambda: None))
print(json.dumps({"parent": young, "workers": found}))
"""
"""Run two batches in two pool workers that report their collector's settings instead."""


def test_pool_workers_collect_young_objects_rarely(tmp_path: Path) -> None:
    import json

    from engine.pool import WORKER_YOUNG_COLLECTION

    done = subprocess.run(
        [sys.executable, "-c", COLLECTOR, str(tmp_path)], capture_output=True, timeout=120
    )
    assert done.returncode == 0, done.stderr.decode()
    seen = json.loads(done.stdout)
    assert seen["parent"] < WORKER_YOUNG_COLLECTION  # the indexing process keeps its own
    assert len(seen["workers"]) == 2
    for young, frozen in seen["workers"]:
        assert young == WORKER_YOUNG_COLLECTION
        assert frozen > 0  # what the worker started with is out of every collection
