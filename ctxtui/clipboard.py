"""Deliver a rendered pack to the user: system clipboard, else the terminal (OSC 52), always a file.

A chain, because no single way works everywhere: pyperclip needs a clipboard tool and a display
(and fails silently on a dead one, so every copy is read back); OSC 52 works over SSH but cannot
be verified from inside the app; the last pack is therefore always also written under the user
cache folder. No Textual here: the app passes its OSC 52 writer in as a plain callable.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Protocol

from ctxtui.state import write_atomic

OSC52_LIMIT = 1_000_000
"""Largest text (characters) sent through OSC 52; several terminals drop longer sequences."""
OSC52_SURE = 100_000
"""Largest payload (bytes: the base64 of the text's UTF-8) a terminal copy is called done
for. A larger one is still sent, but the notice says it is unconfirmed and points to the
saved file: terminals' limits differ and none can be read from inside the app (review,
session 30: a 983 KB pack was announced as "Copied" with nothing to back it). 100 KB is
about 75,000 characters, a 20k-token pack."""
READ_BACK_TRIES = 6
"""Reads of the clipboard before a copy counts as lost (about 0.75 s in all).

xclip (and xsel) read the text, ask the X server for the clipboard in a buffered request,
fork, and the parent exits: the child sends that request only when it first waits for
events. A read made right after the parent exits can reach the server first and get the
previous owner's text, or nothing on a fresh display: on a loaded machine the first copy
(which also loads the tokenizer and renders the first pack) was read back too early and
reported as failed, and the pack went through OSC 52 although xclip worked."""
READ_BACK_PAUSE = 0.05
"""Seconds before the second read; each later one waits a step longer."""

_TOOL_NAMES = {
    "xclip": "xclip",
    "xsel": "xsel",
    "wl": "wl-copy",
    "klipper": "klipper",
    "qt": "Qt",
    "osx_pbcopy": "pbcopy",
    "osx_pyobjc": "pyobjc",
    "windows": "the Windows clipboard",
    "wsl": "clip.exe",
    "dev_clipboard": "/dev/clipboard",
}


class ClipboardBackend(Protocol):
    """A system clipboard: pyperclip in the app, a fake in tests."""

    def copy(self, text: str) -> str:
        """Put text on the clipboard and return the tool's name; raise ClipboardError if none."""
        ...

    def paste(self) -> str:
        """Return the clipboard's text."""
        ...


class ClipboardError(Exception):
    """No clipboard tool is available, or the tool failed."""


class PyperclipBackend:
    """The system clipboard through pyperclip, whose tool is chosen again on each copy."""

    def __init__(self) -> None:
        self._paste: Callable[[], str] | None = None

    def copy(self, text: str) -> str:
        """Copy with the tool pyperclip finds now (DISPLAY may have changed since start)."""
        import pyperclip  # deliberate: only a copy needs it

        copy_fn, paste_fn = pyperclip.determine_clipboard()
        name = getattr(copy_fn, "__name__", "")
        if not name:  # pyperclip's "no clipboard" stand-in has no name and raises on call
            raise ClipboardError("no clipboard tool (install xclip, xsel or wl-clipboard)")
        try:
            copy_fn(text)
        except (pyperclip.PyperclipException, OSError) as error:
            raise ClipboardError(str(error).splitlines()[0]) from error
        self._paste = paste_fn
        return _TOOL_NAMES.get(name.removeprefix("copy_"), name.removeprefix("copy_"))

    def paste(self) -> str:
        """Read back with the tool of the last copy."""
        import pyperclip  # deliberate: only a copy needs it

        if self._paste is None:
            return ""
        try:
            return str(self._paste())
        except (pyperclip.PyperclipException, OSError) as error:
            raise ClipboardError(str(error).splitlines()[0]) from error


class CopyWay(str, Enum):
    """How a pack reached the user."""

    CLIPBOARD = "clipboard"
    """The system clipboard, verified by reading it back."""
    TERMINAL = "terminal"
    """An OSC 52 sequence written to the terminal; unverifiable."""
    FILE = "file"
    """Only the file under the cache folder."""


@dataclass(frozen=True, slots=True)
class CopyResult:
    """What `deliver` did with a pack."""

    way: CopyWay
    """How the pack reached the user."""
    tool: str = ""
    """Clipboard tool used ("xclip"), for CLIPBOARD; else empty."""
    saved_to: Path | None = None
    """The file holding the last pack; None when it could not be written."""
    problems: tuple[str, ...] = ()
    """Why earlier ways in the chain were skipped or failed, one line each."""
    doubtful: bool = False
    """A terminal copy larger than OSC52_SURE: sent, but likely dropped."""


