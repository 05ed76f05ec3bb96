"""Every file a command reads goes through glotbench.data: for each command and input kind, malformed
files of several kinds are ONE `error: FILE[:LINE]: ...` line and exit code 2 (never a traceback),
and good files (with a byte-order mark too) still load as before."""

from __future__ import annotations

import io
import json
import re
import zipfile
from pathlib import Path
from typing import Any, Callable

import pytest

from conftest import cli
from glotbench import data
from glotbench.benchmarks.deepsea import load_official_json, read_groups
from glotbench.benchmarks.deepsea_tools import convert, verify_archive
from glotbench.errors import DataError
from glotbench.loading import sha256_file

MGSM = {"task": "mgsm", "languages": {"th": [{"question": "1+1?", "answer_number": "2"},
                                             {"question": "2+2?", "answer_number": 4}]}}
MGSM_TEXT = json.dumps(MGSM, indent=1)  # one value a line: errors have lines to name

# (name, content, the problem after `FILE[:LINE]: `) for any JSON document with a declared schema
BROKEN_JSON: list[tuple[str, str | bytes | None, str]] = [
    ("not json", '{"task": "mgsm",\n "languages": ', r":2: not valid JSON \(Expecting value at column 15\)"),
    ("empty", "", r":1: empty file, not JSON"),
    ("not utf-8", b'{"task": "\xff"}', r": not UTF-8 text \(invalid start byte at byte 10\)"),
    ("NaN", '{"x": NaN}', r": not valid JSON \(NaN is not a JSON number\)"),
    ("duplicate key", '{"a": 1,\n "a": 2}', r": not valid JSON \(the key 'a' appears twice in one object\)"),
    ("directory", None, r": is a directory, not a file"),
]


def _one_error(proc, path: str | Path, problem: str) -> str:
    """The command failed with exit 2 and exactly `error: PATH<problem>` on stderr."""
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr
    lines = [x for x in proc.stderr.splitlines() if x.strip()]
    assert len(lines) == 1, proc.stderr
    assert re.fullmatch("error: " + re.escape(str(path)) + problem, lines[0]), lines[0]
    return lines[0]


def _write(path: Path, content: str | bytes | None) -> Path:
    if content is None:
        path.mkdir()
    elif isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


# -- DeepSEA task files (run --data), groups files ----------------------------------------------

def _line_of(text: str, needle: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), 1) if needle in line)


DEEPSEA_ROWS: list[tuple[str, Callable[[dict], None], str]] = [
    ("missing field", lambda d: d["languages"]["th"][1].pop("answer_number"), "th example 1: missing field 'answer_number'"),
    ("not a number", lambda d: d["languages"]["th"][1].update(answer_number="four"), "th example 1: answer_number 'four' is not a number"),
    ("row not an object", lambda d: d["languages"]["th"].__setitem__(1, "2+2"), "th example 1: an example must be an object, got str"),
    ("languages a list", lambda d: d.__setitem__("languages", ["th"]), "expected {\"task\": ..., \"languages\": {lang: [examples]}}"),
    ("wrong task", lambda d: d.__setitem__("task", "xquad"), "holds task 'xquad', not 'mgsm'"),
    ("empty language", lambda d: d["languages"].__setitem__("th", []), "language 'th' must hold a non-empty list"),
]


@pytest.mark.parametrize("name, change, problem", DEEPSEA_ROWS, ids=[c[0] for c in DEEPSEA_ROWS])
def test_deepsea_task_file_rows(tmp_path, name, change, problem):
    doc = json.loads(MGSM_TEXT)
    change(doc)
    text = json.dumps(doc, indent=1)
    p = _write(tmp_path / "mgsm.json", text)
    with pytest.raises(DataError) as e:
        load_official_json(p, "mgsm")
    line = _line_of(text, "2+2?") - 1 if "example 1" in problem and name != "row not an object" else None
    where = rf":{line}" if line else r":\d+"
    assert re.fullmatch(re.escape(str(p)) + where + ": " + re.escape(problem), str(e.value)), str(e.value)


