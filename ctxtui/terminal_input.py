"""The terminal's input on its way to Textual: escape sequences inside a paste are dropped.

Textual 8.2.8's parser (textual/_xterm_parser.py, `XTermParser.parse`) reads an ESC inside a
bracketed paste as the start of an escape sequence: the characters after it never reach the
paste's buffer (only the outer loop appends to it, lines 218-219), and once another ESC comes
(lines 250-253), or 32 characters go by (lines 255-258), or the input pauses (243-245), they are
sent on as key presses (`reissue_sequence_as_keys`, lines 176-198), the ESC as "^". A copied
log's colour codes, pasted into the app, thus pressed its keys: "\\e[31mred" in the list
switched the encoding (e), packed the work tree's changes (d) and looked at the disk (r); in
the question it typed "^[31mred" before the paste's own text. No widget can tell those keys
from typed ones, so the app drops the sequences before the parser reads them (`PasteFilter`),
in the driver's input loop (`PasteSafeDriver`). Outside a paste every character goes through
at once, untouched.
"""

from __future__ import annotations

import os
import selectors
from codecs import getincrementaldecoder
from collections.abc import Iterable

from textual._parser import ParseError
from textual._xterm_parser import XTermParser
from textual.drivers.linux_driver import LinuxDriver
from textual.message import Message

PASTE_START = "\x1b[200~"
"""What the terminal sends before a pasted text (bracketed paste)."""
PASTE_END = "\x1b[201~"
"""What the terminal sends after it."""
ESC = "\x1b"


class PasteFilter:
    """Removes the escape sequences from bracketed pastes in a stream of terminal input.

    Fed the input as it is read, in pieces cut anywhere, it returns what to hand the parser:
    outside a paste the same text at once; inside one, the text without its escape sequences
    (CSI such as colours, OSC such as links and titles, and two- or three-character ones); an
    ESC that may begin the paste's end is held until the next piece tells.
    """

    def __init__(self) -> None:
        self._in_paste = False
        self._start_matched = 0
        """Characters of PASTE_START seen last, outside a paste."""
        self._held = ""
        """Inside a paste: an ESC and what followed it, while it may be PASTE_END."""
        self._skipping = ""
        """Inside a paste: the kind of sequence being dropped ("csi", "osc", "esc"), or ""."""

    def feed(self, data: str) -> str:
        """Return the text to parse for the next piece of input."""
        if not self._in_paste and ESC not in data and not self._start_matched:
            return data  # the usual keystroke: nothing to look at
        out: list[str] = []
        for character in data:
            if self._in_paste:
                self._paste_character(character, out)
            else:
                out.append(character)
                self._match_start(character)
        return "".join(out)

    def _match_start(self, character: str) -> None:
        if character == PASTE_START[self._start_matched]:
            self._start_matched += 1
            if self._start_matched == len(PASTE_START):
                self._in_paste, self._start_matched = True, 0
        else:
            self._start_matched = 1 if character == ESC else 0

    def _paste_character(self, character: str, out: list[str]) -> None:
        if self._skipping:
            self._skip(character, out)
        elif self._held:
            held = self._held + character
            if PASTE_END.startswith(held):
                self._held = held
                if held == PASTE_END:
                    out.append(PASTE_END)
                    self._held, self._in_paste = "", False
                return
            # not the end: an escape sequence inside the paste, dropped with what follows
            self._held = ""
            if len(held) > 2:  # "\x1b[", "\x1b[2"... then something else: a CSI
                self._skipping = "csi"
                self._skip(character, out)
            elif character == "]":
                self._skipping = "osc"
            elif character == ESC:
                self._held = ESC
            elif " " <= character <= "/":  # an intermediate byte: one more character follows
                self._skipping = "esc"
        elif character == ESC:
            self._held = ESC
        else:
            out.append(character)

    def _skip(self, character: str, out: list[str]) -> None:
        """Drop one character of the sequence being skipped; the sequence ends at its final
        character (CSI, ESC), at BEL or ESC (OSC), or at anything it cannot hold."""
        kind = self._skipping
        if character == ESC:  # the sequence ends; this ESC may begin the paste's end
            self._skipping, self._held = "", ESC
        elif kind == "osc":
            if character == "\x07":
                self._skipping = ""
        elif (kind == "csi" and "0" <= character <= "?") or " " <= character <= "/":
            pass  # a parameter or an intermediate byte
        elif "@" <= character <= "~" or (kind == "esc" and "0" <= character <= "~"):
            self._skipping = ""  # the final character
        else:  # not part of a sequence (a broken one): the text goes on
            self._skipping = ""
            out.append(character)


def parse(parser: XTermParser, pastes: PasteFilter, data: str) -> Iterable[Message]:
    """The parser's events for a piece of input read from the terminal, through the filter.
    A piece the filter holds whole (an ESC that may begin a paste's end) is not handed on:
    the parser reads an empty piece as the end of the input."""
    text = pastes.feed(data)
    return parser.feed(text) if text else ()


class PasteSafeDriver(LinuxDriver):
    """Textual's Linux and macOS driver, its input passed through `PasteFilter`."""

    def run_input_thread(self) -> None:
        """Wait for input and dispatch events: `LinuxDriver.run_input_thread` of Textual
        8.2.8 (the version pinned), the decoded input filtered before the parser."""
        selector = selectors.SelectSelector()
        selector.register(self.fileno, selectors.EVENT_READ)
        fileno = self.fileno
        parser = XTermParser(self._debug)
        pastes = PasteFilter()
        decode = getincrementaldecoder("utf-8")().decode

        def process_selector_events(
            selector_events: list[tuple[selectors.SelectorKey, int]], final: bool = False
        ) -> None:
            for number, (_selector_key, mask) in enumerate(selector_events, 1):
                if mask & selectors.EVENT_READ:
                    last = number == len(selector_events)
                    unicode_data = decode(os.read(fileno, 1024 * 4), final=final and last)
                    if not unicode_data:
                        break  # this can occur if stdin is piped
                    for event in parse(parser, pastes, unicode_data):
                        self.process_message(event)
            for event in parser.tick():
                self.process_message(event)

        try:
            while not self.exit_event.is_set():
                process_selector_events(selector.select(0.1))
            selector.unregister(self.fileno)
            process_selector_events(selector.select(0.1), final=True)
        finally:
            selector.close()
            try:
                for _event in parser.feed(""):
                    pass
            except (EOFError, ParseError):
                pass
