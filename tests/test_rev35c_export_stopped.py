"""`glotbench export FOLDER` with a run stopped by --max-cost in it (issue #35 review): the stopped run
is left out and named, as a run that never finished is, and every finished run is exported. Before,
the one stopped run made the whole export fail (`export runs/` refused every run beside it)."""

from __future__ import annotations

import csv
import io
import shutil
from pathlib import Path

from conftest import cli

GOLDEN = Path(__file__).resolve().parent / "fixtures" / "rundir_golden"


def test_a_stopped_run_in_a_folder_is_left_out_and_named(tmp_path):
    for name in ("stopped", "tones"):
        shutil.copytree(GOLDEN / name, tmp_path / "runs" / name)
    proc = cli("export", str(tmp_path / "runs"), "--format", "csv")
    assert proc.returncode == 0, proc.stderr
    rows = list(csv.DictReader(io.StringIO(proc.stdout)))
    assert {r["run"] for r in rows} == {str(tmp_path / "runs" / "tones")} and rows
    assert proc.stderr == f"left out: {tmp_path / 'runs' / 'stopped'}: not finished (status: stopped; stopped by --max-cost)\n"
    proc = cli("export", str(tmp_path / "runs"), "--format", "eee", "--out", str(tmp_path / "eee"))
    assert proc.returncode == 0 and len(list((tmp_path / "eee").glob("*.json"))) == 1, proc.stderr


def test_a_folder_holding_only_a_stopped_run_is_one_error_naming_it(tmp_path):
    shutil.copytree(GOLDEN / "stopped", tmp_path / "runs" / "stopped")
    proc = cli("export", str(tmp_path / "runs"), "--format", "csv")
    assert proc.returncode == 2 and proc.stdout == "" and proc.stderr.count("\n") == 1, proc.stderr
    assert "no finished run" in proc.stderr and "left out: " + str(tmp_path / "runs" / "stopped") in proc.stderr


def test_a_stopped_run_given_by_itself_is_still_refused(tmp_path):
    proc = cli("export", str(GOLDEN / "stopped"), "--format", "csv")
    assert proc.returncode == 2 and "not a finished glotbench run (status: 'stopped')" in proc.stderr
