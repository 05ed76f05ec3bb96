"""rev33 review of issue #33 (judged runs whose verdicts cannot be read are invalid in every view):
what a hostile user found through the console script, each fixed as a class.

- An older judged run's directory (its summary file, aragen.json / arena.json / rubric.json, no
  results.json) with no judged item was shown VALID with a null score by report, board, export and the
  results store: the rule is applied when it is read, not only when a run is written.
- `export FOLDER` exported a judged run's phases as runs of their own: each judge became a
  contestant with its own 3C3H row, valid=True beside an invalid run; an older run's directory
  was not exported at all, only its phases.
- `export --format eee` wrote a record with no evaluation result for an invalid run with no number,
  that every reader (board, export) then refused: now left out with its reason, one error line if
  nothing is left.
- Migration s0004 filled `judge_validation` only from results.json: a store row of an older judged run
  got no "judge not validated" note.
Judges are real HTTP endpoints on loopback (conftest's server)."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from conftest import cli
from test_aragen_parity import ALL5, run
from test_store_judge_validation import store_at

BROKEN = {"mode": "rubric", "scores": ALL5, "break": "not_json"}


def old_layout(run_dir: Path, to: Path) -> Path:
    """The directory as a release before #33's rule left it: aragen.json, no results.json, its judge
    phase valid (unreadable verdicts were not counted) and no `judged` entry."""
    shutil.copytree(run_dir, to)
    summary = json.loads((to / "results.json").read_text(encoding="utf-8"))["judged"]["summary"]
    phases = {name: {**p, "valid": True, "failed": 0, "kinds": {}} for name, p in summary["validity"]["phases"].items()
              if name != "judged"}
    summary["validity"] = {"valid": True, "phases": phases}
    (to / "aragen.json").write_text(json.dumps(summary, ensure_ascii=False), encoding="utf-8")
    (to / "results.json").unlink()
    return to


@pytest.fixture
def unjudged(srv, cache_path, tmp_path) -> Path:
    """An AraGen run whose only judge's every verdict is unreadable (written invalid today)."""
    srv.configure(judges={"bad": BROKEN})
    res = run(tmp_path, cache_path, "python:helpers:good_answer", [srv.spec("bad")], limit=2)
    assert res["validity"]["valid"] is False
    return Path(res["out_dir"])


@pytest.fixture
def half(srv, cache_path, tmp_path) -> Path:
    """An AraGen run with a good judge and a broken one: a number, invalid."""
    srv.configure(judges={"good": {"mode": "rubric", "scores": ALL5}, "bad": BROKEN})
    res = run(tmp_path, cache_path, "python:helpers:good_answer", [srv.spec("good"), srv.spec("bad")], limit=2)
    assert res["validity"]["valid"] is False and res["mean_of_judges"]["3c3h"]["value"] == 1.0
    return Path(res["out_dir"])


WHY = "invalid: judged: no item has a judged score (0 of 2 items)"
NONE_JUDGED = "judged: no item has a judged score (0 of 2 items)"  # after the judge's own failures


def _ok(*args: str) -> str:
    p = cli(*args)
    assert p.returncode == 0 and "Traceback" not in p.stderr, (args, p.stderr)
    return " ".join(p.stdout.split())


def test_an_older_run_with_no_judged_item_is_invalid_in_every_view(unjudged, tmp_path):
    old = old_layout(unjudged, tmp_path / "old")
    db = f"sqlite:///{tmp_path / 'store.sqlite'}"
    assert WHY in _ok("report", str(old))
    assert WHY in _ok("board", str(old))
    (row,) = json.loads(_ok("export", str(old), "--format", "json"))
    assert row["valid"] is False and row["value"] is None and WHY in row["notes"], row
    assert "1 runs indexed" in _ok("runs", "import", str(old), "--db", db)
    assert WHY in _ok("runs", "ls", "--db", db) and WHY in _ok("runs", "board", "--db", db)
    # an older run that recorded no validity at all is held to the same rule
    (old / "aragen.json").write_text(json.dumps({k: v for k, v in json.loads(
        (old / "aragen.json").read_text(encoding="utf-8")).items() if k != "validity"}), encoding="utf-8")
    assert WHY in _ok("report", str(old))


def test_an_older_run_with_judged_items_keeps_what_it_recorded(half, tmp_path):
    old = old_layout(half, tmp_path / "old")
    (row,) = json.loads(_ok("export", str(old), "--format", "json"))
    assert row["valid"] is True and row["value"] == 1.0, row  # the rule adds only "no judged item"
    assert "invalid" not in _ok("report", str(old))


