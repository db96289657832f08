"""Turn a question into weighted index terms, mentioned files and an intent.

Questions range from three words typed live to a pasted 2,000-word bug report with a stack
trace. Words are weighted by how often the question repeats them (damped with a log) and
raised when they come from code-looking tokens (identifiers, dotted names, backticks), which
say far more than prose. Long questions keep only their most telling words. File paths and
dotted module names that name a repository file are found here too: they are the strongest
evidence a question can carry.
"""

from __future__ import annotations

import bisect
import math
import re
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from engine.model import Index, Intent
from engine.words import ABBREVIATIONS, IDENTIFIER, identifier_words, normalise_part

PATH_MENTION = re.compile(r"[\w.\-/\\]*[\w\-]\.[A-Za-z]{1,5}\b|[\w\-]+(?:/[\w.\-]+)+")
"""A path-like token: has an extension or at least one slash. What it finds is found by
`path_mentions`, which takes linear time (this expression backtracks over a long token)."""
_PATH_CHARS = re.compile(r"[\w.\-/\\]+")
"""A stretch of the characters a path mention is made of: every mention lies within one."""
DOTTED = re.compile(r"\b[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+\b")
"""A dotted name such as flask.json.tag or Flask.preprocess_request."""
CODE_LIKE = re.compile(r"[a-z][A-Z]|_")
"""An identifier written as code by its own shape: camelCase or snake_case."""
CODE_SPAN = re.compile(r"`[^`\n]+`|" + DOTTED.pattern)
"""Text written as code by its surroundings: in backticks, or a dotted name (res.send)."""
SCOPE = re.compile(
    r"^\s*(?:[A-Za-z]+\(([^()\n]{1,40})\)!?|([A-Za-z][\w./-]*(?: [\w./-]+){0,2})):\s"
)
"""A subject's scope: conventional-commit `fix(derive): ...`, or a leading label of at most
three words, `Router: add ...`, `list view: ...`; it names the part of the code changed."""
LABEL_WORDS = frozenset(
    "fix fixes feat feature perf refactor chore docs doc test tests style build ci revert "
    "deps release breaking bug question issue note wip".split()
)
"""Leading labels that say what kind of change or report it is, not where."""
SCOPE_WITHIN = 80
"""Characters of the question where a scope may be: a label ends within a short subject."""

INTENT_WORDS: dict[Intent, frozenset[str]] = {
    Intent.DEBUG: frozenset(
        "bug bugs error errors fix fixes fixed crash crashes exception traceback fail fails "
        "failing failed broken wrong issue regression raise raises raised stack unexpected "
        "incorrect swallow swallows hang leak".split()
    ),
    Intent.TEST: frozenset("test tests testing pytest unittest coverage spec specs mock".split()),
    Intent.REFACTOR: frozenset(
        "refactor refactoring rename cleanup clean simplify extract move deduplicate".split()
    ),
    Intent.FEATURE: frozenset("add adds implement support new feature allow allows enable".split()),
    Intent.EXPLAIN: frozenset("how why what explain where understand works does overview".split()),
}
"""Words that reveal what the question is for; the first intent with a hit wins ties."""

KIND_LABELS = "fix fixes fixed feat feature perf refactor chore bug bugs issue wip add adds revert"
"""Words that label a subject with the kind of change (`fix:`, `Fix bug, ...`, `Add ...`)."""
CHANGE_WORDS = (
    "update updates updated tweak tweaks review reviews address addresses typo typos "
    "docstring docstrings comment comments changelog format formatting lint"
)
"""Words that say how a change was made (`Update CHANGELOG`, `address review comments`, `fix
typos`, `docstrings`, `formatting`), not which code it is about."""

OPENING_WORDS = frozenset(
    "hi hello hey hiya dear greetings thanks thank you all team folks there everyone guys good "
    "morning afternoon evening maintainer maintainers devs developers bug question issue "
    "problem report description summary feature request".split()
)
"""Words of a message's opening line: a salutation ("Hi,", "Hello team", "Dear maintainers")
or a bare header ("Bug:", "Question:", "Bug report"). Such a line says nothing of what the
question asks for; its first line is the one after."""
OPENING_MOST = 4
"""An opening line has at most this many words (all OPENING_WORDS)."""

