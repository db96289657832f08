"""Settings from `.ctxtui.toml` files: defaults a person or a team sets once.

Two files, read in order, each overriding the one before key by key: the user's
(`<user config dir>/ctxtui/config.toml`), then the repository's (`.ctxtui.toml` in the folder
opened or the nearest folder above it up to the repository's top). Flags override both.
`exclude` patterns add up across the layers; every other key takes the last layer's value.
A file that is not valid TOML, or cannot be read (a folder, a broken link, no permission), is
reported and ignored whole; a key with a bad value is reported with its line and ignored
alone. Nothing here raises on a user's file.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ctxtui.state import DEFAULT_BUDGET, ENCODINGS, MAX_BUDGET, MIN_BUDGET, read_token_count
from ctxtui.workspace.choices import Choices
from ctxtui.workspace.core import Tuning
from engine.changes import SECRET_DIFF_HINT, Changes
from engine.file_open import open_regular
from engine.ignore import BadPattern, compile_rule
from engine.model import Format, ScanOptions
from engine.rank import DEFAULT_WEIGHTS, RankWeights
from engine.roles import Role

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

REPO_FILE = ".ctxtui.toml"
"""The repository's settings file, at its root."""
USER_FILE = "config.toml"
"""The user's settings file, in the user config folder of ctxtui."""
DEFAULT = "default"
"""Source of a setting nobody set."""
FLAG = "command line"
"""Source of a setting given as a flag."""

RANKING_ROLES: Mapping[str, Role] = {
    "tests": Role.TEST,
    "docs": Role.DOC,
    "examples": Role.EXAMPLE,
    "generated": Role.GENERATED,
    "config": Role.CONFIG,
    "changelog": Role.CHANGELOG,
}
"""`[ranking]` keys that scale a kind of file: true ranks it like code, false leaves it out
unless the question asks for it, a number multiplies its score."""
RANKING_NUMBERS: tuple[str, ...] = ("git_recency", "git_frequency", "graph_boost", "mention_boost")
"""`[ranking]` keys that set a `RankWeights` number directly."""
MAX_RANKING_VALUE = 1_000
"""The largest `[ranking]` number taken. The defaults are 0.05 to 3; 1,000 already puts a kind of
file or a signal above everything else, while `inf` or 1e308 made scores NaN or infinite (an
empty ranking, `"score": Infinity` in `rank --json`: the review of session 26)."""
TOP_KEYS: tuple[str, ...] = (
    "budget",
    "format",
    "encoding",
    "exclude",
    "include",
    "instructions",
    "redact",
    "line_numbers",
)


@dataclass(frozen=True, slots=True)
class Settings:
    """The effective settings and where each came from."""

    budget: int = DEFAULT_BUDGET
    """Token budget of a pack."""
    fmt: Format = Format.MARKDOWN
    """Format of a pack."""
    encoding: str = ENCODINGS[0]
    """Tokenizer encoding of every count."""
    exclude: tuple[str, ...] = ()
    """Gitignore-style patterns left out of the index (all layers together)."""
    include: tuple[str, ...] = ()
    """Gitignore-style patterns a file must match to be indexed; empty for all."""
    instructions: str = ""
    """Text placed at the top of every pack; empty for none."""
    redact: bool = True
    """Replace secrets found in a pack with a marker."""
    line_numbers: bool = False
    """Prefix source lines with their numbers."""
    ranking: Mapping[str, float] = field(default_factory=dict)
    """`[ranking]` values set by a file (role multipliers and named weights)."""
    sources: Mapping[str, str] = field(default_factory=dict)
    """Setting name -> where its value came from; absent means the default."""
    problems: tuple[str, ...] = ()
    """One line per problem found in a file ("path:line: what; ignored")."""

    @property
    def weights(self) -> RankWeights:
        """The ranking's weights with the `[ranking]` values applied."""
        priors = dict(DEFAULT_WEIGHTS.priors)
        numbers: dict[str, Any] = {}
        for key, value in self.ranking.items():
            if key in RANKING_ROLES:
                priors[RANKING_ROLES[key]] = value
            else:
                numbers[key] = value
        if not self.ranking:
            return DEFAULT_WEIGHTS
        return replace(DEFAULT_WEIGHTS, priors=tuple(priors.items()), **numbers)

    def source(self, name: str) -> str:
        """Where a setting came from."""
        return self.sources.get(name, DEFAULT)

    def with_flags(self, **flags: Any) -> Settings:
        """These settings with the given flags on top (None means the flag was not given).

        `exclude` flags add to the files' patterns; every other flag replaces the value.
        """
        changes: dict[str, Any] = {}
        sources = dict(self.sources)
        for name, value in flags.items():
            if value is None or (name == "exclude" and not value):
                continue
            if name == "exclude":
                value = (*self.exclude, *value)
            changes[name] = value
            sources[name] = (
                FLAG
                if name != "exclude" or not self.exclude
                else (f"{self.source('exclude')} + {FLAG}")
            )
        return replace(self, sources=sources, **changes)


