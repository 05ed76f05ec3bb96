"""The † of the Bradley–Terry ratings (`glotbench arena-rank`, `arena-report --bt`, the board's arena
section): the vectorised simulation is stats/bt.py's fit, the rule `MIN_ARENA_PROMPTS` is where its
measured coverage holds (bench/bt_coverage.py, docs/metrics.md), and every view of a rating on fewer
prompts carries † and n."""

from __future__ import annotations

import json

import numpy as np
import pytest

from conftest import cli
from glotbench.report.arena_rank import board_html, board_markdown, rank_arenas, rank_text
from glotbench.stats import MIN_ARENA_PROMPTS, bt
from glotbench.stats.coverage import MIN_COVERAGE, bt_coverage, bt_simulate, bt_star_fit, coverage_se
from test_arena_rank import arenas  # noqa: F401 - the fixture: arenas run on the loopback test server

ROWS = (((0.0, 50.0, 100.0), 0.0), ((0.0, 100.0, 200.0), 0.3), ((-200.0, 100.0, 300.0), 0.15), ((200.0, 400.0), 0.0))


@pytest.mark.parametrize("prompts", [6, 20])
def test_the_vectorised_fit_is_stats_bt_fit(prompts):
    """Candidates against the anchored baseline only: one scalar Newton each equals the joint fit, a
    candidate that won every game (separated, held by the ridge) and bootstrap weights included."""
    rng = np.random.default_rng(prompts)
    y = bt_simulate((-150.0, 0.0, 250.0, 400.0), 0.15 if prompts > 6 else 0.0, prompts, 1, rng)[0]  # (prompts, 4)
    y[:, 3] = 1.0  # the last candidate won every game
    weights = rng.integers(0, 3, prompts).astype(np.float64)
    pairs = np.array([(c + 1, 0) for _ in range(prompts) for c in range(4)])
    games = y.reshape(-1)
    w = np.repeat(weights, 4)
    joint = bt.fit(pairs, games, 5, weights=w, anchor=0)
    star = bt_star_fit(weights @ y, weights.sum())
    assert star == pytest.approx(joint.beta[1:], abs=1e-6)
    assert bt.separated(pairs, games, 5)[4]


def test_below_the_rule_some_arena_under_covers():
    """The † is earned: at 10 prompts the percentile bootstrap holds the true rating well under 93%."""
    assert min(bt_coverage(g, t, 10, reps=800).coverage for g, t in ROWS) < 0.9


@pytest.mark.parametrize("gaps, tie", ROWS)
def test_from_the_rule_every_arena_covers(gaps, tie):
    """At MIN_ARENA_PROMPTS the measured coverage is at least 93% (less twice the simulation's own
    standard error at 1,000 arenas), for every row of bench/bt_coverage.py."""
    c = bt_coverage(gaps, tie, MIN_ARENA_PROMPTS, reps=1000, seed=1).coverage
    assert c >= MIN_COVERAGE - 2 * coverage_se(MIN_COVERAGE, 1000), c


def test_every_view_of_a_rating_on_few_prompts_carries_the_mark_and_n(arenas):  # noqa: F811
    tmp, dirs, srv = arenas
    res = rank_arenas(list(dirs.values()), resamples=50)
    assert res["prompts"] < MIN_ARENA_PROMPTS  # the test arenas' 8 prompts
    for block in (res["mean_of_judges"], *res["judges"].values()):
        for e in block["ratings"].values():
            assert e["n"] == res["prompts"] and e["too_few_units"] is True
    text = rank_text(res)
    assert f"({res['mean_of_judges']['ratings'][res['models'][0]]['ci_low']:.0f}–" in text
    assert text.count("†") >= len(res["models"]) and f"fewer than {MIN_ARENA_PROMPTS} prompts" in text
    section = [{"arenas": list(dirs.values()), "notes": [], "ranking": res}]
    md = board_markdown(section)
    rows = [ln for ln in md.splitlines() if ln.startswith("| 1 ") or ln.startswith("| 2 ") or ln.startswith("| 3 ")]
    assert len(rows) == 3 and all(")† n=8 |" in ln for ln in rows), rows
    page = board_html(section)
    assert page.count(")† n=8") == 3 and f"fewer than {MIN_ARENA_PROMPTS} prompts" in page
    # JSON through the console scripts: arena-rank and arena-report --bt
    r = cli("arena-rank", *dirs.values(), "--resamples", "20", "--format", "json")
    assert r.returncode == 0, r.stderr
    assert all(e["too_few_units"] and e["n"] == 8 for e in json.loads(r.stdout)["mean_of_judges"]["ratings"].values())
    r = cli("arena-report", *dirs.values(), "--bt")
    assert r.returncode == 0, r.stderr
    assert all(e["too_few_units"] for e in json.loads(r.stdout)["bradley_terry"]["mean_of_judges"]["ratings"].values())


def test_without_resamples_there_is_no_interval_and_no_mark(arenas):  # noqa: F811
    _, dirs, _ = arenas
    res = rank_arenas(list(dirs.values()), resamples=0)
    for e in res["mean_of_judges"]["ratings"].values():
        assert e["ci_low"] is None and "too_few_units" not in e
    assert "†" not in rank_text(res)
