"""Which lines a file's focused view keeps: the matched declarations, their scopes' headers,
and the import lines their code uses.

`kept_ranges` is the one place that decides; engine.levels renders its ranges and estimates
their tokens from the cached per-line counts, so text and estimate cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Sequence

from engine.model import Declaration, DeclKind, ParsedFile
from engine.units import module_import_lines

BRACE_LANGUAGES = frozenset(
    ("javascript", "typescript", "tsx", "go", "rust", "java", "c", "cpp", "csharp", "php")
)
"""Languages whose body node starts at its `{`, on the header's last line (`) error {`);
elsewhere (Python, Ruby) the body starts on the line after the header."""

ALL_HEADERS_UP_TO = 0
"""FOCUSED with a match shows every declaration's header only in files with at most this
many declarations; in bigger ones, only the enclosing scopes of a match (TOP_LEVEL_HEADERS).
30 before issue 11; 0 on TUNED (8k JSON): Pack 0.978 -> 0.983, top-10 files with code
9.00 -> 9.43, fix lines shown 0.544 -> 0.570: signatures of what did not match cost the
room of other files' code (the outline level shows them)."""
CALLABLE = frozenset((DeclKind.FUNCTION, DeclKind.METHOD, DeclKind.COMPONENT))
"""Declaration kinds whose headers a big file's focused view leaves out."""
TOP_LEVEL_HEADERS = 0
"""FOCUSED with a match shows the headers of top-level types (classes, structs, constants)
that hold no match too (1, before session 20), or only those of the scopes enclosing a
match (0): rich's console.py showed 25 class headers and module constants around the one
function kept. Issue 11, session 20, leave-one-case-file-out (scripts/pack_eval.py, the mean
over 4k/8k/16k of Pack + Lines + Top10/10): every fold chose 0. All 227, Pack / fix lines
shown: 4k 0.937/0.480 -> 0.939/0.508, 8k 0.960/0.591 -> 0.955/0.605, 16k 0.961/0.779 ->
0.963/0.780; 8k Lines clap 0.441 -> 0.478, textual 0.426 -> 0.472, hono 0.715 -> 0.730,
cobra 0.394 -> 0.379; textual's 8k Pack 0.948 -> 0.917 (= its R@10: a gold file ranked
past 10 no longer fits)."""
DOC_LINES = 20
"""FOCUSED keeps the lines between a kept declaration and the code above it (the previous
declaration's end, the enclosing scope's header) when the declaration has a doc comment
(its doc sentence came from a comment above it), the file's language is in DOC_LANGUAGES
and they are at most this many: the Javadoc or docblock, with the blank line before it.
Issue 11, session 24: a fix often edits the doc comment with the code (on TRAIN 27 % of
Java's and PHP's fix lines missed at 8k sat there). Chosen like PlanLimits.tail_files (the
33 DEV and TRAIN case files, the mean over 4k/8k/16k of Pack + Lines + Top10/10,
leave-one-case-file-out, Lines guard 0.01) among 0 (before), 4, 8, 12, 20 in every language
with a comment above, and 8, 20 in Java and PHP only (added after the first five: in every
language the comments cost more than they show, held out mean -0.0026, 10 up, 11 down; at
20 koa 0.792 -> 0.667, caddy 0.650 -> 0.586 at 8k). 32 folds chose 20 in Java and PHP,
one (cli) 20 everywhere; held out 4 repositories up, 2 down (cli, javapoet), mean +0.0017.
Java and PHP at 8k, fix lines shown: gson 0.532 -> 0.627, jsoup 0.625 -> 0.646, javapoet
0.552 -> 0.573, mockito 0.062 -> 0.098, guzzle 0.631 -> 0.625; TRAIN Lines 4k/8k/16k
0.350/0.497/0.684 -> 0.359/0.504/0.683, Pack unchanged; DEV unchanged (no Java or PHP)."""
DOC_LANGUAGES = frozenset(("java", "php"))
"""Languages whose doc comments above a kept declaration FOCUSED keeps (see DOC_LINES)."""
HEAD_LINES = 40
"""Lines FOCUSED keeps of a file without declarations (config, plain text)."""
MATCH_LINES = 80
"""FOCUSED keeps a matching declaration whole up to this many lines, then cuts it (with a
marker); the planner may let the best one run to WHOLE_LINES."""
WHOLE_LINES = 400
"""The most lines of the best matching declaration FOCUSED ever keeps whole."""
Range = tuple[int, int]


def header_last_line(decl: Declaration, brace: bool) -> int:
    """Last line of a declaration's header as the focused view shows it: decorators to the
    line before the body, or to the `{` line in brace languages."""
    end = decl.body_start_line - (0 if brace else 1)
    return end if end > decl.start_line else decl.start_line


def header_last_lines(file: ParsedFile) -> list[int]:
    """header_last_line of each of the file's declarations."""
    brace = file.language in BRACE_LANGUAGES
    return [header_last_line(decl, brace) for decl in file.declarations]


