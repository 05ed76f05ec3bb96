"""Review of issue #33: a judged run whose top results.json is missing (stopped before the judges
finished) or damaged is never read as its phases: its candidate's answers (the answered rate) and its
judge's verdict run (the judge as a model) are not contestants of `board` nor rows of `runs import`.
Each phase records that it is one (`config.phase`), so this holds without the top's record."""

from __future__ import annotations

import asyncio
import json

from conftest import cli
from test_tasks_rubric import files, opts, verdict

from glotbench.engine.judged import run_judged
from glotbench.store.db import find_run_dirs


def test_phases_of_an_unfinished_or_damaged_judged_run_are_no_contestants(tmp_path, srv):
    srv.configure(answers={"ນະຄອນຫຼວງຂອງລາວ": "ວຽງຈັນ", "ແມ່ນ້ຳໃດ": "ແມ່ນ້ຳຂອງ", "ລາວມີຈັກແຂວງ": "17"},
                  sequences={"[Answer]\n": [verdict(1, 5)]})
    asyncio.run(run_judged(files(tmp_path), srv.spec("cand"), [srv.spec("judge1")], opts(tmp_path)))
    out = tmp_path / "out"
    assert json.loads((out / "answers" / "results.json").read_text())["config"]["phase"] == "answers"
    assert "phase" not in json.loads((out / "results.json").read_text())["config"]  # the top is the run
    for damage in ("truncated", "missing"):
        top = out / "results.json"
        if damage == "truncated":
            top.write_text(top.read_text()[:200])
        else:
            top.unlink()
        assert find_run_dirs([str(out)]) == ([out] if damage == "truncated" else [])  # never its phases
        db = f"sqlite:///{tmp_path / damage}.sqlite"
        imp = cli("runs", "import", str(out), "--db", db)
        assert "1 runs indexed" not in imp.stdout and "2 runs indexed" not in imp.stdout, imp.stdout
        proc = cli("board", str(tmp_path))  # the folder above: the phases are found, and left out
        assert proc.returncode == 2, proc.stdout
        (line,) = proc.stderr.strip().splitlines()
        assert line.startswith("error: no finished run found") and "a phase of the judged run" in line
        assert "| openai:" not in proc.stdout
