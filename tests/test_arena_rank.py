"""Arena without a fixed anchor: the Bradley–Terry fit against scikit-learn's and statsmodels'
logistic regressions on the same game matrix, by hand on two models, style control, and
`glotbench arena-rank` over arenas run on the loopback test server (candidates against a shared
baseline and against each other)."""

from __future__ import annotations

import asyncio
import json
import math

import numpy as np
import pytest

from conftest import cli
from judged_helpers import summary
from glotbench.engine.arena import run_arena
from glotbench.engine.evaluate import RunOptions
from glotbench.errors import GlotbenchError
from glotbench.report.arena_rank import rank_arenas
from glotbench.stats import bt


def _games(seed=0, n_models=4, games=400):
    rng = np.random.default_rng(seed)
    strength = np.array([0.0, 0.5, 1.0, -0.7])[:n_models]
    pairs = np.array([rng.choice(n_models, 2, replace=False) for _ in range(games)])
    p = 1 / (1 + np.exp(-(strength[pairs[:, 0]] - strength[pairs[:, 1]])))
    y = np.where(rng.uniform(size=games) < 0.15, 0.5, (rng.uniform(size=games) < p).astype(float))  # some ties
    y[::7] = 0.75  # orders that disagree, averaged
    return pairs, y


def _sk_logistic():
    """scikit-learn's unpenalised logistic regression (C=inf from 1.8 on; penalty=None before)."""
    import sklearn
    from sklearn.linear_model import LogisticRegression

    major, minor = (int(x) for x in sklearn.__version__.split(".")[:2])
    kw = {"C": np.inf} if (major, minor) >= (1, 8) else {"penalty": None}
    return LogisticRegression(fit_intercept=False, tol=1e-10, max_iter=10_000, **kw)


def _design(pairs, n_models, anchor):
    X = np.zeros((len(pairs), n_models))
    X[np.arange(len(pairs)), pairs[:, 0]] = 1
    X[np.arange(len(pairs)), pairs[:, 1]] = -1
    return np.delete(X, anchor, axis=1)


def test_fit_equals_sklearn_logistic_regression_with_ties_as_half_wins():
    """Arena-Hard-Auto's construction: each game twice, as a win (weight y) and a loss (weight 1 − y)."""
    pairs, y = _games()
    f = bt.fit(pairs, y, 4, anchor=0)
    X = _design(pairs, 4, 0)
    lr = _sk_logistic()
    lr.fit(np.vstack([X, X]), np.r_[np.ones(len(y)), np.zeros(len(y))], sample_weight=np.r_[y, 1 - y])
    assert f.beta[1:] == pytest.approx(lr.coef_[0], abs=1e-5)
    assert f.beta[0] == 0.0


def test_fit_equals_statsmodels_glm_with_weights_and_covariates():
    import statsmodels.api as sm

    pairs, y = _games(seed=1)
    rng = np.random.default_rng(2)
    cov = rng.normal(size=(len(y), 2))
    w = rng.integers(0, 3, size=len(y)).astype(float)  # a bootstrap's prompt counts
    f = bt.fit(pairs, y, 4, weights=w, covariates=cov, anchor=2)
    X = np.column_stack([_design(pairs, 4, 2), cov])
    glm = sm.GLM(y, X, family=sm.families.Binomial(), freq_weights=w).fit(tol=1e-12)
    assert np.r_[np.delete(f.beta, 2), f.gamma] == pytest.approx(glm.params, abs=1e-5)


def test_two_models_by_hand():
    # Model 0's outcomes over six games: 1, 1, 1, 1/2, 1, 1/2 (mean 5/6): beta_0 - beta_1 = logit(5/6) = ln 5
    pairs = np.array([[0, 1]] * 4 + [[1, 0]] * 2)
    y = np.array([1, 1, 1, 0.5, 0, 0.5])  # as seen from model 1 in the last two: 0 = model 0 won
    f = bt.fit(pairs, y, 2, anchor=1)
    mean0 = (1 + 1 + 1 + 0.5 + 1 + 0.5) / 6
    assert f.beta[0] == pytest.approx(math.log(5), abs=1e-5)  # the ridge (1e-6) moves it by 2e-6
    e = bt.elo(f.beta)
    assert e.mean() == pytest.approx(1000) and e[0] - e[1] == pytest.approx(400 * math.log10(mean0 / (1 - mean0)), abs=1e-3)


