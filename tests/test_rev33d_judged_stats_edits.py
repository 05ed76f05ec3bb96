"""rev33d (issue #33 review): a results.json whose `judged.stats` was edited by hand is one `error:`
line in every reader (board, compare, report, export), never a different number. `JudgedStats`
took a NaN value, an item named twice, a value of a judge it does not list (item_means then left
that judge out: compare's paired figure silently from the other judges), a value of an item it does
not list, an unanswered item or a cluster of an item it does not list, repeats of 0."""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import cli
from test_judged33c_budget import _args, _configure

from glotbench.errors import GlotbenchError
from glotbench.judges.stats import JudgedStats

GOOD = {"items": ["ข1", "س2"], "judges": ["a", "b"], "values": {"a": {"ข1": [1.0], "س2": [0.5]}, "b": {"ข1": [0.0]}},
        "clusters": {"ข1": "QA", "س2": "QA"}, "repeats": 1, "unanswered": [],
        "components": {"Correct": {"a": {"ข1": [1.0], "س2": [0.0]}, "b": {"ข1": [1.0]}}}}


def edited(path: str, value) -> dict:
    rec = json.loads(json.dumps(GOOD))
    *head, last = path.split("/")
    node = rec
    for k in head:
        node = node[k]
    node[last] = value
    return rec


BAD = [
    ("values/a/ข1", [float("nan")], "values.a.ข1: [nan] holds a value that is not a finite number"),
    ("values/b/ข1", [float("inf")], "values.b.ข1: [inf] holds a value that is not a finite number"),
    ("components/Correct/a/ข1", [float("nan")], "components.Correct.a.ข1: [nan] holds a value"),
    ("items", ["ข1", "س2", "ข1"], "items: 'ข1' is named twice"),
    ("judges", ["a", "b", "a"], "judges: 'a' is named twice"),
    ("judges", ["b"], "values.a: not one of the judges (b)"),
    ("values/a/x9", [1.0], "values.a.x9: not one of the items"),
    ("unanswered", ["x9"], "unanswered: 'x9' is not one of the items"),
    ("clusters", {"x9": "QA"}, "clusters: 'x9' is not one of the items"),
    ("repeats", 0, "repeats: expected a whole number ≥ 1, got 0"),
]


def test_the_good_record_reads():
    assert JudgedStats.read(GOOD).item_means() == {"ข1": 0.5, "س2": 0.5}


@pytest.mark.parametrize(("path", "value", "says"), BAD, ids=[f"{p}={v!r}" for p, v, _ in BAD])
def test_a_hand_edited_record_is_one_error_naming_the_field(path, value, says):
    with pytest.raises(GlotbenchError) as e:
        JudgedStats.read(edited(path, value))
    assert str(e.value).startswith("judged.stats.") or str(e.value).startswith("judged.stats: ")
    assert says in str(e.value), str(e.value)


@pytest.mark.parametrize("edit", ["nan", "judge", "item"])
def test_board_and_compare_refuse_an_edited_run_in_one_line(srv, tmp_path, edit):
    _configure(srv)
    assert cli(*_args(srv, tmp_path)).returncode == 0
    out, bad = tmp_path / "out", tmp_path / "bad"
    shutil.copytree(out, bad)
    rec = json.loads((bad / "results.json").read_text(encoding="utf-8"))
    stats = rec["judged"]["stats"]
    first = stats["judges"][0]
    if edit == "nan":
        stats["values"][first][stats["items"][0]] = [float("nan")]
    elif edit == "judge":
        stats["judges"] = stats["judges"][1:]
    else:
        stats["items"] = stats["items"] + stats["items"][:1]
    rec["finished"] = "2026-01-01T00:00:00+00:00"  # not the same run again as `out`
    (bad / "results.json").write_text(json.dumps(rec), encoding="utf-8")
    for view in (cli("compare", str(out), str(bad)), cli("board", str(bad)), cli("report", str(bad)),
                 cli("export", str(bad), "--format", "csv")):
        assert view.returncode == 2 and "Traceback" not in view.stderr, view.stderr
        (line,) = [x for x in view.stderr.splitlines() if x.startswith("error:")]
        assert "judged.stats" in line and str(bad) in line, line
    both = cli("board", str(out), str(bad))  # the damaged run is left out with its reason, the good one shown
    assert both.returncode == 0, both.stderr
    assert f"left out: {bad}" in both.stdout + both.stderr and "judged.stats" in both.stdout + both.stderr
