"""How a repository path is shown wherever it leaves ctxtui: a pack's headings and lists of
changes, `rank` (text and JSON), the app's list, titles and notices, the MCP answers.

A file or folder named with a secret (`token_ghp_<36 characters>.py`, an AWS key as a folder)
would print the secret however well the file's content is redacted. Every path on show goes
through `shown_path`: each segment that could hold a token is scanned with the very detectors
that scan a pack's text, and each secret in it becomes `[redacted: <kind> #<4 hex digits>]`,
the marker of a pack's text (engine.redact.MARKER) with a tag.
The folders, the rest of the name and the extension stay, so that the user can still tell the
files apart (the digits are of a hash of the secret: two files named with two secrets differ),
and `named` finds the file again from the name shown (an agent asks for it by that name).

Only what is shown changes: the index, the ranking and the plans keep the path as written.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from functools import lru_cache

from engine.model import Reason, ReasonKind, one_line, printable
from engine.redact import MARKER as TEXT_MARKER

MARKER = TEXT_MARKER.replace("{kind}]", "{kind} #{digest}]")
"""What a secret inside a file or folder name becomes where the path is shown,
`[redacted: <kind> #<digest>]`: the marker of a pack's text (engine.redact.MARKER, derived
from it here; the kind as the detectors name it), so that a name reads
alike in a pack's headings and in its diff, whose header lines are redacted as text, with a
tag of its hash that keeps two names apart (review, session 29: it was
`[redacted:github-token-1a2b]` beside the diff's `[redacted: GitHub token]`)."""

SUSPECT = re.compile(
    r"A3T[A-Z0-9]|ABIA|ACCA|AKIA|ASIA"  # AWS
    r"|AKC[A-Za-z0-9]{10}|AP[0-9A-F][A-Za-z0-9]{8}"  # Artifactory
    r"|[MNO][A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}\."  # Discord
    r"|gh[pousr]_|github_pat_|GR1348941|gl(?:pat|dt|ft|soat|rt|cbt|imt|ptt|agent|oas)-"
    r"|eyJ|[0-9a-z]{32}-us|npm_|T3BlbkFJ|pypi-|SG\.|xox[a-z]-|sq0csp-|k_live_|k_test_"
    r"|(?:AC|SK)[a-z0-9]{32}|AIza|GOCSPX-|sk-ant-|hf_|do[por]_v1_|shp(?:at|ca|pa|ss)_"
    r"|[=:\"']"  # an assignment: Azure's AccountKey=, a Telegram token, a keyword's value
)
"""A path that could name a secret: it holds the fixed part of a token format the detectors
know (engine.redact: a prefix, or the shape of a format without one), or a character of an
assignment. Paths without one (nearly all: 48,027 of the 48,031 in the 56 repositories of the
case sets) are shown without loading the scanner (0.3 s: detect-secrets imports `requests`).
tests/hostile/test_hostile_secret_names.py puts every secret of the corpus in a file name."""

DIGEST_BYTES = 2
"""Bytes of the secret's hash in its marker: enough to tell a folder's few secret-named files
apart, far too few to say anything about the secret."""


def shown_path(path: str, *, redact: bool = True) -> str:
    """`path` as it may be shown: valid Unicode (`printable`), and unless `redact` is off,
    each secret in a file or folder name replaced by its marker."""
    text = printable(path)
    if not redact or not SUSPECT.search(text):
        return text
    return _redacted(text)


PATH_REASONS = frozenset({ReasonKind.IMPORTS, ReasonKind.IMPORTED_BY})
"""The reasons whose detail is a repository path (engine.explain); the others hold a word, a
declaration's name or a heading, the file's content, which the pack's own scan redacts."""


def shown_detail(reason: Reason, *, redact: bool = True) -> str:
    """A reason's detail as it may be shown: a path as `shown_path` shows it, anything else
    valid Unicode only. (A heading's apostrophe would load the scanner on the list's
    keystroke path: textual's "What's next?" did, 0.3 s, and each new heading was scanned.)"""
    if reason.kind in PATH_REASONS:
        return shown_path(reason.detail, redact=redact)
    return printable(reason.detail)


def named(shown: str, paths: Iterable[str]) -> str | None:
    """The one path of `paths` shown as `shown` (a name with a marker, or with U+FFFD where
    its bytes were not UTF-8), or None when none or several are."""
    same = [p for p in paths if p != shown and shown_path(p) == shown]
    return same[0] if len(same) == 1 else None


@lru_cache(maxsize=4096)
def _redacted(path: str) -> str:
    from engine.redact import shared_scanner  # deliberate: detect-secrets is slow to import

    segments = path.split("/")
    suspects = [n for n, segment in enumerate(segments) if SUSPECT.search(segment)]
    # each name is scanned whole and without its extension: a pattern that wants the token
    # to end a line or a word (Artifactory's) sees `AKC....json` end at the dot
    items = [(text, "") for n in suspects for text in (segments[n], _stem(segments[n]))]
    scanned = shared_scanner().redact_many(items)
    for position, n in enumerate(suspects):
        whole, stem = scanned[2 * position][1], scanned[2 * position + 1][1]
        segments[n] = _marked(segments[n], [(f.start, f.end, f.kind) for f in (*whole, *stem)])
    return "/".join(segments)


def _stem(name: str) -> str:
    return name.rpartition(".")[0] or name


def _marked(name: str, spans: list[tuple[int, int, str]]) -> str:
    """`name` with each secret span (merged where they overlap) replaced by its marker."""
    merged: list[tuple[int, int, str]] = []
    for start, end, kind in sorted(spans):
        if merged and start < merged[-1][1]:  # the same token, found whole and in the stem
            first, last, first_kind = merged[-1]
            merged[-1] = (first, max(last, end), first_kind)
        else:
            merged.append((start, end, kind))
    parts: list[str] = []
    at = 0
    for start, end, kind in merged:
        parts += [name[at:start], _marker(name[start:end], kind)]
        at = end
    return "".join(parts) + name[at:]


def _marker(value: str, kind: str) -> str:
    digest = hashlib.blake2b(
        value.encode("utf-8", "surrogatepass"), digest_size=DIGEST_BYTES
    ).hexdigest()
    return MARKER.format(kind=kind, digest=digest)


def shown_line(path: str, *, redact: bool = True) -> str:
    """`shown_path` as one visible line (`one_line`: a newline or an escape in a name is
    written as `\\n`, `\\x1b`), for a terminal or the app."""
    return one_line(shown_path(path, redact=redact))
