"""EEE records read back into `glotbench board` (report/export.py `eee_results`) through the console
script: the board of the records shows each cell's value, interval, its method, n, clusters, notes,
validity, the column's signature, item set, groups and input floor exactly as the board of the run
directories; a record beside a run shares its column without a paired test (said in the cell);
`compare` refuses a record in one line (a paired test needs samples)."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import cli

GOLDEN = Path(__file__).resolve().parent / "fixtures" / "rundir_golden"
FINISHED = ["auto", "batch", "cached", "invalid", "limit", "subset", "tones"]
SAME = ("value", "ci_low", "ci_high", "n", "ci_method", "notes", "valid", "best", "clusters", "too_few_units",
        "tied_with_best")


def _board(*paths) -> dict:
    proc = cli("board", *map(str, paths), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _export(tmp_path, *runs) -> Path:
    out = tmp_path / "eee"
    proc = cli("export", *map(str, runs), "--format", "eee", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    return out


def test_board_of_eee_records_is_the_board_of_the_runs(tmp_path):
    runs = [GOLDEN / n for n in FINISHED]
    out = _export(tmp_path, *runs)
    a, b = _board(*runs), _board(out)  # a folder of records, as a folder of runs
    assert [c["benchmark"] for c in a["columns"]] == [c["benchmark"] for c in b["columns"]] and a["columns"]
    for ca, cb in zip(a["columns"], b["columns"]):
        for k in ("signature", "item_set", "headline", "label", "scale", "input_floor", "groups"):
            assert ca[k] == cb[k], (ca["benchmark"], k)
        assert ca["cells"].keys() == cb["cells"].keys()
        for m in ca["cells"]:
            for k in SAME:
                assert ca["cells"][m].get(k) == cb["cells"][m].get(k), (ca["benchmark"], m, k)
    assert any("invalid:" in n for c in b["columns"] for x in c["cells"].values() for n in x["notes"])
    assert [x["reason"] for x in a["left_out"]] == [x["reason"] for x in b["left_out"]] and a["left_out"]
    one = next(out.glob("*.json"))
    assert _board(one)["columns"]  # one record file as input
    md = cli("board", str(out))
    assert md.returncode == 0 and "invalid: 4 of 8 items failed" in md.stdout


def test_a_record_beside_a_run_shares_its_column_untested(tmp_path):
    run = GOLDEN / "subset"
    out = _export(tmp_path, run)
    rec_file = next(out.glob("*.json"))
    rec = json.loads(rec_file.read_text(encoding="utf-8"))
    rec["model_info"]["additional_details"]["glotbench_spec"] = "openai:other-model"
    for r in rec["evaluation_results"]:
        r["score_details"]["score"] = r["score_details"]["score"] / 2  # a weaker model's record
    rec_file.write_text(json.dumps(rec), encoding="utf-8")
    b = _board(run, rec_file)
    (col,) = b["columns"]
    other = col["cells"]["openai:other-model"]
    assert other["untested"].startswith("not tested against the best: this run is an EEE record")
    assert "tied_with_best" not in other and col["cells"][next(m for m in col["cells"] if m != "openai:other-model")]["best"]
    for fmt in ("md", "csv", "latex"):
        out_text = cli("board", str(run), str(rec_file), "--format", fmt, "--html", str(tmp_path / "b.html")).stdout
        assert "EEE record: not tested against the best" in out_text, fmt
    assert "EEE record: not tested against the best" in (tmp_path / "b.html").read_text(encoding="utf-8")


def test_compare_refuses_a_record_in_one_line(tmp_path):
    out = _export(tmp_path, GOLDEN / "subset")
    proc = cli("compare", str(GOLDEN / "subset"), str(next(out.glob("*.json"))))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert "a paired test needs each item's score in both runs" in proc.stderr


def test_a_foreign_or_broken_file_is_one_error_line(tmp_path):
    p = tmp_path / "x.json"
    p.write_text('{"a": 1}', encoding="utf-8")
    proc = cli("board", str(p))
    assert proc.returncode == 2 and proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1, proc.stderr
    rec = json.loads(next(_export(tmp_path, GOLDEN / "subset").glob("*.json")).read_text(encoding="utf-8"))
    del rec["evaluation_results"][0]["score_details"]["details"]["glotbench_signature"]
    p.write_text(json.dumps(rec), encoding="utf-8")
    proc = cli("board", str(p))
    assert proc.returncode == 2 and "glotbench_signature: missing" in proc.stderr and proc.stderr.count("\n") == 1, proc.stderr