def user_settings_path() -> Path:
    """The user's settings file (it may not exist)."""
    import platformdirs  # deliberate: resolved only when settings are read

    return Path(platformdirs.user_config_dir("ctxtui")) / USER_FILE


def repository_settings_path(root: Path) -> Path | None:
    """The `.ctxtui.toml` that applies to root: in root or the nearest folder above it, not
    past the top of its git work tree; None when there is none. Whatever holds the name
    applies (a folder, a broken link): reading it says what is wrong with it."""
    try:
        folder = Path(root).expanduser().resolve()
    except (OSError, RuntimeError):  # a symbolic link loop (RuntimeError on Python 3.11)
        return None  # the scan of the folder says what is wrong with it
    for candidate in (folder, *folder.parents):
        path = candidate / REPO_FILE
        if os.path.lexists(path):  # a folder or a broken link too: read, it is reported
            return path
        try:
            if (candidate / ".git").exists():
                return None
        except OSError:  # a folder the user may not look into: the scan says so
            return None
    return None


def load_settings(root: Path, *, user_file: Path | None = None) -> Settings:
    """Read the user's and the repository's settings for root; problems go in the result."""
    settings = Settings()
    for path in (user_file or user_settings_path(), repository_settings_path(root)):
        if path is not None and os.path.lexists(path):
            settings = apply_file(settings, path)
    return settings


def apply_file(settings: Settings, path: Path) -> Settings:
    """Lay one settings file over `settings`."""
    try:
        with open_regular(os.fspath(path)) as handle:  # a FIFO would hold the start for good
            text = handle.read().decode("utf-8-sig")  # a byte order mark (Notepad) is no key
    except IsADirectoryError:
        return _with_problem(settings, f"{path}: is a folder, not a settings file; ignored")
    except FileNotFoundError:  # listed, so a link to nothing (or removed meanwhile)
        return _with_problem(settings, f"{path}: cannot read (a broken link); ignored")
    except OSError as error:
        return _with_problem(settings, f"{path}: cannot read ({error.strerror or error}); ignored")
    except UnicodeDecodeError as error:
        return _with_problem(settings, f"{path}: cannot read ({error}); ignored")
    text = text.replace("\r\n", "\n").replace("\r", "\n")  # as text mode reads it
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        line = getattr(error, "lineno", None) or _line_from_message(str(error), text)
        where = f"{path}:{line}" if line else str(path)
        reason = re.sub(r" \(at (line \d+, column \d+|end of document)\)$", "", str(error))
        return _with_problem(settings, f"{where}: not valid TOML ({reason}); file ignored")
    return _apply_table(settings, data, path, text)


