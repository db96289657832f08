"""Run git on a repository ctxtui does not trust: reading it must never run its programs.

A repository's own configuration (`.git/config`, which a cloned or downloaded folder may carry)
can name programs git runs while it reads: `core.fsmonitor` on `ls-files`, `diff`, `status`;
a `filter.<driver>.clean` (chosen by `.gitattributes`) on `diff`; `diff.external` and textconv
drivers on `diff`; `gpg.program` with `log.showSignature`; hooks. Every git command ctxtui runs
goes through `run_git` (or `start_git`, the same in the background), which switches all of
these off on its command line (`-c` beats every config file), and strips the variables git
hooks set that would point it at another repository.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

GIT_SAFETY: tuple[str, ...] = (
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "diff.external=",
    "-c",
    "log.showSignature=false",
    "-c",
    "core.quotepath=false",
    "-c",
    "color.ui=false",
)
"""Flags before every git command: no fsmonitor hook, no hooks, no external diff program, no
signature checks (gpg.program), UTF-8 paths as they are, no colour codes."""

DIFF_SAFETY: tuple[str, ...] = ("--no-ext-diff", "--no-textconv")
"""Flags of every `git diff`: no per-driver diff command, no textconv program."""

HOOK_VARIABLES = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_PREFIX")
"""Set by git hooks; they would point git at another repository than the one asked about."""


def git_env() -> dict[str, str]:
    """The environment for git: this process's, without the hook variables, with no prompt
    for credentials, no optional locks (reading must not write the index), and its messages
    untranslated (the scan reads its warnings: `UNREADABLE_FOLDER`)."""
    env = {k: v for k, v in os.environ.items() if k not in HOOK_VARIABLES}
    env["LC_ALL"] = "C"  # messages only: paths and diffs are bytes in every locale (-z, quotepath)
    env["GIT_OPTIONAL_LOCKS"] = "0"
    env["GIT_TERMINAL_PROMPT"] = "0"
    return env


def run_git(root: str | Path, *args: str) -> subprocess.CompletedProcess[bytes] | None:
    """Run `git <safety flags> <args>` in root; None when git cannot be started."""
    try:
        return subprocess.run(
            ["git", *GIT_SAFETY, *args],
            cwd=os.fspath(root),
            env=git_env(),
            capture_output=True,
            check=False,
        )
    except OSError:  # git is not installed, or root has gone
        return None


def start_git(root: str | Path, *args: str) -> subprocess.Popen[bytes] | None:
    """Start `git <safety flags> <args>` in root with its output piped (read it with
    `finish_git`); None when git cannot be started."""
    try:
        return subprocess.Popen(
            ["git", *GIT_SAFETY, *args],
            cwd=os.fspath(root),
            env=git_env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
    except OSError:  # git is not installed, or root has gone
        return None


def finish_git(process: subprocess.Popen[bytes], *, silent: bool = False) -> bytes | None:
    """Stdout of a started git command once it ends; None when it failed, or, when `silent`
    is asked for, when it said anything on stderr (`git diff-files` reports a file it cannot
    stat, e.g. in a folder it may not enter, on stderr, leaves it out and still succeeds)."""
    stdout, stderr = process.communicate()
    if process.returncode != 0 or (silent and stderr.strip()):
        return None
    return stdout


def finish_git_told(process: subprocess.Popen[bytes]) -> tuple[bytes | None, bytes]:
    """Stdout of a started git command once it ends (None when it failed), and what it said
    on stderr (`git ls-files -o` warns there of a folder it cannot open, and goes on)."""
    stdout, stderr = process.communicate()
    return (stdout if process.returncode == 0 else None), stderr


UNREADABLE_FOLDER = re.compile(rb"^warning: could not open directory '(.+)/': (.+)$", re.MULTILINE)
"""git's warning for a folder it cannot list (path from the top of the work tree, reason)."""


def unreadable_folders(told: bytes) -> list[tuple[str, str]]:
    """The folders a git command's stderr says it could not open: (path from the top of the
    work tree, reason), in its order."""
    return [
        (os.fsdecode(path), reason.decode("utf-8", "replace").strip())
        for path, reason in UNREADABLE_FOLDER.findall(told)
    ]


def git_output(root: str | Path, *args: str) -> bytes | None:
    """Stdout of a git command that succeeded; None when it failed or git is missing."""
    done = run_git(root, *args)
    return done.stdout if done is not None and done.returncode == 0 else None


def filter_safety(root: str | Path) -> tuple[str, ...]:
    """`-c` flags that switch off every filter driver the repository's config defines.

    A driver's `clean` command runs when `git diff` reads a work tree file that
    `.gitattributes` gives it; drivers have names of the repository's choosing, so they are
    read from its config (reading config runs nothing) and each is emptied.
    """
    return filter_flags(git_output(root, *FILTER_LISTING))


FILTER_LISTING = ("config", "-z", "--get-regexp", r"^filter\.")
"""The git command listing every filter driver's settings (`filter_flags` reads its output;
run it with `start_git` to wait for it only when the flags are needed)."""


def filter_flags(listed: bytes | None) -> tuple[str, ...]:
    """The `-c` flags of `filter_safety`, from the output of FILTER_LISTING (None or empty:
    no driver, or the command failed, as it does when no key matches)."""
    if not listed:
        return ()
    drivers: set[str] = set()
    for entry in listed.split(b"\0"):
        key = os.fsdecode(entry.partition(b"\n")[0])
        name, _, _field = key[len("filter.") :].rpartition(".")
        if key.startswith("filter.") and name:
            drivers.add(name)
    flags: list[str] = []
    for name in sorted(drivers):
        for field in ("clean", "smudge", "process"):
            flags += ["-c", f"filter.{name}.{field}="]
        flags += ["-c", f"filter.{name}.required=false"]
    return tuple(flags)