DOC_WORDS = frozenset("doc docs documentation readme guide tutorial".split())
CHANGELOG_WORDS = frozenset("changelog changes history release releases".split())
EXAMPLE_WORDS = frozenset("example examples sample demo".split())


@dataclass(frozen=True, slots=True)
class QueryTerm:
    """One index word of the question."""

    term_id: int
    """Id in the index vocabulary."""
    word: str
    """The index word."""
    shown: str
    """The question's own spelling, for reasons ("sessions" rather than "sess")."""
    weight: float
    """Query-side weight: repetition and code-likeness."""
    scope: bool = False
    """The word is said in the subject's scope (`fix(derive): ...`)."""


@dataclass(frozen=True, slots=True)
class QueryAnalysis:
    """What ranking needs to know about a question."""

    terms: tuple[QueryTerm, ...]
    """Weighted index words found in the vocabulary, strongest first."""
    mentioned: tuple[int, ...]
    """File ids the question names by path or dotted module name."""
    intent: Intent
    """What the question is for."""
    wants_tests: bool
    """The question's first line names tests: lift the test prior (partly)."""
    wants_docs: bool
    """The question's first line names documentation: lift the docs prior."""
    wants_examples: bool
    """The question's first line names examples: lift the example prior."""
    wants_changelog: bool
    """The question's first line names release notes: lift the changelog prior."""
    asks_tests: bool
    """The question is about tests (its first line's intent is TEST): they are the answer,
    and the test prior is lifted fully."""


@dataclass(frozen=True, slots=True)
class QueryWeights:
    """How a question's words are weighted; the ranking's values and their sources are in
    `RankWeights`."""

    max_terms: int = 40
    """Keep at most this many terms (long bug reports keep their most telling words)."""
    code_weight: float = 1.5
    """Weight multiplier for words from code-looking tokens."""
    repeat_cap: float = 99.0
    """The most weight repetition can give a word (1 + ln(count), capped)."""
    title_weight: float = 1.0
    """Weight multiplier for the words of a many-line question's first line."""
    scope_weight: float = 1.0
    """Weight multiplier for the words of a subject's scope (`fix(derive):`, `Router:`)."""
    kind_weight: float = 1.0
    """Weight multiplier for the words that say what kind of question it is (KIND_WORDS),
    said in prose, outside the scope."""
    expansions: int = 12
    """How many vocabulary words a partly typed last word expands to."""


