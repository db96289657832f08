"""Read and analyse one file: sniff, decode, parse, count tokens, number its words.

This is the unit of work of the first index, run in pool workers (engine.pool). Each process
keeps one Analyser for its life: a parser, a tokenizer, and its own numbering of index words
(`TermNumbering`, engine.index_words). A batch's words leave the process as arrays of those
numbers; a word travels as text only the first time the process meets it, so the main process
renumbers a whole batch with one array lookup instead of a dict lookup per word, and the
workers (on every core) do the per-word work. Everything else a file gives the index is made
here too: its stored record (JSON), its role, its import uses and its tokens per line.
"""

from __future__ import annotations

import hashlib
import os
import zlib
from collections import Counter
from dataclasses import dataclass, replace
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING

from engine.file_open import open_regular
from engine.index_words import BatchWords, FileWords, TermNumbering, number_words
from engine.model import Declaration, ParsedFile, SkippedFile, SkipReason, SourceFile
from engine.words import identifiers

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from engine.parse.extract import SourceParser
    from engine.tokens import Tokenizer


IDENTIFIER_CACHE_LIMIT = 300_000
"""Identifiers remembered per process before that cache starts again (bounds memory)."""
ANALYSIS_TIME_LIMIT = 2.0
"""CPU seconds the parser may spend on one file's declarations before the file is indexed as
plain text. The slowest of the 60,364 source files of the DEV checkouts (clap's 223 KB
CHANGELOG.md, 905 sections) takes 0.18 s; a hostile file (thousands of nested functions, or a
grammar's worst case) must not hold a worker, or the app, for minutes."""


@dataclass(frozen=True, slots=True)
class Analysis:
    """One analysed file, in the form the index stores it."""

    path: str
    """Relative POSIX path."""
    language: str
    """Language key, or "text"."""
    size: int
    """Bytes read."""
    mtime_ns: int
    """Modification time when read."""
    tokens: int
    """Tokens of the whole file."""
    declarations: int
    """Number of declarations."""
    role: int
    """engine.roles.Role of the file."""
    flags: int
    """store.FLAG_* bits: partial parse, bytes replaced, generated."""
    lines: int
    """Number of lines."""
    outline_tokens: int
    """Estimated tokens of the outline level."""
    focused_tokens: int
    """Estimated tokens of the focused level when no declaration matches."""
    sha1: str
    """Hex SHA-1 of the bytes read."""
    record: bytes
    """The stored declarations (engine.tables.encode_declarations)."""
    imports: bytes
    """Imports as written, stored as engine.tables.encode_imports stores them (no targets:
    they are resolved once every file is known)."""
    line_prefix: npt.NDArray[np.int32]
    """Prefix sums of tokens per line, starting with 0."""
    uses: bytes
    """Which declarations use each import line (engine.units.encode_import_uses)."""


RECORD_COMPRESSION = 1
"""zlib level of the declaration records while they travel and wait (Analysed.records): on
the 16k tree's records level 1 gives 24.0 -> 7.4 MB, level 6 6.9 MB for half again the time."""


def stored_record(travelling: bytes) -> bytes:
    """A declaration record as the cache stores it, from its form in Analysed.records."""
    return zlib.decompress(travelling)


FILE_COLUMNS = (
    "size", "tokens", "lines", "declarations", "outline_tokens", "focused_tokens", "role",
    "flags", "mtime_ns",
)  # fmt: skip
"""Analysis attributes sent (and kept by engine.fresh) as per-file number columns."""