@pytest.mark.parametrize("name, content, problem", BROKEN_JSON, ids=[c[0] for c in BROKEN_JSON])
def test_deepsea_data_file_through_run(tmp_path, name, content, problem):
    p = _write(tmp_path / "mgsm.json", content)
    _one_error(cli("run", "deepsea-mgsm", "--data", str(p), "--model", "python:helpers:async_echo",
                   "--no-cache", "--no-progress", "--out", str(tmp_path / "run")), p, problem)
    assert not (tmp_path / "run" / "results.json").exists()


def test_deepsea_missing_data_file(tmp_path):
    _one_error(cli("run", "deepsea-mgsm", "--data", str(tmp_path / "nope.json"), "--model",
                   "python:helpers:async_echo", "--no-cache", "--no-progress"), "data file not found: " + str(tmp_path / "nope.json"), "")


def test_good_deepsea_file_loads_the_same_with_a_bom(tmp_path):
    plain = _write(tmp_path / "a.json", MGSM_TEXT)
    bom = _write(tmp_path / "b.json", b"\xef\xbb\xbf" + MGSM_TEXT.encode())
    assert load_official_json(plain, "mgsm") == load_official_json(bom, "mgsm") == MGSM["languages"]


@pytest.mark.parametrize("content, problem", [
    ('{"high": ["th"], "high": ["vi"]}', r": not valid JSON \(the key 'high' appears twice in one object\)"),
    ('{"high": ["th", 3]}', r":1: group 'high' must be a non-empty list of language codes, got \[\"th\", 3\]"),
    ("", r":1: empty file, not JSON"),
    (None, r": is a directory, not a file"),
])
def test_groups_file(tmp_path, content, problem):
    g = _write(tmp_path / "groups.json", content)
    _one_error(cli("run", "deepsea-mgsm", "--bench-opt", f"groups={g}", "--model", "python:helpers:async_echo",
                   "--no-cache", "--no-progress", "--out", str(tmp_path / "run")), g, problem)
    assert read_groups(str(_write(tmp_path / "ok.json", '\ufeff{"high": ["th"]}'))) == {"high": ["th"]}


# -- deepsea convert / verify-archive / score ---------------------------------------------------

CONVERT = [
    ("xquad", '{"data": [{"paragraphs": [{"context": "c",\n "qas": [{"question": "q", "answers": [{"txt": 1}]}]}]}]}',
     r":2: data\.0\.paragraphs\.0\.qas\.0\.answers\.0\.text: missing"),
    ("xquad", '[{"data": []}]', r":1: must be an object, got a list"),
    ("xquad", '{"data": NaN}', r": not valid JSON \(NaN is not a JSON number\)"),
    ("crosssum", '{"text": "t", "summary": "s"}\n{"text": "t"}\n', r":2: summary: missing"),
    ("crosssum", '{"text": "t", "summary": ""}\n', r":1: summary: must not be empty"),
    ("wmt24pp", '{"lp": "en-th", "source": "s", "target": "t", "is_bad_source": "no"}\n',
     r":1: is_bad_source: must be true or false, got a string"),
    ("wmt24pp", b'{"lp": "en-th", "source": "\xff", "target": "t"}\n', r": not UTF-8 text \(invalid start byte at byte 27\)"),
    ("indommlu", 'subject,level,kelas,soal,jawaban,kunci\nm,1,1,"q\nstill q","A. x\nB. y",C\n',
     r":2: 'jawaban' must list options as 'A\. \.\.\.' lines and 'kunci' name one"),
    ("indommlu", 'subject,level,kelas,soal,jawaban,kunci\nm,1,1\n', r":2: fewer columns than the header's 6"),
    ("mgsm", "", None),  # an empty TSV converts to no rows (not an error)
]


