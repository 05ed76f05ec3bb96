"""A rubric-judged run is one results.json (issue #33): the candidate's run as every reader reads one,
with its judges, phases and summary in a declared `judged` section (rundir.schema.JudgedSection);
no rubric.json is written. A directory an earlier release wrote (rubric.json, its answers' path
absolute) still reads, in `report`, `board`, `runs import` and a sweep's skip."""

from __future__ import annotations

import asyncio
import json
import shutil
from dataclasses import replace

import pytest
from conftest import cli
from test_judged_dispatch import EXPECTED, configure, task_naming
from test_tasks_rubric import opts

from glotbench.data import read_dict
from glotbench.engine.judged import run_judged
from glotbench.errors import GlotbenchError
from glotbench.report.board import build_board
from glotbench.report.rundata import judged_kind, judged_view, load_run
from glotbench.rundir import finished_run
from glotbench.rundir.schema import FinishedResults
from glotbench.store.db import find_run_dirs, run_record


@pytest.fixture
def judged(tmp_path, srv):
    configure(srv)
    task = task_naming(tmp_path, srv.spec("judge1"))
    asyncio.run(run_judged(task, srv.spec("cand"), [], opts(tmp_path)))
    return tmp_path / "out", srv


def old_layout(run_dir, to):
    """The directory as an earlier release left it: rubric.json (answers_run absolute), no results.json."""
    shutil.copytree(run_dir, to)
    record = json.loads((to / "results.json").read_text(encoding="utf-8"))
    summary = {**record["judged"]["summary"], "answers_run": str(to / "answers")}
    (to / "rubric.json").write_text(json.dumps(summary, ensure_ascii=False), encoding="utf-8")
    (to / "results.json").unlink()
    return to


def test_one_results_json_declared_and_read_as_a_run(judged):
    out, srv = judged
    assert sorted(p.name for p in out.iterdir() if p.is_file()) == ["results.json"]
    record = read_dict(out / "results.json", FinishedResults, allow_nan=True)  # the run's own schema
    assert finished_run(out) and judged_kind(out) == "rubric"
    assert record["model"]["spec"] == srv.spec("cand") and record["headline"] == "rubric"
    assert record["scores"]["overall"]["rubric"]["value"] == pytest.approx(EXPECTED)
    assert record["counts"]["model_calls"] == 3  # the candidate's calls, never the judge's
    j = record["judged"]
    assert j["judges"] == [srv.spec("judge1")] and set(j["phases"]) == {"answers", f"judge {srv.spec('judge1')}"}
    assert all((out / d / "results.json").is_file() for d in j["phases"].values())
    assert load_run(out).results["item_values"] == j["summary"]["item_values"]


def test_a_damaged_summary_is_one_error_line(judged):
    out, _ = judged
    record = json.loads((out / "results.json").read_text(encoding="utf-8"))
    del record["judged"]["summary"]["scores"]
    (out / "results.json").write_text(json.dumps(record), encoding="utf-8")
    with pytest.raises(GlotbenchError, match=r"results\.json: judged\.summary\.scores: Field required"):
        load_run(out)


def test_an_older_rubric_directory_still_reads(judged, tmp_path):
    out, srv = judged
    old = old_layout(out, tmp_path / "old" / "run")
    view, rows = judged_view(old)
    new_view, new_rows = judged_view(out)
    assert view["scores"] == new_view["scores"] and rows == new_rows
    assert find_run_dirs([str(tmp_path / "old")]) == [old]
    row = run_record(old)
    assert row["model"] == srv.spec("cand") and row["score"] == pytest.approx(EXPECTED)
    b = build_board([str(tmp_path / "old")], resamples=50)
    assert b["models"] == [srv.spec("cand")]
    assert b["columns"][0]["cells"][srv.spec("cand")]["value"] == pytest.approx(EXPECTED)
    proc = cli("report", str(old))
    assert proc.returncode == 0 and "score 0.583" in proc.stdout, proc.stderr


def test_the_same_out_refuses_a_finished_run_of_either_layout(judged, tmp_path):
    out, srv = judged
    old = old_layout(out, tmp_path / "old-run")
    for d in (out, old):
        with pytest.raises(GlotbenchError, match="already holds a finished run"):
            asyncio.run(run_judged(str(tmp_path / "qa.yaml"), srv.spec("cand"), [], replace(opts(tmp_path), out=str(d))))


def test_arena_and_aragen_write_one_results_json_every_reader_reads(srv, cache_path, tmp_path):
    """An arena and an AraGen run (generated and replayed answers) each write one results.json of the
    run's own schema, listing their judges and phases; no arena.json or aragen.json; `runs import`
    indexes the candidate with the judged score, never a judge."""
    from test_aragen_parity import ANSWERS, TASK_FILE, replay_jsonl, upstream_copy, write
    from test_judge_replay_ids import verdicts_file

    from glotbench.engine.aragen import run_aragen
    from glotbench.engine.arena import run_arena
    from glotbench.engine.evaluate import RunOptions

    srv.configure(judges={"fair": {"mode": "prefer", "prefer": "GOOD"}})
    o = RunOptions(progress=False, cache_path=cache_path, max_retries=2)
    arena = asyncio.run(run_arena("python:helpers:good_answer", "python:helpers:plain_answer", [srv.spec("fair")],
                                  replace(o, out=str(tmp_path / "arena")))).results
    repo, data = upstream_copy(tmp_path), write(tmp_path, "task.json", TASK_FILE)
    verdicts = verdicts_file(tmp_path)
    answers = replay_jsonl(tmp_path, ANSWERS)
    aragen = asyncio.run(run_aragen(f"replay:{answers}", [f"replay:{verdicts}"],
                                    replace(o, out=str(tmp_path / "aragen"), data=data), judge_prompt=str(repo),
                                    parse="3c3h", policy="upstream"))
    for name, kind, model, head, value, phases in (
            ("arena", "arena", "python:helpers:good_answer", "candidate_win_value", arena["scores"]["final"]["value"],
             {"candidate", "baseline", f"judge {srv.spec('fair')}"}),
            ("aragen", "aragen", f"replay:{answers}", "3c3h",
             aragen["mean_of_judges"]["3c3h"]["value"], {f"judge replay:{verdicts}"})):
        d = tmp_path / name
        assert not (d / f"{name}.json").exists()
        record = read_dict(d / "results.json", FinishedResults, allow_nan=True)
        assert record["judged"]["kind"] == kind and set(record["judged"]["phases"]) == phases
        assert all((d / p / "results.json").is_file() for p in record["judged"]["phases"].values())
        assert record["headline"] == head and record["scores"]["overall"][head]["value"] == pytest.approx(value)
        row = run_record(d)
        assert row["model"] == model and row["score"] == pytest.approx(value), row
        assert find_run_dirs([str(d)]) == [d]  # its phases are no runs of their own