@dataclass(frozen=True, slots=True)
class Analysed:
    """The analysed files of a batch, column by column, in the batch's order.

    This is what a worker sends back: each file's small arrays joined into one array a
    column, with each file's share of it, so a batch pickles as a dozen arrays and lists
    rather than a dozen small arrays a file (3 s of pickling and unpickling on the 16k tree
    were a third of the main process's work while the workers parse). Term ids are in the
    numbering of the process that analysed the files.
    """

    paths: list[str]
    """Relative POSIX paths."""
    languages: list[str]
    """Language keys."""
    columns: dict[str, list[int]]
    """FILE_COLUMNS name -> value per file."""
    sha1: bytes
    """20 bytes (the SHA-1 of the bytes read) per file."""
    body_length: list[float]
    """Body words per file."""
    records: list[bytes]
    """Stored declarations per file (engine.tables.encode_declarations), compressed
    (`stored_record` reads one back): the indexing process keeps them until the index
    stage: 24.0 MB of JSON on the 16k tree, 7.4 MB compressed (its 5 copies: 120 -> 37 MB)."""
    imports: list[bytes]
    """Imports as written per file (Analysis.imports): bytes, not an object an import, so
    the indexing process holds 2.5 MB for the 16k tree's 56,538 imports rather than 11 MB."""
    uses: list[bytes]
    """Stored import uses per file."""
    term_rows: list[int]
    """Term rows of each file: the files' Analysis.terms, .fields and .counts follow each
    other in the next three arrays."""
    terms: npt.NDArray[np.int32]
    """Term id of each term row."""
    fields: npt.NDArray[np.int8]
    """Field column of each term row."""
    counts: npt.NDArray[np.int32]
    """Occurrences of each term row."""
    declaration_rows: list[int]
    """Declaration postings of each file, in the next two arrays."""
    declaration_positions: npt.NDArray[np.int32]
    """Declaration (position in its file) of each posting."""
    declaration_terms: npt.NDArray[np.int32]
    """Term id of each posting."""
    line_rows: list[int]
    """Items of `line_prefix` of each file (its lines + 1)."""
    line_prefix: npt.NDArray[np.int32]
    """Each file's prefix sums of tokens per line, one after another."""
    unit_words: list[int]
    """Rows of `unit_terms` and `unit_tf` of each file."""
    unit_declarations: list[int]
    """Items of `unit_rows` of each file (one a declaration)."""
    unit_terms: npt.NDArray[np.int32]
    """Each file's declarations' distinct words (term ids), one file after another."""
    unit_tf: npt.NDArray[np.uint8]
    """Their occurrences per field, shape (len(unit_terms), 3)."""
    unit_rows: npt.NDArray[np.int32]
    """Words of each declaration, one file after another."""

    @classmethod
    def of(cls, analyses: list[Analysis], words: BatchWords) -> Analysed:
        """Join the analyses of a batch and the words `number_words` numbered for them."""
        import numpy as np  # deliberate: numpy loads with the analysis

        prefixes = [a.line_prefix for a in analyses]
        line_prefix = np.concatenate(prefixes) if prefixes else np.zeros(0, dtype=np.int32)
        return cls(
            paths=[a.path for a in analyses],
            languages=[a.language for a in analyses],
            columns={name: [getattr(a, name) for a in analyses] for name in FILE_COLUMNS},
            sha1=b"".join(bytes.fromhex(a.sha1) for a in analyses),
            body_length=words.body_length,
            records=[zlib.compress(a.record, RECORD_COMPRESSION) for a in analyses],
            imports=[a.imports for a in analyses],
            uses=[a.uses for a in analyses],
            term_rows=words.term_rows,
            terms=words.terms,
            fields=words.fields,
            counts=words.counts,
            declaration_rows=words.declaration_rows,
            declaration_positions=words.declaration_positions,
            declaration_terms=words.declaration_terms,
            line_rows=[len(prefix) for prefix in prefixes],
            line_prefix=line_prefix.astype(np.int32, copy=False),
            unit_words=words.unit_words,
            unit_declarations=words.unit_declarations,
            unit_terms=words.unit_terms,
            unit_tf=words.unit_tf,
            unit_rows=words.unit_rows,
        )


@dataclass(frozen=True, slots=True)
class Batch:
    """What a process sends back for a batch of files."""

    numbering: str
    """Which TermNumbering the term ids of `analysed` are in."""
    words: list[str]
    """Words that numbering met for the first time in this batch, in id order."""
    analysed: Analysed
    """The files analysed, in the batch's order."""
    skipped: list[SkippedFile]
    """The files left out (binary, unreadable, ...), in the batch's order."""


