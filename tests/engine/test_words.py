"""The code-aware word splitter: identifiers split and kept whole, stems, abbreviations and
stop words."""

from __future__ import annotations

import random
import re
import sys
from collections import Counter
from pathlib import Path

import pytest

from engine.words import (
    IDENTIFIER,
    IDENTIFIER_ASCII,
    IDENTIFIER_ASCII_PATTERN,
    IDENTIFIER_PATTERN,
    STOP_WORDS,
    count_words,
    identifier_words,
    normalise_part,
    path_words,
    split_identifier,
    stem,
    words,
)


@pytest.mark.parametrize(
    "identifier",
    [
        "getUserSession",
        "GetUserSession",
        "get_user_session",
        "get-user-session",
        "GET_USER_SESSION",
    ],
)
def test_every_spelling_of_an_identifier_gives_its_parts_and_the_whole(identifier: str) -> None:
    assert words(identifier) == ["get", "user", "sess", "getusersession"]


def test_camel_case_question_meets_snake_case_code() -> None:
    assert words("getUserSession") == words("get_user_session")


def test_acronyms_inside_pascal_case_are_split_before_the_next_word() -> None:
    assert split_identifier("HTTPServerError") == ["http", "server", "error"]
    assert words("parseJSONResponse")[-1] == "parsejsonresponse"


def test_digits_split_from_letters_and_single_letters_are_dropped() -> None:
    assert split_identifier("getV2Name") == ["get", "v", "2", "name"]
    assert words("getV2Name") == ["get", "nam", "getv2name"]


def test_dotted_names_split_into_each_identifier_with_its_whole_kept() -> None:
    assert words("Flask.preprocess_request") == ["flask", "preprocess", "req", "preprocessrequest"]


def test_kebab_case_is_one_identifier_kept_whole() -> None:
    assert words("dry-run-mode") == ["dry", "run", "mod", "dryrunmode"]


def test_one_part_identifier_is_not_repeated_as_its_own_whole() -> None:
    assert words("session") == ["sess"]


def test_dunder_names_reduce_to_their_word() -> None:
    assert words("__init__") == ["init"]


@pytest.mark.parametrize(
    "family",
    [
        ("handled", "handler", "handling", "handles", "handle"),
        ("rotate", "rotated", "rotation", "rotates", "rotating"),
        ("run", "runs", "running"),
        ("stop", "stops", "stopped"),
        ("class", "classes"),
        ("query", "queries"),
    ],
)
def test_inflections_of_a_word_meet_at_one_stem(family: tuple[str, ...]) -> None:
    assert len({stem(word) for word in family}) == 1
    assert len({tuple(words(word)) for word in family}) == 1


def test_stemming_leaves_short_words_and_numbers_alone() -> None:
    assert [stem(w) for w in ("ids", "use", "1234")] == ["ids", "use", "1234"]


@pytest.mark.parametrize(
    ("long", "short"),
    [("authentication", "auth"), ("database", "db"), ("configuration", "config"),
     ("authorization", "auth"), ("directory", "dir"), ("parameters", "param")],
)  # fmt: skip
def test_programmer_abbreviations_fold_long_and_short_spellings(long: str, short: str) -> None:
    assert words(long) == words(short) == [short]


def test_abbreviations_apply_to_parts_of_identifiers() -> None:
    assert words("userAuthentication")[:2] == words("user_auth")[:2] == ["user", "auth"]


def test_stop_words_are_dropped() -> None:
    assert words("where is the session of the user and why") == ["sess", "user"]


def test_keywords_that_carry_no_meaning_are_dropped() -> None:
    assert words("self return None def const") == []
    assert {"self", "return", "none"} <= STOP_WORDS


def test_numbers_of_three_digits_or_more_are_words_and_shorter_ones_are_not() -> None:
    assert words("status 404 on port 8080 after 42 tries") == [
        "status",
        "404",
        "port",
        "8080",
        "tri",
    ]


def test_punctuation_and_emoji_give_no_words() -> None:
    assert words("?!… 🙂🙂 --- ::") == []


def test_repeats_are_kept_in_order() -> None:
    assert words("session user session") == ["sess", "user", "sess"]


def test_count_words_counts_what_words_lists() -> None:
    text = "def get_user(session):\n    session.user = getUser(session)\n    return session\n"
    assert count_words(text) == Counter(words(text))


