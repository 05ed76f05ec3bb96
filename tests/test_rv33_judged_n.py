"""Review of issue #33: a judged score's n is the items it rests on. Items whose verdict never parsed
are left out of the judge's mean (docs/tasks.md), so the headline's n, its interval and its † say how
few items are left, in results.json, the terminal and the board; it was n = every item (3) for a
score resting on one."""

from __future__ import annotations

import json

from conftest import cli
from test_tasks_rubric import files

V = '<verdict>{"correct": 1, "fluent": 5}</verdict>'


def test_the_judged_n_counts_only_the_items_judged(tmp_path, srv):
    srv.configure(answers={"ນະຄອນຫຼວງຂອງລາວ": "ວຽງຈັນ", "ແມ່ນ້ຳໃດ": "ແມ່ນ້ຳຂອງ", "ລາວມີຈັກແຂວງ": "17"})
    task = files(tmp_path)
    verdicts = tmp_path / "verdicts.jsonl"  # q2: no verdict block; q3: a score out of range
    verdicts.write_text("".join(json.dumps(r) + "\n" for r in (
        {"id": "q1", "output": V}, {"id": "q2", "output": "garbage"},
        {"id": "q3", "output": V.replace('"correct": 1', '"correct": 7')})), encoding="utf-8")
    out = tmp_path / "r"
    proc = cli("run", task, "--model", srv.spec("cand"), "--judge", f"replay:{verdicts}", "--out", str(out),
               "--no-progress", "--no-cache", "--max-failure-rate", "0.7")  # 2 of 3 unreadable: allowed here
    assert proc.returncode == 0, proc.stderr
    final = json.loads((out / "results.json").read_text(encoding="utf-8"))["scores"]["overall"]["rubric"]
    assert final["value"] == 1.0 and final["n"] == 1 and final["too_few_units"]
    assert "n=1 " in proc.stdout
    board = cli("board", str(out))
    (row,) = [x for x in board.stdout.splitlines() if x.startswith("| openai:")]
    assert "n=1" in row and "n=3" not in row, row
