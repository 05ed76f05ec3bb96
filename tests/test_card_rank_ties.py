"""The card's EuroEval rank score (issue #34 review): equal scores tie exactly, at any n, as in
EuroEval (equal means, equal rank scores; the best all exactly 1); a one-model card's rank score is
1 by definition and printed without an interval, saying why. Through the console script on loopback
runs of the card fixture's three Lao tasks, and on the statistics directly."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np
import pytest

from conftest import cli
from test_card_suite import FIX, TASKS, _scripts
from glotbench.stats.card import TaskUnits, euroeval_rank_scores, language_scores, rank_scores, ratio_rows



def _units(name: str, outcomes: dict[str, list[int]]) -> TaskUnits:
    stats = {m: np.stack([np.array(v, dtype=float), np.ones(len(v))], axis=1) for m, v in outcomes.items()}
    return TaskUnits(name, stats, ratio_rows(), 0.25, 1.0)


@pytest.mark.parametrize("seed", range(8))
def test_equal_accuracy_on_other_items_gets_the_same_rank_score_at_small_n(seed):
    # a and b: 3 of 5 right, on different items; c: 1 of 5. Ten resamples' means differ between a and
    # b (they were up to a pooled SD apart); their scores do not: equal rank scores, both the best.
    t = _units("t", {"a": [1, 1, 1, 0, 0], "b": [0, 0, 1, 1, 1], "c": [1, 0, 0, 0, 0]})
    sc = language_scores([t], ["a", "b", "c"], resamples=200, seed=seed)
    assert sc.task_rank["a"]["t"] == sc.task_rank["b"]["t"] == 1.0
    assert sc.task_rank["c"]["t"] > 1.0
    u = _units("u", {"a": [1, 0, 0, 0], "b": [0, 0, 0, 1], "c": [1, 1, 1, 1]})  # a tie below the best
    sc = language_scores([t, u], ["a", "b", "c"], resamples=200, seed=seed)
    assert sc.task_rank["a"]["u"] == sc.task_rank["b"]["u"] > 1.0 == sc.task_rank["c"]["u"]
    assert sc.rank_score["a"].value == sc.rank_score["b"].value


def test_rank_scores_is_euroevals_formula_for_given_means():
    raw = {"a": [0.8, 0.9], "b": [0.6, 0.7], "c": [0.7, 0.8]}
    means = {m: float(np.mean(v)) for m, v in raw.items()}
    assert rank_scores(means, raw) == euroeval_rank_scores(raw)
    sd = float(np.std([x for v in raw.values() for x in v]))
    tied = rank_scores({"a": 0.85, "b": 0.7, "c": 0.7}, raw)  # equal means: equal scores, exactly
    assert tied["a"] == 1.0 and tied["b"] == tied["c"] == pytest.approx(1 + 0.15 / sd)


def test_one_model_has_rank_score_one_and_no_interval():
    t = _units("t", {"a": [1, 0, 1, 1, 0, 1]})
    iv = language_scores([t, _units("u", {"a": [0, 1, 1]})], ["a"], resamples=300, seed=1).rank_score["a"]
    assert (iv.value, iv.ci_low, iv.ci_high) == (1.0, 1.0, 1.0)


@pytest.fixture
def runs(srv, tmp_path):
    srv.configure(model_answers=_scripts())  # good, mid, mid2 (16 of 24, other items)
    env = {"GLOTBENCH_CACHE_DIR": str(tmp_path / "cache")}
    for model in ("good", "mid", "mid2"):
        for task in TASKS:
            r = cli("run", task, "--model", srv.spec(model), "--include-path", str(FIX / "tasks"), "--data",
                    str(FIX / "data" / f"{task}.jsonl"), "--out", str(tmp_path / model / task), env=env)
            assert r.returncode == 0, r.stdout + r.stderr
    return tmp_path, env


def _card(env: dict, *dirs: Path, fmt: str = "json"):
    r = cli("board", *map(str, dirs), "--pivot", "language", "--format", fmt, env=env)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stdout + r.stderr
    return json.loads(r.stdout)["tables"][0]["card"] if fmt == "json" else r.stdout


def _short(model: str) -> str:
    return model.split(":")[1].split("@")[0]


def test_the_card_ties_equal_models_and_gives_one_model_no_interval(runs):
    root, env = runs
    # mid and mid2: 16 of 24 right in every task, on other items: the same rank scores, below good's 1
    card = _card(env, root / "good", root / "mid", root / "mid2")
    rows = {_short(m["model"]): m for m in card["models"]}
    for task in TASKS:
        assert rows["mid"]["tasks"][task]["rank_score"] == rows["mid2"]["tasks"][task]["rank_score"] > 1.0
        assert rows["good"]["tasks"][task]["rank_score"] == 1.0
    assert rows["mid"]["rank_score"]["value"] == rows["mid2"]["rank_score"]["value"]
    assert "rank_no_interval" not in card
    # the two alone: both the best of every task, exactly 1
    card = _card(env, root / "mid", root / "mid2")
    assert {_short(m["model"]): m["rank_score"]["value"] for m in card["models"]} == {"mid": 1.0, "mid2": 1.0}

    # one model: 1 by definition, no interval in any view, and the reason next to the number
    card = _card(env, root / "mid2")
    (only,) = card["models"]
    assert only["rank_score"] == {"value": 1.0, "ci_low": 1.0, "ci_high": 1.0}
    assert "one model" in card["rank_no_interval"]
    md = _card(env, root / "mid2", fmt="md")
    row = next(ln for ln in md.splitlines() if ln.startswith("| 1 | openai:mid2"))
    assert "1.00 (no interval: one model: its rank score is 1 by definition" in row and "1.00–" not in row
    rank = next(x for x in csv.DictReader(io.StringIO(_card(env, root / "mid2", fmt="csv")))
                if x["benchmark"] == "report card" and x["metric"] == "rank_score")
    assert rank["value"] == "1.0" and rank["ci_low"] == rank["ci_high"] == ""
    assert "one model" in rank["ci_method"]
    latex = _card(env, root / "mid2", fmt="latex")
    assert "no interval: one model" in latex


def test_the_rank_score_interval_is_printed_only_where_its_coverage_was_measured(runs):
    root, env = runs
    three = _card(env, root / "good", root / "mid")  # 3 tasks: in 2-10, measured >= 94.5%
    assert "rank_no_interval" not in three
    mid = next(m for m in three["models"] if _short(m["model"]) == "mid")["rank_score"]
    assert mid["ci_low"] < mid["value"] < mid["ci_high"]
    one = [root / m / "card-lo-sum" for m in ("good", "mid")]  # 1 task: 89.5% measured, no interval
    card = _card(env, *one)
    assert card["rank_no_interval"].startswith("1 task: the rank score's interval covered under 93%")
    assert all(m["rank_score"]["ci_low"] is None is m["rank_score"]["ci_high"] for m in card["models"])
    assert all(m["normalised_mean"]["ci_low"] is not None for m in card["models"])  # that one is kept
    md = _card(env, *one, fmt="md")
    row = next(ln for ln in md.splitlines() if ln.startswith("| 2 | openai:mid@"))
    assert " (no interval: 1 task: " in row and "bench/rank_coverage.py" in row
