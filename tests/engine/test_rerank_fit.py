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


@pytest.mark.parametrize(
    ("query", "short"),
    [
        (
            "Add customizable Realm\n\nfor Basic authentication",
            ["customizable", "customizable Realm"],
        ),
        ("Add Realm for the auth", ["Realm", "Realm auth"]),
        ("updated javadoc", ["javadoc", None]),
        ("fix(binding): don't drop `ShouldBindJSON` errors", ["binding", "binding ShouldBindJSON"]),
        ("[core] chore: update context.Abort docs", ["context.Abort", None]),
        ("feat!: add support for ETag option", ["ETag", "ETag option"]),
        ("Router: add parameter handling", ["Router", "Router parameter"]),
        ("refactor(context):Avoid using filepath.Dir twice", ["context", "context filepath.Dir"]),
        ("add `.utc()`/`.iso8601()` string formats", ["utc", "utc iso8601"]),
        ("\n  Fix the #343 bug, 🐛 in the Blueprint", ["Blueprint", None]),
    ],
)
def test_a_short_question_is_the_subjects_first_content_words_as_written(
    query: str, short: list[str | None]
) -> None:
    assert [rerank_fit.short_question(query, n) for n in (1, 2)] == short


def reversed_set(tmp_path: Path, cases: int = 8, rows: int = 30) -> Path:
    """Questions whose gold file is the last of the re-rank's 30 and nothing else marks it:
    only a weight on the log score ratio below 0 (today's order reversed) lifts it."""
    rng = np.random.default_rng(1)
    xs = []
    for _ in range(cases):
        x = rng.normal(0.0, 0.01, (rows, len(FEATURES)))
        x[:, 0] = -np.arange(rows) / 10.0
        x[:, FEATURES.index("long_x_log_score_ratio")] = 0.3 * x[:, 0]
        xs.append(x)
    labels = np.zeros(cases * rows, dtype=bool)
    labels[rows - 1 :: rows] = True
    path = tmp_path / "reversed.npz"
    np.savez_compressed(
        path,
        ids=np.array([f"r{n}" for n in range(cases)]),
        files=np.array(["alpha" if n % 2 else "beta" for n in range(cases)]),
        sets=np.array(["TRAIN"] * cases),
        short=np.array([0, 1] * (cases // 2)),
        gold_counts=np.ones(cases, dtype=np.int64),
        offsets=np.arange(cases + 1) * rows,
        x=np.concatenate(xs),
        labels=labels,
        features=np.array(FEATURES),
    )
    return path


def test_the_floor_keeps_the_weight_on_the_first_stage_at_every_length(tmp_path: Path) -> None:
    data = rerank_fit.Data.read([reversed_set(tmp_path)])
    cases = list(range(len(data.ids)))
    columns = np.arange(len(FEATURES))
    floor = ((0.1, 0.35), (1.0, 1.2))

    def ratio(w: np.ndarray) -> list[float]:
        named = dict(zip(FEATURES, w, strict=True))
        return [rerank_fit.ratio_weight(named, length) for length, _ in floor]

    free = rerank_fit.fit(data, cases, 30, columns, 1e-4, short_weight=1.0)
    assert min(ratio(free)) < 0  # the fit turns today's order over
    held = rerank_fit.fit(data, cases, 30, columns, 1e-4, short_weight=1.0, floor=floor)
    assert all(r >= least - 1e-6 for r, (_, least) in zip(ratio(held), floor, strict=True))
    assert ratio(held)[0] == pytest.approx(0.35)  # the floor binds where the fit pushed
    # the optimality test on a warm start finds the same minimum as the search over faces
    trace: list[np.ndarray] = []
    rerank_fit.fit(data, cases, 30, columns, 1e-4, short_weight=1.0, floor=floor, trace=trace)
    some = cases[2:]
    cold = rerank_fit.fit(data, some, 30, columns, 1e-4, short_weight=1.0, floor=floor)
    warm = rerank_fit.fit(data, some, 30, columns, 1e-4, short_weight=1.0, floor=floor,
                          start_from=trace)  # fmt: skip
    assert np.allclose(cold, warm, atol=1e-5)


def test_short_questions_are_fitted_on_only_with_a_weight(tmp_path: Path) -> None:
    data = rerank_fit.Data.read([reversed_set(tmp_path)])
    assert data.real(range(len(data.ids))) == [0, 2, 4, 6]
    columns = np.arange(len(FEATURES))
    alone = rerank_fit.fit(data, [0, 2, 4, 6], 30, columns, 1e-4)
    assert np.array_equal(rerank_fit.fit(data, range(8), 30, columns, 1e-4), alone)
    assert not np.allclose(rerank_fit.fit(data, range(8), 30, columns, 1e-4, short_weight=0.5),
                           alone)  # fmt: skip


def test_tables_keep_the_short_questions_apart(tmp_path: Path) -> None:
    data = rerank_fit.Data.read([reversed_set(tmp_path)])
    named = dict(rerank_fit.groups(data, range(8), per_repo=False))
    assert named["ALL"] == [0, 2, 4, 6] and named["TRAIN"] == [0, 2, 4, 6]
    assert named["SHORT1"] == named["SHORT"] == [1, 3, 5, 7]
