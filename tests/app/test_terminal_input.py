"""A paste's escape sequences never become key presses (ctxtui.terminal_input).

Pilot hands the app events, past the terminal's parser, so these tests feed what a terminal
sends (tmux's `paste-buffer -p` of a coloured log) to the parser of the pinned Textual through
the app's filter, cut into pieces at every place a read may end.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from textual import events
from textual._xterm_parser import XTermParser

from ctxtui.app import make_app
from ctxtui.terminal_input import PasteFilter, PasteSafeDriver, parse

COLOURED = "\x1b[200~abc\x1b[31mred\x1b[0m\x1b[201~"
"""The brief's paste: "abc", then "red" in red."""


def parsed(pieces: list[str], *, filtered: bool = True) -> list[tuple[str, str]]:
    """The events the parser makes of the input read in these pieces: (kind, key or text)."""
    parser = XTermParser()
    pastes = PasteFilter()
    found: list[tuple[str, str]] = []
    for piece in pieces:
        for event in parse(parser, pastes, piece) if filtered else parser.feed(piece):
            if isinstance(event, events.Paste):
                found.append(("paste", event.text))
            elif isinstance(event, events.Key):
                found.append(("key", event.key))
    return found


def cuts(text: str) -> list[list[str]]:
    """The text whole, one character a read, and cut in two at every place."""
    return [[text], list(text)] + [[text[:n], text[n:]] for n in range(1, len(text))]


def test_textual_alone_turns_what_follows_an_esc_in_a_paste_into_keys() -> None:
    # the defect (session 32): in the list, "red" switched the encoding (e) and packed the
    # work tree's changes (d); the question got "^[31mred^[0m" before "abc"
    keys = [key for kind, key in parsed([COLOURED], filtered=False) if kind == "key"]
    assert {"circumflex_accent", "r", "e", "d"} <= set(keys)


@pytest.mark.parametrize(
    ("pasted", "text"),
    [
        ("abc\x1b[31mred\x1b[0m", "abcred"),
        ("\x1b]8;;http://e.x\x1b\\link\x1b]8;;\x07 \x1b[1;31mbold\x1b[0m", "link bold"),
        ("\x1b(Bplain\x1bM\x1b7 end\x1b", "plain end"),  # charset, one-character codes, a last ESC
        ("a\x1b[200~b\x1b[2Jc\x1b\x1b[201", "abc"),  # a start, a clear, ESC ESC, an end cut short
        ("x" + "\x1b[38;5;208m" + "y" * 40 + "\x1b[0m", "x" + "y" * 40),  # past the parser's 32
    ],
)
def test_a_paste_reaches_the_parser_as_one_paste_without_its_codes_and_no_key(
    pasted: str, text: str
) -> None:
    raw = f"\x1b[200~{pasted}\x1b[201~"
    for pieces in cuts(raw):
        assert parsed(pieces) == [("paste", text)], pieces


def test_keys_outside_a_paste_go_through_untouched() -> None:
    typed = "ab\x1b[A\x1b[B\x1bx\x1b[1;5Cq\x7f\r\t\x1b[I"
    for pieces in cuts(typed):
        assert parsed(pieces) == parsed([typed], filtered=False), pieces
    after = parsed([COLOURED + "\x1b[Ap"])  # the keys after a paste are keys again
    assert after == [("paste", "abcred"), ("key", "up"), ("key", "p")]
    assert PasteFilter().feed("\x1b") == "\x1b"  # the escape key is not held back


def test_the_app_reads_the_terminal_through_the_filter(tmp_path: Path) -> None:
    app = make_app(tmp_path, state_dir=tmp_path, cache_dir=tmp_path)
    if os.name == "posix":
        assert app.get_driver_class() is PasteSafeDriver
