"""Each declaration as a small document: its own words, and the imports its code uses.

The focused view keeps whole the declarations that answer the question, and only the imports
that kept code uses. Both need what each declaration says apart from the rest of its file, so
a file's lines are shared out once, at index time: a declaration owns the lines of its span
that no nested declaration owns (a class its header and attributes, each method its own lines),
split into its header (decorators and signature, as the focused view shows them) and its body.
Its words per field (name, header with the doc sentence, body) become rows of the unit index;
the identifiers it uses decide which module-level import lines it needs (`ImportUse`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate, chain
from typing import TYPE_CHECKING, Generic, TypeVar

from engine.heap import give_back_memory
from engine.import_names import EVERY_NAME, bound_names
from engine.model import Declaration, ImportUse, ParsedFile
from engine.parse.languages import DocStyle, spec_for
from engine.words import IDENTIFIER, IDENTIFIER_ASCII, identifiers

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from engine.fresh import Fresh
    from engine.store import Arrays, Stored


UNIT_FIELDS = ("name", "header", "body")
"""The fields of a declaration's document, in the column order of `UnitIndex.tf`."""
GIVE_BACK_EVERY = 2048
"""Analysed files copied between two hand-backs of the heap (a few ms each)."""
Word = TypeVar("Word")
"""A word as the caller numbers it: its text, or a term id."""


@dataclass(frozen=True, slots=True)
class UnitWords(Generic[Word]):
    """One file's declarations as documents: their words (strings, or a process's term ids)
    and how often each field has them."""

    words: list[Word] | npt.NDArray[np.int32]
    """Distinct index words of each declaration, concatenated in declaration order (the
    indexer's are term ids: engine.index_words)."""
    tf: npt.NDArray[np.uint8]
    """Occurrences of each of those words per field (UNIT_FIELDS), shape (len(words), 3),
    saturating at 255."""
    rows: npt.NDArray[np.int32]
    """How many of `words` belong to each declaration, in declaration order."""


def own_lines(
    decls: Sequence[Declaration], line_count: int, header_last: Sequence[int]
) -> tuple[list[int], list[bool]]:
    """Return, for lines 1..line_count (index 0 unused), the position of the innermost
    declaration holding the line (-1 for module level) and whether it is a header line.

    Declarations come in source order, outer before inner, so a later one overwrites.
    """
    owner = [-1] * (line_count + 1)
    header = [False] * (line_count + 1)
    for position, decl in enumerate(decls):
        first, last = max(decl.start_line, 1), min(decl.end_line, line_count)
        if last < first:
            continue
        owner[first : last + 1] = [position] * (last - first + 1)
        header[first : last + 1] = [False] * (last - first + 1)
        head = min(max(header_last[position], first), last)
        header[first : head + 1] = [True] * (head - first + 1)
    return owner, header


def module_import_lines(file: ParsedFile) -> list[tuple[int, int]]:
    """Distinct (first, last) spans of the file's import statements at module level (an
    import inside a function body is part of that body), in source order."""
    import bisect

    tops = sorted((d.start_line, d.end_line) for d in file.declarations if d.depth == 0)
    spans = set()
    for imp in file.imports:
        position = bisect.bisect_right(tops, (imp.start_line, 1 << 30)) - 1
        if position >= 0 and tops[position][0] <= imp.start_line <= tops[position][1]:
            continue
        spans.add((imp.start_line, imp.end_line))
    return sorted(spans)


@dataclass(frozen=True, slots=True)
class FileIdentifiers:
    """A file's identifiers found in one pass over its text, shared out by line owner."""

    everything: list[str]
    """Every identifier of the file, in text order (what IDENTIFIER.findall(text) gives)."""
    own: list[tuple[list[str], list[str]]]
    """Per declaration: the identifiers of its own header lines and of its own body lines."""


