"""Settings files, `ctxtui config`, `ctxtui pack --changed` and `ctxtui mcp`'s bad folders,
through the real entry point."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from conftest import make_repo

from ctxtui.cli import main
from ctxtui.settings import load_settings
from engine.roles import Role

FILES = {
    "shop/cart.py": "def add_to_cart(cart, item):\n    cart.append(item)\n    return cart\n",
    "shop/pay.py": "from shop.cart import add_to_cart\n\n\ndef pay(cart):\n    return sum(cart)\n",
    "tests/test_cart.py": "from shop.cart import add_to_cart\n\n\ndef test_add_to_cart():\n"
    "    assert add_to_cart([], 1) == [1]\n",
    "docs/cart.md": "# Cart\n\nadd_to_cart adds an item to the cart.\n",
}


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "shop", FILES, git=True)


def user_file(text: str) -> Path:
    path = Path(os.environ["XDG_CONFIG_HOME"]) / "ctxtui" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_precedence_is_flags_then_repository_then_user_then_defaults(shop: Path) -> None:
    user_file('budget = 9000\nformat = "xml"\nencoding = "cl100k_base"\nexclude = ["*.log"]\n')
    (shop / ".ctxtui.toml").write_text('budget = 3000\nexclude = ["docs/"]\n')
    settings = load_settings(shop)
    assert (settings.budget, settings.fmt.value, settings.encoding) == (3000, "xml", "cl100k_base")
    assert settings.exclude == ("*.log", "docs/")
    assert settings.source("budget") == str(shop / ".ctxtui.toml")
    assert settings.source("fmt").endswith("config.toml")
    assert settings.source("line_numbers") == "default"
    flagged = settings.with_flags(budget=1200, exclude=("tests/",))
    assert flagged.budget == 1200 and flagged.source("budget") == "command line"
    assert flagged.exclude == ("*.log", "docs/", "tests/")


def test_a_broken_file_is_reported_with_its_line_and_ignored(shop: Path) -> None:
    (shop / ".ctxtui.toml").write_text('budget = 3000\nformat = "xml\n')
    settings = load_settings(shop)
    assert settings.budget == 8000  # the whole file is ignored
    assert len(settings.problems) == 1
    assert settings.problems[0].startswith(f"{shop / '.ctxtui.toml'}:2: not valid TOML")


def test_a_bad_value_is_reported_with_its_line_and_only_that_key_ignored(shop: Path) -> None:
    (shop / ".ctxtui.toml").write_text(
        'budget = 3000\n\nformat = "yaml"\nbudgte = 1\n[ranking]\ntests = "maybe"\n'
    )
    settings = load_settings(shop)
    assert settings.budget == 3000 and settings.fmt.value == "markdown"
    assert [p.split(": ", 1)[0].rsplit(":", 1)[1] for p in settings.problems] == ["3", "4", "6"]
    assert "format must be one of markdown, xml, json; ignored" in settings.problems[0]
    assert "unknown setting 'budgte'" in settings.problems[1]


def test_a_settings_file_saved_with_a_byte_order_mark_is_read(shop: Path) -> None:
    # review: Notepad's BOM made the whole file 'not valid TOML (Invalid statement)'
    (shop / ".ctxtui.toml").write_bytes(b'\xef\xbb\xbfbudget = 3000\r\nformat = "xml"\r\n')
    settings = load_settings(shop)
    assert (settings.budget, settings.fmt.value, settings.problems) == (3000, "xml", ())


@pytest.mark.parametrize(
    ("written", "budget"), [('"12k"', 12_000), ('"12,000"', 12_000), ('"1.5k"', 1_500)]
)
def test_a_budget_in_the_settings_is_read_as_the_b_flag_reads_it(
    shop: Path, written: str, budget: int
) -> None:
    # review: `budget = "12k"` was refused ("must be a whole number") though `-b 12k` works
    (shop / ".ctxtui.toml").write_text(f"budget = {written}\n")
    settings = load_settings(shop)
    assert (settings.budget, settings.problems) == (budget, ())


def test_a_budget_in_the_settings_that_is_no_token_count_is_named_and_ignored(
    shop: Path,
) -> None:
    (shop / ".ctxtui.toml").write_text('budget = "lots"\nformat = "xml"\n')
    settings = load_settings(shop)
    assert (settings.budget, settings.fmt.value) == (8000, "xml")
    assert settings.problems == (
        f"{shop / '.ctxtui.toml'}:1: budget must be a number of tokens (12000, 12k), "
        "not 'lots'; ignored",
    )


def test_a_bad_pattern_in_the_settings_is_reported_at_its_line_not_as_a_flag(
    shop: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # review: exclude/include = ["[z-a]"] in .ctxtui.toml was reported as
    # "--exclude: ignored the bad pattern", a flag nobody gave
    (shop / ".ctxtui.toml").write_text('budget = 3000\nexclude = ["docs/", "[z-a]"]\n')
    user_file('include = ["shop/[z-a]"]\n')
    assert main(["pack", "cart", str(shop)]) == 0
    err = capsys.readouterr().err
    assert "--exclude" not in err
    assert f"{shop / '.ctxtui.toml'}:2: exclude: bad pattern '[z-a]'" in err
    assert "config.toml:1: include: bad pattern 'shop/[z-a]'" in err


def test_one_bad_item_of_an_exclude_list_is_named_at_its_line_and_the_rest_kept(
    shop: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # review of session 27: `exclude = ["docs/", 3]` dropped docs/ too ("must be a list")
    (shop / ".ctxtui.toml").write_text(
        'exclude = [\n  "docs/",\n  3,\n  "",\n  "[z-a]",\n  "*.log",\n]\n'
    )
    settings = load_settings(shop)
    assert settings.exclude == ("docs/", "*.log")
    assert main(["pack", "cart", str(shop)]) == 0
    err = capsys.readouterr().err
    toml = shop / ".ctxtui.toml"
    assert f"{toml}:3: exclude: 3 is not a glob pattern; ignored" in err
    assert f"{toml}:4: exclude: an empty pattern; ignored" in err
    assert f"{toml}:5: exclude: bad pattern '[z-a]'" in err
    assert "must be a list" not in err


def test_a_bad_ranking_value_is_reported_on_its_line_and_only_that_key_ignored(
    shop: Path,
) -> None:
    (shop / ".ctxtui.toml").write_text(
        '[ranking]\ndocs = 0.5\ntests = "maybe"\n\ngraph_boost = inf\nfoo = 2\n'
        "mention_boost = 1e308\nconfig = 1000\n"
    )
    settings = load_settings(shop)
    assert dict(settings.ranking) == {"docs": 0.5, "config": 1000.0}
    assert settings.source("ranking.docs").endswith(".ctxtui.toml")
    assert settings.source("ranking.tests") == "default"
    lines = [p.split(": ", 1)[0].rsplit(":", 1)[1] for p in settings.problems]
    assert lines == ["3", "5", "6", "7"]
    assert "ranking.graph_boost must be a number from 0 to 1,000" in settings.problems[1]


@pytest.mark.parametrize("value", ["inf", "1e308", "nan", "-1"])
@pytest.mark.parametrize("key", ["graph_boost", "mention_boost", "docs"])
def test_a_ranking_value_out_of_range_leaves_the_ranking_as_it_is(
    shop: Path, capsys: pytest.CaptureFixture[str], key: str, value: str
) -> None:
    question = "shop/cart.py add_to_cart pay"
    expected = _ranked(shop, question)
    (shop / ".ctxtui.toml").write_text(f"[ranking]\n{key} = {value}\n")
    capsys.readouterr()
    assert main(["rank", question, str(shop), "--json", "--no-cache"]) == 0
    out, err = capsys.readouterr()
    assert [item["path"] for item in json.loads(out)] == expected
    assert "Infinity" not in out and "NaN" not in out
    assert err.count("\n") == 1 and f"ranking.{key} must be" in err


def test_ranking_settings_turn_tests_on_or_off(shop: Path) -> None:
    question = "add_to_cart"
    (shop / ".ctxtui.toml").write_text("[ranking]\ntests = false\ndocs = 1\n")
    weights = load_settings(shop).weights
    assert dict(weights.priors)[Role.TEST] == 0.0 and dict(weights.priors)[Role.DOC] == 1.0
    off = _ranked(shop, question)
    assert "tests/test_cart.py" not in off
    (shop / ".ctxtui.toml").write_text("[ranking]\ntests = true\n")
    assert "tests/test_cart.py" in _ranked(shop, question)


def _ranked(root: Path, question: str) -> list[str]:
    import io
    from contextlib import redirect_stdout

    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["rank", question, str(root), "--json", "--no-cache"]) == 0
    return [item["path"] for item in json.loads(out.getvalue())]


def test_pack_uses_the_settings_and_flags_override_them(
    shop: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (shop / ".ctxtui.toml").write_text(
        'format = "xml"\nbudget = 1000\ninstructions = "Answer in French."\ninclude = ["shop/"]\n'
    )
    assert main(["pack", "pay the cart", str(shop)]) == 0
    out = capsys.readouterr().out
    assert out.startswith('<context query="pay the cart" root="shop" budget="1000"')
    assert "<instructions>\nAnswer in French.\n</instructions>" in out
    assert 'path="tests/test_cart.py"' not in out and 'path="docs/cart.md"' not in out
    assert main(["pack", "pay the cart", str(shop), "--format", "json", "-b", "2000"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["budget"] == 2000 and document["instructions"] == "Answer in French."


@pytest.mark.parametrize("fence", ["```python", "~~~", "````"])
def test_instructions_with_an_unclosed_fence_leave_the_markdown_pack_whole(
    shop: Path, capsys: pytest.CaptureFixture[str], fence: str
) -> None:
    # review: the fence the instructions opened ran on into the pack: its title, question,
    # totals and first file became code, and each file's fence after it turned inside out
    from markdown_it import MarkdownIt  # rich's Markdown parser (CommonMark)

    (shop / ".ctxtui.toml").write_text(
        f'instructions = """Reply with a patch, like this:\n{fence}\ndef fix(): ..."""\n'
    )
    assert main(["pack", "pay the cart", str(shop), "-b", "2000"]) == 0
    out = capsys.readouterr().out
    blocks = MarkdownIt("commonmark").parse(out)
    headings = [b.map[0] for b in blocks if b.type == "heading_open" and b.map]
    fences = [b for b in blocks if b.type == "fence"]
    lines = out.splitlines()
    assert lines[headings[0]].startswith("# Context pack: shop")
    files = [lines[h] for h in headings[1:]]
    assert files and all(name.startswith("## ") for name in files)
    assert [f.content for f in fences[1:]] == [
        (shop / name[3:]).read_text() for name in files
    ]  # each file's code, whole, is one block, and the instructions' example another
    assert fences[0].content == "def fix(): ...\n"


def test_config_prints_each_setting_and_where_it_came_from(
    shop: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    user = user_file("budget = 9000\n")
    (shop / ".ctxtui.toml").write_text('format = "json"\n[ranking]\ntests = false\n')
    assert main(["config", str(shop)]) == 0
    out = capsys.readouterr().out
    lines = {line.split()[0]: line for line in out.splitlines() if line.strip()}
    assert lines["budget"].split()[1:] == ["9000", str(user)]
    assert lines["format"].split()[1:] == ['"json"', str(shop / ".ctxtui.toml")]
    assert lines["encoding"].split()[1:] == ['"o200k_base"', "default"]
    assert lines["ranking.tests"].split()[1:] == ["0.0", str(shop / ".ctxtui.toml")]
    assert "flags > repository file > user file > defaults" in out
    assert main(["config", str(shop), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["settings"]["budget"] == {"value": 9000, "source": str(user)}


def test_config_reports_a_broken_file_on_stderr(
    shop: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (shop / ".ctxtui.toml").write_text("budget = = 3\n")
    assert main(["config", str(shop)]) == 0
    captured = capsys.readouterr()
    assert "ctxtui: " in captured.err and ".ctxtui.toml:1: not valid TOML" in captured.err
    assert "budget" in captured.out


def _not_a_file(path: Path, kind: str) -> None:
    if kind == "folder":
        path.mkdir(parents=True)
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("nowhere")


SETTINGS_PROBLEMS = {
    "folder": "is a folder, not a settings file; ignored",
    "fifo": "cannot read (not a regular file); ignored",
    "broken link": "cannot read (a broken link); ignored",
}


@pytest.mark.parametrize("kind", list(SETTINGS_PROBLEMS))
def test_a_settings_file_that_is_no_file_is_reported_and_the_defaults_used(
    shop: Path, kind: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Review, session 33: a folder (or a FIFO, a broken link) named `.ctxtui.toml` was
    passed over without a word, where a broken file is reported."""
    if kind == "fifo" and not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    path = shop / ".ctxtui.toml"
    _not_a_file(path, kind)
    said = f"ctxtui: {path}: {SETTINGS_PROBLEMS[kind]}\n"
    assert main(["config", "--json", str(shop)]) == 0
    captured = capsys.readouterr()
    assert captured.err == said
    document = json.loads(captured.out)
    assert document["settings"]["budget"] == {"value": 8000, "source": "default"}
    assert document["problems"] == [said.removeprefix("ctxtui: ").rstrip()]
    assert main(["pack", "add to cart", str(shop), "--format", "json"]) == 0
    captured = capsys.readouterr()
    assert captured.err == said and json.loads(captured.out)["budget"] == 8000


