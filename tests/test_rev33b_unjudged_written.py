"""rev33 review of issue #33: an arena (and a rubric task) none of whose prompts got a judged score (every verdict
unreadable, or nothing answered) exited 3 with "Everything is written and marked invalid", but wrote
no results.json at its top: no view could show it (board and export: "no finished run"; `runs
import`: nothing), and `report DIR` printed one of its judges' phases as the run. It is written as
AraGen and a rubric task are: every judge with no value, invalid with its reason, in every view.
Judges are real HTTP endpoints on loopback (conftest's server)."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import cli


def test_an_arena_with_no_judged_prompt_is_written_and_invalid_in_every_view(srv, cache_path, tmp_path):
    srv.configure(judges={"broken": {"mode": "malformed"}})  # prose, never the verdict's JSON
    out = tmp_path / "a"
    p = cli("run", "laobench-arena", "--model", "python:helpers:good_answer", "--bench-opt", "baseline=python:helpers:plain_answer",
            "--judge", srv.spec("broken"), "--out", str(out), "--no-progress", "--cache-path", cache_path,
            "--max-retries", "0", "--limit", "3")
    assert p.returncode == 3, p.stderr
    (line,) = p.stderr.strip().splitlines()
    why = "judged: no item has a judged score (0 of 3 items)"
    assert line.startswith(f"error: invalid: judge {srv.spec('broken')}: 6 of 6 items failed (unreadable verdict") \
        and why in line, line
    record = json.loads((out / "results.json").read_text(encoding="utf-8"))
    head = record["scores"]["overall"]["candidate_win_value"]
    assert head["value"] is None and head["n"] == 0 and record["validity"]["valid"] is False, head
    db = f"sqlite:///{tmp_path / 'store.sqlite'}"
    for args in (("report", str(out)), ("board", str(out)), ("export", str(out), "--format", "json"),
                 ("runs", "import", str(out), "--db", db), ("runs", "ls", "--db", db), ("runs", "board", "--db", db)):
        q = cli(*args)
        assert q.returncode == 0 and "Traceback" not in q.stderr, (args, q.stderr)
        if args[:2] != ("runs", "import"):
            assert why in " ".join((q.stdout + q.stderr).split()), (args, q.stdout, q.stderr)
    (row,) = json.loads(cli("export", str(out), "--format", "json").stdout)
    assert row["valid"] is False and row["value"] is None and row["model"] == "python:helpers:good_answer", row
    assert not any(Path(r["run"]).name.startswith("judge-") for r in json.loads(
        cli("export", str(tmp_path), "--format", "json").stdout))


def test_a_rubric_task_with_no_judged_item_is_written_and_invalid_in_every_view(srv, tmp_path):
    # the same class: the task's judge replies prose, never a verdict block; it raised before writing
    from test_tasks_rubric import files

    srv.configure(answers={"ນະຄອນຫຼວງຂອງລາວ": "ວຽງຈັນ", "ແມ່ນ້ຳໃດ": "ແມ່ນ້ຳຂອງ", "ລາວມີຈັກແຂວງ": "17"})
    out = tmp_path / "r"
    p = cli("run", files(tmp_path), "--model", srv.spec("cand"), "--judge", srv.spec("judge1"), "--out", str(out),
            "--no-progress", "--max-retries", "0", "--cache-path", str(tmp_path / "c.sqlite"), "--max-failure-rate", "1")
    assert p.returncode == 3, p.stdout + p.stderr  # even where the limit allows every verdict to be lost
    (line,) = p.stderr.strip().splitlines()
    why = "judged: no item has a judged score (0 of 3 items)"
    assert line.startswith(f"error: invalid: {why}"), line
    record = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert record["scores"]["overall"]["rubric"]["value"] is None and record["validity"]["valid"] is False
    for args in (("report", str(out)), ("board", str(out)), ("export", str(out), "--format", "json")):
        q = cli(*args)
        assert q.returncode == 0 and why in " ".join(q.stdout.split()), (args, q.stdout, q.stderr)


def test_the_cross_judge_report_says_which_arena_is_invalid_beside_its_scores(srv, cache_path, tmp_path):
    # `report --judges A B` printed every arena's per-judge score, an invalid one's too, with no mark
    srv.configure(judges={"fair": {"mode": "prefer", "prefer": "GOOD"}, "bad": {"mode": "malformed"}})
    common = ("--bench-opt", "baseline=python:helpers:plain_answer", "--no-progress", "--cache-path", cache_path,
              "--max-retries", "0", "--limit", "3")
    a = cli("run", "laobench-arena", "--model", "python:helpers:good_answer", "--judge", srv.spec("fair"), "--judge", srv.spec("bad"),
            "--out", str(tmp_path / "a"), *common)
    b = cli("run", "laobench-arena", "--model", "python:helpers:plain_answer", "--judge", srv.spec("fair"),
            "--out", str(tmp_path / "b"), *common)
    assert (a.returncode, b.returncode) == (3, 0), a.stderr + b.stderr
    p = cli("report", "--judges", str(tmp_path / "a"), str(tmp_path / "b"))
    assert p.returncode == 0, p.stderr
    rep = json.loads(p.stdout)
    assert rep["scores"]["python:helpers:good_answer"][srv.spec("fair")] == 1.0
    assert set(rep["invalid"]) == {"python:helpers:good_answer"}, rep["invalid"]
    assert rep["invalid"]["python:helpers:good_answer"].startswith(f"invalid: judge {srv.spec('bad')}: 6 of 6 items")
