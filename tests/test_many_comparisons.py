"""Many comparisons: Holm (default) and Benjamini–Hochberg adjusted p-values against a hand
computation, on the board (marks follow the adjusted p, the JSON keeps both) and in `compare` over
several runs."""

from __future__ import annotations

import csv
import io
import json

import pytest

from conftest import cli
from glotbench.errors import GlotbenchError
from glotbench.stats.multitest import adjust
from report_fixtures import board_runs, vi_items


def test_holm_and_bh_by_hand():
    p = [0.01, 0.04, 0.03, 0.005]
    # Holm: sorted 0.005 0.01 0.03 0.04 times 4 3 2 1 = 0.02 0.03 0.06 0.04, running maximum 0.02 0.03 0.06 0.06
    assert adjust(p, "holm") == pytest.approx([0.03, 0.06, 0.06, 0.02])
    # BH: sorted times 4/rank = 0.02 0.02 0.04 0.04, running minimum from the top: the same
    assert adjust(p, "bh") == pytest.approx([0.02, 0.04, 0.04, 0.02])
    assert adjust(p, "none") == p and adjust([], "holm") == []
    assert adjust([0.9, 0.8], "holm") == [1.0, 1.0]  # capped at 1
    with pytest.raises(GlotbenchError, match="--correction must be one of holm, bh, none"):
        adjust(p, "bonferroni")


# Three models each wrong on the same first 6 items, one right everywhere: each test against the best
# has the exact randomisation p 2 / 2^6 = 0.031 (the same swaps, the same seed: the same estimate).
WRONG = {"best": 0, "m1": 6, "m2": 6, "m3": 6}


@pytest.fixture(scope="module")
def four(server, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("many")
    return tmp, board_runs(server, tmp / "runs", WRONG, dict.fromkeys(WRONG, 1.0))


def test_board_marks_follow_the_adjusted_p_and_the_json_keeps_both(four):
    tmp, runs = four
    boards = {}
    for corr in ("holm", "bh", "none"):
        r = cli("board", str(tmp / "runs"), "--format", "json", "--correction", corr)
        assert r.returncode == 0, r.stderr
        boards[corr] = json.loads(r.stdout)
    raw = {}
    for corr, b in boards.items():
        (col,) = b["columns"]
        tested = {m: c for m, c in col["cells"].items() if "p_vs_best" in c}
        assert len(tested) == 3
        ps = [c["p_vs_best"] for c in tested.values()]
        raw[corr] = ps
        assert 0.01 < ps[0] < 0.05 and len(set(ps)) == 1  # significant unadjusted
        assert [c["p_vs_best_adjusted"] for c in tested.values()] == pytest.approx(adjust(ps, corr))
        assert all(c["tied_with_best"] == (c["p_vs_best_adjusted"] >= 0.05) for c in tested.values())
        assert b["significance"]["correction"] == corr
    assert raw["holm"] == raw["bh"] == raw["none"]  # the raw p-values do not depend on the correction
    holm = boards["holm"]["columns"][0]["cells"]
    assert all(c["tied_with_best"] for c in holm.values() if "p_vs_best" in c)  # 3 x 0.031 > 0.05
    assert not any(c["tied_with_best"] for c in boards["bh"]["columns"][0]["cells"].values() if "p_vs_best" in c)
    md = cli("board", str(tmp / "runs")).stdout
    assert "Holm (family-wise error rate)" in md
    assert "Benjamini–Hochberg" in cli("board", str(tmp / "runs"), "--correction", "bh").stdout
    rows = list(csv.DictReader(io.StringIO(cli("board", str(tmp / "runs"), "--format", "csv").stdout)))
    assert all(r["correction"] == "holm" for r in rows)
    assert {r["p_vs_best_adjusted"] != "" for r in rows} == {True, False}  # the best has no test


def test_compare_over_several_runs_adjusts_each_metric_over_the_pairs(four):
    tmp, runs = four
    paths = [str(runs[m]) for m in WRONG]
    r = cli("compare", *paths, "--format", "json", "--resamples", "300")
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)
    assert len(res["pairs"]) == 6 and res["correction"] == "holm"
    assert [(p["paths"]["a"], p["paths"]["b"]) for p in res["pairs"][:3]] == [(paths[0], x) for x in paths[1:]]
    n = len(vi_items())
    first = res["pairs"][0]["metrics"]["sentence_exact"]
    assert first["delta"] == pytest.approx(-6 / n) and first["n"] == n
    assert first["too_few_units"] is (n < 100)  # the paired bootstrap's measured threshold (stats.MIN_BOOTSTRAP_UNITS)
    for metric in res["pairs"][0]["metrics"]:
        family = [p["metrics"][metric] for p in res["pairs"]]
        for kind in ("p_bootstrap", "p_randomization"):
            assert [x[f"{kind}_adjusted"] for x in family] == pytest.approx(adjust([x[kind] for x in family], "holm"))
    text = cli("compare", *paths[:3], "--resamples", "200", "--correction", "bh")
    assert text.returncode == 0, text.stderr
    assert text.stdout.count("B − A over") == 3 and "Benjamini–Hochberg" in text.stdout and "p rand adj" in text.stdout
    assert f" n={n}" in text.stdout and ("†" in text.stdout) is (n < 100)
    one = cli("compare", paths[0])
    assert one.returncode == 2 and "two or more run directories" in one.stderr