def file_identifiers(
    file: ParsedFile, text: str, lines: Sequence[str], header_last: Sequence[int]
) -> FileIdentifiers:
    """Find the identifiers of `text` once, each run of lines with one owner by itself.

    An identifier never spans a line end, and IDENTIFIER looks neither behind nor ahead of
    a match, so the runs' identifiers, in order, are exactly the whole text's; each of them
    is found once here, rather than once for the file and again for its declarations.

    Args:
        file: the parsed file (its declarations).
        text: its text; `lines` is `engine.levels.split_lines(text)`.
        header_last: per declaration, the last line of its header as the focused view shows it.
    """
    decls = file.declarations
    own: list[tuple[list[str], list[str]]] = [([], []) for _ in decls]
    if not decls:
        return FileIdentifiers(identifiers(text), own)
    pattern = IDENTIFIER_ASCII if text.isascii() else IDENTIFIER
    line_count = len(lines)
    owner, header = own_lines(decls, line_count, header_last)
    # where (owner, header) may change: own_lines writes each value over a run of lines that
    # starts and ends at one of these, so a run of one owner starts at one of them; the rest
    # of the lines need no look (a loop over every line was most of this function's time)
    cuts = {1, line_count + 1}
    for decl, last_of_header in zip(decls, header_last, strict=True):
        first, last = max(decl.start_line, 1), min(decl.end_line, line_count)
        if last >= first:
            cuts.update((first, last + 1, min(max(last_of_header, first), last) + 1))
    # lengths[i]: characters of lines 1..i; line i + 1 starts at lengths[i] + i (each line
    # but the last ends with "\n")
    lengths = list(accumulate(map(len, lines), initial=0))
    owner.append(-2)  # past the last line: ends the last run
    header.append(False)
    everything: list[str] = []
    start = 1
    for number in sorted(cuts)[1:]:
        if owner[number] == owner[start] and header[number] == header[start]:
            continue
        end = lengths[number - 1] + number - 2
        found = pattern.findall(text, lengths[start - 1] + start - 1, end)
        everything.extend(found)
        position = owner[start]
        if position >= 0:
            own[position][0 if header[start] else 1].extend(found)
        start = number
    return FileIdentifiers(everything, own)


def analyse_units(
    file: ParsedFile,
    found: FileIdentifiers,
    lines: Sequence[str],
    count: Callable[[list[str]], Mapping[Word, int]],
) -> tuple[UnitWords[Word], tuple[ImportUse, ...]]:
    """Collect each declaration's words per field and the import lines its code uses.

    Args:
        file: the parsed file (declarations and imports).
        found: its identifiers by declaration (`file_identifiers`).
        lines: its text split into lines (no line ends).
        count: counts the index words of a list of identifiers (the indexer's own word
            numbering).
    """
    import numpy as np  # deliberate: numpy loads with the index

    words: list[Word] = []
    counts: list[list[int]] = []
    rows: list[int] = []
    for decl, (head, body) in zip(file.declarations, found.own, strict=True):
        per_word: dict[Word, list[int]] = {}
        fields = (identifiers(decl.name), head + identifiers(decl.doc), body)
        for field, found_in_field in enumerate(fields):
            for word, n in count(found_in_field).items():
                per_word.setdefault(word, [0, 0, 0])[field] += n
        words.extend(per_word)
        counts.extend(per_word.values())
        rows.append(len(per_word))
    ceiling = np.iinfo(np.uint8).max
    tf = np.minimum(np.array(counts, dtype=np.int64).reshape(-1, 3), ceiling).astype(np.uint8)
    units = UnitWords(words, tf, np.array(rows, dtype=np.int32))
    return units, import_uses(file, lines, found)


def import_uses(
    file: ParsedFile, lines: Sequence[str], found: FileIdentifiers
) -> tuple[ImportUse, ...]:
    """Which declarations use each module-level import line: a line is used by a declaration
    whose own code (or header) has one of the names the line binds (engine.import_names: not
    the words of its module path); a wildcard import's line by every declaration."""
    spec = spec_for(file.language)
    resolver = spec.resolver if spec is not None else ""
    hash_comments = spec is not None and spec.line_comment == "#"
    by_identifier: dict[str, list[int]] = {}
    numbers: set[int] = set()
    everyone: set[int] = set()
    for first, last in module_import_lines(file):
        first, last = max(first, 1), min(last, len(lines))
        names = bound_names(resolver, lines[first - 1 : last], hash_comments)
        for number, bound in enumerate(names, first):
            if number in numbers:
                continue
            numbers.add(number)
            if EVERY_NAME in bound:
                everyone.add(number)
            for identifier in bound - {EVERY_NAME}:
                by_identifier.setdefault(identifier, []).append(number)
    if not numbers:
        return ()
    users: dict[int, tuple[set[int], set[int]]] = {n: (set(), set()) for n in numbers}
    # the imported names each declaration says (a few), not a set of all it says: each of
    # its identifiers is looked up in the small set of imported names
    imported = set(by_identifier)
    docstrings = spec is not None and spec.doc_style is DocStyle.DOCSTRING
    for position, decl in enumerate(file.declarations):
        head, body = found.own[position]
        in_header = imported.intersection(chain(head, _attribute_names(decl, lines)))
        in_body = imported.intersection(body)
        if in_body and docstrings:
            in_body -= _said_in_docstring_only(decl, lines, body, in_body)
        for column, used in ((1, in_header), (0, in_body)):
            for name in used:
                for number in by_identifier[name]:
                    users[number][column].add(position)
    every_position = set(range(len(file.declarations)))
    for number in everyone:
        users[number] = (every_position, every_position)
    return tuple(
        ImportUse(n, tuple(sorted(users[n][0])), tuple(sorted(users[n][1]))) for n in sorted(users)
    )


