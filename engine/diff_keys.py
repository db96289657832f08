"""Private-key lines a diff shows without their BEGIN line.

A key kept in a source file and edited in its middle gives a hunk of base64 lines (context,
removed, added) far from the `-----BEGIN ... PRIVATE KEY-----` line, and no detector can tell
them from any other base64 alone. The file itself says where its key blocks are: each hunk
line is placed in the file by the hunk's line numbers, and the lines inside a block are the
key's. A removed line is inside when the lines around it in the new file are: the block's
BEGIN and END lines stay when only its middle changes (a block removed whole, or one whose
BEGIN line changed, shows that line in the same hunk, where the scan of the text sees it).
"""

from __future__ import annotations

import re

from engine.redact import PRIVATE_KEY_BLOCK, Finding

HUNK = re.compile(r"@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@ ?")
"""A hunk's header; the group is its first line in the new file. Git writes a line of the
file after it (the nearest line above the hunk that starts like a function), which inside a
key block is a line of the key."""

KEY_RUN = re.compile(r"[A-Za-z0-9+/=]{16,}")
"""What is redacted of a line inside a block: its runs of base64 (the quotes, indentation and
`\\n` of a key held in a string literal stay, as they do in the file's own redaction)."""

KIND = "private key"


def key_lines(diff: str, new_text: str) -> tuple[Finding, ...]:
    """The key material of `diff` (one file's part of a unified diff) that lies inside a
    private-key block of `new_text` (the file as it is now): one finding per run of such lines
    of one kind (context, removed, added), offsets in `diff`."""
    if "PRIVATE KEY" not in new_text or "@@ " not in diff:
        return ()
    blocks = _body_lines(new_text)
    if not blocks:
        return ()
    lines = new_text.split("\n")
    keyed = {lines[n - 1].strip() for first, last in blocks for n in range(first, last + 1)}

    def inside(line: int) -> bool:
        return any(first <= line <= last for first, last in blocks)

    found: list[Finding] = []
    new = 0  # the new file's number of the next context or added line
    in_hunk = False
    run_tag = ""
    at = 0
    for line in diff.split("\n"):  # git's lines (str.splitlines would cut at \x0c too)
        start, at = at, at + len(line) + 1
        header = HUNK.match(line)
        if header is not None:
            new, in_hunk, run_tag = int(header.group(1)), True, ""
            if line[header.end() :].strip() in keyed:
                found += [Finding(KIND, start + s, start + e) for s, e in _runs(line, header.end())]
            continue
        tag = line[:1]
        if not in_hunk or tag not in " +-":
            run_tag = ""
            continue
        # a removed line sits between new lines `new - 1` and `new`: inside when both are
        within = inside(new) if tag != "-" else inside(new - 1) and inside(new)
        if tag != "-":
            new += 1
        spans = _runs(line, 1) if within else []
        if not spans:
            run_tag = ""
            continue
        first, last = start + spans[0][0], start + spans[-1][1]
        if run_tag == tag and found:
            found[-1] = Finding(KIND, found[-1].start, last)
        else:
            found.append(Finding(KIND, first, last))
        run_tag = tag
    return tuple(found)


def _runs(line: str, start: int) -> list[tuple[int, int]]:
    return [match.span() for match in KEY_RUN.finditer(line, start)]


def _body_lines(text: str) -> list[tuple[int, int]]:
    """First and last line (1-based) of each key block's body in `text`, and the header and
    END lines around it: a removed line right after the header or right before END is in."""
    blocks = []
    for match in PRIVATE_KEY_BLOCK.finditer(text):
        begin = text.count("\n", 0, match.start()) + 1
        end = text.count("\n", 0, match.end()) + 1
        blocks.append((begin, end))
    return blocks
