"""Review rev33c: a SEA-MT-Bench run's results.json named its data as its last answer phase named its
own items, "turn 2 of FILE", and so did every view of the record (the EEE export's dataset_name).
The judged run's record names the questions the run read: the file, with its SHA-256."""

from __future__ import annotations

import json

from conftest import cli
from test_sea_mt_bench import FIXTURE, _run, _script


def test_the_judged_record_names_the_data_the_run_read(srv, tmp_path):
    _script(srv)
    p = _run(srv, tmp_path, "--max-failure-rate", "0.9")
    assert p.returncode == 0, p.stderr
    res = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    assert res["benchmark"]["data"] == FIXTURE
    assert res["benchmark"]["data_sha256"] == res["judged"]["summary"]["data_sha256"]
    p = cli("export", str(tmp_path / "out"), "--format", "eee", "--out", str(tmp_path / "eee"))
    assert p.returncode == 0, p.stderr
    (record,) = [json.loads(f.read_text(encoding="utf-8")) for f in (tmp_path / "eee").glob("*.json")]
    names = {r["source_data"]["dataset_name"] for r in record["evaluation_results"]}
    assert names == {FIXTURE}, names
