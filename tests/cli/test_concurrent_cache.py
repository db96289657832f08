"""Two ctxtui processes on one repository at once never corrupt or lose its cache.

The app keeps the repository open (its index maps the cache file) and refreshes as files
change, while a script runs `ctxtui pack` again and again; each side edits its own file and
checks it is answered from the new content. Both run as real processes, started together.
Afterwards the cache loads without a notice and holds what a fresh index holds.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import make_repo

ROUNDS = 4

APP = """
import sys
from pathlib import Path
from ctxtui.workspace import Workspace
from engine import Session

root = Path(sys.argv[1])
workspace = Workspace.open(root)
first = workspace.index  # kept: a replaced cache file must not break an index mapping it
for n in range(int(sys.argv[2])):
    (root / "app_side.py").write_text(f"def app_marker_{n}():\\n    return {n}\\n")
    workspace.refresh(force=True)
    top = workspace.rank(f"app_marker_{n}", Session()).files[0].path
    assert top == "app_side.py", (n, top)
    assert workspace.rank("invoice total", Session()).files[0].path == "billing/invoice.py"
assert first.files[first.path_ids["billing/invoice.py"]].declarations[0].name == "Invoice"
assert len(first.terms_sorted) and first.vocab[first.terms_sorted[0]] == 0
print("app ok")
"""

SCRIPT = """
import io, json, sys
from contextlib import redirect_stdout
from pathlib import Path
from ctxtui.cli import main

root = Path(sys.argv[1])
for n in range(int(sys.argv[2])):
    (root / "script_side.py").write_text(f"def script_marker_{n}():\\n    return {n}\\n")
    out = io.StringIO()
    with redirect_stdout(out):
        code = main(["pack", f"script_marker_{n}", str(root), "--format", "json"])
    assert code == 0, code
    paths = [f["path"] for f in json.loads(out.getvalue())["files"]]
    assert paths[0] == "script_side.py", (n, paths)
print("script ok")
"""

FILES = {
    "billing/invoice.py": "class Invoice:\n    def total(self):\n        return 42\n",
    "auth/session.py": "def open_session(user):\n    return user\n",
    "README.md": "# Shop\n\nInvoices and sessions.\n",
}


def test_app_and_pack_running_at_once_keep_the_cache_whole(tmp_path: Path) -> None:
    from ctxtui.workspace import cache_dir_for
    from engine import build_index

    repo = make_repo(tmp_path / "shop", FILES)
    sides = [
        subprocess.Popen(
            [sys.executable, "-c", code, str(repo), str(ROUNDS)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for code in (APP, SCRIPT)
    ]
    outputs = [side.communicate(timeout=300) for side in sides]
    for side, (out, err) in zip(sides, outputs, strict=True):
        assert side.returncode == 0, err
        assert out.strip().endswith("ok")
        assert "Traceback" not in err
        assert "discarded" not in err
    cache_dir = cache_dir_for(repo.resolve())
    index, report = build_index(repo, cache_dir=cache_dir, workers=1)
    assert report.cache_notice == ""
    # the cache was not lost: at most the two edited files are newer than its last save
    assert set(report.parsed) <= {"app_side.py", "script_side.py"}
    scratch, _ = build_index(repo, workers=1)
    assert list(index.files) == list(scratch.files)
    assert list(index.terms_sorted) == list(scratch.terms_sorted)
    assert sorted(p.name for p in cache_dir.iterdir()) == ["index-o200k_base.bin"]
