"""The Textual app behind `ctxtui [PATH]`: installs the main screen, help, palette and quit.

`make_app` is the one factory the command line and the tests call. Importing this module loads
Textual but not the engine's heavy parts (numpy, tiktoken, tree-sitter): the workspace is opened
by a thread worker after the first paint, so the window appears at once even on a cold cache.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, ClassVar

from textual.app import App
from textual.binding import Binding, BindingType
from textual.driver import Driver
from textual.screen import Screen

from ctxtui.clipboard import ClipboardBackend, PyperclipBackend
from ctxtui.commands import CtxtuiCommands, key_rows
from ctxtui.screens.help import HelpScreen
from ctxtui.screens.main import MainScreen, Services
from ctxtui.screens.palette import Palette
from ctxtui.settings import Settings, load_settings, scan_options, tuning
from ctxtui.state import RepoState, StateStore
from ctxtui.workspace import SavedOpener, Tuning, Workspace, WorkspaceAPI, WorkspaceFactory
from ctxtui.workspace.notices import APP_SECRET_HINT


class CtxtuiApp(App[None]):
    """Live-ranked, budgeted context packs for one repository."""

    CSS_PATH = "ctxtui.tcss"
    TITLE = "ctxtui"
    COMMANDS = App.COMMANDS | {CtxtuiCommands}
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "ctrl+q", "quit", "Quit", tooltip="Save the state and quit", priority=True, id="quit"
        ),
        Binding("f1,question_mark", "show_help", "Help", tooltip="Show every key", id="help"),
    ]

    def __init__(self, services: Services) -> None:
        super().__init__()
        self.services = services
        """How to open the workspace, where state and packs go, which clipboard."""

    def get_driver_class(self) -> type[Driver]:
        """Textual's driver, except that on Linux and macOS a paste's escape sequences are
        dropped before they can become key presses (ctxtui.terminal_input)."""
        driver = super().get_driver_class()
        if os.name != "posix":
            return driver
        from textual.drivers.linux_driver import LinuxDriver  # deliberate: termios, POSIX only

        from ctxtui.terminal_input import PasteSafeDriver

        return PasteSafeDriver if driver is LinuxDriver else driver

    def get_default_screen(self) -> Screen[None]:
        return MainScreen(self.services)

    @property
    def main_screen(self) -> MainScreen:
        """The main screen (the bottom of the stack)."""
        screen = self.screen_stack[0]
        assert isinstance(screen, MainScreen)
        return screen

    @property
    def workspace(self) -> WorkspaceAPI | None:
        """The open workspace, or None while it is being indexed."""
        return self.main_screen.workspace

    def action_command_palette(self) -> None:
        """Show the command palette (one that answers a double enter once)."""
        if self.use_command_palette and not isinstance(self.screen, Palette):
            self.push_screen(Palette(id="--command-palette"))

    def action_show_help(self) -> None:
        """Show the keys, generated from the bindings."""
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(key_rows(self, self.main_screen)))

    async def action_quit(self) -> None:
        """Save the state, then quit."""
        self.main_screen.save_state()
        self.exit()


def start_resource_tracker() -> None:
    """Start multiprocessing's resource tracker while sys.stderr is still the real one.

    A first index parses in a process pool (forkserver, since the app has threads). Starting
    that pool starts the tracker, which hands `sys.stderr.fileno()` to its child; inside a
    running Textual app stderr is a capture whose fileno is -1, and the pool fails with
    "bad value(s) in fds_to_keep". Started here, before the app runs, the tracker is reused.
    """
    if os.name != "posix":
        return
    from multiprocessing import resource_tracker  # deliberate: only for the process pool

    try:
        resource_tracker.ensure_running()
    except OSError:  # no tracker: the pool will report its own error in a notification
        return


def app_tuning(settings: Settings) -> Tuning:
    """How the app's packs are made: the settings', and a secret file's diff note that says
    what the app's user can do (`!NAME` in `.ctxtuiignore`: the app takes no flags)."""
    return tuning(settings, secret_hint=APP_SECRET_HINT)


def _opener(settings: Settings) -> WorkspaceFactory:
    """Open the workspace with the repository's settings (what it lists, how it ranks)."""

    def open_workspace(root: Path, **options: Any) -> WorkspaceAPI:
        return Workspace.open(
            root, options=scan_options(settings), tuning=app_tuning(settings), **options
        )

    return open_workspace


def _saved_opener(settings: Settings) -> SavedOpener:
    """Open the workspace from its cache alone, for the first list while the tree is checked."""

    def open_saved(root: Path, **options: Any) -> WorkspaceAPI | None:
        return Workspace.open_saved(
            root, options=scan_options(settings), tuning=app_tuning(settings), **options
        )

    return open_saved


def make_app(
    root: Path,
    *,
    workspace_factory: WorkspaceFactory | None = None,
    clipboard: ClipboardBackend | None = None,
    state_dir: Path | None = None,
    cache_dir: Path | None = None,
) -> CtxtuiApp:
    """Build the app for the repository at root.

    Args:
        root: The repository (any folder).
        workspace_factory: Opens the workspace; `Workspace.open` by default.
        clipboard: The system clipboard; pyperclip by default.
        state_dir: Folder of the per-repository state (default: the user state folder).
        cache_dir: Folder of the last copied pack (default: the user cache folder).
    """
    root = Path(root).expanduser().absolute()
    start_resource_tracker()
    settings = load_settings(root)
    defaults = RepoState(budget=settings.budget, fmt=settings.fmt, encoding=settings.encoding)
    services = Services(
        root=root,
        factory=workspace_factory or _opener(settings),
        # a stand-in factory (tests) opens alone; the real one first shows the saved index
        saved=_saved_opener(settings) if workspace_factory is None else None,
        store=StateStore(root, state_dir, defaults),
        backend=clipboard if clipboard is not None else PyperclipBackend(),
        cache_dir=cache_dir,
        notices=settings.problems,
        line_numbers=settings.line_numbers,
        redact=settings.redact,
    )
    return CtxtuiApp(services)
