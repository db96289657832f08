"""Prove the Markdown line scan gives tree-sitter's sections on every Markdown file of a tree.

    .venv/bin/python scripts/markdown_scan_check.py /tmp/scale/mono16k [more roots...]

For each `.md`/`.markdown` file (not binary, at most 1 MB, as the index reads them) the line
scan (engine.parse.markdown) and the tree-sitter path are run; a file the scan hands back
(None) is skipped, any other difference is printed. Exits 1 if any file differs.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from engine.parse.extract import SourceParser
from engine.parse.markdown import markdown_sections

MAX_BYTES = 1_000_000


def check(root: Path, tree_sitter: SourceParser) -> tuple[int, int, int, float, float]:
    """Return (files, scanned, different, scan seconds, tree-sitter seconds) for `root`."""
    files = scanned = different = 0
    scan_time = tree_time = 0.0
    for path in sorted(root.rglob("*")):
        if path.suffix.lower() not in (".md", ".markdown") or ".git" in path.parts:
            continue
        if not path.is_file() or path.is_symlink():
            continue
        data = path.read_bytes()
        if b"\0" in data[:8192] or len(data) > MAX_BYTES:
            continue
        text = data.decode("utf-8", errors="replace")
        files += 1
        start = time.process_time()
        mine = markdown_sections(text)
        middle = time.process_time()
        theirs = tree_sitter.parse(text, "markdown", time_limit=None)
        scan_time += middle - start
        tree_time += time.process_time() - middle
        if mine is None:
            continue
        scanned += 1
        if mine != theirs.declarations or theirs.partial or theirs.imports:
            different += 1
            print(f"DIFFERENT {path.relative_to(root)}")
    return files, scanned, different, scan_time, tree_time


def main(argv: list[str]) -> int:
    tree_sitter = SourceParser(line_scan=False)
    failed = False
    for root in map(Path, argv):
        files, scanned, different, scan_time, tree_time = check(root, tree_sitter)
        print(
            f"{root}: {files} Markdown files, {scanned} scanned, {different} different "
            f"(scan {scan_time:.2f} s, tree-sitter {tree_time:.2f} s of CPU)"
        )
        failed = failed or different > 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
