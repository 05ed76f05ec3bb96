"""Review of #35: a run and its own EEE record on one board are the same run: the run directory (it
has the samples the paired tests need) is shown whichever comes first, and the record is left out as
the same run again, not as "an older run"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import cli

RUN = Path(__file__).resolve().parent / "fixtures" / "rundir_golden" / "subset"


@pytest.mark.parametrize("record_first", [True, False])
def test_a_run_beside_its_own_record_shows_the_run(tmp_path, record_first):
    out = tmp_path / "eee"
    assert cli("export", str(RUN), "--format", "eee", "--out", str(out)).returncode == 0
    rec = next(out.glob("*.json"))
    paths = [rec, RUN] if record_first else [RUN, rec]
    proc = cli("board", *map(str, paths), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    board = json.loads(proc.stdout)
    (col,) = board["columns"]
    (cell,) = col["cells"].values()
    assert "untested" not in cell  # the run directory, with samples, not the record
    (left,) = board["left_out"]
    assert left["path"] == str(rec)
    assert "the same run again" in left["reason"] and "older" not in left["reason"]
