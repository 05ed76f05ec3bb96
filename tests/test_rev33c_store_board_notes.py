"""Review rev33c: `runs board` pools a model's several runs of one column (seeds, repeats) into
"mean [N runs min–max]"; that cell dropped the runs' notes, so a judged run's "judge not validated"
stood beside one run's number and vanished once a second run was indexed. A pooled cell carries
every pooled run's notes, each once."""

from __future__ import annotations

import asyncio

from conftest import cli
from test_tasks_rubric import files, opts, verdict

from glotbench.engine.judged import run_judged


def test_a_pooled_cell_keeps_the_judge_validation_note(srv, tmp_path):
    srv.configure(answers={"ນະຄອນຫຼວງຂອງລາວ": "ວຽງຈັນ", "ແມ່ນ້ຳໃດ": "ແມ່ນ້ຳຂອງ", "ລາວມີຈັກແຂວງ": "17"},
                  sequences={"[Answer]\n": [verdict(1, 5)]})
    task = files(tmp_path)
    store = f"sqlite:///{tmp_path / 'store.sqlite'}"
    runs = []
    for n in (1, 2):
        asyncio.run(run_judged(task, srv.spec("cand"), [srv.spec("judge1")], opts(tmp_path / f"r{n}")))
        runs.append(str(tmp_path / f"r{n}" / "out"))
        p = cli("runs", "import", runs[-1], "--db", store)
        assert p.returncode == 0, p.stderr
        p = cli("runs", "board", "--db", store)
        assert p.returncode == 0, p.stderr
        (row,) = [x for x in p.stdout.splitlines() if x.startswith("openai:cand@")]
        assert ("2 runs" in row) == (n == 2), row
        assert row.count("judge not validated for lo: openai:judge1") == 1, row  # once, pooled or not