def analyse_query(
    index: Index,
    text: str,
    weights: QueryWeights = QueryWeights(),
    *,
    complete: bool = True,
) -> QueryAnalysis:
    """Reduce a question to weighted index terms, mentioned files and an intent.

    Args:
        index: the index whose vocabulary the terms must come from.
        text: the question.
        weights: how words are weighted.
        complete: False while the user is typing: the last word may be a prefix and is
            expanded to the vocabulary words it starts.
    """
    raw_lower = [t.lower() for t in IDENTIFIER.findall(text)]
    # a word's evidence: each time it is said counts 1, or code_weight from an identifier
    counts: dict[str, float] = defaultdict(float)
    shown: dict[str, str] = {}
    for token, is_code in _tokens(text):
        boost = weights.code_weight if is_code else 1.0
        for word in identifier_words(token):
            counts[word] += boost
            shown.setdefault(word, token if len(token) < 40 else word)
    weighted: dict[str, float] = {
        w: min(1.0 + math.log(c), weights.repeat_cap) if c >= 1 else c for w, c in counts.items()
    }
    lines = without_opening(text)  # "Hi,\n" or "Bug:\n" is not the question's first line
    if weights.title_weight != 1.0:
        for word in _title_words(lines) & weighted.keys():
            weighted[word] *= weights.title_weight
    scoped = scope_words(lines) & weighted.keys()
    if weights.kind_weight != 1.0:
        kinds = KIND_WORDS & weighted.keys()
        if kinds and _one_line(lines):  # "how do we format a date": format is the topic
            kinds -= ONLY_CHANGE_WORDS
        if kinds:
            kinds -= scoped | {w for t, code in _tokens(text) if code for w in identifier_words(t)}
        for word in kinds:
            weighted[word] *= weights.kind_weight
    if weights.scope_weight != 1.0:
        for word in scoped:
            weighted[word] *= weights.scope_weight
    if not complete and raw_lower and not text[-1:].isspace():
        _expand_last_word(index, raw_lower[-1], weighted, shown, weights.expansions)
    terms = [
        QueryTerm(index.vocab[w], w, shown.get(w, w), weight, w in scoped)
        for w, weight in weighted.items()
        if w in index.vocab
    ]
    if len(terms) > weights.max_terms:
        terms.sort(key=lambda t: -t.weight * _idf_of(index, t.term_id))
        terms = terms[: weights.max_terms]
    words_said = set(raw_lower)
    first_words = _first_line_words(lines)
    asked = set(first_words)
    return QueryAnalysis(
        terms=tuple(terms),
        mentioned=mentioned_files(index, text),
        intent=detect_intent(words_said),
        wants_tests=bool(asked & INTENT_WORDS[Intent.TEST]),
        wants_docs=bool(asked & DOC_WORDS),
        wants_examples=bool(asked & EXAMPLE_WORDS),
        wants_changelog=bool(asked & CHANGELOG_WORDS),
        asks_tests=detect_intent(asked, first_words) is Intent.TEST,
    )


def _tokens(text: str) -> Iterator[tuple[str, bool]]:
    """Each identifier of the text, and whether it is written as code (by its shape, or
    inside backticks or a dotted name)."""
    spans = [m.span() for m in CODE_SPAN.finditer(text)] if "`" in text or "." in text else []
    starts = [start for start, _ in spans]
    for match in IDENTIFIER.finditer(text):
        token = match.group()
        is_code = CODE_LIKE.search(token) is not None
        if not is_code and spans:
            at = bisect.bisect_right(starts, match.start()) - 1
            is_code = at >= 0 and match.start() < spans[at][1]
        yield token, is_code


def without_opening(text: str) -> str:
    """The question from its first line with content: leading blank lines and opening lines
    (a salutation or a bare header: OPENING_WORDS) dropped, unless nothing else is said.
    What a question asks for, its title and its scope are read from that line on; a user's
    "Hi,\nwhere are the tests for the parser?" asks for tests."""
    lines = text.strip().splitlines()
    for at, line in enumerate(lines):
        said = [token.lower() for token in IDENTIFIER.findall(line)]
        if not said:
            continue
        if len(said) > OPENING_MOST or not OPENING_WORDS.issuperset(said):
            return "\n".join(lines[at:]) if at else text
    return text


def _title_words(text: str) -> set[str]:
    """Index words of a many-line question's first line (a commit subject, an issue title)."""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    if len(lines) < 2:
        return set()
    return {w for token in IDENTIFIER.findall(lines[0]) for w in identifier_words(token)}


def _one_line(text: str) -> bool:
    """Whether the question has a single non-empty line (what a person types), not a commit
    message or a report with a body."""
    return sum(1 for line in text.strip().splitlines() if line.strip()) < 2


def _first_line_words(text: str) -> list[str]:
    """The lower-cased words of the question's first line, in order: what it asks for. A
    commit body or a report's later lines name tests, docs and the changelog in passing ("*
    Add tests", "Update CHANGELOG"); the kinds of file a question wants (tests, docs, examples,
    release notes) are read from its subject. A one-line question is its own first line."""
    first = text.strip().split("\n", 1)[0]
    return [token.lower() for token in IDENTIFIER.findall(first)]


def scope_words(text: str) -> set[str]:
    """Index words of the question's scope (SCOPE), unless it is a label such as `fix:`."""
    match = SCOPE.match(text[:SCOPE_WITHIN])  # bounded: a pasted report may start with a blob
    if match is None:
        return set()
    scope = match.group(1) or match.group(2)
    if scope.lower() in LABEL_WORDS:
        return set()
    return {w for token in IDENTIFIER.findall(scope) for w in identifier_words(token)}


