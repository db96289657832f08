"""The real model of the `semantic` extra (installed by the README's test command): shipped,
checked, offline, and similar texts close. Without the extra these tests cannot run and say so.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import make_repo

pytest.importorskip("onnxruntime", reason="the semantic extra is not installed")

from engine.semantic import embedder as embedder_module
from engine.semantic.embedder import SemanticUnavailable, load_embedder


@pytest.fixture(scope="module")
def model() -> embedder_module.MiniLM:
    return load_embedder(threads=1)


def test_vectors_are_unit_length_deterministic_and_close_for_close_meanings(
    model: embedder_module.MiniLM,
) -> None:
    texts = [
        "how is the session cookie signed",
        "sign the session cookie with the application's secret key",
        "parse the command line flags of a subcommand",
    ]
    vectors = model.embed(texts)
    assert vectors.shape == (3, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert np.allclose(model.embed(texts[:1]), vectors[:1], atol=1e-5)  # batching changes nothing
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2] + 0.2


def test_a_damaged_model_file_is_refused_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embedder_module, "MODEL_SHA256", "0" * 64)
    with pytest.raises(SemanticUnavailable, match="missing or damaged"):
        load_embedder()


def _offline_prefix() -> list[str]:
    """`unshare -n` (no network at all) where this machine allows it."""
    unshare = shutil.which("unshare")
    if unshare and subprocess.run([unshare, "-n", "true"], capture_output=True).returncode == 0:
        return [unshare, "-n"]
    return []


def test_rank_uses_the_real_model_offline_in_a_fresh_process(tmp_path: Path) -> None:
    repo = make_repo(
        tmp_path / "repo",
        {
            "app/cookies.py": "def sign(value, key):\n    return hmac_digest(key, value)\n",
            "app/flags.py": "def parse(argv):\n    return [a for a in argv if a]\n",
            "app/views.py": "def show(request):\n    return sign(request.value, 'k')\n",
        },
    )
    env = {**os.environ, "CTXTUI_SEMANTIC": "on"}
    command = [sys.executable, "-m", "ctxtui", "rank", "sign the session cookie", str(repo)]
    done = subprocess.run(
        [*_offline_prefix(), *command, "--json"], capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr
    files = json.loads(done.stdout)
    assert files[0]["path"] == "app/cookies.py"
    assert any(r["kind"] == "semantic" for f in files for r in f["reasons"])
    assert "semantic: embedded" in done.stderr


def test_a_file_name_that_is_not_utf8_is_embedded_by_the_real_model(tmp_path: Path) -> None:
    # session 32: `rank`, `pack` and `index --semantic` died on the tokenizer's TypeError
    # ("TextEncodeInput must be Union[...]") when a Latin-1 file name reached the model
    repo = make_repo(
        tmp_path / "repo",
        {
            os.fsdecode(b"caf\xe9_cookies.py"): "def sign(value, key):\n    return key\n",
            "flags.py": "def parse(argv):\n    return argv\n",
        },
    )
    env = {**os.environ, "CTXTUI_SEMANTIC": "on"}
    command = [sys.executable, "-m", "ctxtui", "index", "--semantic", str(repo)]
    done = subprocess.run([*_offline_prefix(), *command], capture_output=True, env=env)
    assert done.returncode == 0, done.stderr.decode("utf-8", "replace")
    assert b"Traceback" not in done.stderr
    assert b"2   of 2 files have vectors" in done.stdout


@pytest.mark.parametrize("cache_is_a_file", [False, True])
def test_loading_the_model_leaves_no_telemetry_and_prints_nothing_of_its_own(
    tmp_path: Path, cache_is_a_file: bool
) -> None:
    # session 32: onnxruntime wrote Microsoft/DeveloperTools/.onnxruntime/{deviceid,
    # onnxruntime.db} (a telemetry events table) into the user's cache at every model load,
    # and where the cache could not be written printed a coloured "Failed to persist
    # telemetry device ID" warning among ctxtui's lines
    repo = make_repo(tmp_path / "repo", {"app/cookies.py": "def sign(value, key):\n    pass\n"})
    cache = tmp_path / "cache"
    if cache_is_a_file:
        cache.write_text("")
    env = {k: v for k, v in os.environ.items() if k != "ORT_DISABLE_TELEMETRY"}
    env |= {"CTXTUI_SEMANTIC": "on", "XDG_CACHE_HOME": str(cache)}
    command = [sys.executable, "-m", "ctxtui", "rank", "sign the cookie", str(repo)]
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert all(line.startswith("ctxtui: ") for line in done.stderr.splitlines()), done.stderr
    assert "telemetry" not in done.stderr
    if not cache_is_a_file:
        assert not (cache / "Microsoft").exists()