def _apply_table(settings: Settings, data: Mapping[str, Any], path: Path, text: str) -> Settings:
    changes: dict[str, Any] = {}
    sources = dict(settings.sources)
    problems = list(settings.problems)
    ranking = dict(settings.ranking)
    for key, value in data.items():
        line = _line_of(text, key)
        try:
            if key == "ranking":
                good, bad = _ranking(value)
                ranking.update(good)
                sources.update((f"ranking.{name}", str(path)) for name in good)
                problems.extend(
                    f"{path}:{_line_of(text, name, table=key)}: {error}; ignored"
                    for name, error in bad
                )
                continue
            if key not in TOP_KEYS:
                raise ValueError(f"unknown setting {key!r}")
            parsed = _parse(key, value)
        except ValueError as error:
            problems.append(f"{path}:{line}: {error}; ignored")
            continue
        if key in ("exclude", "include"):
            parsed, wrong = _good_patterns(parsed)
            problems.extend(
                f"{path}:{_item_line(text, line, item)}: {key}: {error}; ignored"
                for item, error in wrong
            )
        if key == "exclude":
            parsed = (*settings.exclude, *parsed)
            earlier = settings.sources.get("exclude")
            sources[key] = f"{earlier} + {path}" if earlier else str(path)
        else:
            sources["fmt" if key == "format" else key] = str(path)
        changes["fmt" if key == "format" else key] = parsed
    return replace(settings, sources=sources, problems=tuple(problems), ranking=ranking, **changes)


def _parse(key: str, value: Any) -> Any:
    """Check one top-level value; raise ValueError with what is wrong."""
    if key == "budget":
        if isinstance(value, str):  # "12k", "12,000": as `-b` and the app's b key read them
            try:
                value = read_token_count(value)
            except ValueError:
                raise ValueError(
                    f"budget must be a number of tokens (12000, 12k), not {value!r}"
                ) from None
        if not isinstance(value, int) or isinstance(value, bool):
            raise ValueError("budget must be a whole number of tokens")
        if not MIN_BUDGET <= value <= MAX_BUDGET:
            raise ValueError(f"budget must be between {MIN_BUDGET:,} and {MAX_BUDGET:,}")
        return value
    if key == "format":
        choices = [f.value for f in Format]
        if value not in choices:
            raise ValueError(f"format must be one of {', '.join(choices)}")
        return Format(value)
    if key == "encoding":
        if value not in ENCODINGS:
            raise ValueError(f"encoding must be one of {', '.join(ENCODINGS)}")
        return value
    if key in ("exclude", "include"):  # each item is checked by _good_patterns
        if not isinstance(value, list):
            raise ValueError(f"{key} must be a list of glob patterns")
        return tuple(value)
    if key == "instructions":
        if not isinstance(value, str):
            raise ValueError("instructions must be a string")
        return value
    if not isinstance(value, bool):  # redact, line_numbers
        raise ValueError(f"{key} must be true or false")
    return value


def _good_patterns(items: tuple[Any, ...]) -> tuple[tuple[str, ...], list[tuple[Any, str]]]:
    """The items of a pattern list that are patterns that mean something, and each other
    item with what is wrong with it (said here, at its line: the index would name it as if
    it had come from --exclude); one bad item leaves the others in force."""
    good: list[str] = []
    bad: list[tuple[Any, str]] = []
    for item in items:
        if not isinstance(item, str):
            bad.append((item, f"{item!r} is not a glob pattern"))
        elif not item.strip():
            bad.append((item, "an empty pattern"))
        else:
            try:
                compile_rule(item)
            except BadPattern as error:
                bad.append((item, f"bad pattern {item!r} ({error})"))
            else:
                good.append(item)
    return tuple(good), bad


def _item_line(text: str, line: int, item: Any) -> int:
    """The line of a list's item, the list starting at `line`: where the item is first
    written from there (a string in either quotes); `line` when it cannot be told."""
    if isinstance(item, str):
        written = [f'"{item}"', f"'{item}'", json.dumps(item)]
    elif isinstance(item, bool):
        written = ["true" if item else "false"]
    else:
        written = [str(item)]
    lines = text.splitlines()
    for number in range(line, len(lines) + 1):
        if any(form in lines[number - 1] for form in written):
            return number
    return line


