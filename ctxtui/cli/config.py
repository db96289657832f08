"""`ctxtui config [PATH]`: the effective settings for a folder and where each came from."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from ctxtui.cli.output import emit
from ctxtui.settings import (
    RANKING_NUMBERS,
    RANKING_ROLES,
    Settings,
    load_settings,
    repository_settings_path,
    user_settings_path,
)
from engine.model import printable
from engine.scan import check_root


def run_config(args: argparse.Namespace) -> int:
    """`ctxtui config`: print the effective settings, their sources and any problem."""
    check_root(os.path.expanduser(args.path))  # as given: Path("") would be the current folder
    root = Path(args.path).expanduser()
    settings = load_settings(root)
    rows = setting_rows(settings)
    if args.json:  # valid UTF-8 whatever the paths: a name's odd bytes become U+FFFD
        document = {
            "files": {
                "user": printable(str(user_settings_path())),
                "repository": printable(str(repository_settings_path(root) or "")),
            },
            "settings": {
                name: {"value": value, "source": printable(source)} for name, value, source in rows
            },
            "problems": [printable(problem) for problem in settings.problems],
        }
        emit(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    else:
        emit(format_settings(root, rows))
    for problem in settings.problems:
        print(f"ctxtui: {problem}", file=sys.stderr)
    return 0


def setting_rows(settings: Settings) -> list[tuple[str, object, str]]:
    """(name, value as JSON, source) for every setting, ranking weights included."""
    rows: list[tuple[str, object, str]] = [
        ("budget", settings.budget, settings.source("budget")),
        ("format", settings.fmt.value, settings.source("fmt")),
        ("encoding", settings.encoding, settings.source("encoding")),
        ("exclude", list(settings.exclude), settings.source("exclude")),
        ("include", list(settings.include), settings.source("include")),
        ("instructions", settings.instructions, settings.source("instructions")),
        ("redact", settings.redact, settings.source("redact")),
        ("line_numbers", settings.line_numbers, settings.source("line_numbers")),
    ]
    priors = dict(settings.weights.priors)
    for name, role in RANKING_ROLES.items():
        rows.append((f"ranking.{name}", priors[role], settings.source(f"ranking.{name}")))
    weights = settings.weights
    for name in RANKING_NUMBERS:
        rows.append((f"ranking.{name}", getattr(weights, name), settings.source(f"ranking.{name}")))
    return rows


def format_settings(root: Path, rows: list[tuple[str, object, str]]) -> str:
    """The human table: name, value, source; then the files looked at."""
    width = max(len(name) for name, _, _ in rows)
    lines = [f"settings for {root.resolve()}", ""]
    for name, value, source in rows:
        shown = json.dumps(value, ensure_ascii=False)
        if len(shown) > 60:
            shown = shown[:57] + "…"
        lines.append(f"{name:<{width}}  {shown:<24}  {source}")
    repo_file = repository_settings_path(root)
    lines += [
        "",
        f"user file        {user_settings_path()}",
        f"repository file  {repo_file or '(none: .ctxtui.toml at the repository root)'}",
        "precedence       flags > repository file > user file > defaults",
    ]
    return "\n".join(lines) + "\n"
