"""`glotbench export` takes what `board` takes (issue #34 review): run directories, folders holding
them (searched recursively; an unfinished run named), and the EEE records glotbench wrote, files or
folders: rows read back from a record equal the run's, `--format eee` writes a record unchanged,
`hf-eval-results` publishes from one. Anything else is one error line naming what export accepts."""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

import pytest
import yaml

from conftest import cli
from test_export import GOLDEN, _hub_run

SAME = ("benchmark", "model", "group_by", "group", "metric", "headline", "value", "ci_low", "ci_high", "ci_method",
        "confidence", "n", "clusters", "too_few_units", "valid", "signature", "data_label", "notes")


def _csv(*args: str) -> list[dict[str, str]]:
    r = cli("export", *args, "--format", "csv")
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stdout + r.stderr
    return list(csv.DictReader(io.StringIO(r.stdout)))


def _facts(rows: list[dict[str, str]]) -> list[tuple]:
    """Each estimate with a number (an EEE record holds no estimate without one: named in it instead)."""
    return sorted(tuple(r[k] for k in SAME) for r in rows if r["value"] != "")


def test_a_folder_of_runs_exports_every_finished_run_and_names_the_unfinished(tmp_path):
    root = tmp_path / "runs"
    shutil.copytree(GOLDEN / "limit", root / "a" / "limit")
    shutil.copytree(GOLDEN / "invalid", root / "b" / "deeper" / "invalid")
    (root / "c").mkdir()
    (root / "c" / "run.json").write_text("{}", encoding="utf-8")  # started, never finished
    r = cli("export", str(root), "--format", "csv")
    assert r.returncode == 0, r.stdout + r.stderr
    got = list(csv.DictReader(io.StringIO(r.stdout)))
    assert _facts(got) == _facts(_csv(str(GOLDEN / "limit"), str(GOLDEN / "invalid")))
    assert {g["run"] for g in got} == {str(root / "a" / "limit"), str(root / "b" / "deeper" / "invalid")}
    assert f"left out: {root / 'c'}: not finished (no results.json)" in r.stderr
    # a run given twice (itself and in its folder) is exported once
    assert len(_csv(str(root), str(root / "a" / "limit"))) == len(got)


def test_eee_records_export_again_as_rows_unchanged_records_and_hub_files(tmp_path):
    recs = tmp_path / "recs"
    r = cli("export", str(GOLDEN / "limit"), str(GOLDEN / "tones"), "--format", "eee", "--out", str(recs))
    assert r.returncode == 0, r.stderr
    files = sorted(recs.glob("*.json"))
    assert len(files) == 2
    want = _facts(_csv(str(GOLDEN / "limit"), str(GOLDEN / "tones")))
    assert _facts(_csv(str(recs))) == want  # a folder of records
    assert _facts(_csv(*map(str, files))) == want  # the record files
    r = cli("export", str(files[0]), "--format", "json")
    assert r.returncode == 0 and json.loads(r.stdout) and all(x["run"] == str(files[0]) for x in json.loads(r.stdout))
    again = tmp_path / "again"
    r = cli("export", str(recs), "--format", "eee", "--out", str(again))
    assert r.returncode == 0, r.stderr
    assert {f.name: f.read_bytes() for f in again.glob("*.json")} == {f.name: f.read_bytes() for f in files}
    r = cli("export", str(recs), "--format", "eee", "--out", str(recs))  # into its own folder: left as it is
    assert r.returncode == 0 and {f.name: f.read_bytes() for f in recs.glob("*.json")} == {f.name: f.read_bytes() for f in files}


def test_a_hub_run_publishes_the_same_entry_from_its_eee_record(tmp_path):
    run = _hub_run(tmp_path, "hub:org/lao-mcq@0123abcd lo/test")
    assert cli("export", str(run), "--format", "eee", "--out", str(tmp_path / "recs")).returncode == 0
    (rec,) = (tmp_path / "recs").glob("*.json")
    for src, out in ((run, "from-run"), (rec, "from-record")):
        r = cli("export", str(src), "--format", "hf-eval-results", "--out", str(tmp_path / out))
        assert r.returncode == 0, r.stdout + r.stderr
    (a,) = (tmp_path / "from-run").rglob("*.yaml")
    (b,) = (tmp_path / "from-record").rglob("*.yaml")
    assert a.relative_to(tmp_path / "from-run") == b.relative_to(tmp_path / "from-record")
    assert yaml.safe_load(a.read_text(encoding="utf-8")) == yaml.safe_load(b.read_text(encoding="utf-8"))


def _foreign(tmp_path: Path) -> Path:
    f = tmp_path / "lm_eval.json"
    f.write_text(json.dumps({"schema_version": "0.3.0", "eval_library": {"name": "lm_eval", "version": "1"}}), encoding="utf-8")
    return f


@pytest.mark.parametrize("make, says", [
    (lambda t: t / "nowhere", "does not exist"),
    (lambda t: (t / "e").mkdir() or t / "e", "no finished run (results.json) nor EEE record"),
    (lambda t: (t / "x.json").write_text("{}", encoding="utf-8") and t / "x.json", "not a run directory nor an EEE record"),
    (_foreign, "not a run directory nor an EEE record written by glotbench"),
    (lambda t: (t / "notes.txt").write_text("hi", encoding="utf-8") and t / "notes.txt", "not a run directory"),
])
def test_anything_else_is_one_line_naming_what_export_takes(make, says, tmp_path):
    given = make(tmp_path)
    for fmt in ("csv", "eee"):
        r = cli("export", str(given), "--format", fmt, "--out", str(tmp_path / f"o-{fmt}"))
        lines = r.stderr.splitlines()
        assert r.returncode == 2 and len(lines) == 1 and says in lines[0], r.stderr
        assert "export takes run directories, folders holding them, and EEE records glotbench wrote" in lines[0]