@pytest.mark.parametrize("task, content, problem", CONVERT)
def test_convert_inputs(tmp_path, task, content, problem):
    f = _write(tmp_path / f"in.{task}", content)
    proc = cli("deepsea", "convert", task, f"th={f}", "--out", str(tmp_path / "out.json"))
    if problem is None:
        assert proc.returncode == 0, proc.stderr
        return
    _one_error(proc, f, problem)


def test_convert_good_files_are_unchanged_by_a_bom(tmp_path):
    rows = [{"text": "ข่าว", "summary": "สรุป"}]
    a = _write(tmp_path / "a.jsonl", json.dumps(rows[0], ensure_ascii=False) + "\n")
    b = _write(tmp_path / "b.jsonl", b"\xef\xbb\xbf" + a.read_bytes())
    assert convert("crosssum", str(a)) == convert("crosssum", str(b)) == rows


def _zip(tmp_path: Path, members: dict[str, str | bytes]) -> Path:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, text in members.items():
            z.writestr(name, text)
    return _write(tmp_path / "release.zip", buf.getvalue())


@pytest.mark.parametrize("member, problem", [
    (MGSM_TEXT.replace('"2+2?"', "2+2?"), r":10: not valid JSON \(Expecting ',' delimiter at column 18\)"),
    (MGSM_TEXT.replace('"answer_number": 4', '"answer_number": NaN'), r": not valid JSON \(NaN is not a JSON number\)"),
    (json.dumps({"task": "mgsm", "languages": {"th": [{"question": "q"}]}}), r":1: th example 0: missing field 'answer_number'"),
    (b"\xff{}", r": not UTF-8 text \(invalid start byte at byte 0\)"),
])
def test_verify_archive_members(tmp_path, member, problem):
    a = _zip(tmp_path, {"deepsea/mgsm.json": member})
    _one_error(cli("deepsea", "verify-archive", str(a), "--sha256", sha256_file(a)), f"{a}!deepsea/mgsm.json", problem)


@pytest.mark.parametrize("manifest, problem", [
    ('{"mgsm": {"count": -1}}', r":1: mgsm\.count: must be greater than or equal to 0"),
    ('{"mgsm": {"order_hashes": ["x"]}}', r":1: mgsm\.order_hashes: must be an object, got a list"),
    ('[]', r":1: must be an object, got a list"),
    ("", r":1: empty file, not JSON"),
])
def test_verify_archive_manifest(tmp_path, manifest, problem):
    a = _zip(tmp_path, {"mgsm.json": MGSM_TEXT})
    m = _write(tmp_path / "manifest.json", manifest)
    _one_error(cli("deepsea", "verify-archive", str(a), "--sha256", sha256_file(a), "--manifest", str(m)), m, problem)


def test_damaged_archive_is_one_error(tmp_path):
    a = _zip(tmp_path, {"mgsm.json": MGSM_TEXT * 50})
    blob = bytearray(a.read_bytes())
    blob[60:80] = b"\0" * 20  # inside the compressed member: the zip directory still reads
    a.write_bytes(bytes(blob))
    line = _one_error(cli("deepsea", "verify-archive", str(a), "--sha256", sha256_file(a)), a, r"(!mgsm\.json)?:.+")
    assert "damaged" in line or "not valid JSON" in line or "not UTF-8" in line


def test_verify_archive_good_members_report_as_before(tmp_path):
    a = _zip(tmp_path, {"mgsm.json": MGSM_TEXT})
    rep = verify_archive(str(a), sha256_file(a))
    assert rep["tasks"]["mgsm"]["counts"] == {"th": 2} and rep["problems"][-1] == "mgsm/th: 2 items, expected 250"


@pytest.mark.parametrize("content, problem", [
    ('{"th": ["a"],\n "th": ["b"]}', r": not valid JSON \(the key 'th' appears twice in one object\)"),
    ('["a"]', r":1: must be an object, got a list"),
    ("", r":1: empty file, not JSON"),
])
def test_deepsea_score_predictions(tmp_path, content, problem):
    p = _write(tmp_path / "preds.json", content)
    _one_error(cli("deepsea", "score", "mgsm", str(p)), p, problem)