@dataclass(slots=True)
class Analyser:
    """What one process keeps between files: a parser, a tokenizer, its word numbering."""

    parser: SourceParser
    """Keeps compiled tree-sitter queries between files."""
    tokenizer: Tokenizer
    """Counts tokens in the index's encoding."""
    numbering: TermNumbering
    """This process's word ids and identifier cache."""
    time_limit: float | None = ANALYSIS_TIME_LIMIT
    """CPU seconds the parser may spend on one file (None: no limit)."""

    @classmethod
    def create(cls, tokenizer: Tokenizer) -> Analyser:
        """Load the parser table (tree-sitter and its grammars load lazily per language)."""
        from engine.parse.extract import SourceParser  # deliberate: tree-sitter loads here

        return cls(SourceParser(), tokenizer, TermNumbering(), ANALYSIS_TIME_LIMIT)


def analyse_batch(root: str, sources: list[SourceFile], analyser: Analyser) -> Batch:
    """Analyse files with one analyser, then number the words of them all at once; the
    batch carries the words it numbered meanwhile."""
    results = [analyse_file(root, source, analyser) for source in sources]
    analysed = [r for r in results if not isinstance(r, SkippedFile)]
    numbering = analyser.numbering
    words = number_words([w for _, w in analysed], numbering, IDENTIFIER_CACHE_LIMIT)
    joined = Analysed.of([a for a, _ in analysed], words)
    skipped = [r for r in results if isinstance(r, SkippedFile)]
    return Batch(numbering.key, numbering.new_words(), joined, skipped)


def read_source(root: str, source: SourceFile) -> bytes | SkippedFile:
    """Read a file's bytes, or say why it cannot be read."""
    try:
        with open_regular(os.path.join(root, source.path)) as fh:
            return fh.read()
    except FileNotFoundError:
        return SkippedFile(source.path, SkipReason.VANISHED)
    except IsADirectoryError:
        return SkippedFile(source.path, SkipReason.UNREADABLE, "a folder")
    except OSError as exc:
        return SkippedFile(source.path, SkipReason.UNREADABLE, exc.strerror or type(exc).__name__)


def sha1_of(data: bytes) -> str:
    """Content hash used to confirm a change that size and mtime suggest."""
    return hashlib.sha1(data, usedforsecurity=False).hexdigest()


def analyse_file(
    root: str, source: SourceFile, analyser: Analyser
) -> tuple[Analysis, FileWords] | SkippedFile:
    """Read, sniff, decode and parse one file, and find its identifiers (`analyse_batch`
    numbers them). Never raises for a bad file."""
    from engine.skip_rules import is_generated, sniff_content  # deliberate: keeps import light

    data = read_source(root, source)
    if isinstance(data, SkippedFile):
        return data
    reason = sniff_content(data, source.path)
    if reason is not None:
        return SkippedFile(source.path, reason)
    text = data.decode("utf-8", errors="replace")
    replaced = "\ufffd" in text and b"\xef\xbf\xbd" not in data
    structure = analyser.parser.parse(
        text, source.language, source.path, time_limit=analyser.time_limit
    )
    prefix = analyser.tokenizer.line_prefix_counts(text)
    lines = prefix.tolist()
    parsed = ParsedFile(
        path=source.path,
        language=source.language,
        size=len(data),
        mtime_ns=source.mtime_ns,
        sha1=sha1_of(data),
        lines=len(lines) - 1,
        tokens=lines[-1],
        declarations=tuple(_with_tokens(d, lines) for d in structure.declarations),
        imports=structure.imports,
        partial=structure.partial,
        replaced=replaced,
        generated=is_generated(text[:2000]),
        too_slow=structure.timed_out,
    )
    parsed, words = _with_words(parsed, text)
    return describe(_with_level_costs(parsed, prefix), prefix), words


def _with_words(parsed: ParsedFile, text: str) -> tuple[ParsedFile, FileWords]:
    """The file's identifiers by field and by declaration, and which declarations use each
    import line."""
    from engine.focus import header_last_lines  # deliberate: see _with_level_costs
    from engine.levels import split_lines
    from engine.units import file_identifiers, import_uses

    lines = split_lines(text)
    found = file_identifiers(parsed, text, lines, header_last_lines(parsed))
    folder, _, name = parsed.path.rpartition("/")
    stem_name = name.split(".", 1)[0] if not name.startswith(".") else name
    decls = parsed.declarations
    names = [identifiers(d.name) for d in decls]
    docs = [identifiers(d.doc) if d.doc else [] for d in decls]
    # FIELDS but the body: name, folders, exported, declarations, docs
    fields = (
        identifiers(stem_name),
        identifiers(folder.replace("/", " ")),
        [i for d, said in zip(decls, names, strict=True) if d.exported for i in said],
        [i for d, said in zip(decls, names, strict=True) if not d.exported for i in said],
        list(chain.from_iterable(docs)),
    )
    own = [
        (said, head + doc, body)
        for said, doc, (head, body) in zip(names, docs, found.own, strict=True)
    ]
    words = FileWords(fields, Counter(found.everything), own)
    return replace(parsed, import_uses=import_uses(parsed, lines, found)), words