def _attribute_names(decl: Declaration, lines: Sequence[str]) -> list[str]:
    """Identifiers of the attribute lines right above a declaration that its parse leaves out
    of its span (Rust's `#[derive(Clap)]` uses `use clap::Clap;`), across doc comments."""
    names: list[str] = []
    number = min(decl.start_line, len(lines) + 1) - 1
    while number >= 1:
        text = lines[number - 1].lstrip()
        if text.startswith(("#[", "@")):
            names += IDENTIFIER.findall(text)
        elif not text.startswith(("//", "/*", "*")):
            break
        number -= 1
    return names


DOCSTRING_START = re.compile(r"[rRbBuU]{0,2}(\"\"\"|'''|\"|')")
"""A Python string literal's opening quotes, after the line's indent."""


def _said_in_docstring_only(
    decl: Declaration, lines: Sequence[str], body: list[str], names: set[str]
) -> set[str]:
    """Which of `names` a declaration's body says only in its docstring (`:class:` references
    in flask's docs name what the code never uses): a mention is no use of an import."""
    first = decl.body_start_line
    if not 1 <= first <= len(lines):
        return set()
    text = lines[first - 1].lstrip()
    opening = DOCSTRING_START.match(text)
    if opening is None:
        return set()
    quote = opening.group(1)
    last, after = 0, ""
    if quote in text[opening.end() :]:
        last, after = first, text[text.index(quote, opening.end()) + len(quote) :]
    elif len(quote) == 1:
        return set()  # an unclosed one-quote string: no docstring
    for number in range(first + 1, min(decl.end_line, len(lines)) + 1):
        if last:
            break
        if quote in lines[number - 1]:
            line = lines[number - 1]
            last, after = number, line[line.index(quote) + len(quote) :]
    # A docstring is a statement of its own: a string with code after it on its line
    # ("<br>".join(items), or a docstring then "; return x") uses what it names.
    if not last or after.strip()[:1] not in ("", "#"):
        return set()
    said = IDENTIFIER.findall("\n".join(lines[first - 1 : last]))
    return {name for name in names if name in said and said.count(name) == body.count(name)}


def encode_import_uses(uses: Sequence[ImportUse] | None) -> bytes:
    """The stored form of a file's import uses ("null" when unknown)."""
    rows = None if uses is None else [[u.line, list(u.users), list(u.header_users)] for u in uses]
    return json.dumps(rows, separators=(",", ":")).encode("ascii")


def decode_import_uses(data: bytes) -> tuple[ImportUse, ...] | None:
    """Read back `encode_import_uses` (an empty record is unknown)."""
    rows = json.loads(data.decode("ascii")) if data else None
    if rows is None:
        return None
    return tuple(ImportUse(int(r[0]), tuple(map(int, r[1])), tuple(map(int, r[2]))) for r in rows)


UNIT_SUM_BLOCK = 1 << 16
"""Declarations whose lengths `unit_lengths` sums at once."""


def unit_lengths(
    row_ptr: npt.NDArray[np.int64], tf: npt.NDArray[np.uint8]
) -> npt.NDArray[np.float32]:
    """Words in each declaration's header and body (for length normalisation)."""
    import numpy as np  # deliberate: numpy loads with the index

    declarations = len(row_ptr) - 1
    if not len(tf):
        return np.zeros(declarations, dtype=np.float32)
    # words of each row (at most 2 * 255), and a last 0 that declarations with no row
    # may point at
    words = np.zeros(len(tf) + 1, dtype=np.uint16)
    words[:-1] = tf[:, 1]
    words[:-1] += tf[:, 2]
    # summed in int64 per declaration, a block of declarations at a time: reduceat casts all
    # of its input to the sum's dtype first (an int64 copy of every row: 140 MB on the 5x
    # scale tree's 17.6 M rows, the top of its index stage)
    starts = row_ptr[:-1]
    sums = np.empty(declarations, dtype=np.int64)
    for first in range(0, declarations, UNIT_SUM_BLOCK):
        last = min(first + UNIT_SUM_BLOCK, declarations)
        low, high = int(starts[first]), int(row_ptr[last])
        # the block's rows and the row after them (`words` ends with a 0), and one more
        # start so that the block's last declaration ends where the next block begins
        at = np.append(starts[first:last] - low, high - low)
        sums[first:last] = np.add.reduceat(words[low : high + 1], at, dtype=np.int64)[:-1]
    sums[row_ptr[1:] == row_ptr[:-1]] = 0  # reduceat gives a row, not 0, to an empty range
    return sums.astype(np.float32)


