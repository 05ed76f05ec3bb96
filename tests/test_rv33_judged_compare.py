"""Review of issue #33: `compare` reads judged runs like any run: two rubric runs (or two AraGen runs)
are compared on each item's judged value, the judged headline; never "samples.jsonl not found" or
"unknown benchmark 'aragen'"."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest
from conftest import cli
from test_aragen import _run, rubric_srv  # noqa: F401 - the fixture
from test_tasks_rubric import files, opts, verdict

from glotbench.engine.judged import run_judged
from glotbench.report.compare import compare_runs


def test_compare_two_rubric_runs(tmp_path, srv):
    srv.configure(answers={"ນະຄອນຫຼວງຂອງລາວ": "ວຽງຈັນ", "ແມ່ນ້ຳໃດ": "ແມ່ນ້ຳຂອງ", "ລາວມີຈັກແຂວງ": "17"},
                  model_answers={"c2": {"ນະຄອນຫຼວງຂອງລາວ": "ວຽງຈັນ", "ແມ່ນ້ຳໃດ": "ແມ່ນ້ຳແດງ", "ລາວມີຈັກແຂວງ": "17"}},
                  sequences={"[Answer]\nວຽງຈັນ": [verdict(1, 5)], "[Answer]\nແມ່ນ້ຳຂອງ": [verdict(1, 3)],
                             "[Answer]\nແມ່ນ້ຳແດງ": [verdict(0, 1)], "[Answer]\n17": [verdict(0, 1)]})
    task = files(tmp_path)
    for m in ("c1", "c2"):
        o = dataclasses.replace(opts(tmp_path), out=str(tmp_path / m))
        asyncio.run(run_judged(task, srv.spec(m), [srv.spec("judge1")], o))
    cmp = compare_runs(str(tmp_path / "c1"), str(tmp_path / "c2"), resamples=200)
    assert list(cmp["metrics"]) == ["rubric"] and cmp["items"] == 3
    r = cmp["metrics"]["rubric"]
    assert r["a"] == pytest.approx(1.75 / 3) and r["b"] == pytest.approx(1.0 / 3)  # q2: 0.75 -> 0
    proc = cli("compare", str(tmp_path / "c1"), str(tmp_path / "c2"))
    assert proc.returncode == 0 and "rubric" in proc.stdout, proc.stderr


def test_compare_two_aragen_runs(rubric_srv, cache_path, tmp_path):  # noqa: F811
    for m in ("model", "model2"):
        _run(tmp_path, cache_path, rubric_srv.spec(m), [rubric_srv.spec("fair")])
    runs = [str(p) for p in sorted(tmp_path.glob("g*")) if (p / "results.json").is_file()]
    assert len(runs) == 2
    proc = cli("compare", *runs)
    assert proc.returncode == 0, proc.stderr
    assert "3c3h" in proc.stdout and "unknown benchmark" not in proc.stderr
