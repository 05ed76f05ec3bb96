"""Review rev33c: a judged run whose answers phase --max-cost stopped before any request went on: every
item not asked counted as unanswered (0 for every judge), and the run was written complete and valid,
"score 0.000", exit 0, with no word of the stop (a plain run says "stopped" and exits 3). A phase cut
short by the cap (the answers, or a judge's) now stops the judged run there: one error line, its
phases kept, no results.json; the same command with a higher cap finishes it."""

from __future__ import annotations

import json

from conftest import cli
from test_tasks_rubric import files, verdict


def test_a_judged_run_stopped_by_the_cost_cap_is_not_scored(srv, tmp_path):
    srv.configure(answers={"ນະຄອນຫຼວງຂອງລາວ": "ວຽງຈັນ", "ແມ່ນ້ຳໃດ": "ແມ່ນ້ຳຂອງ", "ລາວມີຈັກແຂວງ": "17"},
                  sequences={"[Answer]\n": [verdict(1, 5)]})
    task, out = files(tmp_path), tmp_path / "out"
    args = ["run", task, "--model", srv.spec("cand"), "--judge", srv.spec("judge1"), "--out", str(out),
            "--no-progress", "--cache-path", str(tmp_path / "c.sqlite"), "--price-in", "1000000", "--price-out", "1000000"]
    p = cli(*args, "--max-cost", "40")  # each request's worst case is over $40: none is sent
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    (line,) = [x for x in p.stderr.splitlines() if x.startswith("error:")]
    assert "answers phase was stopped by --max-cost (3 requests not sent)" in line and "raise --max-cost" in line, line
    assert "score" not in p.stdout and not (out / "results.json").exists()
    assert json.loads((out / "answers" / "results.json").read_text(encoding="utf-8"))["status"] == "stopped"
    assert not any(r["model"] == "judge1" for r in srv.requests())
    p = cli("report", str(out))
    assert p.returncode == 2 and "did not finish" in p.stderr, p.stderr
    p = cli(*args, "--max-cost", "100000")
    assert p.returncode == 0, p.stderr
    res = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert res["status"] == "complete" and res["scores"]["overall"]["rubric"]["value"] == 1.0


def test_a_judges_phase_stopped_by_the_cost_cap_stops_the_judged_run(srv, tmp_path):
    """The answers fit under the cap, a judge's requests (its longer prompt and reply cap) do not: the
    judge's verdicts not asked were left out of its mean, and the run written complete."""
    srv.configure(answers={"ນະຄອນຫຼວງຂອງລາວ": "ວຽງຈັນ", "ແມ່ນ້ຳໃດ": "ແມ່ນ້ຳຂອງ", "ລາວມີຈັກແຂວງ": "17"},
                  sequences={"[Answer]\n": [verdict(1, 5)]})
    out = tmp_path / "out"
    p = cli("run", files(tmp_path), "--model", srv.spec("cand"), "--judge", srv.spec("judge1"), "--out", str(out),
            "--no-progress", "--no-cache", "--price-in", "1000", "--price-out", "1000", "--max-cost", "1")
    assert p.returncode == 2, p.stderr
    assert f"its judge {srv.spec('judge1')} phase was stopped by --max-cost" in p.stderr, p.stderr
    assert json.loads((out / "answers" / "results.json").read_text(encoding="utf-8"))["status"] == "complete"
    assert not (out / "results.json").exists()