@pytest.mark.parametrize(
    "text",
    [
        "def get_user(session):\n    session.user = getUser(session)\n    return session\n",
        "naïve_value = 名前 + getHTTPResponse2('über-config') # 404 x" + "y" * 70 + "\n",
    ],
    ids=["ascii", "other scripts"],
)
def test_indexing_counts_what_words_lists(text: str) -> None:
    from engine.analyse import TermNumbering

    numbering = TermNumbering()
    for _ in range(2):  # the second time from the identifier cache
        counted = numbering.count([text])
        # the same counts in the same order (of first occurrence): term rows keep it
        named = [(numbering.words[t], n) for t, n in counted.items()]
        assert named == list(Counter(words(text)).items())


def test_a_shared_cache_gives_the_same_words_as_none() -> None:
    cache: dict[str, list[str]] = {}
    text = "loadConfig load_config LoadConfig"
    assert words(text, cache) == words(text) == words(text, cache)
    assert "loadConfig" in cache


def test_path_words_split_the_file_name_without_extension_and_the_folders() -> None:
    assert path_words("src/auth/session_store.py") == (
        ["sess", "stor", "sessionstore"],
        ["src", "auth"],
    )


def test_path_words_of_a_dot_file_keep_its_name() -> None:
    assert path_words(".github/workflows/ci.yml") == (["ci"], ["github", "workflow"])
    assert path_words("pkg/.eslintrc") == (["eslintrc"], ["pkg"])


def test_the_ascii_identifier_pattern_finds_what_the_unicode_one_finds_on_ascii() -> None:
    every_ascii = "".join(map(chr, range(128)))
    # each pair of ASCII characters, around identifiers, numbers and kebab joins
    text = " ".join(a + b + "x-y9_ 1234 -z" + b + a for a in every_ascii for b in every_ascii[::7])
    assert IDENTIFIER_ASCII.findall(text) == IDENTIFIER.findall(text)
    assert IDENTIFIER_ASCII.findall(every_ascii * 3) == IDENTIFIER.findall(every_ascii * 3)


def test_the_compiled_identifier_patterns_find_what_the_plain_patterns_find() -> None:
    # from Python 3.11 the compiled patterns are the possessive forms; 3.10 compiles the plain
    # ones. Corpus: this repository's source and docs, every pair of ASCII characters around
    # identifiers, and random strings over letters, digits, joins and other scripts.
    root = Path(__file__).resolve().parents[2]
    texts = [p.read_text("utf-8") for p in sorted(root.glob("engine/**/*.py"))[:60]]
    texts += [p.read_text("utf-8") for p in sorted(root.glob("*.md"))]
    every_ascii = "".join(map(chr, range(128)))
    texts.append(" ".join(a + b + "x-y9_ 1234 -z-" + b + a for a in every_ascii for b in "_-9a "))
    alphabet = "aZ_09-- \n.é名١٢٣ß\u0301"
    rng = random.Random(11)
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60))) for _ in range(3000)]
    plain, plain_ascii = re.compile(IDENTIFIER_PATTERN), re.compile(IDENTIFIER_ASCII_PATTERN)
    assert (IDENTIFIER.pattern != plain.pattern) == (sys.version_info >= (3, 11))
    assert len(texts) > 3000 and sum(map(len, texts)) > 200_000
    for text in texts:
        assert IDENTIFIER.findall(text) == plain.findall(text)
        if text.isascii():
            assert IDENTIFIER_ASCII.findall(text) == plain_ascii.findall(text)


@pytest.mark.parametrize(
    "identifier",
    ["Session", "HTTP", "U", "Ab", "COPYING", "200", "0755", "naïve", "Straße", "Шерлок",
     "İstanbul", "名前", "ǅungla", "NAÏVE", "getUser", "HTTPServer", "get_user", "x-y", "名前_x",
     "v2", "E6", "latin1", "Ⅻ"],
)  # fmt: skip
def test_one_part_shortcuts_give_what_splitting_gives(identifier: str) -> None:
    parts = split_identifier(identifier)
    expected = [word for word in map(normalise_part, parts) if word is not None]
    if len(parts) > 1 and len("".join(parts)) >= 3:
        expected.append("".join(parts))
    assert identifier_words(identifier) == expected
