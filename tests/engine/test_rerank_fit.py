"""scripts/rerank_fit.py, the re-rank's fitting harness: the fit learns a column that tells gold
files apart, `compare` pairs two row files per set, `misses` places the gold files a model
leaves outside its top 10 by where the ranking put them before any re-rank."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
import rerank_fit

from engine.rerank import FEATURES


def synthetic(tmp_path: Path, cases: int = 12, rows: int = 40) -> Path:
    """Questions of `rows` candidates whose gold file sits at place 20 before the re-rank and
    carries `code_language`, which no other candidate has; two repositories."""
    rng = np.random.default_rng(0)
    xs, labels, ids, files, places = [], [], [], [], []
    for n in range(cases):
        x = rng.normal(0.0, 0.1, (rows, len(FEATURES)))
        x[:, 0] = -np.arange(rows) / 10.0  # log score ratio: today's order
        x[:, FEATURES.index("code_language")] = 0.0
        y = np.zeros(rows, dtype=bool)
        y[20] = True
        x[20, FEATURES.index("code_language")] = 1.0
        xs.append(x)
        labels.append(y)
        ids.append(f"q{n}")
        files.append("alpha" if n % 2 else "beta")
        places.append([20, 300] if n == 0 else [20])  # the first asks for a second file too
    path = tmp_path / "set.npz"
    np.savez_compressed(
        path,
        ids=np.array(ids),
        files=np.array(files),
        langs=np.array(["python"] * cases),
        sets=np.array(["TRAIN2"] * cases),
        gold_counts=np.array([len(p) for p in places]),
        offsets=np.arange(cases + 1) * rows,
        x=np.concatenate(xs),
        labels=np.concatenate(labels),
        scores=np.ones(cases * rows),
        paths=np.array([f"f{i}.py" for i in range(cases * rows)]),
        features=np.array(FEATURES),
        gold_places=np.array([json.dumps(p) for p in places]),
    )
    return path


def test_the_fit_lifts_the_column_that_marks_gold_files_out_of_fold(tmp_path: Path) -> None:
    data = rerank_fit.Data.read([synthetic(tmp_path)])
    setting = rerank_fit.Setting("all", 30, 1e-3, 0)
    train = [i for i in range(len(data.ids)) if data.repo(i) == "alpha"]
    w = setting.fit(data, train)
    assert w[FEATURES.index("code_language")] > 0
    held = [i for i in range(len(data.ids)) if data.repo(i) == "beta"]
    before = [rerank_fit.metrics(data, i, None, 50)["MRR"] for i in held]
    after = [setting.metrics(data, i, w)["MRR"] for i in held]
    assert max(before) < 0.1 and min(after) == 1.0


def test_compare_and_misses_read_the_rows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = synthetic(tmp_path)
    data = rerank_fit.Data.read([path])
    rows = {}
    for i in range(len(data.ids)):
        today = rerank_fit.metrics(data, i, None, 50)
        w = np.zeros(len(FEATURES))
        w[FEATURES.index("code_language")] = 10.0
        rows[str(data.ids[i])] = {"file": str(data.files[i]), "set": "TRAIN2", "today": today,
                                  "new": rerank_fit.metrics(data, i, w, 30)}  # fmt: skip
    rows_path = tmp_path / "rows.json"
    rows_path.write_text(json.dumps(rows))
    assert rerank_fit.compare([rows_path], "A:today,B:new") == 0
    out = capsys.readouterr().out
    assert "TRAIN2" in out and "MRR 0.048->1.000" in out and "12/0" in out
    assert rerank_fit.misses([path], rows_path, "today") == 0
    assert "12 questions miss" in capsys.readouterr().out
    rerank_fit.misses([path], rows_path, "new")
    out = capsys.readouterr().out  # only q0's second file, past 200, is still missed
    assert "1 questions miss" in out and ">200 1" in out and "1-30" not in out


def test_the_bootstrap_interval_holds_the_mean_change() -> None:
    a = np.zeros(50)
    b = np.r_[np.ones(10), np.zeros(40)]
    mean, low, high = rerank_fit.bootstrap(a, b)
    assert mean == pytest.approx(0.2) and low < mean < high and low > 0
