"""An Every Eval Ever record edited by hand (issue #35 review): `board` and `export` read a record back
through one typed reader (report/export.py `_record`), so a record that does not hold what glotbench
wrote is one `error:` line naming the field. Before, a score written as text, a share of -3 or
1e308, an interval upside down, n = -5 or "abc", a duplicated estimate, two headlines or a fact
changed in one result only were read as numbers (silently wrong in csv/json and the board), and a
string interval or a details list crashed the views with a traceback-like "bug" line."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from conftest import cli

from glotbench.errors import GlotbenchError
from glotbench.report import export as ex

GOLDEN = Path(__file__).resolve().parent / "fixtures" / "rundir_golden"


@pytest.fixture(scope="module")
def record(tmp_path_factory) -> dict:
    [path] = ex.write_eee([GOLDEN / "subset"], tmp_path_factory.mktemp("eee"))
    return json.loads(path.read_text(encoding="utf-8"))


def _r0(rec):
    return rec["evaluation_results"][0]


def _d0(rec):
    return _r0(rec)["score_details"]["details"]


def _ci0(rec):
    return _r0(rec)["score_details"]["uncertainty"]["confidence_interval"]


EDITS = {  # name: (edit, what the error names)
    "score as text": (lambda r: _r0(r)["score_details"].update(score="0.5"), "score: must be a number, got a string"),
    "score true": (lambda r: _r0(r)["score_details"].update(score=True), "score: must be a number, got true/false"),
    "score null": (lambda r: _r0(r)["score_details"].update(score=None), "score: must be a number, got null"),
    "a share of 1e308": (lambda r: _r0(r)["score_details"].update(score=1e308), "outside the record's own min_score-max_score (0-1)"),
    "a share of -3": (lambda r: _r0(r)["score_details"].update(score=-3), "outside the record's own min_score-max_score (0-1)"),
    "interval upside down": (lambda r: _ci0(r).update(lower=0.9, upper=0.1), "lower bound 0.9 is above its upper 0.1"),
    "interval above 1": (lambda r: _ci0(r).update(upper=1.5), "outside the record's own min_score-max_score (0-1)"),
    "interval bound as text": (lambda r: _ci0(r).update(lower="a"), "lower: must be a number, got a string"),
    "confidence level 95": (lambda r: _ci0(r).update(confidence_level=95), "confidence_level 95 is not between 0 and 1"),
    "n as text": (lambda r: _d0(r).update(glotbench_n='"abc"'), "glotbench_n: must be a whole number"),
    "n negative": (lambda r: _d0(r).update(glotbench_n="-5"), "glotbench_n: must be greater than or equal to 0"),
    "n not JSON": (lambda r: _d0(r).update(glotbench_n="seven"), "glotbench_n: not the JSON text glotbench wrote"),
    "details a list": (lambda r: _r0(r)["score_details"].update(details=[]), "details: must be an object"),
    "valid as text": (lambda r: _d0(r).update(glotbench_valid='"yes"'), "glotbench_valid: must be true or false"),
    "signature empty": (lambda r: [x["score_details"]["details"].update(glotbench_signature=" ")
                                   for x in r["evaluation_results"]], "glotbench_signature: missing or empty"),
    "selection a list": (lambda r: _d0(r).update(glotbench_selection="[1, 2]"), "glotbench_selection: must be an object"),
    "task as text": (lambda r: _d0(r).update(glotbench_task='"x"'), "glotbench_task: must be an object"),
    "finished a number": (lambda r: _d0(r).update(glotbench_finished="5"), "glotbench_finished: must be a string"),
    "input floor as text": (lambda r: _d0(r).update(glotbench_input_floor='"x"'), "glotbench_input_floor: must be an object"),
    "two headlines": (lambda r: r["evaluation_results"][1]["metric_config"]["additional_details"].update(
        glotbench_headline="true"), "2 overall results are marked glotbench_headline"),
    "an estimate twice": (lambda r: r["evaluation_results"].insert(1, copy.deepcopy(_r0(r))),
                          "the same estimate as evaluation_results[0]"),
    "validity flipped in one result": (lambda r: _d0(r).update(glotbench_valid="false"),
                                       "glotbench_valid differs from evaluation_results[0]'s"),
    "no model spec": (lambda r: r["model_info"]["additional_details"].pop("glotbench_spec"), "glotbench_spec: missing"),
    "evaluation name a number": (lambda r: _r0(r).update(evaluation_name=3), "evaluation_name: must be a string"),
    "unit unknown": (lambda r: _r0(r)["metric_config"].update(metric_unit="percent"), "metric_unit"),
}


@pytest.mark.parametrize("name", list(EDITS))
def test_a_record_edited_by_hand_is_refused_naming_the_field(record, tmp_path, name):
    edit, named = EDITS[name]
    rec = copy.deepcopy(record)
    edit(rec)
    p = tmp_path / "r.json"
    p.write_text(json.dumps(rec, ensure_ascii=False, indent=1), encoding="utf-8")
    for read in (ex.read_eee, ex.eee_results):
        with pytest.raises(GlotbenchError, match="r.json") as e:
            read(p)
        assert named in str(e.value), str(e.value)


@pytest.mark.parametrize("name", ["score as text", "interval upside down", "task as text"])
def test_the_console_script_says_it_in_one_line(record, tmp_path, name):
    edit, named = EDITS[name]
    rec = copy.deepcopy(record)
    edit(rec)
    p = tmp_path / "ລາວ record.json"  # a path in another script, with a space
    p.write_text(json.dumps(rec, ensure_ascii=False, indent=1), encoding="utf-8")
    for args in (("board", str(p)), ("export", str(p), "--format", "csv")):
        proc = cli(*args)
        assert proc.returncode == 2 and proc.stdout == "", proc.stderr
        assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1 and named in proc.stderr, proc.stderr


def test_the_record_as_written_reads_back_to_the_runs_numbers(record, tmp_path):
    p = tmp_path / "r.json"
    p.write_text(json.dumps(record, ensure_ascii=False), encoding="utf-8")
    want = [{k: r[k] for k in ("group_by", "group", "metric", "value", "ci_low", "ci_high", "n", "signature", "valid")}
            for r in ex.rows(GOLDEN / "subset") if r["value"] is not None]
    got = [{k: r[k] for k in want[0]} for r in ex.read_eee(p)]
    assert got == want and all(type(g["value"]) is type(w["value"]) for g, w in zip(got, want))
