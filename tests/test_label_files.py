"""`build review agree/adjudicate/final` read annotators' label files (CSV, JSONL, a Label Studio JSON
export) through glotbench.data: every malformed file is ONE `error: FILE[:LINE]: ...` line and exit
code 2, never a traceback; good files in any of the three formats (with a byte-order mark, with what
a real Label Studio export carries) give the same agreement as the plain CSV, and what is not a
label (empty CSV rows, skipped annotations, unannotated tasks) is counted and reported."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from conftest import cli
from test_user_files import _one_error, _write

GOOD = "id,annotator,label\ni1,b,keep\ni2,b,fix\ni3,b,keep\ni4,b,drop\n"
HEAD = "id,annotator,label\n"

CSV_CASES: list[tuple[str, str | bytes, str]] = [
    ("quote not closed", HEAD + 'i1,a,"keep\ni2,a,fix\n', r":2: not valid CSV \(a quoted cell is not closed\)"),
    ("text after a quote", HEAD + 'i1,a,keep\ni2,a,"fix"ed\n', r":3: not valid CSV \(',' expected after '\"'\)"),
    ("missing column", "id,who,label\ni1,a,keep\n", r":1: needs the columns id, annotator, label \(the header lacks annotator\)"),
    ("column twice", "id,annotator,label,label\ni1,a,keep,fix\n", r":1: the header names the column 'label' twice"),
    ("too few cells", HEAD + "i1,a,keep\ni2,a\ni3,a,fix,x\n", r":3: fewer cells \(2\) than the header's 3 columns \(and 1 more bad row\)"),
    ("label of nobody", HEAD + "i1,,keep\ni2,a,fix\ni3,,drop\n",
     r":2: annotator: must not be empty when a label is given \(and 1 more bad row\)"),
    ("label of spaces", HEAD + "i1,a,keep\ni2,a,   \n", r":3: label: only spaces \(leave the cell empty for an item not labelled\)"),
    ("empty id", HEAD + ",a,keep\n", r":2: id: must not be empty"),
    ("two labels, one pair", HEAD + "i1,a,keep\ni2,a,fix\ni1,a,drop\n",
     r":4: a second label for item 'i1' by 'a' \('drop'; the first, 'keep', is at .*bad\.csv:2\)"),
    ("the same label twice", HEAD + "i1,a,keep\n\ni1,a,keep\n", r":4: a second label for item 'i1' by 'a' \(the same label is at .*bad\.csv:2\)"),
    ("not utf-8", HEAD.encode() + "i1,a,ບໍ່\n".encode()[:-3] + b"\n", r": not UTF-8 text \(invalid continuation byte at byte 30\)"),
    ("utf-16", "\ufeffid,annotator,label\ni1,a,keep\n".encode("utf-16"), r": not UTF-8 text \(invalid start byte at byte 0\)"),
    ("empty file", "", r":1: empty file, expected a CSV header line \(id, annotator, label\)"),
    ("header only", HEAD, r": no labels \(CSV or JSONL with id, annotator, label; or a Label Studio JSON export\)"),
    ("nothing labelled", HEAD + "i1,a,\ni2,,\n", r": no labels \(.*\)"),
]

JSONL_CASES: list[tuple[str, str | bytes, str]] = [
    ("empty label", '{"id": "i1", "annotator": "a", "label": "keep"}\n{"id": "i2", "annotator": "a", "label": ""}\n',
     r":2: label: must not be empty"),
    ("blank label", '{"id": "i1", "annotator": "a", "label": " "}\n', r":1: label: must not be empty"),
    ("fractional label", '{"id": "i1", "annotator": "a", "label": 1.5}\n', r":1: label: must be a string or a whole number, got float"),
    ("no annotator", '{"id": "i1", "label": "keep"}\n{"id": "i2", "label": "fix"}\n', r":1: annotator: missing \(and 1 more bad row\)"),
    ("two labels, one pair", '{"id": 7, "annotator": "a", "label": 1}\n{"id": "7", "annotator": "a", "label": 2}\n',
     r":2: a second label for item '7' by 'a' \('2'; the first, '1', is at .*bad\.jsonl:1\)"),
    ("not json", '{"id": "i1", "annotator": "a", "label": "keep"\n', r":1: not valid JSON \(Expecting ',' delimiter at column 47\)"),
    ("a list a line", '["i1", "a", "keep"]\n', r":1: row: expected a JSON object, got list"),
    ("empty file", "", r": no labels \(.*\)"),
]


def _ann(who: Any, *choices: str, cancelled: bool = False, **extra: Any) -> dict[str, Any]:
    return {"completed_by": who, "was_cancelled": cancelled,
            "result": [{"type": "choices", "from_name": "label", "value": {"choices": list(choices)}}], **extra}


def _ls(tasks: list[dict[str, Any]]) -> str:
    return json.dumps(tasks, indent=1)


TASK = {"data": {"id": "i1", "text": "t"}, "annotations": [_ann(1, "keep")]}

LS_CASES: list[tuple[str, str | bytes, str]] = [
    ("not a list", json.dumps({"tasks": [TASK]}), r":1: a Label Studio export is a JSON list of tasks, got an object"),
    ("JSON-MIN rows", _ls([{"id": 1, "text": "t", "label": "keep", "annotator": "a@x"}]), r":2: task 0: data: missing"),
    ("task without id", _ls([TASK, {"data": {"text": "t"}, "annotations": [_ann(1, "fix")]}]), r":\d+: task 1: data\.id: missing"),
    ("result without choices", _ls([{**TASK, "annotations": [{"completed_by": 1, "result": [{"type": "choices", "value": {}}]}]}]),
     r":\d+: task 0: annotations\.0\.result\.0: value\.choices: missing \(a choices result\)"),
    ("no choice made", _ls([{**TASK, "annotations": [{"completed_by": 1, "result": []}]}]),
     r":\d+: task 0: annotations\.0: expected one choice per annotation, got \[\]"),
    ("two choices", _ls([{**TASK, "annotations": [_ann(1, "keep", "fix")]}]),
     r":\d+: task 0: annotations\.0: expected one choice per annotation, got \['keep', 'fix'\]"),
    ("no annotator", _ls([{**TASK, "annotations": [{"result": TASK["annotations"][0]["result"]}]}]),
     r":\d+: task 0: annotations\.0\.completed_by: missing"),
    ("cancelled not a boolean", _ls([{**TASK, "annotations": [_ann(1, "keep", cancelled="yes")]}]),  # type: ignore[arg-type]
     r":\d+: task 0: annotations\.0\.was_cancelled: must be true or false, got a string"),
    ("one annotator twice", _ls([{**TASK, "annotations": [_ann(1, "keep"), _ann({"id": 1}, "fix")]}]),
     r":2: task 0: a second label for item 'i1' by '1' \('fix'; the first, 'keep', is at .*bad\.json:2: task 0\)"),
    ("key twice", '[{"data": {"id": "i1", "id": "i2"}}]', r": not valid JSON \(the key 'id' appears twice in one object\)"),
    ("not utf-8", b'[{"data": {"id": "\xe0"}}]', r": not UTF-8 text \(invalid continuation byte at byte 18\)"),
    ("empty file", "", r":1: empty file, not JSON"),
    ("no annotations at all", _ls([{"data": {"id": "i1"}, "annotations": []}]), r": no labels \(.*\)"),
]

CASES = [("csv", *c) for c in CSV_CASES] + [("jsonl", *c) for c in JSONL_CASES] + [("json", *c) for c in LS_CASES]


@pytest.mark.parametrize("ext, name, content, problem", CASES, ids=[f"{c[0]}: {c[1]}" for c in CASES])
def test_bad_label_file_is_one_error(tmp_path, ext, name, content, problem):
    good = _write(tmp_path / "good.csv", GOOD)
    bad = _write(tmp_path / f"bad.{ext}", content)
    _one_error(cli("build", "review", "agree", str(bad), str(good), "--resamples", "10"), bad, problem)


@pytest.mark.parametrize("command", [["adjudicate", "--item", "i1", "--label", "keep", "--by", "x", "--out", "{o}"],
                                     ["final", "--out", "{o}"]])
def test_every_review_command_reads_labels_the_same_way(tmp_path, command):
    good = _write(tmp_path / "good.csv", GOOD)
    bad = _write(tmp_path / "bad.csv", HEAD + 'i1,a,"keep\n')
    out = tmp_path / "out.json"
    _one_error(cli("build", "review", *[a.format(o=out) for a in command], str(good), str(bad)), bad,
               r":2: not valid CSV \(a quoted cell is not closed\)")
    assert not out.exists()
    _one_error(cli("build", "review", *[a.format(o=out) for a in command], str(good), str(tmp_path / "nope.csv")),
               "label file not found: " + str(tmp_path / "nope.csv"), "")


@pytest.mark.parametrize("content, problem", [
    ('{"id": "i1", "label": "keep"}\n', r":1: decided_by: missing"),
    ('{"id": "i1", "label": "keep", "decided_by": "x"}\n{"id": "i2", "label": "", "decided_by": "x"}\n', r":2: label: must not be empty"),
])
def test_adjudication_file(tmp_path, content, problem):
    good = _write(tmp_path / "good.csv", GOOD)
    adj = _write(tmp_path / "adj.jsonl", content)
    _one_error(cli("build", "review", "final", str(good), "--adjudications", str(adj), "--out", str(tmp_path / "f.json")),
               adj, problem)


def test_flags_file_of_export(tmp_path):
    items = _write(tmp_path / "items.jsonl", '{"id": "i1", "question": "q"}\n')
    flags = _write(tmp_path / "flags.jsonl", '{"id": "i1", "check": "context", "flags": "needs_context"}\n')
    _one_error(cli("build", "review", "export", str(items), "--flags", str(flags), "--out", str(tmp_path / "e.csv")),
               flags, r":1: flags: must be a list, got a string")


# -- good files: one set of labels in every format gives the same figures -------------------------

A = ["keep", "fix", "keep", "drop", "keep", "fix", "drop", "keep", "fix", "keep"]
B = ["keep", "fix", "fix", "drop", "keep", "keep", "drop", "keep", "fix", None]
C = ["keep", "drop", "keep", "drop", "fix", "fix", "drop", "keep", None, "keep"]


def _csv_file(path: Path, who: str, labels: list[str | None], bom: bool = False) -> str:
    rows = [f'i{k},{who},"{lab}"' if lab else f"i{k},{who}," for k, lab in enumerate(labels)]  # empty: not labelled
    text = ("\ufeff" if bom else "") + "text,id,annotator,label\r\n" + "".join(f'"a, ""b""\nc",{r}\r\n' for r in rows)
    return str(_write(path, text.encode("utf-8")))


def _jsonl_file(path: Path, who: str, labels: list[str | None]) -> str:
    return str(_write(path, "".join(json.dumps({"id": f"i{k}", "annotator": who, "label": lab, "text": "ພາສາລາວ"}) + "\n"
                                   for k, lab in enumerate(labels) if lab)))


def _real_export(path: Path) -> str:
    """As Label Studio 1.x exports JSON: task and annotation bookkeeping, a TextArea note beside
    the choice, a skipped (cancelled) annotation, an unannotated task, a user object for one."""
    tasks = []
    for k in range(len(A)):
        anns = []
        for who, labs in ((1, A), ({"id": 2, "email": "bo@lab.example", "first_name": ""}, B)):
            if labs[k] is None:
                anns.append({"id": 900 + k, "completed_by": 2, "result": [], "was_cancelled": True, "ground_truth": False})
                continue
            anns.append({"id": 100 * k + (who if isinstance(who, int) else 2), "completed_by": who, "was_cancelled": False,
                         "ground_truth": False, "created_at": "2026-01-02T03:04:05.6Z", "lead_time": 4.2, "prediction": {},
                         "result_count": 0, "task": k + 1, "project": 3, "parent_prediction": None, "last_action": None,
                         "result": [{"value": {"choices": [labs[k]]}, "id": f"r{k}", "from_name": "label", "to_name": "text",
                                     "type": "choices", "origin": "manual"},
                                    {"value": {"text": ["ok"]}, "id": f"n{k}", "from_name": "note", "to_name": "text",
                                     "type": "textarea", "origin": "manual"}]})
        tasks.append({"id": k + 1, "annotations": anns, "drafts": [], "predictions": [], "file_upload": "annotate.json",
                      "data": {"id": f"i{k}", "text": "t", "key": "", "flags": ""}, "meta": {}, "inner_id": k + 1,
                      "total_annotations": len(anns), "cancelled_annotations": 0, "comment_authors": [], "project": 3})
    tasks.append({"id": 99, "annotations": [], "drafts": [], "predictions": [], "data": {"id": "unseen", "text": "t"}})
    return str(_write(path, json.dumps(tasks, indent=2, ensure_ascii=False)))


def _agree(tmp_path: Path, files: list[str]) -> dict[str, Any]:
    out = tmp_path / "agree.json"
    proc = cli("build", "review", "agree", *files, "--order", "drop,fix,keep", "--resamples", "200", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    res = json.loads(out.read_text(encoding="utf-8"))
    res["printed"] = proc.stdout
    return res


def _figures(res: dict[str, Any]) -> list[Any]:
    est = [res["fleiss_kappa"], *res["cohens_kappa"].values(), res["krippendorff_alpha_nominal"],
           res["krippendorff_alpha_ordinal"]]
    return [[e["value"], e["ci_low"], e["ci_high"], e["items"]] for e in est] + [res["disagreements"]]


def test_good_files_in_every_format_give_the_same_agreement(tmp_path):
    csv_res = _agree(tmp_path, [_csv_file(tmp_path / "a.csv", "ann", A), _csv_file(tmp_path / "b.csv", "bo", B, bom=True)])
    jsonl_res = _agree(tmp_path, [_jsonl_file(tmp_path / "a.jsonl", "ann", A), _jsonl_file(tmp_path / "b.jsonl", "bo", B)])
    ls_res = _agree(tmp_path, [_real_export(tmp_path / "export.json")])
    assert csv_res["items"] == jsonl_res["items"] == 10 and ls_res["items"] == 10
    assert _figures(csv_res) == _figures(jsonl_res)
    ls_renamed = json.loads(json.dumps(_figures(ls_res)).replace("bo@lab.example", "bo").replace('"1"', '"ann"'))
    assert _figures(csv_res) == ls_renamed
    assert csv_res["cohens_kappa"]["ann ~ bo"]["items"] == 9  # i9 has no label by bo: not an item of the pair
    assert csv_res["not_counted"] == {"unlabelled_rows": 1, "cancelled_annotations": 0, "unannotated_tasks": 0}
    assert "not counted: 1 CSV row without a label" in csv_res["printed"]
    assert jsonl_res["not_counted"] == dict.fromkeys(jsonl_res["not_counted"], 0) and "not counted" not in jsonl_res["printed"]
    assert ls_res["not_counted"] == {"unlabelled_rows": 0, "cancelled_annotations": 1, "unannotated_tasks": 1}
    assert "not counted: 1 skipped (cancelled) annotation, 1 task without annotations" in ls_res["printed"]


def test_a_long_cell_is_read(tmp_path):
    """An exported item longer than the csv module's default cell limit (128 KiB) still imports."""
    long = "ພາສາລາວ " * 40_000
    a = _write(tmp_path / "a.csv", f'id,text,annotator,label\ni1,"{long}",a,keep\ni2,x,a,fix\n')
    b = _write(tmp_path / "b.csv", "id,annotator,label\ni1,b,keep\ni2,b,keep\n")
    assert _agree(tmp_path, [str(a), str(b)])["cohens_kappa"]["a ~ b"]["items"] == 2


def test_three_annotators_final_labels_from_mixed_formats(tmp_path):
    files = [_csv_file(tmp_path / "a.csv", "ann", A), _jsonl_file(tmp_path / "b.jsonl", "bo", B),
             _csv_file(tmp_path / "c.csv", "cy", C)]
    res = _agree(tmp_path, files)
    assert res["fleiss_kappa"]["items"] == 8 and res["fleiss_kappa"]["excluded_incomplete"] == 2
    out = tmp_path / "final.json"
    proc = cli("build", "review", "final", *files, "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"^\d+ items labelled, \d+ unresolved$", proc.stdout, re.M)
    assert "not counted: 1 CSV row without a label" in proc.stdout  # C's i8; B (JSONL) has no row for i9
    final = json.loads(out.read_text(encoding="utf-8"))
    assert final["final"]["i0"] == {"label": "keep", "source": "unanimous"} and "i1" in final["unresolved"]
