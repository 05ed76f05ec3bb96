"""The run directory: the files a run writes are the same as a known glotbench wrote them (field by
field, in order, of the same JSON type; tests/golden_runs.py), and are read back through the same
classes that write them."""

from __future__ import annotations

from pathlib import Path

import pytest

from golden_runs import FILES, differences, make_runs, read_run, scenarios

GOLDEN = Path(__file__).resolve().parent / "fixtures" / "rundir_golden"


@pytest.fixture(scope="module")
def runs(server, tmp_path_factory):
    return make_runs(tmp_path_factory.mktemp("runs"), server.spec(), server.configure)


@pytest.mark.parametrize("name", sorted(scenarios("", lambda **kw: None)))
def test_run_files_as_before(runs, name):
    """run.json, results.json and samples.jsonl of each scenario, against the fixture written by the
    code before the run directory had one owner (apart from times, the port and versions)."""
    expected, got = read_run(GOLDEN / name), read_run(runs[name])
    assert differences(expected, got) == []
    for f in FILES:
        assert (runs[name] / f).read_bytes().endswith(b"\n" if f.endswith(".jsonl") else b"}")


@pytest.mark.parametrize("name", sorted(scenarios("", lambda **kw: None)))
def test_written_files_are_their_records(runs, name):
    """Each file a run writes validates against its record in rundir/schema.py unchanged: nothing the
    writer puts there is coerced (a number keeps its JSON type, every section has its declared shape),
    and every samples.jsonl line has exactly SampleRecord's keys, in its order (its language check
    where one applies)."""
    import json

    from glotbench.data import validator
    from glotbench.rundir.schema import FinishedResults, Results, RunJson, SampleRecord

    results = json.loads((runs[name] / "results.json").read_text(encoding="utf-8"))
    assert validator(Results)(results) == results
    if results["status"] == "complete":
        assert validator(FinishedResults)(results) == results
    run = json.loads((runs[name] / "run.json").read_text(encoding="utf-8"))
    assert validator(RunJson)(run) == run and run["status"] == results["status"]
    rows = [json.loads(line) for line in (runs[name] / "samples.jsonl").read_text(encoding="utf-8").splitlines()]
    assert rows and all(validator(SampleRecord)(r) == r for r in rows)
    assert all(list(r) == [k for k in SampleRecord.__annotations__ if k in r or k in SampleRecord.__required_keys__]
               for r in rows)
    assert SampleRecord.__required_keys__ | {"checks", "learned"} == set(SampleRecord.__annotations__)


def test_a_records_field_of_the_wrong_type_is_one_error_line(tmp_path):
    """A results.json whose field has the wrong JSON type (a hand edit, another tool) is one error
    naming the file, the line and the field, from every reader."""
    import shutil

    from glotbench.errors import GlotbenchError
    from glotbench.rundir import read_results

    run = tmp_path / "run"
    shutil.copytree(GOLDEN / "limit", run)
    text = (run / "results.json").read_text(encoding="utf-8")
    at = text.index('"samples": 6,', text.index('"counts": {'))  # counts.samples (checks has its own)
    (run / "results.json").write_text(text[:at] + '"samples": "6",' + text[at + len('"samples": 6,'):], encoding="utf-8")
    with pytest.raises(GlotbenchError) as e:
        read_results(run)
    line = text[:at].count("\n") + 1
    assert str(e.value) == f"{run / 'results.json'}:{line}: counts.samples: must be a whole number, got a string"


def test_a_run_written_before_the_new_sections_still_reads():
    """A run directory written by an earlier release (b4cbb1c: no selection, validity, data label,
    prompt template or prompt records) is read by every reader: the records, the table, the report
    page, the results store and compare."""
    from glotbench.report.compare import compare_runs
    from glotbench.report.html import run_report
    from glotbench.rundir import read_results, read_samples
    from glotbench.rundir.schema import FinishedResults, ReportSampleRow
    from glotbench.rundir.selection import selection_text
    from glotbench.rundir.validity import notes
    from glotbench.store.db import run_record

    old = Path(__file__).resolve().parent / "fixtures" / "rundir_old" / "vi-limit20"
    res = read_results(old, FinishedResults)
    assert "selection" not in res and "validity" not in res and "prompt_template" not in res
    assert len(read_samples(old, ReportSampleRow)) == 20
    assert selection_text(res) == "subset: 20 items (--limit 20)" and notes(res) == [selection_text(res)]
    rec = run_record(old)
    assert rec["items"] == 20 and rec["validity"] is None and rec["selection"]["limit"] == 20
    assert "vi-diacritics" in run_report(old)
    cmp = compare_runs(str(old), str(old), resamples=0)
    assert cmp["items"] == 20


def test_finished_run_rule(tmp_path):
    """A directory holds a finished run only when its results.json is complete and valid: an invalid
    run, one stopped by --max-cost, an unfinished one (run.json only) and an unreadable results.json
    are run again in place; `--out` refuses only a finished one."""
    import json

    from glotbench.errors import GlotbenchError
    from glotbench.rundir import finished_run, new_run_dir, run_status

    def results(d: Path, **fields) -> Path:
        d.mkdir()
        (d / "results.json").write_text(json.dumps(fields), encoding="utf-8")
        return d

    done = results(tmp_path / "done", status="complete", validity={"valid": True})
    assert finished_run(done) and run_status(done) == "complete"
    with pytest.raises(GlotbenchError, match="already holds a finished run"):
        new_run_dir("b", "m", str(done))
    for d in (results(tmp_path / "invalid", status="complete", validity={"valid": False}),
              results(tmp_path / "stopped", status="stopped"), tmp_path / "unfinished"):
        d.mkdir(exist_ok=True)
        (d / "run.json").write_text("{}", encoding="utf-8")
        assert not finished_run(d) and new_run_dir("b", "m", str(d)) == d
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "results.json").write_text("{not json", encoding="utf-8")
    assert not finished_run(tmp_path / "broken") and run_status(tmp_path / "broken") is None


def test_sample_sink_keeps_item_order_and_atomic_writes_survive_lone_surrogates(tmp_path):
    import json

    from glotbench.rundir import SampleSink, slug, write_json_atomic, write_jsonl_atomic

    with SampleSink(tmp_path / "samples.jsonl") as sink:
        for i, r in (("b", 1), ("a", 0), ("b", 0), ("a", 1)):
            sink.add({"id": i, "repeat": r, "output": "\ud800" if i == "a" else "ok"})
    sink.in_order({"a": 0, "b": 1})
    rows = [json.loads(x) for x in (tmp_path / "samples.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [(r["id"], r["repeat"]) for r in rows] == [("a", 0), ("a", 1), ("b", 0), ("b", 1)]
    assert rows[0]["output"] == "\ud800"  # written as its \u escape, read back the same
    write_json_atomic(tmp_path / "deep" / "x.json", {"t": "\udfff ລາວ"})
    write_jsonl_atomic(tmp_path / "x.jsonl", [{"t": "\udfff"}, {"t": "ລາວ"}])
    assert json.loads((tmp_path / "deep" / "x.json").read_text(encoding="utf-8")) == {"t": "\udfff ລາວ"}
    assert not list(tmp_path.rglob("*.tmp"))
    assert slug("openai:gpt-4o@http://127.0.0.1:8000/v1") == "openai_gpt-4o_http_127.0.0.1_8000_v1"
    assert slug("ລາວ") == "model"
