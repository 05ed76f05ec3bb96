"""`board --pivot language` over EEE records: a record holds aggregates only, so the report card
(which resamples each task's items) leaves it out and says why, naming the record; it was left out
as "the models share no item", which is not what happened."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import cli

FIX = Path(__file__).parent / "fixtures" / "card"


def test_card_names_eee_records_as_holding_no_items(srv, tmp_path):
    env = {"GLOTBENCH_CACHE_DIR": str(tmp_path / "cache")}
    out = tmp_path / "suite"
    r = cli("sweep", "--language", "lo", "--include-path", str(FIX / "tasks"), "--data", str(FIX / "data"),
            "--model", srv.spec("a"), "--model", srv.spec("b"), "--out", str(out), "--no-progress", env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    r = cli("export", str(out), "--format", "eee", "--out", str(tmp_path / "eee"), env=env)
    assert r.returncode == 0, r.stderr
    r = cli("board", str(tmp_path / "eee"), "--pivot", "language", "--format", "json", env=env)
    assert r.returncode == 0, r.stderr
    card = json.loads(r.stdout)["tables"][0]["card"]
    assert card["models"] == []
    reasons = [x["reason"] for x in card["left_out"]]
    assert len(reasons) == 6 and all("EEE record" in x and "holds no items" in x for x in reasons), reasons
    assert not any("share no item" in x for x in reasons)
    # the run directories themselves make the card
    r = cli("board", str(out), "--pivot", "language", "--format", "json", env=env)
    card = json.loads(r.stdout)["tables"][0]["card"]
    assert len(card["models"]) == 2 and len(card["tasks"]) == 3
