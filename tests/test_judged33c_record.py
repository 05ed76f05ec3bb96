"""Issue #33 (judged33c): a judged run's results.json is a whole run record, written by the writer every
run's goes through (rundir.schema `results_record`): `bootstrap` (its confidence: export's confidence
column was empty for every judged row), `argv`, `versions` (EEE said "unknown"), the run's `--bench-opt`
options (`{}`: the phases drop them) and `--data` (`benchmark.data_path` was None), for each judged
kind: a rubric task, the arena, SEA-MT-Bench and AraGen, on loopback models. A judged results.json
written before these fields still reads."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from conftest import cli


def _rubric(srv, tmp_path):
    from test_tasks_rubric import files, verdict

    srv.configure(answers={"ນະຄອນຫຼວງຂອງລາວ": "ວຽງຈັນ", "ແມ່ນ້ຳໃດ": "ແມ່ນ້ຳຂອງ", "ລາວມີຈັກແຂວງ": "17"},
                  sequences={"[Answer]\n": [verdict(1, 5)]})
    task = files(tmp_path)
    data = str(tmp_path / "qa.jsonl")
    args = ["run", task, "--model", srv.spec("cand"), "--judge", srv.spec("judge1"), "--data", "qa.jsonl"]
    return args, data, {}


def _arena(srv, tmp_path):
    srv.configure(judges={"fair": {"mode": "prefer", "prefer": "GOOD"}})
    opts = {"baseline": "python:helpers:plain_answer", "unanswered": "loss"}
    args = ["run", "laobench-arena", "--model", "python:helpers:good_answer", "--judge", srv.spec("fair"),
            "--limit", "4", *[x for k, v in opts.items() for x in ("--bench-opt", f"{k}={v}")]]
    return args, None, opts


def _mt_bench(srv, tmp_path):
    from test_sea_mt_bench import FIXTURE, _script

    _script(srv)
    args = ["run", "sea-mt-bench", "--model", srv.spec("cand"), "--bench-opt", "config=th", "--data", FIXTURE,
            "--judge", srv.spec("j1"), "--max-failure-rate", "0.9"]
    return args, str(Path(FIXTURE).resolve()), {"config": "th"}


def _aragen(srv, tmp_path):
    from test_aragen_parity import ANSWERS, TASK_FILE, replay_jsonl, upstream_copy, write
    from test_judge_replay_ids import verdicts_file

    repo, data = upstream_copy(tmp_path), write(tmp_path, "task.json", TASK_FILE)
    answers, verdicts = replay_jsonl(tmp_path, ANSWERS), verdicts_file(tmp_path)
    opts = {"judge_prompt": str(repo), "parse": "3c3h", "policy": "upstream"}
    args = ["run", "aragen", "--model", f"replay:{answers}", "--judge", f"replay:{verdicts}", "--data", data,
            *[x for k, v in opts.items() for x in ("--bench-opt", f"{k}={v}")]]
    return args, str(Path(data).resolve()), opts


@pytest.mark.parametrize("kind", [_rubric, _arena, _mt_bench, _aragen], ids=["rubric", "arena", "mt-bench", "aragen"])
def test_a_judged_run_writes_the_whole_run_record(srv, tmp_path, kind):
    args, data, opts = kind(srv, tmp_path)
    out = tmp_path / "run ລາວ"
    p = cli(*args, "--out", str(out), "--no-progress", "--cache-path", str(tmp_path / "c.sqlite"), cwd=str(tmp_path))
    assert p.returncode == 0, p.stderr
    res = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert res["judged"]["kind"] and res["status"] == "complete"
    assert res["bootstrap"]["confidence"] == 0.95 and res["bootstrap"]["resamples"] == 1000
    assert res["argv"][1:3] == ["run", args[1]], res["argv"]
    assert res["versions"]["glotbench"] and res["versions"]["python"]
    assert res["config"]["bench_options"] == opts
    assert res["benchmark"]["data_path"] == data
    assert res["benchmark"]["data"] and res["benchmark"]["data_sha256"]
    assert res["started"] <= res["finished"]
    # export: the confidence column, the EEE record's library version and command line
    p = cli("export", str(out), "--format", "csv")
    assert p.returncode == 0, p.stderr
    rows = list(csv.DictReader(io.StringIO(p.stdout)))
    assert rows and {r["confidence"] for r in rows} == {"0.95"}, rows
    p = cli("export", str(out), "--format", "eee", "--out", str(tmp_path / "eee"))
    assert p.returncode == 0, p.stderr
    (record,) = [json.loads(f.read_text(encoding="utf-8")) for f in (tmp_path / "eee").glob("*.json")]
    assert record["eval_library"]["version"] == res["versions"]["glotbench"]
    assert "run" in json.dumps(record["eval_library"]["additional_details"], ensure_ascii=False)
    p = cli("export", str(out), "--format", "json")
    assert p.returncode == 0, p.stderr
    assert {r["confidence"] for r in json.loads(p.stdout)} == {0.95}
    p = cli("export", str(out), "--format", "hf-eval-results", "--out", str(tmp_path / "hf"),
            "--hf-dataset", "someone/data")
    assert p.returncode == 0, p.stderr
    hf = "".join(f.read_text(encoding="utf-8") for f in (tmp_path / "hf").rglob("*.yaml"))
    assert f"glotbench {res['versions']['glotbench']}" in hf and "glotbench ?" not in hf, hf
    for cmd in (("report", str(out)), ("board", str(out)), ("runs", "import", str(out), "--db", f"sqlite:///{tmp_path / 's.db'}")):
        p = cli(*cmd)
        assert p.returncode == 0 and "Traceback" not in p.stderr, (cmd, p.stderr)


def test_a_judged_record_written_before_these_fields_still_reads(srv, tmp_path):
    args, _, _ = _rubric(srv, tmp_path)
    out = tmp_path / "old"
    p = cli(*args, "--out", str(out), "--no-progress", "--cache-path", str(tmp_path / "c.sqlite"), cwd=str(tmp_path))
    assert p.returncode == 0, p.stderr
    path = out / "results.json"
    res = json.loads(path.read_text(encoding="utf-8"))
    for key in ("bootstrap", "argv", "versions", "started", "coverage"):
        res.pop(key, None)
    res["benchmark"]["data_path"] = None
    res["config"]["bench_options"] = {}
    path.write_text(json.dumps(res, ensure_ascii=False), encoding="utf-8")
    for cmd in (("report", str(out)), ("export", str(out), "--format", "csv"), ("board", str(out))):
        p = cli(*cmd)
        assert p.returncode == 0 and "Traceback" not in p.stderr, (cmd, p.stderr)
    rows = list(csv.DictReader(io.StringIO(cli("export", str(out), "--format", "csv").stdout)))
    assert rows and {r["confidence"] for r in rows} == {""}  # an older record: no level known, none invented
    new = tmp_path / "new"
    p = cli(*args, "--out", str(new), "--no-progress", "--cache-path", str(tmp_path / "c.sqlite"), cwd=str(tmp_path))
    assert p.returncode == 0, p.stderr
    p = cli("compare", str(out), str(new))  # an older record and one of this release, side by side
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    assert "rubric" in p.stdout
