"""Review of issue #33: a task-file run whose run directory moved (or was copied elsewhere) after the
run, with its task file moved too, is still rebuilt from the copy it keeps: beside its results.json,
or in a judged run's answers phase. The record's `copy` path is where it was written, not where it is."""

from __future__ import annotations

import json
import os

from conftest import cli
from test_task_file_kept import _runs
from test_tasks_rubric import QA, TASK as RUBRIC, verdict

from glotbench.report import rundata


def test_plain_run_moved_with_its_task_file_gone(tmp_path, srv):
    path = _runs(tmp_path, srv)
    os.rename(path, tmp_path / "moved.yaml")  # the data stays, the task file and both runs move
    os.rename(tmp_path / "a", tmp_path / "a2")
    os.rename(tmp_path / "b", tmp_path / "b2")
    other = tmp_path / "elsewhere"
    other.mkdir()
    a, b = str(tmp_path / "a2"), str(tmp_path / "b2")
    for args in (("compare", a, b), ("rescore", a, b, "--variant", "norm=nfc")):
        proc = cli(*args, cwd=str(other))
        assert proc.returncode == 0, (args, proc.stderr)
    items = cli("compare", "--items", a, b, cwd=str(other))
    assert items.returncode == 0 and "references from" in items.stdout, items.stdout + items.stderr
    page = cli("report", a, "--html", str(other / "a.html"), cwd=str(other))
    assert page.returncode == 0 and "references from" in (other / "a.html").read_text(encoding="utf-8")


def test_judged_run_moved_reads_the_copy_in_its_answers_phase(tmp_path, srv):
    work = tmp_path / "work"
    work.mkdir()
    (work / "qa.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in QA), encoding="utf-8")
    (work / "qa.yaml").write_text(RUBRIC, encoding="utf-8")
    srv.configure(answers={"ນະຄອນຫຼວງຂອງລາວ": "ວຽງຈັນ", "ແມ່ນ້ຳໃດ": "ແມ່ນ້ຳຂອງ", "ລາວມີຈັກແຂວງ": "17"},
                  sequences={"[Answer]\n": [verdict(1, 5)]})
    proc = cli("run", "qa.yaml", "--model", srv.spec("cand"), "--judge", srv.spec("judge1"),
               "--out", str(tmp_path / "r"), "--no-progress", "--no-cache", cwd=str(work))
    assert proc.returncode == 0, proc.stderr
    os.rename(work / "qa.yaml", work / "gone.yaml")
    os.rename(tmp_path / "r", tmp_path / "r2")
    res = rundata.run_results(tmp_path / "r2")
    assert res["benchmark"]["task_file"]["copy"] == str((tmp_path / "r2" / "answers" / "task.yaml").resolve())
    assert rundata.bench_of(res).name == "lao-open-qa"
    gold, note = rundata.references(res)
    assert set(gold) == {"q1", "q2", "q3"}, note
