"""Assemble the scale test tree: real repositories side by side, at fixed commits.

    .venv/bin/python scripts/monorepo.py /tmp/mono16k               # the ~16k-file tree
    .venv/bin/python scripts/monorepo.py /tmp/mono80k --copies 5    # the 5x synthetic tree
    ctxtui bench /tmp/mono16k                                       # then measure it

Each repository comes from a bare git mirror `<owner>+<name>/repo` in the mirrors folder
(`--mirrors`, else $BENCH_MIRRORS, else /work/.mirror; the search tool's `fetch
github:owner/name` brings one there) and is extracted with `git archive` at the commit pinned
below into `<owner>+<name>/`, so the tree is the same bytes on every machine. The result is made
one git work tree with a single commit of fixed author and date: monorepos are git checkouts,
and ctxtui scans them with `git ls-files` and reads their history.

`--copies N` makes the synthetic tree: N copies of every repository (`copy-1/<owner>+<name>/`,
...), the same files under other paths. It has N times the files, postings and tokens of the
real tree, and the same vocabulary, so it measures how ctxtui scales with the number of files;
5 copies give about 80,000 files. Real monorepos also repeat much of their text (vendored
copies, generated clients, per-service boilerplate), so this is not far from them.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

PINNED: tuple[tuple[str, str], ...] = (
    # Python
    ("pallets/flask", "2ac89889f4cc330eabd50f295dcef02828522c69"),
    ("psf/requests", "1f6589ec3a1ee910f9a65cc3ceac60b26677bc0e"),
    ("Textualize/textual", "1d99508b928a771b51e1a527319c6b87dcff9e05"),
    ("Textualize/rich", "42899d8a0a96b121a514516f4be9db44ff7aeaf3"),
    ("pydantic/pydantic", "2151025aa51263f3016502b00010b78e4481eaa1"),
    ("fastapi/fastapi", "c3f316b7e814667e8ee81e03a7330d00ee61e45c"),
    # TypeScript
    ("honojs/hono", "28a9c128912de19f3fb28b00ae289c9b93f6f392"),
    ("vuejs/core", "e2bede96134f757aad5c5b33ac9be055022dbfc8"),
    ("excalidraw/excalidraw", "4872083c044491b6d5c96ae134a75464f96d6831"),
    ("trpc/trpc", "340811ba5320637fbaf48fccf3dbfdd258bd34db"),
    # Rust
    ("clap-rs/clap", "6982fb1c98c7247e38a6d4f04191b94e30497e7b"),
    ("tokio-rs/tokio", "ea91b33ca57ff0581b38e735cc108f831bccbdaa"),
    ("BurntSushi/ripgrep", "3fce3b5bb0236da2df6d99672afb8a719642eca7"),
    # Go
    ("gin-gonic/gin", "dcaa4296d111981ffb31ac3eba90bb63e1eb5ab9"),
    ("spf13/cobra", "adbc8813901bba65827259daa8e22ff94ec1f30e"),
    ("gohugoio/hugo", "7b5199fdeff7d7682e9f979f468d55bc7b67b934"),
    ("prometheus/prometheus", "d15adb9ad7e5d9fbde3a9a8f30200593a5a14d86"),
    # JavaScript
    ("expressjs/express", "a3714473feb3d2908add734d340e7755fd85e0a3"),
    ("axios/axios", "23a25af0688d1db2c396deb09229d2271cc24f6c"),
)

GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "ctxtui bench",
    "GIT_AUTHOR_EMAIL": "bench@ctxtui.invalid",
    "GIT_AUTHOR_DATE": "2025-01-01T00:00:00Z",
    "GIT_COMMITTER_NAME": "ctxtui bench",
    "GIT_COMMITTER_EMAIL": "bench@ctxtui.invalid",
    "GIT_COMMITTER_DATE": "2025-01-01T00:00:00Z",
}
"""A fixed identity and date, so the tree's single commit is the same everywhere."""


def mirrors_folder(given: str | None) -> Path:
    """The folder holding `<owner>+<name>/repo` mirrors."""
    return Path(given or os.environ.get("BENCH_MIRRORS") or "/work/.mirror")


MAX_BLOB = 4 * 1024 * 1024
"""Files of this size and more are left out: mirrors from the search tool's snapshots lack
them, and ctxtui skips files over 1 MB anyway, so every mirror gives the same tree."""


