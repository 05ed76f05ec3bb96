"""One dispatch below the command line: a task scored by a rubric runs its judges whoever calls the
engine (`glotbench run` without --judge, `glotbench sweep`, the Python `evaluate()`), and its result is
the candidate's judged score (the mean of judges), never the answers' answered rate; no judge is a
model of it (issue #33)."""

from __future__ import annotations

import json
import re

import pytest
import yaml
from conftest import cli
from test_tasks_rubric import QA, TASK, files, opts, verdict

from glotbench.engine.evaluate import evaluate
from glotbench.errors import GlotbenchError
from glotbench.store import ResultsStore


def configure(srv):
    srv.configure(answers={"ນະຄອນຫຼວງຂອງລາວ": "ວຽງຈັນ", "ແມ່ນ້ຳໃດ": "ແມ່ນ້ຳຂອງ", "ລາວມີຈັກແຂວງ": "17"},
                  sequences={"[Answer]\nວຽງຈັນ": [verdict(1, 5)], "[Answer]\nແມ່ນ້ຳຂອງ": [verdict(1, 3)],
                             "[Answer]\n17": [verdict(0, 1)]})


def task_naming(tmp_path, judge: str) -> str:  # the task file names its judge (scorer.judges)
    return files(tmp_path, TASK.replace("  kind: rubric\n", f"  kind: rubric\n  judges: [\"{judge}\"]\n"))


EXPECTED = 1.75 / 3  # q1 (1 + 1)/2, q2 (1 + 0.5)/2, q3 (0 + 0)/2


def test_evaluate_runs_the_judges_of_a_task(tmp_path, srv):
    configure(srv)
    res = evaluate(task_naming(tmp_path, srv.spec("judge1")), srv.spec("cand"), opts(tmp_path))
    assert res.results["headline"] == "rubric" and res.results["model"]["spec"] == srv.spec("cand")
    assert res.results["scores"]["overall"]["rubric"]["value"] == pytest.approx(EXPECTED)
    assert res.results["judged"]["judges"] == [srv.spec("judge1")]
    # one results.json: the judged run's record, its judges and phases listed; no rubric.json
    record = json.loads((res.out_dir / "results.json").read_text(encoding="utf-8"))
    assert record["scores"] == res.results["scores"] and record["judged"]["kind"] == "rubric"
    assert record["judged"]["phases"] == {"answers": "answers",
                                          f"judge {srv.spec('judge1')}": f"judge-openai_judge1_http_127.0.0.1_{srv.port}_v1"}
    assert not (res.out_dir / "rubric.json").exists() and len(res.samples) == len(QA)
    assert any(r["model"] == "judge1" for r in srv.requests())


def test_run_without_judge_option_uses_the_tasks_judges(tmp_path, srv):
    configure(srv)
    proc = cli("run", task_naming(tmp_path, srv.spec("judge1")), "--model", srv.spec("cand"),
               "--out", str(tmp_path / "r"), "--no-progress", "--no-cache",
               env={"GLOTBENCH_STORE_URL": f"sqlite:///{tmp_path / 'store.sqlite'}"})
    assert proc.returncode == 0, proc.stderr
    assert "score 0.583" in proc.stdout
    rows = ResultsStore(f"sqlite:///{tmp_path / 'store.sqlite'}").list()
    assert [(r.model, r.headline) for r in rows] == [(srv.spec("cand"), "rubric")]
    assert rows[0].score == pytest.approx(EXPECTED)


def test_judge_option_on_a_plain_benchmark_is_refused(tmp_path):
    with pytest.raises(GlotbenchError, match="not scored by a rubric"):
        evaluate("vi-diacritics", "local", opts(tmp_path, judges=("local",), limit=1))


def test_sweep_runs_the_judges_of_a_task(tmp_path, srv):
    configure(srv)
    task = task_naming(tmp_path, srv.spec("judge1"))
    store = f"sqlite:///{tmp_path / 'store.sqlite'}"
    spec = {"out": str(tmp_path / "out"), "cache": str(tmp_path / "calls.sqlite"), "store": store,
            "models": [{"spec": srv.spec("cand"), "name": "cand"}], "benchmarks": [{"name": task}]}
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(spec, allow_unicode=True), encoding="utf-8")
    proc = cli("sweep", str(path), "--no-progress")
    assert proc.returncode == 0, proc.stderr
    # the judged score (58.3), not the answered rate (100.0) as the headline (its interval may reach 100.0)
    assert re.search(r"\bdone\s+58\.3 \(", proc.stdout) and not re.search(r"\bdone\s+100\.0 ", proc.stdout), proc.stdout
    assert any(r["model"] == "judge1" for r in srv.requests())
    rows = ResultsStore(store).list()
    assert [(r.model, r.headline) for r in rows] == [(srv.spec("cand"), "rubric")]
    assert rows[0].score == pytest.approx(EXPECTED)
    # the same sweep again: the finished judged cell is skipped, with its judged score
    srv.configure()
    again = cli("sweep", str(path), "--no-progress")
    assert again.returncode == 0, again.stderr
    assert "skipped" in again.stdout and "58.3" in again.stdout and srv.requests() == []
