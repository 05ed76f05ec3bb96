"""Review of the derived eval.yaml import (issue #35): where a run's items came from is what its record
says. A `--data FILE` copy of the rows is labelled as that file (its rows are checked for form, not
compared with the hub's); a `--data hub:...` naming other rows is refused, not swapped for the declared."""

from __future__ import annotations

import json

from conftest import cli
from test_back35_import import ORG, SHA, _env, _one_error, _rows, _run, hub  # noqa: F401  (the fixture)


def _results(path) -> dict:
    return json.loads((path / "results.json").read_text(encoding="utf-8"))


def test_a_local_copy_is_labelled_as_that_file_not_as_the_hub_dataset(hub, tmp_path, srv):  # noqa: F811
    rows = _rows(hub)
    copy = tmp_path / "mine.jsonl"  # two of the three rows: valid in form, not the hub's dataset
    copy.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows[:2]), encoding="utf-8")
    proc = _run(hub, tmp_path, srv, "good", "--data", str(copy), out="local")
    assert proc.returncode == 0, proc.stderr
    res = _results(tmp_path / "local")
    label = res["data_label"]["label"]
    assert res["data_label"]["kind"] == "derived" and res["data_label"]["items"] == 2
    assert "mine.jsonl" in label and "not checked against it" in label, label
    assert not label.startswith("items of the derived dataset"), label
    board = cli("board", str(tmp_path / "local"))
    assert board.returncode == 0 and "mine.jsonl" in board.stdout, board.stdout + board.stderr
    # the hub's own rows keep the hub label
    proc = _run(hub, tmp_path, srv, "good", out="hub")
    assert proc.returncode == 0, proc.stderr
    assert _results(tmp_path / "hub")["data_label"]["label"].startswith(f"items of the derived dataset {ORG}/good@")


def test_data_naming_other_hub_rows_is_refused_not_swapped(hub, tmp_path, srv):  # noqa: F811
    for other in (f"hub:{ORG}/other@{'a' * 40}/train", f"hub:{ORG}/good@{'b' * 40}/train", f"hub:{ORG}/good@{SHA}/test"):
        line = _one_error(_run(hub, tmp_path, srv, "good", "--data", other))
        assert "--data hub:" in line and f"hub:{ORG}/good@{SHA}/train" in line, line
    assert not srv.requests()
    assert not (tmp_path / "r" / "results.json").exists()
    # the declared source itself (what a recorded run passes back) still runs
    proc = _run(hub, tmp_path, srv, "good", "--data", f"hub:{ORG}/good@{SHA}/train", "--limit", "1", out="same")
    assert proc.returncode == 0, proc.stderr
    assert _results(tmp_path / "same")["benchmark"]["data"] == f"hub:{ORG}/good@{SHA}/train"


def test_meta_the_task_does_not_write_is_refused(hub, tmp_path, srv):  # noqa: F811
    """A row's meta picks the groups, the clusters and the expected language: only what mkqa's loader
    writes (its `type`, the run's `lang`) is taken, as text."""
    rows = _rows(hub)
    first = json.loads(rows[0]["glotbench"])
    assert first["meta"].get("lang") == "km" and "type" in first["meta"]
    cases = {  # meta -> what the one error line names
        "extra": ({**first["meta"], "cluster": "all-one"}, "meta has keys mkqa does not write: cluster"),
        "wrong-lang": ({**first["meta"], "lang": "th"}, "meta lang is 'th'; mkqa writes 'km'"),
        "no-lang": ({k: v for k, v in first["meta"].items() if k != "lang"}, "meta lang is None; mkqa writes 'km'"),
        "twins": ({**first["meta"], "duplicate_options": "A=B"}, "meta duplicate_options is 'A=B'; mkqa writes none"),
        "not-text": ({**first["meta"], "type": ["entity"]}, "meta 'type' is not text"),
    }
    for name, (meta, said) in cases.items():
        edited = [dict(r) for r in rows]
        edited[0]["glotbench"] = json.dumps({**first, "meta": meta}, ensure_ascii=False)
        f = tmp_path / f"{name}.jsonl"
        f.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in edited), encoding="utf-8")
        line = _one_error(_run(hub, tmp_path, srv, "good", "--data", str(f), out=name))
        assert said in line and ":1:" in line, (name, line)
    assert not srv.requests()
