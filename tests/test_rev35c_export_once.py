"""`glotbench export` counts each run once (issue #35 review): a folder holding runs and their own EEE
records (`export runs --format eee --out runs/eee`, as docs/reporting.md shows), or a run and a copy
of it, gave every estimate twice in csv/json, silently (a mean over the rows counted the run twice).
The run directory is exported; the record or copy is named on a `left out:` line, as `board` does."""

from __future__ import annotations

import csv
import io
import shutil
from collections import Counter
from pathlib import Path

from conftest import cli

GOLDEN = Path(__file__).resolve().parent / "fixtures" / "rundir_golden"


def _runs(stdout: str) -> Counter:
    return Counter(r["run"] for r in csv.DictReader(io.StringIO(stdout)))


def test_a_run_and_its_own_record_in_one_folder_are_exported_once(tmp_path):
    runs = tmp_path / "runs"
    for name in ("subset", "tones"):
        shutil.copytree(GOLDEN / name, runs / name)
    assert cli("export", str(runs), "--format", "eee", "--out", str(runs / "eee")).returncode == 0
    alone = _runs(cli("export", str(runs / "subset"), str(runs / "tones"), "--format", "csv").stdout)
    proc = cli("export", str(runs), "--format", "csv")
    assert proc.returncode == 0, proc.stderr
    got = _runs(proc.stdout)
    assert set(got) == {str(runs / "subset"), str(runs / "tones")} and sorted(got.values()) == sorted(alone.values())
    assert proc.stderr.count("the same run again") == 2 and proc.stderr.count(str(runs / "eee")) == 2


def test_a_record_given_before_its_run_still_exports_the_run(tmp_path):
    out = tmp_path / "eee"
    assert cli("export", str(GOLDEN / "subset"), "--format", "eee", "--out", str(out)).returncode == 0
    rec = next(out.glob("*.json"))
    proc = cli("export", str(rec), str(GOLDEN / "subset"), "--format", "json")
    assert proc.returncode == 0 and set(_runs_json(proc.stdout)) == {str(GOLDEN / "subset")}, proc.stderr
    assert f"left out: {rec}: the same run again" in proc.stderr


def test_two_different_runs_of_one_model_are_both_exported(tmp_path):
    proc = cli("export", str(GOLDEN / "auto"), str(GOLDEN / "limit"), "--format", "csv")
    assert proc.returncode == 0 and set(_runs(proc.stdout)) == {str(GOLDEN / "auto"), str(GOLDEN / "limit")}
    assert proc.stderr == ""


def _runs_json(stdout: str) -> Counter:
    import json

    return Counter(r["run"] for r in json.loads(stdout))
