"""Render a plan as Markdown, XML or JSON, measured exactly.

One function feeds stdout, files, the app's preview and the clipboard, so what the user sees is
what gets copied. The total printed inside a pack is the token count of that very text: format,
count, re-format with the count, until the number is stable.
"""

from __future__ import annotations

from collections.abc import Callable, MutableMapping
from dataclasses import replace
from typing import TYPE_CHECKING, Protocol

from engine.diff_keys import KEY_RUN, key_lines
from engine.levels import line_comment, render_level
from engine.model import (
    Format,
    Index,
    Level,
    Plan,
    PlanEntry,
    Rendered,
    SecretFound,
)
from engine.render.to_json import file_json, to_json
from engine.render.to_markdown import file_section, to_markdown
from engine.render.to_xml import file_element, to_xml
from engine.render.view import FileView, PackView, repo_name
from engine.shown_path import shown_detail, shown_path

if TYPE_CHECKING:
    from engine.changes import ChangedFile
    from engine.diff_section import ChangesSection
    from engine.redact import SecretPolicy

FORMATTERS: dict[Format, Callable[[PackView], str]] = {
    Format.MARKDOWN: to_markdown,
    Format.XML: to_xml,
    Format.JSON: to_json,
}
"""The formatter of each format."""
FILE_FORMATTERS: dict[Format, Callable[[FileView], str]] = {
    Format.MARKDOWN: file_section,
    Format.XML: file_element,
    Format.JSON: file_json,
}
"""The text one file takes inside a pack of each format (heading and fence, element, object)."""

SETTLE_ROUNDS = 4
"""Format-and-count rounds before searching near the last count; 2 almost always suffice."""
SETTLE_SPAN = 8
"""How far either side of the last count that search looks for a self-consistent total."""


class TokenCounter(Protocol):
    """Anything that counts tokens of text in a named encoding (engine.tokens.Tokenizer)."""

    @property
    def name(self) -> str:
        """Encoding name, printed in the pack."""
        ...

    def count(self, text: str) -> int:
        """Return the exact number of tokens of `text`."""
        ...


def render(
    plan: Plan,
    index: Index,
    fmt: Format,
    *,
    counter: TokenCounter,
    read_text: Callable[[str], str],
    line_numbers: bool = False,
    instructions: str = "",
    changes: ChangesSection | None = None,
    secrets: SecretPolicy | None = None,
    views: MutableMapping[tuple[object, ...], str] | None = None,
) -> Rendered:
    """Render `plan` in `fmt`; Rendered.tokens is the exact count of Rendered.text.

    Args:
        read_text: returns a file's decoded text from its relative path.
        line_numbers: prefix source lines with their numbers.
        instructions: text placed at the top of the pack; empty for none.
        changes: the diff section (`--changed`), already fitted; None for none.
        secrets: what to do with the secrets in every part of the pack (redact them, or
            only report them); None looks for none.
        views: files' views at their levels kept from earlier renderings (read and filled
            here), keyed by the file's path and mtime and what the view shows of it.
    """
    read = [file_content(entry, index, read_text, line_numbers, views) for entry in plan.entries]
    contents = [content for content, _text in read]
    found: list[SecretFound] = []
    query = plan.query
    diff = changes.diff if changes is not None else ""
    if secrets is not None:
        pieces = _diff_pieces(changes) if changes is not None else []
        keys = [
            key_lines(piece, _text_or_nothing(read_text, path))
            if path in index.path_ids and KEY_RUN.search(piece)  # an indexed file: bounded
            else ()
            for piece, path in pieces
        ]
        parts = [
            (query, "<question>", "", ""),
            (instructions, "<instructions>", "", ""),
            *((piece, "<changes>", path, "") for piece, path in pieces),
            *(
                (content, entry.path, entry.path, text)  # signatures come from the index
                for entry, (content, text) in zip(plan.entries, read, strict=True)
            ),
        ]
        carried = secrets.apply_many(parts, known=[(), (), *keys])
        carried[2 : 2 + len(pieces)] = _as_one_diff(carried[2 : 2 + len(pieces)], pieces)
        for _text, finds in carried:
            found.extend(finds)
        query, instructions = (text for text, _ in carried[:2])
        diff = "".join(text for text, _ in carried[2 : 2 + len(pieces)])
        contents = [text for text, _ in carried[2 + len(pieces) :]]
        if changes is not None and diff != changes.diff:  # its count is of the diff that leaves
            changes = replace(changes, diff=diff, tokens=counter.count(diff))
    redact = secrets is None or secrets.redact
    if changes is not None:
        changes = replace(changes, files=tuple(_shown_change(f, redact) for f in changes.files))
    files = tuple(
        _file_view(entry, index, content, counter, redact)
        for entry, content in zip(plan.entries, contents, strict=True)
    )
    pack = PackView(
        query=query,
        root=shown_path(repo_name(index.root), redact=redact),
        budget=plan.budget,
        encoding=counter.name,
        total_tokens=sum(file.tokens for file in files),
        files=files,
        instructions=instructions,
        changes=changes,
    )
    text, tokens = settle_total(pack, FORMATTERS[fmt], counter)
    return Rendered(
        text=text, fmt=fmt, tokens=tokens, files=len(files),
        file_tokens=tuple(file.tokens for file in files),
        secrets=tuple(found), redacted=secrets is None or secrets.redact,
    )  # fmt: skip


