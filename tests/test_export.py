"""`glotbench export` (report/export.py): rows and Every Eval Ever records of finished runs, validated
with EEE's own schema (tests/fixtures/eee/eval.schema.json, from every-eval-ever 0.3.0, MIT) and,
where the package is installed (it needs Python >= 3.12), with its own validator; read back without
loss. And CITATION.cff, validated against the Citation File Format 1.2.0 schema
(tests/fixtures/cff/schema-1.2.0.json, as cffconvert 2.0.0 ships it)."""

from __future__ import annotations

import csv
import io
import json
import tomllib
from pathlib import Path

import jsonschema
import pytest
import yaml
from conftest import cli

from glotbench.report import export as ex

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "fixtures" / "rundir_golden"
FINISHED = ["auto", "batch", "cached", "invalid", "limit", "subset", "tones"]
KEPT = ("benchmark", "model", "group_by", "group", "metric", "value", "ci_low", "ci_high", "ci_method", "n",
        "clusters", "too_few_units", "signature", "valid")


def _schema_errors(schema_file: Path, doc) -> list[str]:
    schema = json.loads(schema_file.read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    return [f"{list(e.absolute_path)}: {e.message}"
            for e in cls(schema, format_checker=cls.FORMAT_CHECKER).iter_errors(doc)]


@pytest.fixture(scope="module")
def clustered_run(tmp_path_factory) -> Path:
    """A real run (replayed answers) whose intervals resample clusters: n and clusters both exported."""
    from glotbench.benchmarks.vi_diacritics import VietnameseDiacritics
    from glotbench.engine.evaluate import RunOptions, evaluate

    tmp = tmp_path_factory.mktemp("clustered")
    bench = VietnameseDiacritics()
    items = bench.load()
    f = tmp / "preds.jsonl"
    f.write_text("".join(json.dumps({"id": it.id, "output": json.dumps(
        {"restored_text": it.gold["references"][0] if i % 3 else it.public["text"]}, ensure_ascii=False)},
        ensure_ascii=False) + "\n" for i, it in enumerate(items)), encoding="utf-8")
    bench.cluster_by = "category"
    out = tmp / "run"
    evaluate(bench, f"replay:{f}", RunOptions(cache_path=str(tmp / "c.sqlite"), progress=False, out=str(out)))
    return out


def _runs(clustered_run: Path) -> list[Path]:
    return [GOLDEN / name for name in FINISHED] + [clustered_run]


def test_eee_records_follow_the_schema_and_read_back_without_loss(clustered_run, tmp_path):
    schema = ROOT / "tests" / "fixtures" / "eee" / "eval.schema.json"
    for run in _runs(clustered_run):
        [path] = ex.write_eee([run], tmp_path / run.name)
        rec = json.loads(path.read_text(encoding="utf-8"))
        assert _schema_errors(schema, rec) == [], run
        want = [{k: r[k] for k in KEPT} for r in ex.rows(run) if r["value"] is not None]
        got = [{k: r[k] for k in KEPT} for r in ex.read_eee(path)]
        assert got == want and len(got) == len(rec["evaluation_results"]) > 0, run


def test_every_eval_ever_own_validator_accepts_the_records(clustered_run, tmp_path):
    core = pytest.importorskip("every_eval_ever.validator.validation_core")
    paths = [p for run in _runs(clustered_run) for p in ex.write_eee([run], tmp_path / run.name)]
    for p in paths:
        report = core.validate_aggregate(p)
        assert report.valid, (p, report.errors[:3])
    # and it is a real check: a record without a score is refused
    rec = json.loads(paths[0].read_text(encoding="utf-8"))
    del rec["evaluation_results"][0]["score_details"]["score"]
    paths[0].write_text(json.dumps(rec), encoding="utf-8")
    assert not core.validate_aggregate(paths[0]).valid


def test_the_record_carries_signature_interval_checks_and_label():
    [path] = ex.write_eee([GOLDEN / "invalid"], Path(__import__("tempfile").mkdtemp()))
    rec = json.loads(path.read_text(encoding="utf-8"))
    res = json.loads((GOLDEN / "invalid" / "results.json").read_text(encoding="utf-8"))
    head = next(r for r in rec["evaluation_results"]
                if r["metric_config"]["metric_id"] == res["headline"] and " [" not in r["evaluation_name"])
    est = res["scores"]["overall"][res["headline"]]
    ci = head["score_details"]["uncertainty"]["confidence_interval"]
    assert (head["score_details"]["score"], ci["lower"], ci["upper"]) == (est["value"], est["ci_low"], est["ci_high"])
    assert ci["method"] == est["ci_method"] and ci["confidence_level"] == res["bootstrap"]["confidence"]
    assert head["score_details"]["uncertainty"]["num_samples"] == est["n"]
    d = head["score_details"]["details"]
    assert d["glotbench_signature"] == res["signature"] and json.loads(d["glotbench_valid"]) is False
    assert any(n.startswith("invalid:") for n in json.loads(d["glotbench_notes"]))
    assert d["glotbench_data_label"] == res["data_label"]["label"]
    assert set(res["checks"]) - {"version"} <= {k.removeprefix("glotbench_check_") for k in d}
    assert all(isinstance(v, str) for r in rec["evaluation_results"] for v in r["score_details"]["details"].values())


def test_an_estimate_without_a_number_is_left_out_and_named():
    """EEE needs a number; tones' precision with nothing changed has none: left out, and said."""
    [path] = ex.write_eee([GOLDEN / "tones"], Path(__import__("tempfile").mkdtemp()))
    rec = json.loads(path.read_text(encoding="utf-8"))
    missing = [r for r in ex.rows(GOLDEN / "tones") if r["value"] is None]
    assert missing
    said = rec["evaluation_results"][0]["score_details"]["details"]["glotbench_undefined"]
    assert all(f"{r['group_by']}={r['group']}: {r['metric']}" in said for r in missing)


def test_clusters_are_exported(clustered_run):
    overall = [r for r in ex.rows(clustered_run) if r["group_by"] is None]
    # clustered ratio metrics: Wilson on the effective n over clusters; other metrics: the cluster bootstrap
    assert overall and all(r["ci_method"] == "wilson_effective" or "cluster" in r["ci_method"]
                           for r in overall if r["ci_method"])
    assert all(isinstance(r["clusters"], int) and 0 < r["clusters"] < r["n"] for r in overall if r["ci_method"])


def test_cli_csv_and_json_match_the_rows(tmp_path):
    runs = [str(GOLDEN / "limit"), str(GOLDEN / "invalid")]
    r = cli("export", *runs, "--format", "csv")
    assert r.returncode == 0, r.stderr
    got = list(csv.DictReader(io.StringIO(r.stdout)))
    want = [row for run in runs for row in ex.rows(run)]
    assert len(got) == len(want) and [g["signature"] for g in got] == [w["signature"] for w in want]
    assert [float(g["value"]) for g in got] == [w["value"] for w in want]
    assert {g["valid"] for g in got} == {"True", "False"}
    out = tmp_path / "x.json"
    r = cli("export", *runs, "--format", "json", "--out", str(out))
    assert r.returncode == 0 and json.loads(out.read_text(encoding="utf-8")) == json.loads(json.dumps(want))


@pytest.mark.parametrize("args, says", [
    (["stopped"], "not a finished glotbench run"),
    (["limit", "--format", "eee"], "give a folder with --out"),
    (["limit", "--format", "xml"], "--format must be one of"),
    (["../eee"], "not a run directory"),
])
def test_cli_errors_are_one_line(args, says):
    r = cli("export", *[str(GOLDEN / a) if i == 0 else a for i, a in enumerate(args)])
    assert r.returncode == 2 and says in r.stderr and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr


def test_eee_read_back_refuses_a_foreign_record(tmp_path):
    from glotbench.errors import GlotbenchError

    f = tmp_path / "other.json"
    f.write_text(json.dumps({"eval_library": {"name": "lm_eval", "version": "1"}}), encoding="utf-8")
    with pytest.raises(GlotbenchError, match="not an Every Eval Ever record written by glotbench"):
        ex.read_eee(f)


def test_citation_cff_is_valid_and_matches_the_package():
    schema = ROOT / "tests" / "fixtures" / "cff" / "schema-1.2.0.json"
    doc = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert _schema_errors(schema, doc) == []
    assert _schema_errors(schema, {k: v for k, v in doc.items() if k != "authors"})  # the check can fail
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert str(doc["version"]) == project["version"] and doc["license"] == project["license"]


# -- Hugging Face Hub .eval_results ------------------------------------------------------------------

def _hub_run(tmp_path: Path, source: str, name: str = "hubrun") -> Path:
    """A golden run whose record names its data as tasks/source.py records a Hub dataset."""
    import shutil

    run = tmp_path / name
    shutil.copytree(GOLDEN / "limit", run)
    res = json.loads((run / "results.json").read_text(encoding="utf-8"))
    res["benchmark"]["data"] = source
    (run / "results.json").write_text(json.dumps(res, ensure_ascii=False), encoding="utf-8")
    return run


@pytest.mark.parametrize("source, want", [
    ("hub:org/lao-mcq@0123abcd lo/test", {"id": "org/lao-mcq", "task_id": "lo", "revision": "0123abcd"}),
    ("hub:org/lao-mcq@0123abcd/test", {"id": "org/lao-mcq", "task_id": "default", "revision": "0123abcd"}),
])
def test_hf_eval_results_follow_the_hubs_format(tmp_path, source, want):
    hub = pytest.importorskip("huggingface_hub")
    if not hasattr(hub, "parse_eval_result_entries"):  # the format's reader came with huggingface_hub 1.x
        pytest.skip(f"huggingface_hub {hub.__version__} has no reader of .eval_results files")
    run = _hub_run(tmp_path, source)
    [path] = ex.write_hf([run], tmp_path / "out")
    assert path.relative_to(tmp_path / "out").parts[1:] == (".eval_results", "vi-diacritics.yaml")
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    [entry] = hub.parse_eval_result_entries(data)  # the Hub client's own reader of these files
    res = json.loads((run / "results.json").read_text(encoding="utf-8"))
    est = res["scores"]["overall"][res["headline"]]
    assert (entry.dataset_id, entry.task_id, entry.dataset_revision) == (want["id"], want["task_id"], want["revision"])
    # a share in percent, as the Hub's documented entries (value: 20.90) and leaderboards show theirs
    assert res["metrics"][res["headline"]]["scale"] == "fraction" and entry.value == pytest.approx(100 * est["value"])
    assert entry.date == res["finished"] and "percent (0-100)" in entry.notes
    assert hub.eval_result_entries_to_yaml([entry]) == data  # nothing outside the documented fields
    for part in (res["signature"], f"n={est['n']}", est["ci_method"], f"{100 * est['ci_high']:.4g}", "subset: 6 of 164"):
        assert part in entry.notes


def test_hf_eval_results_say_invalid_first_and_refuse_unknown_datasets(tmp_path):
    with pytest.raises(__import__("glotbench.errors").errors.GlotbenchError, match="--hf-dataset"):
        ex.write_hf([GOLDEN / "limit"], tmp_path / "a")
    assert not (tmp_path / "a").exists()  # nothing written before the error
    [path] = ex.write_hf([GOLDEN / "invalid"], tmp_path / "b", dataset="me/vi-diacritics")
    [entry] = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert entry["notes"].startswith("invalid: 4 of 8 items failed")
    r = cli("export", str(GOLDEN / "limit"), str(GOLDEN / "tones"), "--format", "hf-eval-results",
            "--out", str(tmp_path / "c"), "--hf-dataset", "me/x")
    assert r.returncode == 2 and "export each benchmark's runs apart" in r.stderr and not (tmp_path / "c").exists()
