"""Recall and false positives of the secret scan on the corpus of tests/hostile/secret_corpus.py.

Builds the corpus repository in a temporary folder, packs every file in full through the same
`Workspace.pack` the command line, the app and the MCP server use, then looks for each value in
the pack: a secret still there was missed, a look-alike gone was redacted for nothing.

    .venv/bin/python scripts/secret_scan_quality.py [--markdown]

Prints one row per sample and the totals; exits 1 when a secret was missed.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ctxtui.workspace import Workspace  # noqa: E402 - after the path is set
from engine import Format, Level, Session  # noqa: E402
from tests.hostile.secret_corpus import LOOK_ALIKES, SECRETS, Sample, build  # noqa: E402


def pack_everything(root: Path) -> tuple[str, set[str]]:
    """The corpus packed whole (every file at full level), secrets redacted, and the paths
    of the files in the pack."""
    workspace = Workspace.open(root, use_cache=False)
    paths = [f.path for f in workspace.index.files]
    session = Session(overrides=dict.fromkeys(paths, Level.FULL))
    ranking = workspace.rank("secrets keys tokens passwords", session)
    plan, rendered = workspace.pack(ranking, 1_000_000, session, Format.MARKDOWN)
    return rendered.text, {entry.path for entry in plan.entries}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        text, packed = pack_everything(build(Path(folder)))
    rows: list[tuple[str, str, str, str]] = []

    def row(group: str, sample: Sample, verdict: str) -> None:
        rows.append((group, sample.kind, sample.path, verdict))

    found = 0
    for sample in SECRETS:
        redacted = sample.value not in text and sample.path in packed
        found += redacted
        verdict = "redacted" if redacted else "MISSED"
        row("secret", sample, verdict if sample.path in packed else "NOT PACKED")
    false_positives = 0
    for sample in LOOK_ALIKES:
        kept = sample.value in text
        false_positives += not kept
        verdict = "kept" if kept else "REDACTED (false positive)"
        row("look-alike", sample, verdict if sample.path in packed else "NOT PACKED")
    if args.markdown:
        print("| sample | kind | file | result |\n|---|---|---|---|")
        for group, kind, path, verdict in rows:
            print(f"| {group} | {kind} | `{path}` | {verdict} |")
    else:
        width = max(len(kind) for _, kind, _, _ in rows)
        for group, kind, path, verdict in rows:
            print(f"{group:<10}  {kind:<{width}}  {verdict:<26}  {path}")
    print(
        f"\nrecall: {found}/{len(SECRETS)} secrets redacted ({found / len(SECRETS):.0%}); "
        f"false positives: {false_positives}/{len(LOOK_ALIKES)} look-alikes redacted"
    )
    return 0 if found == len(SECRETS) else 1


if __name__ == "__main__":
    sys.exit(main())