# -- judge-audit, arena-report, report: the run's files and human labels ---------------------------

ARAGEN = {"model": "m", "family": "f", "item_scores": {"j": {"1": 0.5}},
          "per_judge": {"j": {"item_scores": {"1": 0.5}, "item_repeats": {}, "dataset_3c3h_by_repeat": [0.5],
                              "first_verdicts": {"1": {"Correct": 1, "Complete": 1}}, "family": "g",
                              "verdicts_asked": 1, "parse_failures": 0, "zeroing_breaks": 0}}}
# files glotbench writes itself may hold NaN (an undefined score): not an error there
RUN_FILE_BROKEN = [c for c in BROKEN_JSON if c[0] not in ("directory", "NaN")]
ARENA = {"candidate": "c", "baseline": "b", "scores": {"judges": {"j": {"value": 0.5}}}, "per_prompt": {"j": {"p1": 1.0}}}


def _dir(tmp_path: Path, name: str, content: Any) -> Path:
    d = tmp_path / "run"
    d.mkdir()
    _write(d / name, json.dumps(content, indent=1) if isinstance(content, dict) else content)
    return d


@pytest.mark.parametrize("content, problem", [
    ({**ARAGEN, "per_judge": {"j": {**ARAGEN["per_judge"]["j"], "verdicts_asked": -2}}},
     r":\d+: judge j: 'verdicts_asked': must be greater than or equal to 0"),
    ({**ARAGEN, "item_scores": {"j": {"1": "high"}}}, r":\d+: item_scores of judge j: '1': must be a number, got a string"),
    ({"model": "m"}, r":1: not an aragen\.json of this glotbench version .*"),
    *[(c, p) for n, c, p in RUN_FILE_BROKEN],
])
def test_judge_audit_run_file(tmp_path, content, problem):
    d = _dir(tmp_path, "aragen.json", content)
    _one_error(cli("report", "--judges", str(d)), d / "aragen.json", problem)


@pytest.mark.parametrize("human, problem", [
    ('{"model": "m", "sn": "1", "Correct": 1, "Complete": 1, "score": 1.5}\n', r":1: score: must be less than or equal to 1"),
    ('{"model": "m", "sn": "1", "Correct": true, "Complete": 1, "score": 1}\n', r":1: Correct: must be a whole number, got true/false"),
    ('{"model": "m", "sn": 1, "Correct": 1, "Complete": 1, "score": 1}\n' * 2, r":2: a second row for model m SN\. 1 \(the first is on line 1\)"),
    ('{"model": "m", "sn": "1", "Correct": 1, "Complete": 1, "score": NaN}\n', r":1: not valid JSON \(NaN is not a JSON number\)"),
])
def test_judge_audit_human_labels(tmp_path, human, problem):
    d = _dir(tmp_path, "aragen.json", ARAGEN)
    h = _write(tmp_path / "human.jsonl", human)
    _one_error(cli("report", "--judges", str(d), "--human", str(h)), h, problem)


def test_judge_audit_good_files(tmp_path):
    d = _dir(tmp_path, "aragen.json", ARAGEN)
    h = _write(tmp_path / "human.jsonl", '\ufeff{"model": "m", "sn": 1, "Correct": 1, "Complete": 1, "score": 1}\n')
    proc = cli("report", "--judges", str(d), "--human", str(h))
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("content, problem", [
    ({**ARENA, "scores": {"judges": {"j": {"value": "high"}}}}, r":\d+: scores\.judges\.j\.value: must be a number, got a string"),
    ({**ARENA, "candidate": ""}, r":\d+: candidate: must not be empty"),
    ({**ARENA, "per_prompt": {"j": {"p1": "win"}}}, r":\d+: per_prompt\.j\.p1: must be a number, got a string"),
    *[(c, p) for n, c, p in RUN_FILE_BROKEN],
])
def test_arena_report_run_file(tmp_path, content, problem):
    d = _dir(tmp_path, "arena.json", content)
    _one_error(cli("report", "--judges", str(d)), d / "arena.json", problem)