def unit_arrays(
    old_ids: Sequence[int],
    fresh: Fresh,
    old: Stored | None,
    renumber: npt.NDArray[np.int32],
) -> Arrays:
    """The stored arrays of each declaration's words and each file's import uses, files in
    path order: kept files' (old_ids[i] >= 0) as slices of the old cache's arrays, analysed
    files' from their analysis; term ids renumbered by `renumber` (engine.assemble).

    Fresh's arrays are consumed: each is copied into the result, which is allocated whole
    first, and let go at once (a chunk of them at a time, engine.fresh.Runs), so the words
    of 16,000 files are never in memory twice.
    """
    import numpy as np  # deliberate: numpy loads with the index

    if old is not None:
        a = old.arrays
        old_first = np.zeros(len(a["file_declarations"]) + 1, dtype=np.int64)
        np.cumsum(a["file_declarations"], out=old_first[1:])
        old_ptr = a["unit_ptr"]
        uses_blob, uses_ptr = a["uses_blob"], a["uses_ptr"]
        old_terms, old_tf = a["unit_terms"], a["unit_tf"]
    # sizes first: (words, declarations) of each file, in path order
    fresh_sizes = iter(list(zip(fresh.unit_terms.rows(), fresh.unit_rows.rows(), strict=True)))
    sizes: list[tuple[int, int]] = []
    for old_id in old_ids:
        if old_id < 0:
            sizes.append(next(fresh_sizes))
        else:
            first, last = int(old_first[old_id]), int(old_first[old_id + 1])
            sizes.append((int(old_ptr[last]) - int(old_ptr[first]), last - first))
    total_words = sum(words for words, _ in sizes)
    unit_terms = np.empty(total_words, dtype=np.int32)
    unit_tf = np.empty((total_words, 3), dtype=np.uint8)
    counts = np.empty(sum(declarations for _, declarations in sizes), dtype=np.int64)
    uses: list[bytes] = []
    fresh_units = zip(
        fresh.unit_terms.take(), fresh.unit_tf.take(), fresh.unit_rows.take(), strict=True
    )
    fresh.uses.reverse()  # taken from the end below, each let go once copied
    at = row = copied = 0
    for old_id, (words, declarations) in zip(old_ids, sizes, strict=True):
        if old_id < 0:  # analysed now: the next of `fresh`, which is in path order too
            terms, tf, rows = next(fresh_units)
            unit_terms[at : at + words] = renumber[terms]
            unit_tf[at : at + words] = tf.reshape(-1, 3)
            counts[row : row + declarations] = rows
            uses.append(fresh.uses.pop())
            del terms, tf, rows
            copied += 1
            if copied % GIVE_BACK_EVERY == 0:
                give_back_memory()  # the copied files' arrays, before the result grows more
        else:
            first, last = int(old_first[old_id]), int(old_first[old_id + 1])
            start = int(old_ptr[first])
            # old term ids are the vocabulary's first ids (see assemble's `vocabulary`)
            unit_terms[at : at + words] = renumber[old_terms[start : start + words]]
            unit_tf[at : at + words] = old_tf[start : start + words]
            counts[row : row + declarations] = np.diff(old_ptr[first : last + 1])
            uses.append(uses_blob[uses_ptr[old_id] : uses_ptr[old_id + 1]].tobytes())
        at += words
        row += declarations
    ptr = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=ptr[1:])
    lengths = np.fromiter(map(len, uses), dtype=np.int64, count=len(uses))
    uses_offsets = np.zeros(len(uses) + 1, dtype=np.int64)
    np.cumsum(lengths, out=uses_offsets[1:])
    return {
        "unit_ptr": ptr,
        "unit_terms": unit_terms,
        "unit_tf": unit_tf,
        "unit_length": unit_lengths(ptr, unit_tf),
        "uses_blob": np.frombuffer(b"".join(uses), dtype=np.uint8),
        "uses_ptr": uses_offsets,
    }
