"""A judged run (a task scored by a rubric, an arena) read by `board`, `report` and `runs import` +
`runs board`: the candidate's judged score (the mean of judges), never the answers' answered rate,
and no judge listed as a model (issue #33)."""

from __future__ import annotations

import asyncio
import json

import pytest
from conftest import cli
from test_tasks_rubric import files, opts, verdict

from glotbench.engine.arena import run_arena
from glotbench.engine.evaluate import RunOptions
from glotbench.engine.judged import run_judged
from glotbench.report.board import build_board
from glotbench.store.db import find_run_dirs, run_record


@pytest.fixture
def rubric_run(tmp_path, srv):
    srv.configure(answers={"ນະຄອນຫຼວງຂອງລາວ": "ວຽງຈັນ", "ແມ່ນ້ຳໃດ": "ແມ່ນ້ຳຂອງ", "ລາວມີຈັກແຂວງ": "17"},
                  sequences={"[Answer]\nວຽງຈັນ": [verdict(1, 5)], "[Answer]\nແມ່ນ້ຳຂອງ": [verdict(1, 3)],
                             "[Answer]\n17": [verdict(0, 1)]})
    res = asyncio.run(run_judged(files(tmp_path), srv.spec("cand"), [srv.spec("judge1")], opts(tmp_path)))
    # q1 (1 + 1)/2 = 1, q2 (1 + 0.5)/2 = 0.75, q3 (0 + 0)/2 = 0: 1.75 / 3
    assert res["scores"]["final"]["value"] == pytest.approx(1.75 / 3)
    return tmp_path / "out", srv


def test_board_shows_the_rubric_score_and_no_judge(rubric_run):
    out, srv = rubric_run
    b = build_board([str(out.parent)], resamples=50)
    assert b["models"] == [srv.spec("cand")]
    (col,) = b["columns"]
    assert col["benchmark"] == "lao-open-qa · lo" and col["headline"] == "rubric"
    assert col["cells"][srv.spec("cand")]["value"] == pytest.approx(1.75 / 3)
    proc = cli("board", str(out.parent))
    assert proc.returncode == 0, proc.stderr
    rows = [x for x in proc.stdout.splitlines() if x.startswith("| openai:")]  # one row per model
    assert len(rows) == 1 and "cand" in rows[0] and "**58.3 (" in rows[0]  # not the answered rate, 100.0


def test_report_prints_a_rubric_run(rubric_run):
    out, srv = rubric_run
    proc = cli("report", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "score 0.583" in proc.stdout


def test_runs_import_stores_the_candidate_with_its_rubric_score(rubric_run, tmp_path):
    out, srv = rubric_run
    assert find_run_dirs([str(out.parent)]) == [out]  # not its answers, not its judge's run
    row = run_record(out)
    assert row["model"] == srv.spec("cand") and row["headline"] == "rubric"
    assert row["score"] == pytest.approx(1.75 / 3)
    db = f"sqlite:///{tmp_path / 'store.sqlite'}"
    p = cli("runs", "import", str(out.parent), "--db", db)
    assert p.returncode == 0, p.stderr
    assert "1 runs indexed" in p.stdout
    board = cli("runs", "board", "--db", db)
    assert board.returncode == 0, board.stderr
    rows = [x for x in board.stdout.splitlines() if "openai:" in x]
    assert len(rows) == 1 and "cand" in rows[0] and "58.3" in rows[0], board.stdout


def test_runs_import_of_an_arena(srv, cache_path, tmp_path):
    srv.configure(judges={"fair": {"mode": "prefer", "prefer": "GOOD"}, "biased": {"mode": "always_A"}})
    o = RunOptions(progress=False, cache_path=cache_path, out=str(tmp_path / "arena"), max_retries=2)
    res = asyncio.run(run_arena("python:helpers:good_answer", "python:helpers:plain_answer",
                                [srv.spec("fair"), srv.spec("biased")], o)).results
    assert res["scores"]["final"]["value"] == pytest.approx(0.75)
    found = find_run_dirs([str(tmp_path)])
    assert found == [tmp_path / "arena"]
    row = run_record(found[0])
    assert row["model"] == "python:helpers:good_answer" and row["headline"] == "candidate_win_value"
    assert row["score"] == pytest.approx(0.75)
    db = f"sqlite:///{tmp_path / 'store.sqlite'}"
    p = cli("runs", "import", str(tmp_path / "arena"), "--db", db)
    assert p.returncode == 0, p.stderr and "1 runs indexed" in p.stdout
    ls = cli("runs", "ls", "--db", db, "--json")
    rows = [json.loads(x) for x in ls.stdout.splitlines() if x.strip()]
    assert [r["model"] for r in rows] == ["python:helpers:good_answer"]
    assert rows[0]["score"] == pytest.approx(0.75)


def test_board_and_report_of_an_arena_list_no_judge(srv, cache_path, tmp_path):
    srv.configure(judges={"fair": {"mode": "prefer", "prefer": "GOOD"}})
    o = RunOptions(progress=False, cache_path=cache_path, out=str(tmp_path / "arena"), max_retries=2)
    asyncio.run(run_arena("python:helpers:good_answer", "python:helpers:plain_answer", [srv.spec("fair")], o))
    b = build_board([str(tmp_path)], resamples=50)
    # the arena is ranked apart (its own section); its phases (candidate, baseline, judge) are no columns
    assert b["models"] == [] and b["columns"] == []
    proc = cli("report", str(tmp_path / "arena"))
    assert proc.returncode == 0, proc.stderr
    assert "good_answer" in proc.stdout


def test_items_in_memory_of_a_judged_task_are_judged(rubric_run, tmp_path):
    """The service's endpoint jobs hand evaluate_async items in memory: a judged task runs its judges
    on them (tests/test_judged_service.py runs the job), never scored by the answers' answered rate."""
    from glotbench.engine.evaluate import evaluate_async
    from glotbench.registry import get_benchmark

    out, srv = rubric_run
    bench = get_benchmark(str(out.parent / "qa.yaml"))
    items = bench.load()
    sub = items[:2]  # two of the three items (a slice keeps source and hash)
    res = asyncio.run(evaluate_async(bench, srv.spec("cand"), RunOptions(
        progress=False, out=str(tmp_path / "mem"), judges=(srv.spec("judge1"),), use_cache=False), dataset=sub))
    assert res.results["headline"] == "rubric" and res.results["judged"]["judges"] == [srv.spec("judge1")]
    assert res.results["scores"]["overall"]["rubric"]["value"] == pytest.approx(1.75 / 2)  # q1 1, q2 0.75
    assert [s.id for s in res.samples] == ["q1", "q2"]