def test_a_user_settings_file_that_is_a_folder_is_reported(
    shop: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = Path(os.environ["XDG_CONFIG_HOME"]) / "ctxtui" / "config.toml"
    _not_a_file(path, "folder")
    (shop / ".ctxtui.toml").write_text("budget = 3000\n")  # the repository's still applies
    assert main(["pack", "add to cart", str(shop), "--format", "json"]) == 0
    captured = capsys.readouterr()
    assert captured.err == f"ctxtui: {path}: is a folder, not a settings file; ignored\n"
    assert json.loads(captured.out)["budget"] == 3000


def test_pack_changed_pins_the_changes_and_adds_their_diff(
    shop: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (shop / "shop" / "pay.py").write_text(
        FILES["shop/pay.py"] + "\n\ndef refund(cart):\n    pass\n"
    )
    (shop / "shop" / "coupon.py").write_text("def coupon():\n    return 5\n")
    assert main(["pack", "add to cart", str(shop), "--changed", "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert [f["path"] for f in document["changes"]["files"]] == ["shop/coupon.py", "shop/pay.py"]
    pinned = {f["path"] for f in document["files"] if f.get("pinned")}  # only when true
    assert pinned == {"shop/coupon.py", "shop/pay.py"}
    assert "+def refund(cart):" in document["changes"]["diff"]


@pytest.mark.parametrize("fmt", ["markdown", "xml", "json"])
def test_pack_changed_leaves_out_the_diff_of_a_pack_ctxtui_wrote_into_the_repository(
    shop: Path, fmt: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A pack written into the repository is left out of the next pack, and so is its diff
    (review: `pack -o context.md` then `pack --changed` put the whole old pack in the Changes
    section as an untracked file, 1,479 of its 1,721 tokens, old copies of files and all)."""
    out = shop / f"context.{ {'markdown': 'md'}.get(fmt, fmt) }"
    assert main(["pack", "add to cart", str(shop), "--format", fmt, "-o", str(out)]) == 0
    subprocess.run(["git", "add", out.name], cwd=shop, check=True)  # kept: a tracked pack too
    subprocess.run(["git", "commit", "-qm", "the pack"], cwd=shop, check=True)
    assert main(["pack", "pay the cart", str(shop), "--format", fmt, "-o", str(out)]) == 0
    (shop / "shop" / "coupon.py").write_text("def coupon():\n    return 5\n")
    (shop / "notes").mkdir()
    assert (
        main(["pack", "coupon", str(shop), "--format", fmt, "-o", str(shop / "notes" / out.name)])
        == 0
    )
    capsys.readouterr()
    assert main(["pack", "coupon", str(shop), "--changed", "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    diff = document["changes"]["diff"]
    listed = [f["path"] for f in document["changes"]["files"]]
    assert listed == [out.name, f"notes/{out.name}", "shop/coupon.py"]  # still listed
    assert diff.count("… a pack ctxtui wrote: its diff left out") == 2
    assert "+def coupon():" in diff
    assert "add_to_cart" not in diff and "cart.append" not in diff  # no old file content


def test_pack_changed_with_a_base_branch(shop: Path, capsys: pytest.CaptureFixture[str]) -> None:
    subprocess.run(["git", "checkout", "-q", "-b", "work"], cwd=shop, check=True)
    (shop / "shop" / "cart.py").write_text(FILES["shop/cart.py"] + "# reviewed\n")
    subprocess.run(["git", "commit", "-qam", "review"], cwd=shop, check=True)
    assert main(["pack", "cart", str(shop), "--changed=main"]) == 0
    out = capsys.readouterr().out
    assert "against main · 1 file changed" in out and "+# reviewed" in out


def _unrelated(shop: Path, tmp_path: Path) -> Path:
    """`shop` on a branch `work` with a history of its own, unrelated to main's."""
    subprocess.run(["git", "checkout", "-q", "--orphan", "work"], cwd=shop, check=True)
    (shop / "shop" / "cart.py").write_text(FILES["shop/cart.py"] + "# rewritten\n")
    subprocess.run(["git", "commit", "-qam", "a new start"], cwd=shop, check=True)
    return shop


def _shallow(shop: Path, tmp_path: Path) -> Path:
    """A clone of `shop`, one commit deep, on a branch `work` one commit past main."""
    subprocess.run(["git", "checkout", "-q", "-b", "work"], cwd=shop, check=True)
    (shop / "shop" / "cart.py").write_text(FILES["shop/cart.py"] + "# reviewed\n")
    subprocess.run(["git", "commit", "-qam", "review"], cwd=shop, check=True)
    clone = tmp_path / "clone"
    subprocess.run(
        ["git", "clone", "-q", "--depth=1", "--no-single-branch", f"file://{shop}", str(clone)],
        check=True,
    )
    subprocess.run(["git", "branch", "-q", "main", "origin/main"], cwd=clone, check=True)
    return clone


@pytest.mark.parametrize("history", [_unrelated, _shallow])
def test_pack_changed_with_no_merge_base_says_what_it_compared(
    shop: Path, tmp_path: Path, history: object, capsys: pytest.CaptureFixture[str]
) -> None:
    # session 34: with no merge base of BASE and HEAD (unrelated histories, a shallow clone)
    # the diff was silently against BASE itself, showing, reversed, what BASE has that HEAD
    # never had as if it were the work; the pack is the same, and a notice now says so
    assert callable(history)
    repo = history(shop, tmp_path)
    main_commit = subprocess.run(
        ["git", "rev-parse", "main"], cwd=repo, check=True, capture_output=True, text=True
    ).stdout.strip()
    assert main(["pack", "cart", str(repo), "--changed=main"]) == 0
    captured = capsys.readouterr()
    assert captured.err == (
        "ctxtui: no merge base of main and HEAD (unrelated histories, or a shallow clone):"
        f" the changes are against main itself ({main_commit[:12]})\n"
    )
    assert "## Changes" in captured.out


def test_pack_changed_says_so_when_there_is_nothing_to_add(
    shop: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["pack", "cart", str(shop), "--changed"]) == 0
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1
    assert "ctxtui: no changes against HEAD: packing without changes" in captured.err
    assert "## Changes" not in captured.out
    plain = make_repo(tmp_path / "plain", {"a.py": "def cart():\n    pass\n"})
    assert main(["pack", "cart", str(plain), "--changed"]) == 0
    assert "is not in a git work tree: packing without changes" in capsys.readouterr().err


def test_pack_changed_with_a_damaged_git_index_fails_and_says_why(
    shop: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Session 33: a damaged index made `git diff` fail and `pack --changed` say "no changes
    against HEAD", exit 0, the edits left out. The work failed: one line and exit 1."""
    (shop / "shop" / "cart.py").write_text("def add_to_cart(cart, item):\n    return [item]\n")
    (shop / ".git" / "index").write_bytes(b"DIRC\0\0\0\2")
    assert main(["pack", "cart", str(shop), "--changed"]) == 1
    captured = capsys.readouterr()
    assert captured.err == (
        "ctxtui: --changed: git diff failed, so the changes are unknown:"
        " .git/index: index file smaller than expected\n"
    )
    assert captured.out == ""


def test_the_apps_copy_fails_with_gits_reason_when_the_changes_cannot_be_read_again(
    shop: Path,
) -> None:
    """The copy reads the packed changes again (workspace.jobs.fresh_pack): a git that now
    fails raises GitError, which the app's copy worker shows as its error notification,
    rather than copying a pack without the diff as if nothing had changed."""
    from ctxtui.workspace import Choices, ReadWriteGate, Workspace, fresh_pack, working_changes
    from engine.errors import GitError
    from engine.model import Format

    (shop / "shop" / "cart.py").write_text("def add_to_cart(cart, item):\n    return [item]\n")
    workspace = Workspace.open(shop, use_cache=False)
    changes, _notice = working_changes(workspace.root)
    choices = Choices(frozenset(), {}, 8000, Format.MARKDOWN, changes=changes)
    rendered, _moved = fresh_pack(workspace, ReadWriteGate(), "cart", choices, None)
    assert "return [item]" in rendered.text
    (shop / ".git" / "index").write_bytes(b"garbage")
    with pytest.raises(GitError, match="index file smaller than expected"):
        fresh_pack(workspace, ReadWriteGate(), "cart", choices, None)


def test_pack_changed_without_git_on_the_path_says_so(
    shop: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A work tree read without git (not installed) is not called "not a git work tree"."""
    (tmp_path / "no-git").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "no-git"))
    assert main(["pack", "cart", str(shop), "--changed"]) == 0
    captured = capsys.readouterr()
    assert captured.err == (
        "ctxtui: git is not installed (not found on PATH): packing without changes\n"
    )
    assert "def add_to_cart" in captured.out and "## Changes" not in captured.out


def test_pack_changed_with_a_base_outside_git_is_bad_usage(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Review, session 33: `--changed=main` in a folder outside git packed without changes
    and exited 0, as if the diff asked for by name were optional. Exit 2, as for a base git
    does not know: the command line asks what this folder cannot answer."""
    plain = make_repo(tmp_path / "plain", {"a.py": "def cart():\n    pass\n"})
    assert main(["pack", "cart", str(plain), "--changed=main"]) == 2
    captured = capsys.readouterr()
    assert captured.err == (
        f"ctxtui: --changed: {plain} is not in a git work tree: no 'main' to diff against\n"
    )
    assert captured.out == ""


def test_pack_changed_before_the_folder_says_how_to_write_it(
    shop: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # `pack Q --changed DIR` takes DIR for the BASE (argparse's nargs="?"); from a folder
    # outside git this packed the current folder without changes, exit 0, before session 33
    monkeypatch.chdir(shop.parent)
    assert main(["pack", "cart", "--changed", "shop"]) == 2
    assert capsys.readouterr().err == (
        f"ctxtui: --changed: {shop.parent} is not in a git work tree: no 'shop' to diff against"
        " (to pack the folder shop, write it before --changed)\n"
    )
    assert main(["pack", "cart", "shop", "--changed"]) == 0


def test_pack_changed_with_a_base_and_no_git_on_the_path_fails(
    shop: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Exit 1: the command is right, the work cannot be done on this machine."""
    (tmp_path / "no-git").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "no-git"))
    assert main(["pack", "cart", str(shop), "--changed", "main"]) == 1
    captured = capsys.readouterr()
    assert captured.err == (
        "ctxtui: --changed: git is not installed (not found on PATH): cannot diff against 'main'\n"
    )
    assert captured.out == ""


def test_pack_changed_with_an_unknown_base_is_bad_usage(
    shop: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["pack", "cart", str(shop), "--changed", "nowhere"]) == 2
    assert capsys.readouterr().err == (
        "ctxtui: --changed: unknown base 'nowhere': not a branch or commit\n"
    )


def test_mcp_on_a_missing_folder_fails_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["mcp", str(tmp_path / "nowhere")]) == 1
    assert capsys.readouterr().err == f"ctxtui: no such folder: {tmp_path / 'nowhere'}\n"