def has_system_clipboard(env: Mapping[str, str], platform: str = sys.platform) -> bool:
    """Return False on a Linux without DISPLAY or WAYLAND_DISPLAY (headless, SSH), except WSL."""
    if not platform.startswith("linux"):
        return True
    return bool(env.get("DISPLAY") or env.get("WAYLAND_DISPLAY") or env.get("WSL_DISTRO_NAME"))


def last_pack_path(ext: str, cache_dir: Path | None = None) -> Path:
    """Return where the last pack is kept: <user cache>/ctxtui/packs/last.<ext>."""
    if cache_dir is None:
        import platformdirs  # deliberate: resolved only when a pack is delivered

        cache_dir = Path(platformdirs.user_cache_dir("ctxtui"))
    return cache_dir / "packs" / f"last.{ext}"


def deliver(
    text: str,
    ext: str,
    *,
    backend: ClipboardBackend | None,
    terminal: Callable[[str], None] | None,
    cache_dir: Path | None = None,
    env: Mapping[str, str] = os.environ,
) -> CopyResult:
    """Save text as the last pack, then copy it by the first way that works.

    Args:
        text: The rendered pack.
        ext: File extension of its format ("md", "xml", "json").
        backend: The system clipboard; None skips it.
        terminal: Writes an OSC 52 copy to the terminal; None when there is no terminal.
        cache_dir: Folder for the last pack (default: the user cache folder).
        env: Environment consulted for a display.
    """
    problems: list[str] = []
    path = last_pack_path(ext, cache_dir)
    saved_to: Path | None = path
    try:
        write_atomic(path, text)
    except OSError as error:
        problems.append(f"could not save the last pack: {error.strerror or error}")
        saved_to = None
    if backend is not None:
        if has_system_clipboard(env):
            try:
                tool = backend.copy(text)
                if reads_back(backend, text):
                    return CopyResult(CopyWay.CLIPBOARD, tool, saved_to, tuple(problems))
                problems.append(f"{tool} did not keep the text (is the display's server alive?)")
            except ClipboardError as error:
                problems.append(str(error))
        else:
            problems.append("no display for a system clipboard (DISPLAY is not set)")
    if terminal is not None and len(text) <= OSC52_LIMIT:
        terminal(text)
        sent = osc52_size(text)
        if sent > OSC52_SURE:
            problems.append(f"{sent // 1000:,} KB: many terminals drop a copy this large")
        return CopyResult(CopyWay.TERMINAL, "", saved_to, tuple(problems), sent > OSC52_SURE)
    if terminal is not None:
        problems.append(f"too long for a terminal copy ({len(text):,} characters)")
    return CopyResult(CopyWay.FILE, "", saved_to, tuple(problems))


def osc52_size(text: str) -> int:
    """Bytes of the OSC 52 payload for `text`: the base64 of its UTF-8."""
    return 4 * -(-len(text.encode("utf-8", errors="surrogatepass")) // 3)


def reads_back(
    backend: ClipboardBackend,
    text: str,
    tries: int = READ_BACK_TRIES,
    pause: float = READ_BACK_PAUSE,
) -> bool:
    """True once the clipboard holds `text`, reading it up to `tries` times (see READ_BACK_TRIES).

    Runs in the copy's own thread, so the waits never hold up the app.
    """
    for attempt in range(tries):
        if backend.paste() == text:
            return True
        if attempt + 1 < tries:
            time.sleep(pause * (attempt + 1))
    return False


def describe(result: CopyResult, tokens: int, files: int) -> str:
    """Return the notification for a delivered pack ("Copied 7,812 tokens, 9 files — ...")."""
    what = f"{tokens:,} tokens, {files} file{'s' if files != 1 else ''}"
    if result.way is CopyWay.CLIPBOARD:
        return f"Copied {what} — clipboard via {result.tool}"
    if result.way is CopyWay.TERMINAL:
        why = f" ({'; '.join(result.problems)})" if result.problems else ""
        where = f"; also saved to {result.saved_to}" if result.saved_to else ""
        if result.doubtful:  # sent, but nothing says it arrived: the file is the sure copy
            return f"Sent {what} to the terminal (OSC 52), unconfirmed{why}{where}"
        return f"Copied {what} — via terminal (OSC 52){why}{where}"
    if result.saved_to is not None:
        why = f" ({'; '.join(result.problems)})" if result.problems else ""
        return f"{what.capitalize()} — no clipboard{why}: saved to {result.saved_to}"
    return f"Could not copy {what}: " + "; ".join(result.problems)
