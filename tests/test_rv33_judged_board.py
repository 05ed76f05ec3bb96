"""Review of issue #33: `board` reads an AraGen run as its candidate's column at the judged 3C3H
(mean of judges), as it reads a rubric run; a folder holding only AraGen runs was "no finished run
found", and beside other runs an AraGen run was left out. No judge is a model of the board."""

from __future__ import annotations

import asyncio

import pytest
from conftest import cli
from test_aragen import _run, rubric_srv  # noqa: F401 - the fixture
from test_tasks_rubric import files, opts, verdict

from glotbench.engine.judged import run_judged

from glotbench.report.board import build_board


def test_board_shows_aragen_runs_at_their_judged_score(rubric_srv, cache_path, tmp_path):  # noqa: F811
    a = _run(tmp_path, cache_path, rubric_srv.spec("model"), [rubric_srv.spec("fair"), rubric_srv.spec("mid")])
    _run(tmp_path, cache_path, rubric_srv.spec("model2"), [rubric_srv.spec("fair"), rubric_srv.spec("mid")])
    b = build_board([str(tmp_path)], resamples=50)
    assert sorted(b["models"]) == sorted([rubric_srv.spec("model"), rubric_srv.spec("model2")])
    (col,) = b["columns"]
    assert col["headline"] == "3c3h"
    cell = col["cells"][rubric_srv.spec("model")]
    assert cell["value"] == pytest.approx(a["mean_of_judges"]["3c3h"]["value"])
    proc = cli("board", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    rows = [x for x in proc.stdout.splitlines() if x.startswith("| openai:")]
    assert len(rows) == 2 and not any(r.startswith(("| openai:fair", "| openai:mid")) for r in rows)
    # the judges have no card for Arabic: every view says so beside the number, the board too
    assert all("judge not validated for ar: openai:fair" in r for r in rows), rows


def test_board_says_a_rubric_runs_judge_is_not_validated(tmp_path, srv):
    srv.configure(answers={"ນະຄອນຫຼວງຂອງລາວ": "ວຽງຈັນ", "ແມ່ນ້ຳໃດ": "ແມ່ນ້ຳຂອງ", "ລາວມີຈັກແຂວງ": "17"},
                  sequences={"[Answer]\n": [verdict(1, 5)]})
    asyncio.run(run_judged(files(tmp_path), srv.spec("cand"), [srv.spec("judge1")], opts(tmp_path)))
    proc = cli("board", str(tmp_path / "out"))
    assert proc.returncode == 0, proc.stderr
    (row,) = [x for x in proc.stdout.splitlines() if x.startswith("| openai:")]
    assert "**100.0 (" in row and "judge not validated for lo: openai:judge1" in row, row