def test_export_of_a_folder_never_makes_a_judge_a_contestant(half, tmp_path):
    folder = tmp_path / "folder"
    folder.mkdir()
    shutil.copytree(half, folder / "new")
    old_layout(half, folder / "old")
    rows = json.loads(_ok("export", str(folder), "--format", "json"))
    assert {(Path(r["run"]).name, r["model"]) for r in rows if r["headline"]} == {
        ("new", "python:helpers:good_answer"), ("old", "python:helpers:good_answer")}, rows
    assert {r["benchmark"] for r in rows} == {"aragen"}  # no answers phase (aragen-answers) either
    csv_runs = {line.split(",")[0] for line in _ok("export", str(folder)).split(" ")[1:] if line.count(",") > 5}
    assert all(not Path(r).name.startswith(("judge-", "answers")) for r in csv_runs), csv_runs


def test_eee_export_leaves_out_a_run_with_no_number_and_says_why(unjudged, half, tmp_path):
    out = tmp_path / "eee"
    p = cli("export", str(unjudged), str(half), "--format", "eee", "--out", str(out))
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    (left,) = p.stderr.strip().splitlines()
    assert left.startswith(f"left out: {unjudged}: no number to write as an EEE record") and NONE_JUDGED in left, left
    (written,) = out.iterdir()
    board = _ok("board", str(out))  # what was written reads back, with the invalid mark
    assert "invalid: judge" in board and "unreadable verdict" in board, board
    p = cli("export", str(unjudged), "--format", "eee", "--out", str(tmp_path / "none"))
    assert p.returncode == 2, p.stderr
    (line,) = p.stderr.strip().splitlines()
    assert line.startswith("error: nothing to export: ") and NONE_JUDGED in line, line


def test_upgrading_a_store_fills_the_judge_validation_of_an_older_judged_run(half, tmp_path):
    from glotbench.store import ResultsStore

    old = old_layout(half, tmp_path / "old")
    path = tmp_path / "pre.sqlite"
    url = store_at(path)  # a store of the release before s0004
    con = sqlite3.connect(path)
    con.execute("INSERT INTO runs (run_key, benchmark, benchmark_version, signature, model, model_info, options, "
                "headline, score, scores, items, failed, prompt_tokens, completion_tokens, run_dir, started, "
                "finished, indexed) VALUES ('k1', 'aragen', '2.0', '', 'python:helpers:good_answer', '{}', '{}', "
                "'3c3h', 1.0, '{}', 2, 0, 0, 0, :d, '', '', '2026-01-01 00:00:00')", {"d": str(old.resolve())})
    con.commit()
    con.close()
    store = ResultsStore(url)  # upgrades to the head
    (row,) = store.list()
    store.close()
    assert row.judge_validation is not None and row.judge_validation["language"] == "ar", row.judge_validation
    assert "judge not validated for ar" in _ok("runs", "ls", "--db", url)


def test_report_of_an_unfinished_judged_run_never_reports_one_of_its_judges(half, tmp_path):
    # interrupted after its phases were written, before its results.json: `report DIR` took the
    # latest run under DIR, a judge's phase, and printed it as "aragen · openai:bad" with its own score
    part = tmp_path / "part"
    shutil.copytree(half, part)
    (part / "results.json").unlink()
    p = cli("report", str(part))
    assert p.returncode == 2 and not p.stdout.strip(), p.stdout
    (line,) = p.stderr.strip().splitlines()
    assert line.startswith(f"error: {part} is a judged run that did not finish: its phases (answers-1, judge-") and \
        "run the same command again" in line, line
    # a judge's phase given on its own says what it is beside its number
    (judge,) = [d for d in part.iterdir() if d.name.startswith("judge-") and "bad" in d.name]
    text = _ok("report", str(judge))
    assert "a judge's phase of a judged run: openai:bad@" in text and "not a score of that judge" in text, text
    assert "judge's phase" not in _ok("report", str(half))  # the judged run itself is not a phase


def test_compare_of_two_judges_phases_is_one_error_line_naming_the_judged_run(half):
    # it was "error: unknown benchmark 'aragen'; available: ...": the judges' phases read as runs
    good, bad = sorted(d for d in half.iterdir() if d.name.startswith("judge-"))
    p = cli("compare", str(good), str(bad))
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    (line,) = p.stderr.strip().splitlines()
    assert line.startswith(f"error: {good} is a phase of the judged run {half.resolve()}: compare judged runs"), line
    assert "python:helpers:good_answer" in _ok("compare", str(half), str(half))  # the judged run itself compares
