"""Code-aware words: how questions and source text are reduced to index terms.

`getUserSession`, `get_user_session` and `get-user-session` all give the parts get, user,
session plus the whole identifier `getusersession`, so a camelCase question meets snake_case
code. Parts are lightly stemmed (rotate, rotated, rotation -> rotat) and common programmer
abbreviations are folded to one form (authentication -> auth). The same function serves the
index and the query, so both sides always agree.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from collections.abc import Callable

IDENTIFIER_PATTERN = r"[^\W\d]\w*(?:-[^\W\d]\w*)*|[0-9]{3,}"
"""Identifiers in any script (kebab-case joined), and numbers of three or more digits
(status codes, ports)."""

IDENTIFIER_ASCII_PATTERN = r"[A-Za-z_][A-Za-z0-9_]*(?:-[A-Za-z_][A-Za-z0-9_]*)*|[0-9]{3,}"
r"""IDENTIFIER_PATTERN for a text that is all ASCII, where both find the same identifiers (on
ASCII, `[^\W\d]` is `[A-Za-z_]` and `\w` is `[A-Za-z0-9_]`): plain ranges skip the Unicode
tables and the class negations: 1.2 times as fast over source code as the same pattern with
re.ASCII (1.9 times IDENTIFIER's speed)."""


POSSESSIVE_PATTERNS = (
    r"[^\W\d]\w*+(?:-[^\W\d]\w*+)*+|[0-9]{3,}+",
    r"[A-Za-z_][A-Za-z0-9_]*+(?:-[A-Za-z_][A-Za-z0-9_]*+)*+|[0-9]{3,}+",
)
r"""The two patterns with every repeat possessive, for Python 3.11 and later (3.10 has no
possessive repeats and keeps the plain ones). Each repeat ends where nothing after it can
match (`\w` holds no `-`) and nothing follows the last, so the first way a repeat matches is
the match: a possessive repeat finds the same identifiers but saves no state to step back
to, which the regex engine otherwise does at each character: 8-14 % less time over the 16k
tree's texts (session 28's replay of every text), ~0.3 s of a cold index's CPU."""

if sys.version_info >= (3, 11):
    IDENTIFIER = re.compile(POSSESSIVE_PATTERNS[0])
    IDENTIFIER_ASCII = re.compile(POSSESSIVE_PATTERNS[1])
else:
    IDENTIFIER = re.compile(IDENTIFIER_PATTERN)
    IDENTIFIER_ASCII = re.compile(IDENTIFIER_ASCII_PATTERN)


def identifiers(text: str) -> list[str]:
    """IDENTIFIER.findall(text), by the faster pattern when the text is ASCII."""
    return (IDENTIFIER_ASCII if text.isascii() else IDENTIFIER).findall(text)


CAMEL_PARTS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
"""Parts of one identifier segment: HTTPServer -> HTTP, Server; getV2Name -> get, V, 2, Name."""

STOP_WORDS = frozenset(
    """
a about above after again against all also am an and any are as at be because been before being
below between both but by can cannot could did do does doing done down during each either else
etc even ever every few for from further had has have having he her here hers him his how however
i if in into is it its itself just may me might more most much must my no nor not now of off on
once only or other our ours out over own per please same shall she should since so some still
such than that the their them then there these they this those though through thus to too under
until up upon us very via was we were what when where whether which while who whom whose why will
with within without would yet you your
self cls def var let const elif nil none null undefined true false return end
""".split()
)
"""English function words and the most common keywords; they carry no meaning in a search."""

ABBREVIATIONS: dict[str, str] = {
    "authentication": "auth",
    "authenticate": "auth",
    "authenticated": "auth",
    "authorization": "auth",
    "authorize": "auth",
    "database": "db",
    "configuration": "config",
    "configure": "config",
    "configured": "config",
    "cfg": "config",
    "conf": "config",
    "directory": "dir",
    "directories": "dir",
    "message": "msg",
    "messages": "msg",
    "argument": "arg",
    "arguments": "arg",
    "args": "arg",
    "parameter": "param",
    "parameters": "param",
    "params": "param",
    "initialize": "init",
    "initialise": "init",
    "initialization": "init",
    "application": "app",
    "applications": "app",
    "request": "req",
    "requests": "req",
    "response": "res",
    "responses": "res",
    "resp": "res",
    "function": "func",
    "functions": "func",
    "fn": "func",
    "environment": "env",
    "repository": "repo",
    "library": "lib",
    "utility": "util",
    "utilities": "util",
    "utils": "util",
    "specification": "spec",
    "documentation": "doc",
    "document": "doc",
    "docs": "doc",
    "property": "prop",
    "properties": "prop",
    "attribute": "attr",
    "attributes": "attr",
    "attrs": "attr",
    "context": "ctx",
    "command": "cmd",
    "commands": "cmd",
    "object": "obj",
    "package": "pkg",
    "source": "src",
    "destination": "dest",
    "dst": "dest",
    "length": "len",
    "previous": "prev",
    "maximum": "max",
    "minimum": "min",
    "synchronous": "sync",
    "asynchronous": "async",
    "expression": "expr",
    "reference": "ref",
    "statistics": "stats",
    "information": "info",
    "implementation": "impl",
    "template": "tmpl",
    "templates": "tmpl",
    "tpl": "tmpl",
    "temporary": "tmp",
    "temp": "tmp",
    "password": "passwd",
    "pwd": "passwd",
    "string": "str",
    "strings": "str",
    "integer": "int",
    "boolean": "bool",
    "number": "num",
    "value": "val",
    "values": "val",
    "variable": "var",
    "variables": "var",
    "millisecond": "ms",
    "milliseconds": "ms",
}
"""Long and short spellings programmers use for the same thing, folded to one index word."""

SEPARATORS = re.compile(r"[_\-]+")
_SUFFIXES_FIRST = ("ies", "ing", "ed", "es", "s")
_SUFFIXES_SECOND = ("ion", "er", "e", "y")


_STEMMED_ENDINGS = frozenset("sgdnrey")
"""Last letters of every suffix `stem` strips: a word ending otherwise keeps its form."""


def stem(word: str) -> str:
    """Strip common English endings so that inflections meet: handled, handler -> handl."""
    if len(word) <= 3 or word[-1] not in _STEMMED_ENDINGS or word.isdigit():
        return word
    for suffix in _SUFFIXES_FIRST:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            if suffix == "ies":
                word = word[:-3] + "y"
            elif suffix == "es" and not word.endswith(("ses", "xes", "ches", "shes", "zes")):
                word = word[:-1]  # "types" -> "type", but "classes" -> "class" below
            elif suffix == "s" and word.endswith(("ss", "us", "is")):
                pass
            else:
                word = word[: -len(suffix)]
                if suffix in ("ing", "ed") and len(word) > 3 and word[-1] == word[-2]:
                    word = word[:-1]  # running -> run(n), stopped -> stop(p)
            break
    for suffix in _SUFFIXES_SECOND:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    return word


def normalise_part(part: str) -> str | None:
    """Turn one lower-case identifier part into its index word, or None for a stop word."""
    if len(part) < 2 or part in STOP_WORDS:
        return None
    short = ABBREVIATIONS.get(part)
    if short is not None:
        return short
    return stem(part)


def split_identifier(identifier: str) -> list[str]:
    """Split an identifier into lower-case parts: getHTTPResponse2 -> get, http, response, 2."""
    if identifier.isascii():
        # no part holds a separator, nor reaches across one (CAMEL_PARTS's look-ahead wants a
        # letter): the parts of the whole are those of its segments, one after another
        return [p.lower() for p in CAMEL_PARTS.findall(identifier)]
    parts: list[str] = []
    for segment in SEPARATORS.split(identifier):
        if not segment:
            continue
        if segment.isascii():
            parts.extend(p.lower() for p in CAMEL_PARTS.findall(segment))
        else:
            parts.append(segment.lower())  # naïve, 名前: no camel rules outside ASCII
    return parts


MAX_IDENTIFIER = 64
"""Longer "identifiers" are data (base64 blobs, hashes), not names: they give no words."""


def identifier_words(
    identifier: str, normalise: Callable[[str], str | None] = normalise_part
) -> list[str]:
    """Index words of one identifier: its normalised parts, then the whole identifier.

    `normalise` is normalise_part, or a remembering copy of it when indexing (stemming is
    the costly step, and parts repeat far more than whole identifiers).
    """
    if len(identifier) > MAX_IDENTIFIER:
        return []
    one = None  # the identifier's only part, lower-cased, when it cannot have more
    if identifier.isascii():
        if identifier.isalpha():
            if identifier.islower():
                one = identifier  # the common case: one plain word, no splitting
            elif identifier.isupper() or identifier[1:].islower():  # HTTP, Session
                one = identifier.lower()
        elif identifier.isdigit():  # a number
            one = identifier
    elif "_" not in identifier and "-" not in identifier:  # naïve, 名前: no camel rules
        one = identifier.lower()
    if one is not None:
        word = normalise(one)
        return [word] if word is not None else []
    parts = split_identifier(identifier)
    words = [w for w in map(normalise, parts) if w is not None]
    if len(parts) > 1:
        whole = "".join(parts)
        if len(whole) >= 3:
            words.append(whole)
    return words


def words(text: str, cache: dict[str, list[str]] | None = None) -> list[str]:
    """Return the index words of a text, in order, repeats kept (term frequency matters).

    `cache` maps identifiers already split to their words; pass one dict per file (or per
    worker) to avoid splitting the same identifier thousands of times.
    """
    if cache is None:
        cache = {}
    out: list[str] = []
    for identifier in IDENTIFIER.findall(text):
        found = cache.get(identifier)
        if found is None:
            found = identifier_words(identifier)
            cache[identifier] = found
        out.extend(found)
    return out


def count_words(text: str, cache: dict[str, list[str]] | None = None) -> Counter[str]:
    """Count the index words of a text: each distinct identifier is split once."""
    if cache is None:
        cache = {}
    counts: Counter[str] = Counter()
    for identifier, n in Counter(identifiers(text)).items():
        found = cache.get(identifier)
        if found is None:
            found = identifier_words(identifier)
            cache[identifier] = found
        for word in found:
            counts[word] += n
    return counts


def path_words(path: str) -> tuple[list[str], list[str]]:
    """Return (file name words, folder words) of a relative POSIX path, extension dropped."""
    folder, _, name = path.rpartition("/")
    stem_name = name.split(".", 1)[0] if not name.startswith(".") else name
    return words(stem_name), words(folder.replace("/", " "))