def _diff_pieces(changes: ChangesSection) -> list[tuple[str, str]]:
    """The diff cut before each file's `diff --git` line, each piece with the path whose
    keyword rules apply to it (a `.env` or YAML value needs no quotes: the file's section is
    scanned so, and its diff must be too); one piece named changes.diff when the pieces do
    not pair with the files (the list of files alone, when even the headers did not fit)."""
    diff = changes.diff
    starts = [0] if diff.startswith("diff --git ") else []
    at = diff.find("\ndiff --git ")
    while at >= 0:
        starts.append(at + 1)
        at = diff.find("\ndiff --git ", at + 1)
    if not diff or starts[:1] != [0] or len(starts) != len(changes.files):
        return [(diff, "changes.diff")] if diff else []
    ends = [*starts[1:], len(diff)]
    return [
        (diff[start:end], changed.path)
        for start, end, changed in zip(starts, ends, changes.files, strict=True)
    ]


def _text_or_nothing(read_text: Callable[[str], str], path: str) -> str:
    """A changed file's text now ("" when it is gone or unreadable, or not a file)."""
    try:
        return read_text(path)
    except (OSError, UnicodeError, ValueError):
        return ""


def _as_one_diff(
    carried: list[tuple[str, list[SecretFound]]], pieces: list[tuple[str, str]]
) -> list[tuple[str, list[SecretFound]]]:
    """The pieces' findings with their lines counted in the whole diff, as it is shown."""
    shifted = []
    offset = 0
    for (text, finds), (piece, _path) in zip(carried, pieces, strict=True):
        shifted.append((text, [replace(f, line=f.line + offset) for f in finds]))
        offset += piece.count("\n")
    return shifted


def file_content(
    entry: PlanEntry,
    index: Index,
    read_text: Callable[[str], str],
    line_numbers: bool,
    views: MutableMapping[tuple[object, ...], str] | None,
) -> tuple[str, str]:
    """A file's content at its level, and the whole text it was cut from ("" if unreadable:
    the content then says so). The pack and the app's preview (Workspace.render_file)."""
    file = index.files[entry.file_id]
    try:
        text = read_text(entry.path)
    except OSError as error:  # vanished or unreadable since indexing: say so in the pack
        comment = line_comment(file.language)
        note = f"… file could not be read: {error.strerror or error}"
        return (f"{comment} {note}\n" if comment else note + "\n"), ""
    if entry.level is Level.FULL and not line_numbers:
        return text, text  # the view is the text itself
    key = (
        index.root, entry.path, file.mtime_ns, len(text), entry.level,
        entry.matched_declarations, entry.best_lines, line_numbers,
    )  # fmt: skip
    content = views.get(key) if views is not None else None
    if content is None:
        content = render_level(
            file, text, entry.level, entry.matched_declarations, line_numbers=line_numbers,
            best_lines=entry.best_lines,
        )  # fmt: skip
        if views is not None:
            views[key] = content
    return content, text


def _shown_change(changed: ChangedFile, redact: bool) -> ChangedFile:
    """A changed file with its paths as they are shown (engine.shown_path)."""
    old_path = shown_path(changed.old_path, redact=redact) if changed.old_path else ""
    return replace(changed, path=shown_path(changed.path, redact=redact), old_path=old_path)


def _file_view(
    entry: PlanEntry, index: Index, content: str, counter: TokenCounter, redact: bool
) -> FileView:
    file = index.files[entry.file_id]
    return FileView(
        path=shown_path(entry.path, redact=redact),
        language=file.language,
        level=entry.level,
        pinned=entry.pinned,
        score=entry.score,
        reasons=tuple(  # "imports: <path>" names a file too
            replace(r, detail=shown_detail(r, redact=redact)) for r in entry.reasons
        ),
        content=content,
        tokens=counter.count(content),
    )


def file_cost(
    fmt: Format, path: str, language: str, level: Level, content: str, counter: TokenCounter
) -> int:
    """The exact tokens one file's `content` at `level` takes inside a pack of format `fmt`:
    its content as the format carries it (JSON escapes every newline and quote, XML every
    angle bracket, Markdown fences it) with the file's own wrapping (path, level, count)."""
    view = FileView(
        path=shown_path(path), language=language, level=level, pinned=False, score=0.0,
        reasons=(), content=content, tokens=counter.count(content),
    )  # fmt: skip
    return counter.count(FILE_FORMATTERS[fmt](view))


def settle_total(
    pack: PackView, format_pack: Callable[[PackView], str], counter: TokenCounter
) -> tuple[str, int]:
    """Format `pack` with a total_tokens equal to the count of the formatted text itself.

    Returns the text and its exact count. If no self-consistent total exists near the count
    (a digit more can cost a token less), the last text is returned with its true count.
    """
    total = pack.total_tokens
    text, count = "", -1
    for _ in range(SETTLE_ROUNDS):
        text = format_pack(replace(pack, total_tokens=total))
        count = counter.count(text)
        if count == total:
            return text, count
        total = count
    for candidate in sorted(
        range(count - SETTLE_SPAN, count + SETTLE_SPAN + 1), key=lambda n: abs(n - count)
    ):
        trial = format_pack(replace(pack, total_tokens=candidate))
        if counter.count(trial) == candidate:
            return trial, candidate
    return text, count


__all__ = ["FILE_FORMATTERS", "FORMATTERS", "TokenCounter", "file_cost", "render", "settle_total"]
