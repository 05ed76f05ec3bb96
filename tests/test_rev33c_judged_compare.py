"""Review rev33c: `compare` of two judged runs printed the mean of each item's judged value (the
paired test's unit) under the headline's name. For SEA-MT-Bench (the weighted win rate weights
categories) that number is not the run's headline: A showed 54.2 where the run, its report and the
board say 55.6. A compared number under the headline's name is the headline; where the rows do not
reproduce it, the row is named `NAME[item mean]` and a line gives each run's headline."""

from __future__ import annotations

import json

import pytest
from conftest import cli
from test_sea_mt_bench import _models, _run
from test_tasks_rubric import files, opts, verdict

from glotbench.engine.judged import run_judged
from glotbench.report.compare import compare_runs


def _headline(run_dir) -> float:
    res = json.loads((run_dir / "results.json").read_text(encoding="utf-8"))
    return res["scores"]["overall"][res["headline"]]["value"]


def test_a_weighted_judged_score_is_compared_as_its_headline(srv, tmp_path):
    """SEA-MT-Bench weights categories: the compared figure under its headline's name is the headline
    itself (each run's rows paired by its declared rule, results.json judged.rule), never the items'
    plain mean, which differs here because the fixture's categories differ in size."""
    models = _models()
    models["cand2"] = {k: "x" for k in models["cand"]}  # every turn a tie or a loss for j1, a tie for j2
    srv.configure(model_answers=models)
    for name in ("cand", "cand2"):
        p = _run(srv, tmp_path, "--max-failure-rate", "0.9", out=name, model=name)
        assert p.returncode == 0, p.stderr
    a, b = tmp_path / "cand", tmp_path / "cand2"
    cmp = compare_runs(str(a), str(b), resamples=200)
    (name, row), = cmp["metrics"].items()
    heads = _headline(a), _headline(b)
    assert name == "weighted_win_rate"
    assert row["a"] == pytest.approx(heads[0], abs=1e-12) and row["b"] == pytest.approx(heads[1], abs=1e-12)
    assert "headline" not in row  # nothing apart to show
    rows = json.loads((a / "results.json").read_text(encoding="utf-8"))["judged"]["stats"]
    assert rows  # the paired units come from the run's own per-item, per-judge record
    proc = cli("compare", str(a), str(b))
    assert proc.returncode == 0, proc.stderr
    assert f"{100 * heads[0]:.1f}" in proc.stdout and "‡" not in proc.stdout


def test_a_judged_score_its_rows_reproduce_keeps_its_name(srv, tmp_path):
    import asyncio

    srv.configure(model_answers={"judge1": {"ບໍ່ຮູ້": verdict(0, 2), "[Answer]": verdict(1, 5)},
                                 "cand": {"ນະຄອນຫຼວງ": "ວຽງຈັນ", "ແມ່ນ້ຳໃດ": "ແມ່ນ້ຳຂອງ", "ລາວມີຈັກແຂວງ": "ບໍ່ຮູ້"},
                                 "cand2": {"ນະຄອນຫຼວງ": "ບໍ່ຮູ້", "ແມ່ນ້ຳໃດ": "ບໍ່ຮູ້", "ລາວມີຈັກແຂວງ": "17"}})
    task = files(tmp_path)
    for name in ("cand", "cand2"):
        asyncio.run(run_judged(task, srv.spec(name), [srv.spec("judge1")], opts(tmp_path / name)))
    a, b = tmp_path / "cand" / "out", tmp_path / "cand2" / "out"
    cmp = compare_runs(str(a), str(b), resamples=200)
    assert list(cmp["metrics"]) == ["rubric"] and "metric_notes" not in cmp
    assert cmp["metrics"]["rubric"]["a"] == pytest.approx(_headline(a))
    assert cmp["metrics"]["rubric"]["b"] == pytest.approx(_headline(b))


def test_the_items_view_of_judged_runs_says_what_to_use(srv, tmp_path):
    """`compare --items` (and `diff`, `plan --runs`) of two judged runs said "RUN has no samples.jsonl",
    as of a damaged run; it says the view is for plain runs and which command tests judged scores."""
    import asyncio

    srv.configure(answers={"ນະຄອນຫຼວງຂອງລາວ": "ວຽງຈັນ", "ແມ່ນ້ຳໃດ": "ແມ່ນ້ຳຂອງ", "ລາວມີຈັກແຂວງ": "17"},
                  sequences={"[Answer]\n": [verdict(1, 5)]})
    task = files(tmp_path)
    for name in ("cand", "cand2"):
        asyncio.run(run_judged(task, srv.spec(name), [srv.spec("judge1")], opts(tmp_path / name)))
    a, b = str(tmp_path / "cand" / "out"), str(tmp_path / "cand2" / "out")
    for args in (("compare", "--items", a, b), ("compare", "--items", "--html", a, b), ("diff", a, b)):
        p = cli(*args)
        assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
        (line,) = [x for x in p.stderr.splitlines() if x.startswith("error:")]
        assert "is a judged run (rubric)" in line and "glotbench compare RUN_A RUN_B" in line, line
    p = cli("plan", "--runs", a, "--runs", b)  # every reader of a run's samples says the same
    assert p.returncode == 2 and "is a judged run (rubric)" in p.stderr and "Traceback" not in p.stderr, p.stderr
