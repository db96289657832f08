"""In the app, a file holding a secret is marked in the list with the reason, its preview and
its copy are redacted, and the copy notification says what was redacted."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from app.support import FakeClipboard, notices, settle, wait_until
from conftest import make_repo

from ctxtui.app import CtxtuiApp
from ctxtui.widgets.file_list import FileList
from hostile.test_hostile_secrets import AWS_KEY, CONFIG_PY, GH_TOKEN


async def test_the_list_marks_a_redacted_file_and_the_copy_says_so(
    tmp_path: Path, app_factory: Callable[..., CtxtuiApp]
) -> None:
    repo = make_repo(tmp_path / "repo", {"config.py": CONFIG_PY, "orders.py": "x = 1\n"})
    app = app_factory(repo)
    clipboard = app.services.backend
    assert isinstance(clipboard, FakeClipboard)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press(*"config")
        await settle(pilot, "config")
        file_list = app.main_screen.query_one(FileList)
        await wait_until(pilot, lambda: "config.py" in file_list.secrets)
        assert file_list.secrets["config.py"] == "secrets redacted, lines 3, 4, 7"
        row = str(file_list.get_option_at_index(0).prompt)
        assert "config.py ⚠" in row.splitlines()[0]
        assert row.splitlines()[1].strip().startswith("secrets redacted, lines 3, 4, 7 · ")
        await pilot.press("tab", "c")
        await wait_until(pilot, lambda: clipboard.copies == 1)
        assert AWS_KEY not in clipboard.text and GH_TOKEN not in clipboard.text
        assert "[redacted: AWS access key]" in clipboard.text
        await wait_until(pilot, lambda: any(n.startswith("Copied") for n in notices(app)))
        copied = next(n for n in notices(app) if n.startswith("Copied"))
        assert "Redacted 3 secrets in config.py: AWS access key (line 3)" in copied