def kept_ranges(
    file: ParsedFile, matched: Sequence[int], line_count: int, best_lines: int = MATCH_LINES
) -> list[Range]:
    """Return the merged, sorted line ranges FOCUSED keeps; everything else is omitted.

    Kept: the matched declarations whole (the best one, matched[0], cut after `best_lines`,
    the others after MATCH_LINES), declaration headers (see _shown_headers) and the
    module-level import lines that kept code uses. Runs for every candidate on every
    keystroke (through level_tokens), hence the plain loops.
    """
    decls = file.declarations
    if not decls:
        return [(1, min(HEAD_LINES, line_count))] if line_count > 0 else []
    valid = [i for i in matched if 0 <= i < len(decls)]
    chosen = sorted(set(valid))
    ranges: list[Range] = []
    whole: set[int] = set()
    for position in chosen:
        decl = decls[position]
        limit = best_lines if position == valid[0] else MATCH_LINES
        cut = decl.start_line + limit - 1
        last = cut if cut < decl.end_line else decl.end_line
        ranges.append((decl.start_line, last))
        whole.add(position)
        # declarations nested in a kept one are kept with it (as far as it is shown)
        for inner in range(position + 1, len(decls)):
            if decls[inner].start_line > decl.end_line:
                break
            if decls[inner].start_line <= last:
                whole.add(inner)
    brace = file.language in BRACE_LANGUAGES
    if DOC_LINES and file.language in DOC_LANGUAGES:
        ranges.extend(_doc_ranges(decls, chosen, brace, module_import_lines(file)))
    headers = _shown_headers(decls, chosen)
    ranges.extend((decls[p].start_line, header_last_line(decls[p], brace)) for p in headers)
    ranges.extend(_import_ranges(file, whole, whole.union(headers)))
    if not ranges:
        return []
    return _merge(ranges, line_count)


def _doc_ranges(
    decls: Sequence[Declaration],
    chosen: Sequence[int],
    brace: bool,
    imports: Sequence[Range] = (),
) -> list[Range]:
    """The doc comments right above the chosen declarations (see DOC_LINES): the lines
    between a declaration with a doc sentence and the code before it, when there are few.
    The parse keeps the sentence, not the comment's lines; this gap holds the comment.
    Module-level imports (`imports`, their line spans) are code above too: a file's first
    type keeps its Javadoc, not every import above it (those the kept code uses come from
    _import_ranges; review of session 24)."""
    ranges: list[Range] = []
    for position in chosen:
        decl = decls[position]
        if not decl.doc:
            continue
        above = 0  # the last line of code above: an earlier declaration's end, or a header
        for before in range(position - 1, -1, -1):
            other = decls[before]
            if other.end_line >= decl.start_line:  # an enclosing scope: its header
                above = max(above, header_last_line(other, brace))
                break
            above = max(above, other.end_line)
            if other.depth <= decl.depth:
                break  # a sibling (or shallower): nothing earlier ends later
        for _, last_import in imports:
            if above < last_import < decl.start_line:
                above = last_import
        if 0 < decl.start_line - 1 - above <= DOC_LINES:
            ranges.append((above + 1, decl.start_line - 1))
    return ranges


def _shown_headers(decls: Sequence[Declaration], chosen: Sequence[int]) -> list[int]:
    """Declarations whose header the focused view shows: all of them when nothing matched
    (or the file has at most ALL_HEADERS_UP_TO); else the enclosing scopes of a match (and
    top-level types with TOP_LEVEL_HEADERS). A big class (or a Go file of a hundred methods)
    shows its matching code, not a hundred signatures: the outline level is there for the
    rest."""
    if not chosen or len(decls) <= ALL_HEADERS_UP_TO:
        return list(range(len(decls)))
    inner = [decls[p] for p in chosen]
    return [
        position
        for position, decl in enumerate(decls)
        if (TOP_LEVEL_HEADERS and not (decl.depth or decl.kind in CALLABLE))
        or any(
            d.depth > decl.depth and decl.start_line <= d.start_line <= decl.end_line for d in inner
        )
    ]


def _import_ranges(file: ParsedFile, whole: set[int], shown: set[int]) -> list[Range]:
    """Module-level import lines to keep: every one when the index does not know which
    declarations use which (an index built without engine.units); otherwise the lines a
    kept declaration's code (or a shown header) uses, with the first and last line of
    their statement so that a cut statement still reads as one."""
    spans = module_import_lines(file)
    uses = file.import_uses
    if uses is None:
        return spans
    used = {
        use.line
        for use in uses
        if any(p in whole for p in use.users) or any(p in shown for p in use.header_users)
    }
    if not used:
        return []
    ranges: list[Range] = []
    for first, last in spans:
        inside = [line for line in range(first, last + 1) if line in used]
        if inside:
            ranges.extend(((first, first), (last, last)))
            ranges.extend((line, line) for line in inside)
    return ranges


def _merge(ranges: list[Range], line_count: int) -> list[Range]:
    """Sort and merge touching ranges; trim to the text (a parse older than the text may
    point past its end)."""
    ranges.sort()
    merged: list[Range] = []
    current_first, current_last = ranges[0]
    for first, last in ranges:
        if first <= current_last + 1:
            if last > current_last:
                current_last = last
        else:
            merged.append((current_first, current_last))
            current_first, current_last = first, last
    merged.append((current_first, current_last))
    while merged and merged[-1][0] > line_count:
        merged.pop()
    if merged and merged[-1][1] > line_count:
        merged[-1] = (merged[-1][0], line_count)
    if merged and merged[0][0] < 1:
        merged[0] = (1, merged[0][1])
    return merged