def _ranking(table: Any) -> tuple[dict[str, float], list[tuple[str, str]]]:
    """Check the `[ranking]` table key by key: the good values, and (key, what is wrong) for
    each bad one (only that key is ignored); raise ValueError when it is no table at all."""
    if not isinstance(table, dict):
        raise ValueError("ranking must be a table")
    values: dict[str, float] = {}
    bad: list[tuple[str, str]] = []
    for key, value in table.items():
        if key not in RANKING_ROLES and key not in RANKING_NUMBERS:
            known = ", ".join((*RANKING_ROLES, *RANKING_NUMBERS))
            bad.append((key, f"unknown ranking setting {key!r} (known: {known})"))
        elif isinstance(value, bool) and key in RANKING_ROLES:
            values[key] = 1.0 if value else 0.0
        elif (
            isinstance(value, int | float)
            and not isinstance(value, bool)
            and (0 <= value <= MAX_RANKING_VALUE)
        ):
            values[key] = float(value)
        else:
            number = f"a number from 0 to {MAX_RANKING_VALUE:,}"
            what = f"true, false or {number}" if key in RANKING_ROLES else number
            bad.append((key, f"ranking.{key} must be {what}"))
    return values, bad


def _line_of(text: str, key: str, table: str = "") -> int:
    """The line where `key` is set (in `table`, when given) or its table starts (1 when not
    found)."""
    start = 0
    if table:
        header = re.search(rf"^[ \t]*\[[ \t]*{re.escape(table)}[ \t]*\]", text, re.M)
        dotted = re.search(
            rf"^[ \t]*{re.escape(table)}[ \t]*\.[ \t]*{re.escape(key)}[ \t]*=", text, re.M
        )
        if dotted:
            return text.count("\n", 0, dotted.start()) + 1
        if header is None:
            return _line_of(text, table)
        start = header.end()
    pattern = re.compile(
        rf"^[ \t]*(\[[ \t]*{re.escape(key)}[ \t]*\]|{re.escape(key)}[ \t]*=)", re.M
    )
    match = pattern.search(text, start)
    if match is None:
        return _line_of(text, table) if table else 1
    return text.count("\n", 0, match.start()) + 1


def _line_from_message(message: str, text: str) -> int | None:
    """The line a TOML error names; "end of document" is the last line with text."""
    match = re.search(r"at line (\d+)", message)
    if match:
        return int(match.group(1))
    if "end of document" in message:
        return max(1, len(text.rstrip().splitlines()))
    return None


def _with_problem(settings: Settings, problem: str) -> Settings:
    return replace(settings, problems=(*settings.problems, problem))


def scan_options(settings: Settings) -> ScanOptions:
    """What the index lists, from the settings."""
    return ScanOptions(exclude=settings.exclude, include=settings.include)


def tuning(settings: Settings, *, secret_hint: str = SECRET_DIFF_HINT) -> Tuning:
    """How packs are made, from the settings (`secret_hint`: how the front-end's user packs
    a secret file, in the words of its options; the command line's by default)."""
    return Tuning(
        weights=settings.weights, instructions=settings.instructions, secret_hint=secret_hint
    )


def pack_choices(
    settings: Settings, *, changes: Changes | None = None, focus: tuple[str, ...] = ()
) -> Choices:
    """A question's pack as `ctxtui pack` and the MCP server's build_pack make it: no pins or
    levels of the person's, the settings' budget and format, and what the call asked for."""
    return Choices(
        pinned=frozenset(),
        overrides={},
        budget=settings.budget,
        fmt=settings.fmt,
        changes=changes,
        focus=focus,
        line_numbers=settings.line_numbers,
        redact=settings.redact,
    )
