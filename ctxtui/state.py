"""Per-repository app state that survives a restart: pins, overrides, budget, format, encoding.

One versioned JSON file per repository under the user state folder, named by the SHA-1 of the
repository's absolute path, written atomically (temp file + os.replace) so a crash cannot leave
half a file. A file that cannot be read back is moved aside, never trusted and never fatal.
Also the budget arithmetic the keys use (steps, parsing "12k"), so it is testable without Textual.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import stat
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.model import Format, Level

STATE_VERSION = 1
"""Format version of the state file; a file with another version is set aside."""

DEFAULT_BUDGET = 8_000
"""Tokens in a pack until the user says otherwise."""
MIN_BUDGET = 500
"""Smallest budget the app accepts: less cannot hold one file's outline."""
MAX_BUDGET = 2_000_000
"""Largest budget the app accepts; above every model's context window today."""
ENCODINGS: tuple[str, ...] = ("o200k_base", "cl100k_base")
"""Tokenizer encodings the `e` key cycles through, the default first."""
FORMAT_EXTENSIONS: Mapping[Format, str] = {
    Format.MARKDOWN: "md",
    Format.XML: "xml",
    Format.JSON: "json",
}
"""File extension of a saved pack per format."""
HISTORY_LIMIT = 100
"""Earlier questions kept per repository."""
FOCUS_PLACES: tuple[str, ...] = ("question", "list")
"""Where the keys went when the app was closed: the question bar or the ranked list."""


@dataclass(frozen=True, slots=True)
class RepoState:
    """What the app remembers about one repository."""

    pinned: frozenset[str] = frozenset()
    """Pinned paths, relative POSIX; kept even when the file has gone (then ignored)."""
    overrides: Mapping[str, Level] = field(default_factory=dict)
    """Per-file levels chosen by the user; kept even when the file has gone."""
    budget: int = DEFAULT_BUDGET
    """Token budget of the pack."""
    fmt: Format = Format.MARKDOWN
    """Format of the copied or saved pack."""
    encoding: str = ENCODINGS[0]
    """Tokenizer encoding of every count shown."""
    query: str = ""
    """The last question typed."""
    changed: bool = False
    """The work tree's changes are packed: changed files pinned, their diff a section."""
    history: tuple[str, ...] = ()
    """Earlier questions of this repository, newest first, at most HISTORY_LIMIT; a file
    written before the history was kept has none (the field is optional on disk)."""
    cursor: str = ""
    """The file highlighted in the ranked list when the app closed (its path, not its row:
    the ranking may differ at the next open); empty for none. Optional on disk, as below."""
    focus: str = FOCUS_PLACES[0]
    """Where the keys went when the app closed, one of FOCUS_PLACES."""
    notes: tuple[str, ...] = ()
    """The planner's notes last shown: a reopen whose pack has the same says nothing again."""

    def to_json(self) -> dict[str, Any]:
        """Return the JSON object stored on disk."""
        return {
            "version": STATE_VERSION,
            "pinned": sorted(self.pinned),
            "overrides": {path: level.value for path, level in sorted(self.overrides.items())},
            "budget": self.budget,
            "format": self.fmt.value,
            "encoding": self.encoding,
            "query": self.query,
            "changed": self.changed,
            "history": list(self.history),
            "cursor": self.cursor,
            "focus": self.focus,
            "notes": list(self.notes),
        }

    @classmethod
    def from_json(cls, data: object) -> RepoState:
        """Read a stored object; raise ValueError when it is not a state file of this version."""
        if not isinstance(data, dict) or data.get("version") != STATE_VERSION:
            raise ValueError("not a ctxtui state file of this version")
        pinned = data.get("pinned", [])
        overrides = data.get("overrides", {})
        budget = data.get("budget", DEFAULT_BUDGET)
        encoding = data.get("encoding", ENCODINGS[0])
        query = data.get("query", "")
        changed = data.get("changed", False)
        history = data.get("history", [])
        cursor = data.get("cursor", "")
        focus = data.get("focus", FOCUS_PLACES[0])
        notes = data.get("notes", [])
        if not (isinstance(pinned, list) and all(isinstance(p, str) for p in pinned)):
            raise ValueError("pinned must be a list of paths")
        if not isinstance(overrides, dict):
            raise ValueError("overrides must be an object")
        if not isinstance(budget, int) or isinstance(budget, bool):
            raise ValueError("budget must be an integer")
        if encoding not in ENCODINGS or not isinstance(query, str):
            raise ValueError("unknown encoding or bad question")
        if not isinstance(changed, bool):
            raise ValueError("changed must be true or false")
        if not (isinstance(history, list) and all(isinstance(q, str) for q in history)):
            raise ValueError("history must be a list of questions")
        if not (isinstance(cursor, str) and isinstance(focus, str)):
            raise ValueError("cursor and focus must be text")
        if not (isinstance(notes, list) and all(isinstance(n, str) for n in notes)):
            raise ValueError("notes must be a list of text")
        return cls(
            pinned=frozenset(pinned),
            overrides={str(path): Level(level) for path, level in overrides.items()},
            budget=clamp_budget(budget),
            fmt=Format(data.get("format", Format.MARKDOWN.value)),
            encoding=encoding,
            query=query,
            changed=changed,
            history=tuple(history[:HISTORY_LIMIT]),
            cursor=cursor,
            # a place this version does not know (a later one's) is the question, not an error
            focus=focus if focus in FOCUS_PLACES else FOCUS_PLACES[0],
            notes=tuple(notes),
        )