def extract(mirrors: Path, repo: str, commit: str, into: Path) -> int:
    """Write the files of `repo` at `commit` into `into` (no .git); return how many.

    Reads the tree with `git ls-tree` and the blobs with one `git cat-file --batch`, rather
    than `git archive`, which stops at the first blob a partial mirror lacks.
    """
    git_dir = mirrors / repo.replace("/", "+") / "repo"
    if not (git_dir / "objects").is_dir() and (git_dir / ".git").is_dir():
        git_dir = git_dir / ".git"
    if not git_dir.is_dir():
        raise SystemExit(f"no mirror of {repo} at {git_dir} (fetch github:{repo} first)")
    git = ["git", f"--git-dir={git_dir}"]
    listing = subprocess.run(
        [*git, "ls-tree", "-r", "-l", "-z", commit], capture_output=True, check=True
    ).stdout
    entries: list[tuple[str, str, str]] = []
    for record in listing.split(b"\0"):
        if not record:
            continue
        meta, _, raw_path = record.partition(b"\t")
        mode, kind, sha, size = meta.decode().split()
        if kind != "blob" or not size.isdigit() or int(size) >= MAX_BLOB:
            continue  # submodules, very large files, blobs a partial mirror lacks ("BAD")
        entries.append((mode, sha, os.fsdecode(raw_path)))
    batch = subprocess.Popen(
        [*git, "cat-file", "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert batch.stdin is not None and batch.stdout is not None
    for mode, sha, path in entries:
        batch.stdin.write(sha.encode() + b"\n")
        batch.stdin.flush()
        header = batch.stdout.readline().split()
        if header[1] == b"missing":
            raise SystemExit(f"{repo}: blob {sha} of {path} is missing from the mirror")
        data = batch.stdout.read(int(header[2]))
        batch.stdout.read(1)  # the newline after each object
        target = into / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if mode == "120000":
            target.symlink_to(os.fsdecode(data))
        else:
            target.write_bytes(data)
            if mode == "100755":
                target.chmod(0o755)
    batch.stdin.close()
    batch.wait()
    return len(entries)


def build(out: Path, mirrors: Path, copies: int) -> None:
    """Assemble the tree in a temporary folder beside `out`, then move it into place."""
    out.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    try:
        for repo, commit in PINNED:
            name = repo.replace("/", "+")
            print(f"  {repo} @ {commit[:12]}", file=sys.stderr)
            if copies == 1:
                extract(mirrors, repo, commit, work / name)
                continue
            extract(mirrors, repo, commit, work / "copy-1" / name)
            for n in range(2, copies + 1):
                shutil.copytree(work / "copy-1" / name, work / f"copy-{n}" / name, symlinks=True)
        env = {**os.environ, **GIT_IDENTITY}
        quiet = {"cwd": work, "env": env, "check": True, "stdout": subprocess.DEVNULL}
        subprocess.run(["git", "init", "-q", "-b", "main"], **quiet)  # type: ignore[call-overload]
        # the repositories' own .gitignore files apply inside their folders, as in a checkout
        subprocess.run(["git", "add", "-A", "."], **quiet)  # type: ignore[call-overload]
        subprocess.run(  # type: ignore[call-overload]
            ["git", "commit", "-q", "--no-verify", "-m", "scale test tree"], **quiet
        )
        if out.exists():
            shutil.rmtree(out)
        work.rename(out)
    finally:
        if work.exists():
            shutil.rmtree(work)


def main(argv: list[str] | None = None) -> int:
    """Build the tree named on the command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", help="folder to create (replaced if it exists)")
    parser.add_argument("--mirrors", help="folder of <owner>+<name>/repo bare mirrors")
    parser.add_argument(
        "--copies", type=int, default=1, help="copies of every repository (5: ~80,000 files)"
    )
    args = parser.parse_args(argv)
    if args.copies < 1:
        parser.error("--copies must be at least 1")
    out = Path(args.out).expanduser().resolve()
    print(
        f"building {out} ({args.copies} cop{'y' if args.copies == 1 else 'ies'})", file=sys.stderr
    )
    build(out, mirrors_folder(args.mirrors), args.copies)
    listed = subprocess.run(
        ["git", "-C", str(out), "ls-files", "-z"], capture_output=True, check=True
    ).stdout.count(b"\0")
    print(f"{out}: {listed:,} files tracked", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