def test_separation_and_connectivity_are_reported():
    pairs = np.array([[0, 1], [0, 1], [1, 2], [2, 1]])
    y = np.array([1.0, 1.0, 0.5, 0.5])
    assert bt.separated(pairs, y, 3) == [True, False, False]
    assert bt.fit(pairs, y, 3, anchor=1).beta[0] > 5  # large, finite
    assert bt.connected(pairs, 3) and not bt.connected(np.array([[0, 1]]), 3)


def test_style_control_moves_a_length_preference_out_of_the_ratings():
    """Judges here prefer the longer answer, and model 0 writes longer answers: without style control
    model 0 rates far above model 1; with answer length as a covariate the gap shrinks and the length
    coefficient carries it."""
    rng = np.random.default_rng(4)
    n = 600
    pairs = np.tile([[0, 1]], (n, 1))
    len0 = rng.integers(300, 900, n)
    len1 = rng.integers(100, 700, n)
    y = (len0 > len1).astype(float)
    y[rng.uniform(size=n) < 0.2] = 0.5
    a = [(int(x), 0, 0, 0) for x in len0]
    b = [(int(x), 0, 0, 0) for x in len1]
    X, names = bt.style_features(a, b)
    assert names == ["length"]
    raw = bt.fit(pairs, y, 2, anchor=1)
    ctl = bt.fit(pairs, y, 2, covariates=X, anchor=1)
    assert raw.beta[0] > 1.0 and abs(ctl.beta[0]) < raw.beta[0] / 3 and ctl.gamma[0] > 1.0


def test_style_counts_follow_fastchat():
    text = "# Title\n## Sub\n- one\n* two\n1. three\n**bold** and __also__\n```\n# not a header\n- nor a list\n```"
    assert bt.style_counts(text) == (len(text), 2, 3, 2)


# -- arenas on the test server ---------------------------------------------------------------------
GOOD, MIXED, PLAIN = "python:helpers:good_answer", "python:helpers:mixed_answer", "python:helpers:plain_answer"


@pytest.fixture(scope="module")
def arenas(server, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("arena-rank")
    server.configure(judges={"fair": {"mode": "prefer", "prefer": "GOOD"}, "biased": {"mode": "always_A"}})
    judges = [server.spec("fair"), server.spec("biased")]
    dirs = {}
    for name, cand, base in (("good-plain", GOOD, PLAIN), ("mixed-plain", MIXED, PLAIN), ("good-mixed", GOOD, MIXED)):
        opts = RunOptions(progress=False, cache_path=str(tmp / "calls.sqlite"), out=str(tmp / name), max_retries=1)
        asyncio.run(run_arena(cand, base, judges, opts))
        dirs[name] = str(tmp / name)
    return tmp, dirs, server


def test_arena_rank_orders_the_candidates_and_matches_a_direct_fit(arenas):
    tmp, dirs, srv = arenas
    res = rank_arenas(list(dirs.values()), resamples=200)
    fair, biased = srv.spec("fair"), srv.spec("biased")
    assert res["models"] == [GOOD, PLAIN, MIXED] and res["baseline"] == PLAIN
    assert res["judges"][fair]["ranking"] == [GOOD, MIXED, PLAIN]
    # always_A loses each game once and wins it once: every prompt a tie, every model 1000
    assert all(e["rating"] == pytest.approx(1000) for e in res["judges"][biased]["ratings"].values())
    mean = res["mean_of_judges"]["ratings"]
    for m in res["models"]:
        assert mean[m]["rating"] == pytest.approx((res["judges"][fair]["ratings"][m]["rating"] + 1000) / 2)
        assert mean[m]["ci_low"] <= mean[m]["rating"] <= mean[m]["ci_high"]
    assert res["mean_of_judges"]["ratings"][PLAIN]["win_rate_vs_baseline"] == pytest.approx(0.5)
    # the fair judge's ratings = scikit-learn on the games read back from results.json
    idx = {m: k for k, m in enumerate(res["models"])}
    pairs, y = [], []
    for d in dirs.values():
        a = summary(tmp / d)
        for v in a["per_prompt"][fair].values():
            pairs.append((idx[a["candidate"]], idx[a["baseline"]]))
            y.append(v)
    X = _design(np.array(pairs), 3, idx[PLAIN])
    lr = _sk_logistic()
    lr.fit(np.vstack([X, X]), np.r_[np.ones(len(y)), np.zeros(len(y))], sample_weight=np.r_[y, 1 - np.array(y)])
    beta = np.insert(lr.coef_[0], idx[PLAIN], 0.0)
    for m, k in idx.items():
        assert res["judges"][fair]["ratings"][m]["rating"] == pytest.approx(float(bt.elo(beta)[k]), abs=1e-3)


def test_arena_rank_command_with_style_control(arenas):
    tmp, dirs, srv = arenas
    r = cli("board", "--bt", *dirs.values(), "--style-control", "--resamples", "50", "--format", "json")
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)
    sc = res["style_control"]
    assert sc["judges"][srv.spec("fair")]["ranking"][0] == GOOD
    assert set(sc["judges"][srv.spec("fair")]["style_coefficients"]) <= {"length", "headers", "lists", "bold"}
    text = cli("board", "--bt", *dirs.values(), "--resamples", "50")
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    assert lines[0].startswith("Bradley–Terry ratings over 8 prompts, 3 arenas")
    assert [ln.split()[:2] for ln in lines[3:6]] == [["1", GOOD], ["2", MIXED], ["3", PLAIN]]
    print(text.stdout)