KIND_WORDS = frozenset(
    word
    for said in (
        KIND_LABELS,
        CHANGE_WORDS,
        *(" ".join(sorted(words)) for words in INTENT_WORDS.values()),
    )
    for token in said.split()
    for word in identifier_words(token)
)
"""Index words of the labels, change words and intent words: what a question is for (a fix, a
feature, a test, an explanation) or how a change was made, not where its answer is."""
ONLY_CHANGE_WORDS = frozenset(
    word for token in CHANGE_WORDS.split() for word in identifier_words(token)
) - frozenset(
    word
    for said in (KIND_LABELS, *(" ".join(sorted(words)) for words in INTENT_WORDS.values()))
    for token in said.split()
    for word in identifier_words(token)
)
"""The change words that are not labels or intent words. They say how a change was made only
in a commit message or a report with a body; in a one-line question (`where are comments
stored`, `how do we format a date`) they are its topic and keep their weight."""


def _idf_of(index: Index, term_id: int) -> float:
    from engine.index import idf  # deliberate: numpy-backed, the scorer's own formula

    df = int(index.postings.ptr[term_id + 1] - index.postings.ptr[term_id])
    return float(idf(float(df), len(index.files)))


def _expand_last_word(
    index: Index, prefix: str, weighted: dict[str, float], shown: dict[str, str], limit: int
) -> None:
    """Add vocabulary words that the partly typed last word may become."""
    if len(prefix) < 3:  # one or two letters would expand to half the vocabulary
        return
    key = ABBREVIATIONS.get(prefix) or normalise_part(prefix) or prefix
    if prefix in index.vocab or (key in index.vocab and len(prefix) >= 4):
        return  # already a whole word of the index
    terms = index.terms_sorted
    start = bisect.bisect_left(terms, prefix)
    # term ids follow the sorted vocabulary: a word's id is its place, with no lookup (each
    # was two binary searches of the saved vocabulary: 2-3 ms on a key of the 16k tree)
    found: list[int] = []
    for term_id in range(start, min(start + 200, len(terms))):
        if not terms[term_id].startswith(prefix):
            break
        found.append(term_id)
    ptr = index.postings.ptr
    found.sort(key=lambda t: -int(ptr[t + 1] - ptr[t]))
    for term_id in found[:limit]:
        term = terms[term_id]
        weighted.setdefault(term, 0.5)
        shown.setdefault(term, prefix)


def detect_intent(words_said: set[str], order: Sequence[str] = ()) -> Intent:
    """Pick the intent whose words the question uses most; GENERAL when none.

    A tie goes to the intent said first in `order` (the words as written), else to the first
    in INTENT_WORDS' order. A subject leads with what it does: "Add a post-run hook, and test
    for macOS Terminal.app" adds code (the test is a side note, and before this rule its
    tie made it a question about tests, lifting every test file fully), "tests: fix the proxy
    error check" is about tests. Issue 11, session 31 (run 102 in `RankWeights`)."""
    best, best_hits, best_at = Intent.GENERAL, 0, len(order)
    for intent, vocabulary in INTENT_WORDS.items():
        hits = len(words_said & vocabulary)
        at = next((i for i, word in enumerate(order) if word in vocabulary), len(order))
        if hits > best_hits or (hits and hits == best_hits and at < best_at):
            best, best_hits, best_at = intent, hits, at
    return best


def mentioned_files(index: Index, text: str) -> tuple[int, ...]:
    """File ids named in the question: by path (any suffix of it) or dotted module name."""
    candidates: set[str] = set()
    for match in path_mentions(text):
        path = match.replace("\\", "/").strip("./")
        if "/" in path or "." in path:
            candidates.add(path)
    for match in DOTTED.findall(text):
        parts = match.split(".")
        for end in range(len(parts), 1, -1):
            candidates.add("/".join(parts[:end]))  # flask.json.tag -> flask/json/tag(.py)
    if not candidates:
        return ()
    named = _named_files(index)
    found: set[int] = set()
    for mention in candidates:
        # a path it names ends with the mention's last part, or its bare form does (`_names`)
        for path, file_id in named.get(mention.rsplit("/", 1)[-1], ()):
            bare = path.rsplit(".", 1)[0]
            if _names(path, mention) or ("/" in mention and _names(bare, mention)):
                found.add(file_id)
    return tuple(sorted(found))


