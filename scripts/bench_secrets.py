"""Cost of the secret scan of a pack: median and p95 over many real 8,000-token packs.

For each question the pack is built as `ctxtui pack` builds it; then every part that leaves
(each file at its level, the question) is scanned again, in one batch as the renderer scans
them, with an empty memo: what one pack's scan costs the first time its text is seen. Both the
wall time and the CPU time of the scanning thread are given: the second does not depend on what
else the machine is doing. Run it on a real repository:

    .venv/bin/python scripts/bench_secrets.py PATH [-b 8000] [--cases CASES.jsonl] [--repeat 5]

With --cases, the questions are the cases' queries (shared/bench format); otherwise a fixed
list of everyday questions. Prints the pack sizes and the scan time per pack (milliseconds).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ctxtui.workspace import Workspace  # noqa: E402 - after the path is set
from engine import Format, Session, render_level  # noqa: E402
from engine.redact import SecretScanner  # noqa: E402

QUESTIONS = (
    "where is the configuration loaded",
    "how are errors reported to the user",
    "add a command line option for the output format",
    "fix the crash when the session expires",
    "how does routing match a request to a handler",
    "where are tests for the parser",
    "explain the plugin loading",
    "rename the logging helper",
    "why is the cache not invalidated",
    "how are templates rendered",
)
"""Everyday questions, used when no cases file is given."""


def pack_parts(workspace: Workspace, question: str, budget: int) -> list[tuple[str, str]]:
    """(path, text) of every part of the question's pack that is scanned: files, question."""
    ranking = workspace.rank(question, Session())
    plan, _rendered = workspace.pack(ranking, budget, Session(), Format.MARKDOWN)
    parts = [("", question)]
    for entry in plan.entries:
        parsed = workspace.index.files[entry.file_id]
        text = workspace.read_text(entry.path)
        parts.append(
            (entry.path, render_level(parsed, text, entry.level, entry.matched_declarations))
        )
    return parts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", help="a repository")
    parser.add_argument("-b", "--budget", type=int, default=8000)
    parser.add_argument("--cases", help="a .jsonl file of cases whose queries to use")
    parser.add_argument("--limit", type=int, default=30, help="questions at most (30)")
    parser.add_argument("--repeat", type=int, default=5, help="scans of each pack (5)")
    args = parser.parse_args(argv)
    questions = list(QUESTIONS)
    if args.cases:
        with open(args.cases, encoding="utf-8") as handle:
            questions = [json.loads(line)["query"] for line in handle if line.strip()]
    questions = questions[: args.limit]
    workspace = Workspace.open(Path(args.path))
    started = time.perf_counter()
    scanner = SecretScanner()
    load = time.perf_counter() - started
    packs = [pack_parts(workspace, q, args.budget) for q in questions]
    timings: list[float] = []
    cpu: list[float] = []
    secrets = 0
    for _ in range(args.repeat):
        for parts in packs:
            scanner = _fresh(scanner)
            started, cpu_started = time.perf_counter(), time.thread_time()
            results = scanner.redact_many([(text, path) for path, text in parts])
            timings.append((time.perf_counter() - started) * 1000)
            cpu.append((time.thread_time() - cpu_started) * 1000)
            secrets += sum(len(findings) for _, findings in results)
    chars = [sum(len(text) for _, text in parts) for parts in packs]
    timings.sort()
    cpu.sort()
    p95 = timings[min(len(timings) - 1, round(0.95 * (len(timings) - 1)))]
    cpu_p95 = cpu[min(len(cpu) - 1, round(0.95 * (len(cpu) - 1)))]
    print(f"repository   {workspace.root} ({len(workspace.index.files):,} files)")
    print(f"packs        {len(packs)} questions x {args.repeat}, budget {args.budget:,} tokens")
    print(f"pack size    median {statistics.median(chars):,.0f} characters")
    print(f"secrets      {secrets // max(1, args.repeat)} found in all packs")
    print(f"scanner load {load * 1000:.0f} ms (once per process)")
    print(f"scan a pack  median {statistics.median(timings):.2f} ms, p95 {p95:.2f} ms (wall)")
    print(f"             median {statistics.median(cpu):.2f} ms, p95 {cpu_p95:.2f} ms (CPU time)")
    print(f"load         {os.getloadavg()[0]:.2f} (1-minute average)")
    return 0


def _fresh(scanner: SecretScanner) -> SecretScanner:
    """The scanner with an empty memo, so that every pack is scanned for real."""
    scanner.forget()
    return scanner


if __name__ == "__main__":
    sys.exit(main())