def test_arena_rank_refuses_arenas_on_other_prompts(arenas, tmp_path):
    tmp, dirs, srv = arenas
    from glotbench.benchmarks.arena import ArenaPrompts

    src = ArenaPrompts().load()
    data = tmp_path / "prompts.jsonl"
    data.write_text("".join(json.dumps({"id": p.id, "prompt": p.public["prompt"] + " !"}, ensure_ascii=False) + "\n"
                            for p in src), encoding="utf-8")
    opts = RunOptions(progress=False, cache_path=str(tmp / "calls.sqlite"), out=str(tmp_path / "other"), data=str(data))
    asyncio.run(run_arena(GOOD, PLAIN, [srv.spec("fair")], opts))
    with pytest.raises(GlotbenchError, match="different prompt sets"):
        rank_arenas([dirs["good-plain"], str(tmp_path / "other")])
    r = cli("board", "--bt", dirs["good-plain"], str(tmp_path / "other"))
    assert r.returncode == 2 and "different prompt sets" in r.stderr and "Traceback" not in r.stderr


def test_arena_report_and_the_board_carry_the_ranking(arenas):
    tmp, dirs, srv = arenas
    r = cli("report", *dirs.values(), "--bt")
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    assert rep["bradley_terry"]["mean_of_judges"]["ranking"] == [GOOD, MIXED, PLAIN]
    assert "scores" in rep  # the win rates against each baseline stay
    b = cli("board", str(tmp), "--format", "json", "--resamples", "100")
    assert b.returncode == 0, b.stderr
    (group,) = json.loads(b.stdout)["arena_ranking"]
    assert sorted(group["arenas"]) == sorted(dirs.values())
    assert group["ranking"]["mean_of_judges"]["ranking"] == [GOOD, MIXED, PLAIN]
    md = cli("board", str(tmp), "--resamples", "100", "--html", str(tmp / "board.html"))
    assert md.returncode == 0, md.stderr
    assert "Arena ranking (Bradley–Terry, no fixed anchor)" in md.stdout and f"| 1 | {GOOD} |" in md.stdout
    page = (tmp / "board.html").read_text(encoding="utf-8")
    assert 'class="arena-rank"' in page and page.index(GOOD) < page.index(f'data-model="{PLAIN}"')


def test_tied_ratings_share_a_rank_and_an_all_tie_judge_says_so(arenas):
    """The always_A judge ties every prompt (each order won once): every model is rated 1000. Its
    ranking gave them ranks 1, 2, 3 in input order, a finding the games do not hold; tied ratings now
    share rank 1, and the text says the judge's games were all ties."""
    _, dirs, srv = arenas
    res = rank_arenas(list(dirs.values()), resamples=20)
    biased, fair = srv.spec("biased"), srv.spec("fair")
    assert res["judges"][biased]["all_ties"] and not res["judges"][fair]["all_ties"]
    assert [e["rank"] for e in res["judges"][biased]["ratings"].values()] == [1, 1, 1]
    assert sorted(e["rank"] for e in res["judges"][fair]["ratings"].values()) == [1, 2, 3]
    r = cli("arena-rank", *dirs.values(), "--resamples", "20")  # the hidden alias of `board --bt`
    assert r.returncode == 0, r.stderr
    assert r.stderr.splitlines() == ["note: `glotbench arena-rank` is now `glotbench board --bt ARENA...`; the old name will go"]
    assert r.stdout == cli("board", "--bt", *dirs.values(), "--resamples", "20").stdout
    assert "biased: every game a tie" in r.stdout