@pytest.mark.parametrize("human, problem", [
    ('{"candidate": "c", "prompt_id": "p1", "winner": "draw"}\n', r":1: winner: must be 'candidate', 'baseline' or 'tie'"),
    ('{"candidate": "c", "prompt_id": "p1", "winner": "tie"}\n{"candidate": "c", "prompt_id": "p1", "winner": "baseline"}\n',
     r":2: a second row for candidate c prompt p1 \(the first is on line 1\)"),
    ('{"candidate": "c", "winner": "tie"}\n', r":1: prompt_id: missing"),
    ("\n", r": no labels \(one JSON object per line: candidate, prompt_id, winner\)"),
])
def test_arena_report_human_verdicts(tmp_path, human, problem):
    d = _dir(tmp_path, "arena.json", ARENA)
    h = _write(tmp_path / "human.jsonl", human)
    _one_error(cli("report", "--judges", str(d), "--human", str(h)), h, problem)


def test_arena_report_good_human_verdicts(tmp_path):
    d = _dir(tmp_path, "arena.json", ARENA)
    h = _write(tmp_path / "human.jsonl", '{"candidate": "c", "prompt_id": "p1", "winner": "candidate"}\n')
    proc = cli("report", "--judges", str(d), "--human", str(h))
    assert proc.returncode == 0, proc.stderr
    assert '"agreement": 1.0' in proc.stdout


@pytest.mark.parametrize("name, content, problem", RUN_FILE_BROKEN, ids=[c[0] for c in RUN_FILE_BROKEN])
def test_report_results_json(tmp_path, name, content, problem):
    d = _dir(tmp_path, "results.json", content)
    _one_error(cli("report", str(d)), d / "results.json", problem)


def test_report_arena_json_missing_final(tmp_path):
    d = _dir(tmp_path, "arena.json", ARENA)
    _one_error(cli("report", str(d), "--html", str(tmp_path / "r.html")), d / "arena.json", r":\d+: scores\.final: missing")


# -- the reader itself ------------------------------------------------------------------------------

def test_size_limit_and_lines(tmp_path, monkeypatch):
    p = _write(tmp_path / "mgsm.json", MGSM_TEXT)
    monkeypatch.setattr(data, "MAX_FILE_BYTES", 10)
    with pytest.raises(DataError, match=re.escape(f"{p}: larger than 0 MiB")):
        load_official_json(p, "mgsm")
    monkeypatch.undo()
    assert data.locate(MGSM_TEXT, ("languages", "th", 1, "answer_number")) == _line_of(MGSM_TEXT, '"answer_number": 4')
    assert data.locate(MGSM_TEXT, ("languages", "vi", 0)) == _line_of(MGSM_TEXT, '"languages"')  # the last value found


def test_run_files_may_hold_nan_that_user_files_may_not(tmp_path):
    doc = '{"candidate": "c", "scores": {"judges": {"j": {"value": NaN}}}}'
    from glotbench.runfiles import ArenaScores

    got = data.read_dict(_write(tmp_path / "arena.json", doc), ArenaScores, allow_nan=True)
    assert got["candidate"] == "c" and got["scores"]["judges"]["j"]["value"] != got["scores"]["judges"]["j"]["value"]
    with pytest.raises(DataError, match="NaN is not a JSON number"):
        data.read_dict(tmp_path / "arena.json", ArenaScores)


@pytest.mark.parametrize("name, content, problem", [
    ("results.json", '{"status": "running"}', r":1: not a finished glotbench run \(status: 'running'\)"),
    ("results.json", "", r":1: empty file, not JSON"),
])
def test_build_items_run_files(tmp_path, name, content, problem):
    d = _dir(tmp_path, name, content)
    _write(d / "samples.jsonl", "")
    _one_error(cli("build", "items", str(d), str(d)), d / name, problem)
