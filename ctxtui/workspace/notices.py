"""What the user must be told about an index or a pack, worded once for every front-end.

Secret files and ctxtui's own packs left out of the index, bad ignore patterns, files too slow
to analyse; secrets redacted from a pack, or left in it. The command line prints these lines
on stderr, the app shows them in notifications, the MCP server returns them with the pack.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from engine.analyse import ANALYSIS_TIME_LIMIT
from engine.model import IndexReport, Rendered, SecretFound, SkipReason
from engine.scan import SECRET_HINT
from engine.shown_path import shown_line

NAMES_SHOWN = 3
"""File names listed in one notice before "and N more"."""


APP_SECRET_HINT = "!NAME in .ctxtuiignore packs it"
"""How the app's user, or an agent through the MCP server, packs a secret file: neither
takes --include-secret."""


def index_notices(report: IndexReport, *, secret_hint: str = SECRET_HINT) -> list[str]:
    """One line each for what an opened index left out or could not do, to show once: secret
    files, files and folders it could not read, ctxtui's own packs... (`secret_hint`: how to
    pack a secret file, in the words of the front-end's options)."""
    lines = list(report.notes)
    secret = [s.path for s in report.skipped if s.reason is SkipReason.SECRET_FILE]
    if secret:
        lines.append(f"left out {_count(secret, 'secret file')} ({_names(secret)}): {secret_hint}")
    unreadable = [s for s in report.skipped if s.reason is SkipReason.UNREADABLE]
    if unreadable:
        noun = "file or folder" if len(unreadable) == 1 else "files or folders"
        why = {s.path: s.detail for s in unreadable}
        lines.append(f"left out {len(unreadable):,} unreadable {noun} ({_names(why, why)})")
    own = [s.path for s in report.skipped if s.reason is SkipReason.OWN_PACK]
    if own:
        lines.append(
            f"left out {_count(own, 'pack')} ctxtui wrote ({_names(own)}), so that no pack"
            " holds an old one"
        )
    if report.too_slow:
        lines.append(
            f"indexed {_count(report.too_slow, 'file')} as plain text: analysing "
            f"{'it' if len(report.too_slow) == 1 else 'each'} took over "
            f"{ANALYSIS_TIME_LIMIT:g} s ({_names(report.too_slow)})"
        )
    return lines


def secret_notices(rendered: Rendered) -> list[str]:
    """One line per place holding secrets: redacted, or (redaction off) left in the pack."""
    by_place: dict[str, list[SecretFound]] = {}
    for secret in rendered.secrets:
        by_place.setdefault(secret.path, []).append(secret)
    verb = "redacted" if rendered.redacted else "LEFT IN (redaction is off)"
    return [
        f"{verb} {_count(found, 'secret')} in {shown_line(place, redact=rendered.redacted)}: "
        + ", ".join(f"{s.kind} (line {s.line})" for s in found)
        for place, found in by_place.items()
    ]


def secret_reasons(rendered: Rendered) -> dict[str, str]:
    """Per repository path, the reason shown beside the file: "secret redacted, line 12"."""
    lines: dict[str, list[int]] = {}
    for secret in rendered.secrets:
        lines.setdefault(secret.path, []).append(secret.line)
    word = "redacted" if rendered.redacted else "left in"
    reasons: dict[str, str] = {}
    for path, numbers in lines.items():
        shown = ", ".join(str(n) for n in sorted(set(numbers)))
        plural = "s" if len(numbers) > 1 else ""
        reasons[path] = f"secret{plural} {word}, line{'s' if len(set(numbers)) > 1 else ''} {shown}"
    return reasons


def as_sentences(lines: Iterable[str]) -> str:
    """Notice lines as sentences, one a line, for a notification."""
    return "\n".join(f"{line[:1].upper()}{line[1:]}." for line in lines)


def _count(items: Iterable[object], noun: str) -> str:
    return counted(len(list(items)), noun)


def counted(number: int, noun: str) -> str:
    """`1 file`, `2,048 files`: a count and its noun, singular for one."""
    return f"{number:,} {noun}{'' if number == 1 else 's'}"


def dropped_choices_notice(pins: Sequence[str], levels: Sequence[str]) -> str:
    """The pins and levels dropped from files the index no longer holds (deleted, renamed
    or now skipped): "unpinned 1 file no longer in the repository's index …: gone.py". The
    app says it when it drops them from its state; MCP's current_selection, which drops
    them from the selection it returns (the app's saved state is the app's to change)."""
    done = [
        f"{verb} {counted(len(paths), 'file')}"
        for verb, paths in (("unpinned", pins), ("dropped the level of", levels))
        if paths
    ]
    return (
        f"{' and '.join(done)} no longer in the repository's index (deleted, renamed or "
        f"skipped): {_names(sorted({*pins, *levels}))}"
    )


def not_brought_back_notice(paths: Sequence[str]) -> str:
    """The choices an undo left out, about files the index no longer holds: "not brought
    back, 1 file no longer in the repository's index: gone.py"."""
    return (
        f"not brought back, {counted(len(paths), 'file')} no longer in the repository's "
        f"index: {_names(sorted(paths))}"
    )


def _names(paths: Iterable[str], details: Mapping[str, str] | None = None) -> str:
    """The first NAMES_SHOWN paths as shown, each with its detail if given ("locked:
    Permission denied"), and how many more."""
    listed = [
        f"{shown_line(p)}: {details[p]}" if details and details.get(p) else shown_line(p)
        for p in paths
    ]
    shown = ", ".join(listed[:NAMES_SHOWN])
    more = len(listed) - NAMES_SHOWN
    return f"{shown} and {more} more" if more > 0 else shown