def remember(history: tuple[str, ...], question: str) -> tuple[str, ...]:
    """Put a question first in the history (once, trimmed), keeping at most HISTORY_LIMIT."""
    question = question.strip()
    if not question:
        return history
    rest = tuple(q for q in history if q != question)
    return (question, *rest)[:HISTORY_LIMIT]


class StateStore:
    """Load and save the `RepoState` of one repository."""

    def __init__(
        self, root: Path, state_dir: Path | None = None, defaults: RepoState = RepoState()
    ) -> None:
        self.defaults = defaults
        """What a repository with no saved state starts with (from the settings)."""
        if state_dir is None:
            import platformdirs  # deliberate: resolved only when no folder is given

            state_dir = Path(platformdirs.user_state_dir("ctxtui"))
        digest = hashlib.sha1(os.fsencode(root.resolve())).hexdigest()
        self.path = state_dir / "repos" / f"{digest}.json"
        """The state file of this repository."""

    def load(self, *, set_aside: bool = True) -> tuple[RepoState, str]:
        """Return the stored state (defaults when there is none) and a notice for the user.

        The notice is empty unless the file was unreadable; it is then moved aside, unless
        `set_aside` is False (a reader that must not write, such as an MCP read-only tool).
        """
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return self.defaults, ""
        except OSError as error:
            return (
                RepoState(),
                f"Could not read the saved state ({error.strerror}); using defaults.",
            )
        try:
            return RepoState.from_json(json.loads(raw.decode("utf-8"))), ""
        except (ValueError, TypeError, RecursionError) as error:
            # UnicodeDecodeError is a ValueError; JSON nested thousands deep overflows the
            # parser's recursion: neither may keep the app from starting
            problem = _state_problem(error)
            if not set_aside:
                return self.defaults, f"The saved state is unreadable ({problem})."
            return self.defaults, self._set_aside(problem)

    def _set_aside(self, problem: str) -> str:
        """Move the unreadable file out of the way; return the notice for the user."""
        aside = self.path.with_name(f"{self.path.name}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}")
        try:
            os.replace(self.path, aside)
        except OSError as error:
            return (
                f"The saved state was unreadable ({problem}) and could not be moved"
                f" ({error.strerror}); using defaults."
            )
        return f"The saved state was unreadable ({problem}); moved it to {aside}."

    def save(self, state: RepoState) -> None:
        """Write the state atomically; raise OSError when the folder is not writable."""
        write_atomic(self.path, json.dumps(state.to_json(), indent=2) + "\n")


