"""The semantic stage through the shared workspace and the command line, with a fake model.

Proves: without the extra (or switched off) ranking is exactly the lexical engine's; with it,
a complete question embeds only what its re-rank needs and is fused; a keystroke never runs
the model; the whole repository is embedded incrementally and the cache is reused, or
discarded with a notice when damaged; `rank --json` says which files meaning moved.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import make_repo
from semantic_support import SHOP, SHOP_QUESTION, FakeEmbedder

import engine
from ctxtui.cli import main
from ctxtui.workspace import Workspace
from ctxtui.workspace import semantic as semantic_module
from ctxtui.workspace.notices import counted
from engine.model import ReasonKind, Session
from engine.semantic import store as vector_store
from engine.semantic.embedder import MODEL_ID, SemanticUnavailable

pytestmark = pytest.mark.usefixtures("tokenizer_loaded_once")


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "shop", SHOP)


def test_without_the_extra_ranking_is_exactly_the_lexical_engine(
    shop: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CTXTUI_SEMANTIC", "on")
    monkeypatch.setattr(semantic_module, "extra_installed", lambda: False)
    workspace = Workspace.open(shop)
    assert workspace.semantic is None
    assert workspace.rank(SHOP_QUESTION, Session()) == engine.rank(workspace.index, SHOP_QUESTION)


def test_switched_off_ranking_is_exactly_the_lexical_engine(
    shop: Path, fake_model: list[FakeEmbedder], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CTXTUI_SEMANTIC", "off")
    workspace = Workspace.open(shop)
    assert workspace.semantic is None
    assert workspace.rank(SHOP_QUESTION, Session()) == engine.rank(workspace.index, SHOP_QUESTION)
    assert fake_model == []


def test_a_complete_question_embeds_its_rerank_and_is_fused(
    shop: Path, fake_model: list[FakeEmbedder]
) -> None:
    workspace = Workspace.open(shop)
    lexical = engine.rank(workspace.index, SHOP_QUESTION)
    fused = workspace.rank(SHOP_QUESTION, Session())
    assert fused.files[0].path == "shop/refunds.py" != lexical.files[0].path
    assert any(r.kind is ReasonKind.SEMANTIC for r in fused.files[0].reasons)
    embedded = {text.split("\n")[0] for text in fake_model[0].texts}
    assert embedded == {f.path for f in lexical.files} | {SHOP_QUESTION}
    assert workspace.semantic is not None and workspace.semantic.last is not None
    assert workspace.semantic.last.files == len(lexical.files)


def test_a_keystroke_never_runs_the_model_and_fuses_once_prepared(
    shop: Path, fake_model: list[FakeEmbedder]
) -> None:
    workspace = Workspace.open(shop)
    typed = workspace.rank(SHOP_QUESTION, Session(), complete=False)
    assert typed == engine.rank(workspace.index, SHOP_QUESTION, complete=False)
    assert fake_model == []  # not even loaded
    assert workspace.prepare_semantic(typed) is True
    again = workspace.rank(SHOP_QUESTION, Session(), complete=False)
    assert again.files[0].path == "shop/refunds.py"


def test_the_whole_repository_is_embedded_once_and_the_cache_reused(
    shop: Path, fake_model: list[FakeEmbedder]
) -> None:
    workspace = Workspace.open(shop)
    assert workspace.semantic is not None
    reports: list[engine.Progress] = []
    first = workspace.embed_all(on_progress=reports.append, first=[2])
    assert first == 4 and reports[-1].done == reports[-1].total == 4
    assert fake_model[0].texts[0].startswith(workspace.index.files[2].path + "\n")
    assert workspace.semantic.status(workspace.index).ready
    reopened = Workspace.open(shop)
    assert reopened.embed_all() == 0
    reopened.rank(SHOP_QUESTION, Session())
    assert [t for m in fake_model[1:] for t in m.texts] == [SHOP_QUESTION]  # the question only


def test_a_stopped_background_run_keeps_what_it_embedded(
    shop: Path, fake_model: list[FakeEmbedder], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(semantic_module, "SLICE_FILES", 1)
    workspace = Workspace.open(shop)
    workspace.embed_all(should_stop=lambda: bool(fake_model and fake_model[-1].texts))
    assert workspace.semantic is not None
    status = workspace.semantic.status(workspace.index)
    assert 0 < status.embedded < status.files and not status.running
    assert Workspace.open(shop).semantic.status(workspace.index).embedded == status.embedded  # type: ignore[union-attr]


def _version_1(data: bytes) -> bytes:
    """The cache with its header saying format 1 (vectors by file, before chunk sharing)."""
    return data.replace(b'"version": 2', b'"version": 1', 1)


@pytest.mark.parametrize("damage", [lambda data: b"junk", _version_1], ids=["junk", "version 1"])
def test_a_damaged_or_old_vector_cache_is_discarded_with_a_notice(
    shop: Path, fake_model: list[FakeEmbedder], damage: Callable[[bytes], bytes]
) -> None:
    workspace = Workspace.open(shop)
    workspace.embed_all()
    assert workspace.cache_dir is not None
    cache = vector_store.vectors_file(workspace.cache_dir, MODEL_ID)
    cache.write_bytes(damage(cache.read_bytes()))
    reopened = Workspace.open(shop)
    assert reopened.semantic is not None
    assert reopened.semantic.notice.startswith("vector cache discarded")
    assert reopened.semantic.status(reopened.index).embedded == 0
    assert reopened.rank(SHOP_QUESTION, Session()).files[0].path == "shop/refunds.py"


def test_an_edited_file_costs_only_its_changed_chunks_even_after_a_restart(
    tmp_path: Path, fake_model: list[FakeEmbedder]
) -> None:
    body = "".join(f"    x += {j}\n" for j in range(8))
    steps = [f"def step_{i}(x):\n{body}" for i in range(12)]
    repo = make_repo(tmp_path / "shop", {**SHOP, "shop/steps.py": "\n".join(steps)})
    assert Workspace.open(repo).embed_all() == 4 + 4  # the shop's 4 files, steps.py's 4 chunks
    steps[4] = steps[4].replace("x += 5", "x -= 5")  # one line of the second chunk
    (repo / "shop/steps.py").write_text("\n".join(steps))
    edited = Workspace.open(repo)
    assert edited.semantic is not None
    edited.semantic.save(edited.index)  # saved before steps.py is embedded again
    assert Workspace.open(repo).embed_all() == 1
    assert "x -= 5" in fake_model[-1].texts[0]


def test_a_file_edited_since_the_index_does_not_rewrite_the_cache_on_every_question(
    shop: Path, fake_model: list[FakeEmbedder], monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = Workspace.open(shop)
    (shop / "shop/report.py").write_text("def compute_report(cart):\n    return 0\n")
    saved: list[int] = []
    save = vector_store.save

    def counted(path: Path, store: vector_store.VectorStore) -> None:
        saved.append(1)
        save(path, store)

    monkeypatch.setattr(semantic_module.vector_store, "save", counted)
    for _ in range(3):
        ranking = workspace.rank(SHOP_QUESTION, Session())
    assert saved == [1]  # the others' vectors, once; the edited file waits for a refresh
    assert not any(r.kind is ReasonKind.SEMANTIC for f in ranking.files for r in f.reasons)


def test_a_damaged_model_leaves_the_ranking_lexical(
    shop: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken() -> FakeEmbedder:
        raise SemanticUnavailable("the semantic model file x is missing or damaged")

    monkeypatch.setenv("CTXTUI_SEMANTIC", "on")
    monkeypatch.setattr(semantic_module, "extra_installed", lambda: True)
    monkeypatch.setattr(semantic_module, "load_embedder", broken)
    workspace = Workspace.open(shop)
    assert workspace.rank(SHOP_QUESTION, Session()) == engine.rank(workspace.index, SHOP_QUESTION)
    assert workspace.semantic is not None and "damaged" in workspace.semantic.failed


def test_rank_json_names_the_semantic_evidence_and_says_what_it_embedded(
    shop: Path, fake_model: list[FakeEmbedder], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["rank", SHOP_QUESTION, str(shop), "--json"]) == 0
    out, err = capsys.readouterr()
    files = json.loads(out)
    assert files[0]["path"] == "shop/refunds.py"
    assert any(r["kind"] == "semantic" for r in files[0]["reasons"])
    assert "semantic: embedded" in err and "ctxtui index --semantic" in err
    assert main(["rank", SHOP_QUESTION, str(shop), "--json"]) == 0
    assert "semantic: embedded" not in capsys.readouterr().err  # warm: nothing to say


def test_the_embedding_notice_counts_in_the_singular_too() -> None:
    assert [counted(1, "file"), counted(0, "chunk"), counted(2048, "chunk")] == [
        "1 file", "0 chunks", "2,048 chunks"
    ]  # fmt: skip


def test_no_semantic_flag_ranks_by_words_only(
    shop: Path, fake_model: list[FakeEmbedder], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["rank", SHOP_QUESTION, str(shop), "--json", "--no-semantic"]) == 0
    files = json.loads(capsys.readouterr().out)
    assert all(r["kind"] != "semantic" for f in files for r in f["reasons"])
    assert fake_model == []


def test_index_semantic_embeds_everything_and_reports_it(
    shop: Path, fake_model: list[FakeEmbedder], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["index", str(shop), "--semantic"]) == 0
    out, err = capsys.readouterr()
    assert "semantic            4   of 4 files have vectors" in out
    assert "embedded 4 chunks" in err


def test_index_semantic_without_the_extra_is_one_line_and_exit_1(
    shop: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["index", str(shop), "--semantic"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install 'ctxtui[semantic]'" in err