def _named_files(index: Index) -> dict[str, list[tuple[str, int]]]:
    """`Index.named`, made on first use: a question's mention is checked against the few files
    that share its last part, not every path (a dotted name or a path in a question cost 37-104
    ms a keystroke on 15,695 files, the session 26 lead's measure)."""
    if index.named is None:
        named: dict[str, list[tuple[str, int]]] = {}
        for path, file_id in index.path_ids.items():  # paths only: no file record is made
            name = path.rsplit("/", 1)[-1]
            named.setdefault(name, []).append((path, file_id))
            bare = path.rsplit(".", 1)[0].rsplit("/", 1)[-1]
            if bare != name:
                named.setdefault(bare, []).append((path, file_id))
        index.named = named
    return index.named


def path_mentions(text: str) -> list[str]:
    """`PATH_MENTION.findall(text)`, in time linear in the text.

    The expression tries every character of a token as a start and backtracks over the rest
    of the token from each: a pasted 40,000-character token (a blob, a minified line) took 66 s
    of CPU, one of 1,000,000 hours (the review of session 26). Here each stretch of path
    characters is read once: an extension ending ("x.py") is found by a scan, and the first
    alternative's greedy match from a start is everything up to the last such ending.
    """
    found: list[str] = []
    for stretch in _PATH_CHARS.findall(text):
        if "." in stretch or "/" in stretch:  # the first alternative needs a ".", the second a "/"
            found.extend(_stretch_mentions(stretch))
    return found


def _stretch_mentions(s: str) -> Iterator[str]:
    """PATH_MENTION's matches within one stretch of path characters (what follows the stretch
    is no word character, as at the end of the text)."""
    n = len(s)
    last_end = -1  # the end of the last "[\w-].[A-Za-z]{1,5}\b" in the stretch
    last_start = -1
    for k in range(n - 2):
        if s[k + 1] == "." and _name_char(s[k]):
            j = k + 2
            while j < n and j - k - 2 <= 5 and _ascii_letter(s[j]):
                j += 1
            letters = j - k - 2
            if 1 <= letters <= 5 and not (j < n and _word_char(s[j])):
                last_start, last_end = k, j
    i = 0
    while i < n:
        if last_start >= i:  # "[\w.\-/\\]*" takes all up to the last ending
            yield s[i:last_end]
            i = last_end
            continue
        a = i  # the second alternative: "[\w\-]+" then "(?:/[\w.\-]+)+"
        while a < n and _name_char(s[a]):
            a += 1
        end = a
        while a > i and end + 1 < n and s[end] == "/" and _segment_char(s[end + 1]):
            end += 2
            while end < n and _segment_char(s[end]):
                end += 1
        if end > a:
            yield s[i:end]
            i = end
        else:  # no start before `a` can match either: they reach the same `a`
            i = max(i + 1, a)


def _word_char(c: str) -> bool:
    return c.isalnum() or c == "_"  # what `\w` matches in a str pattern


def _name_char(c: str) -> bool:
    return c == "-" or _word_char(c)


def _segment_char(c: str) -> bool:
    return c in ".-" or _word_char(c)


def _ascii_letter(c: str) -> bool:
    return "a" <= c <= "z" or "A" <= c <= "Z"


def _names(path: str, mention: str) -> bool:
    """True when `mention` names `path`: equal, a suffix at a folder boundary, or an absolute
    path (from a stack trace) that ends with it."""
    if path == mention:
        return True
    if path.endswith("/" + mention) and ("/" in mention or "." in mention):
        return True  # a suffix at a folder boundary, or a bare file name with its extension
    return "/" in mention and mention.endswith("/" + path)