def describe(parsed: ParsedFile, prefix: npt.NDArray[np.int64]) -> Analysis:
    """Everything the index stores of a parsed file but its words (`number_words`)."""
    import numpy as np  # deliberate: numpy loads with the analysis

    from engine.roles import classify
    from engine.tables import (
        FLAG_GENERATED,
        FLAG_PARTIAL,
        FLAG_REPLACED,
        FLAG_TOO_SLOW,
        encode_declarations,
        encode_imports,
    )
    from engine.units import encode_import_uses

    return Analysis(
        path=parsed.path,
        language=parsed.language,
        size=parsed.size,
        mtime_ns=parsed.mtime_ns,
        tokens=parsed.tokens,
        declarations=len(parsed.declarations),
        role=classify(parsed).value,
        flags=(FLAG_PARTIAL * parsed.partial)
        | (FLAG_REPLACED * parsed.replaced)
        | (FLAG_GENERATED * parsed.generated)
        | (FLAG_TOO_SLOW * parsed.too_slow),
        lines=parsed.lines,
        outline_tokens=parsed.outline_tokens,
        focused_tokens=parsed.focused_tokens,
        sha1=parsed.sha1,
        record=encode_declarations(parsed.declarations),
        imports=encode_imports(parsed.imports),
        line_prefix=prefix.astype(np.int32),
        uses=encode_import_uses(parsed.import_uses),
    )


def with_token_counts(parsed: ParsedFile, prefix: npt.NDArray[np.int64]) -> ParsedFile:
    """Fill in every token count of a parsed file (the file's, its declarations', its level
    costs) from the prefix sums of tokens per line of its text (an encoding switch)."""
    lines = prefix.tolist()
    counted = replace(
        parsed,
        tokens=lines[-1],
        declarations=tuple(_with_tokens(d, lines) for d in parsed.declarations),
    )
    return _with_level_costs(counted, prefix)


def _with_level_costs(parsed: ParsedFile, prefix: npt.NDArray[np.int64]) -> ParsedFile:
    """Fill in the question-independent level costs, so planning never recomputes them."""
    from engine.levels import focused_tokens, outline_tokens  # deliberate: levels loads parse

    return replace(
        parsed,
        outline_tokens=outline_tokens(parsed),
        focused_tokens=focused_tokens(parsed, prefix, 0, len(prefix) - 1),
    )


def _with_tokens(decl: Declaration, prefix: list[int]) -> Declaration:
    """Fill a declaration's token counts from the file's per-line prefix sums."""
    last = len(prefix) - 1
    start = min(max(decl.start_line, 1), last) if last else 0
    end = min(max(decl.end_line, start), last)
    body_start = min(max(decl.body_start_line, start), end)
    body = prefix[end] - prefix[start - 1] if start else 0
    signature = prefix[body_start] - prefix[start - 1] if start else 0
    # the outline shows the doc sentence beside the signature; ~4 characters per token
    signature += (len(decl.doc) + 3) // 4 if decl.doc else 0
    return Declaration(
        decl.kind, decl.name, decl.qualified_name, decl.signature, decl.doc, decl.start_line,
        decl.end_line, decl.body_start_line, decl.exported, decl.depth, body, signature,
    )  # fmt: skip


def read_text(root: str | Path, path: str) -> str:
    """Read a file of the repository as text, replacing undecodable bytes.

    Raises:
        OSError: it is gone, unreadable or no longer a regular file (`open_regular`).
    """
    with open_regular(os.path.join(root, path)) as fh:
        return fh.read().decode("utf-8", errors="replace")