def _state_problem(error: BaseException) -> str:
    """One short line on why a state file could not be read."""
    if isinstance(error, UnicodeDecodeError):
        return f"not UTF-8 at byte {error.start}"
    if isinstance(error, RecursionError):
        return "nested too deeply"
    return str(error)


def write_atomic(path: Path, text: str) -> None:
    """Write text to path through a temporary file in the same folder and os.replace."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as stream:
            stream.write(text)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def write_output(name: str, text: str) -> None:
    """Write a pack where the user asked (`pack -o FILE`, the app's save): a file is written
    whole or not at all, through a temporary file in its folder renamed over it (a full disk
    leaves the old file, not half a pack), keeping the old file's mode and the link that
    points at it; a device or pipe (/dev/stdout) is written to as it is, and so is a file
    whose folder takes no new file.

    Raises:
        OSError: the text could not be written.
    """
    target = Path(os.path.realpath(name))
    try:
        mode: int | None = target.stat().st_mode
    except FileNotFoundError:
        mode = None
    if mode is not None and not stat.S_ISREG(mode):
        target.write_text(text, encoding="utf-8", errors="replace")  # a device, a folder...
        return
    try:
        handle, temp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    except OSError:
        if mode is None:
            raise
        target.write_text(text, encoding="utf-8", errors="replace")
        return
    try:
        with os.fdopen(handle, "w", encoding="utf-8", errors="replace") as stream:
            stream.write(text)
        os.chmod(temp, stat.S_IMODE(mode) if mode is not None else 0o666 & ~_umask())
        os.replace(temp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def clamp_budget(budget: int) -> int:
    """Keep a budget within MIN_BUDGET..MAX_BUDGET."""
    return max(MIN_BUDGET, min(MAX_BUDGET, budget))


def budget_step(budget: int) -> int:
    """Tokens one +/- press moves: 1k below 8k, 2k below 32k, 4k below 64k, then 8k."""
    for limit, step in ((8_000, 1_000), (32_000, 2_000), (64_000, 4_000)):
        if budget < limit:
            return step
    return 8_000


def step_budget(budget: int, direction: int) -> int:
    """Return the next budget up (direction +1) or down (-1), snapped to the step grid."""
    if direction > 0:
        step = budget_step(budget)
        return clamp_budget((budget // step + 1) * step)
    step = budget_step(budget - 1)
    return clamp_budget((-(-budget // step) - 1) * step)


_BUDGET_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([km]?)\s*$", re.IGNORECASE)


def read_token_count(text: str) -> int:
    """Read a token count as a person writes it: "12000", "12,000", "12k", "1.5k", "1m" (no
    range check); raise ValueError otherwise."""
    match = _BUDGET_RE.match(text.replace(",", "").replace("_", ""))
    if match is None:
        raise ValueError(f"not a token count: {text!r}")
    number = float(match.group(1)) * {"": 1, "k": 1_000, "m": 1_000_000}[match.group(2).lower()]
    return int(min(number, 1e18))  # hundreds of digits make an infinite float, which no int holds


def parse_budget(text: str) -> int:
    """Read a typed budget (`read_token_count`) within MIN_BUDGET..MAX_BUDGET; raise ValueError
    otherwise."""
    number = read_token_count(text)
    if not MIN_BUDGET <= number <= MAX_BUDGET:
        raise ValueError(f"the budget must be between {MIN_BUDGET:,} and {MAX_BUDGET:,} tokens")
    return number


def next_in_cycle(items: tuple[Any, ...], current: Any) -> Any:
    """Return the item after current in items, wrapping around (the first when absent)."""
    try:
        return items[(items.index(current) + 1) % len(items)]
    except ValueError:
        return items[0]
