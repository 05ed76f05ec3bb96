"""AraGen's figures as declared metrics over `JudgedStats` (judges/stats.py) with the one bootstrap
(issue #33): the `average` and `vote` juries read each verdict's six 3C3H dimensions; each point by
upstream's rule (a hand computation here), each interval the bootstrap of the statistic shown."""

from __future__ import annotations

import json
import random
import statistics

import pytest
from conftest import cli
from test_aragen import rubric_srv  # noqa: F401 - the fixture

from glotbench.errors import GlotbenchError
from glotbench.judges.jury import Outcome, judge_summary, jury_metrics, rule, verdict_stats
from glotbench.judges.rubric import DIMENSIONS
from glotbench.judges.stats import JudgedMetrics, JudgedStats, judged_metrics, judged_rows

TASKS = ("Question Answering (QA)", "Reasoning", "Safety")


def panel(seed: int, n: int, judges: int, repeats: int):
    """Random verdicts of `judges` judges on `n` entries (Arabic and Thai ids), some unanswered, some
    without a valid verdict, Correct 0 or 1 (the vote reads it)."""
    rng = random.Random(seed)
    ids = [f"{'س' if k % 2 else 'ข'}{k}" for k in range(n)]
    entries = [(i, rng.choice(TASKS)) for i in ids]
    unanswered = {i for i in ids if rng.random() < 0.1}
    per = {}
    for j in range(judges):
        per[f"judge-{j}"] = {}
        for i in ids:
            if i in unanswered:
                per[f"judge-{j}"][i] = [Outcome(failure="no_answer")] * repeats
                continue
            outs = []
            for _ in range(repeats):
                if rng.random() < 0.15:
                    outs.append(Outcome(failure=rng.choice(["bad_verdict", "missing"])))
                else:
                    d = {k: rng.choice([0.0, 0.25, 0.5, 1.0]) for k in DIMENSIONS}
                    d["Correct"] = rng.choice([0.0, 1.0, 1.0])
                    d["3c3h"] = sum(d.values()) / 6
                    outs.append(Outcome(d))
            per[f"judge-{j}"][i] = outs
    return entries, per


def counted(outs, policy):
    """Upstream's verdicts that enter the averages (judges/jury.py's module docstring), written out."""
    return [o for o in outs if o.dims is not None or policy == "zero" or (policy == "upstream" and o.failure == "no_answer")]


def by_hand(entries, per, policy, strategy):
    """Upstream's figures by its rules: a judge's ratio of sums over counted verdicts; the juries over
    the entries every judge scored (each judge's mean over repeats)."""
    def dim(o, k):
        return (o.dims or {}).get(k, 0.0)
    judges = {}
    for j, outs in per.items():
        vals = [dim(o, "3c3h") for sn, _ in entries for o in counted(outs[sn], policy)]
        judges[j] = sum(vals) / len(vals) if vals else None
    if strategy == "mean":
        got = [v for v in judges.values() if v is not None]
        return judges, (statistics.fmean(got) if got else None)
    combined = []
    for sn, _ in entries:
        means = []
        for outs in per.values():
            use = counted(outs[sn], policy)
            if not use:
                break
            means.append((statistics.fmean(dim(o, "3c3h") for o in use), statistics.fmean(dim(o, "Correct") for o in use)))
        else:
            if strategy == "average" or len(means) == 1:
                combined.append(sum(m for m, _ in means) / len(means))
            else:
                ones = [m for m, c in means if c == 1]
                combined.append(sum(ones) / len(ones) if len(ones) > sum(1 for _, c in means if c == 0) else 0.0)
    return judges, (sum(combined) / len(combined) if combined else None)


CASES = [(seed, policy, mode, strategy) for seed in (1, 2, 3) for policy in ("drop", "zero", "upstream")
         for mode in ("strict", "3c3h") for strategy in ("mean", "average", "vote")]


@pytest.mark.parametrize("seed, policy, mode, strategy", CASES)
def test_every_aragen_figure_is_upstreams_point_with_the_interval_of_that_statistic(seed, policy, mode, strategy):
    entries, per = panel(seed, n=[40, 17, 120][seed - 1], judges=[2, 3, 1][seed - 1], repeats=[2, 1, 3][seed - 1])
    summaries = {j: judge_summary(entries, per[j], policy=policy, mode=mode, resamples=0) for j in per}
    combined, stats, found = jury_metrics(entries, per, summaries, strategy=strategy, policy=policy, mode=mode,
                                          resamples=300)
    judges, final = by_hand(entries, per, policy, strategy)
    # upstream rounds every figure to 4 decimals in "3c3h" mode; the mean jury rounds its mean of the
    # judges' rounded figures again (two roundings)
    tol = 1.0001e-4 if mode == "3c3h" else 1e-12
    assert combined["3c3h"]["value"] == pytest.approx(final, abs=tol)
    if mode == "3c3h":
        assert combined["3c3h"]["value"] == round(combined["3c3h"]["value"], 4)
    for j, v in judges.items():
        assert found[f"judge:{j}"]["value"] == pytest.approx(v, abs=tol)
        assert found[f"judge:{j}"]["value"] == summaries[j]["scores"]["overall"]["3c3h"]["value"]  # the point shown
    # the interval is of the statistic shown: the bootstrap's own point (its sums in numpy's order,
    # unrounded) is the shown value, and the interval holds it; one method for every figure
    own = judged_metrics(stats, rule(policy, strategy), resamples=300)
    for name, rec in found.items():
        if rec["value"] is None:
            continue
        assert own[name]["value"] == pytest.approx(rec["value"], abs=tol), name
        assert (own[name]["ci_low"], own[name]["ci_high"]) == (rec["ci_low"], rec["ci_high"]), name
        assert rec["ci_low"] - 1e-12 <= rec["value"] <= rec["ci_high"] + 1e-12, name
        assert rec["ci_method"] in ("bootstrap", "wilson_fallback"), name
    assert found["final"] == combined["3c3h"]
    # per task: each judge's and the jury's, the points of the tables kept
    for j in per:
        for t, g in summaries[j]["scores"]["groups"]["task"].items():
            assert found[f"judge:{j}/cluster:{t}"]["value"] == g["3c3h"]["value"]
    for t, v in combined["tasks"].items():
        assert found[f"cluster:{t}"]["value"] == v


def test_the_mean_jury_shows_one_statistic():
    """stats33b found the `mean` jury showing the mean of the judges' ratio-of-sums figures with the
    interval of the mean of item means: with repeats and failed verdicts those differ, and now the
    interval is centred on the figure shown (its bootstrap's own point equals it)."""
    entries, per = panel(5, n=60, judges=2, repeats=2)
    summaries = {j: judge_summary(entries, per[j], policy="drop", resamples=0) for j in per}
    combined, stats, _ = jury_metrics(entries, per, summaries, strategy="mean", policy="drop", resamples=400)
    item_means = judged_metrics(stats, JudgedMetrics(policy="drop"), resamples=0)["final"]["value"]
    pooled = judged_metrics(stats, rule("drop", "mean"), resamples=0)["final"]["value"]
    assert abs(item_means - combined["3c3h"]["value"]) > 1e-4  # the two statistics differ here
    assert pooled == pytest.approx(combined["3c3h"]["value"], abs=1e-12)


def test_components_are_read_back_and_a_damaged_record_is_one_error_line():
    entries, per = panel(2, n=17, judges=3, repeats=1)
    stats = verdict_stats(entries, per)
    assert set(stats.components) == set(DIMENSIONS)
    assert JudgedStats.read(json.loads(json.dumps(stats.record()))) == stats
    older = {k: v for k, v in stats.record().items() if k != "components"}  # a record written before them
    assert JudgedStats.read(older).components == {}
    bad = stats.record()
    judge, item = next((j, i) for j, per_item in bad["values"].items() for i in per_item)
    bad["components"]["Correct"][judge][item] = [1.0, 0.0, 1.0]
    with pytest.raises(GlotbenchError, match=r"^judged\.stats: components\.Correct\..*3 value\(s\) beside 1 in values$"):
        JudgedStats.read(bad)
    del bad["components"]["Correct"][judge][item]
    with pytest.raises(GlotbenchError, match=r"^judged\.stats: components\.Correct\..*: no values for"):
        JudgedStats.read(bad)
    with pytest.raises(ValueError, match="reads each verdict's Correct"):
        judged_rows(JudgedStats.read(older), rule("drop", "vote"))


def test_the_declared_jury_is_recorded_and_read_back():
    declared = rule("upstream", "vote")
    assert declared.record()["jury"] == "vote" and JudgedMetrics.read(declared.record()) == declared
    assert "jury" not in JudgedMetrics().record()  # a record before `jury` reads as the mean of judges
    assert JudgedMetrics.read({"rule": "mean_of_items"}).jury == "mean"
    with pytest.raises(GlotbenchError, match=r"^judged\.rule\.jury: expected one of mean, average, vote, got 'majority'$"):
        JudgedMetrics.read({"jury": "majority"})
    assert "vote on Correct" in declared.words()


@pytest.mark.parametrize("kw", [{"strategy": "average"}, {"strategy": "vote", "judge_repeats": 2, "policy": "zero"}])
def test_an_aragen_run_records_every_figure_with_the_one_interval_rule(rubric_srv, cache_path, tmp_path, kw):  # noqa: F811
    """Through the engine: results.json's judged.metrics holds the jury's, each judge's and the per-task
    figures; aragen's record shows the same intervals; report prints them; compare pairs the headline."""
    from test_aragen import _run

    for m in ("model", "model2"):
        _run(tmp_path, cache_path, rubric_srv.spec(m), [rubric_srv.spec("mid"), rubric_srv.spec("spotty")], **kw)
    runs = sorted(p for p in tmp_path.glob("g*") if (p / "results.json").is_file())
    rec = json.loads((runs[0] / "results.json").read_text(encoding="utf-8"))
    judged = rec["judged"]
    assert judged["rule"]["rule"] == "pooled" and judged["rule"]["jury"] == kw["strategy"]
    metrics = judged["metrics"]
    for name, est in metrics.items():
        assert est["ci_method"] in ("bootstrap", "wilson_fallback") and est["ci_low"] <= est["value"] <= est["ci_high"], name
    assert metrics["final"] == rec["scores"]["overall"]["3c3h"] == judged["summary"]["mean_of_judges"]["3c3h"]
    for j, p in judged["summary"]["per_judge"].items():  # the figures aragen's tables show, by the same rule
        assert p["scores"]["overall"]["3c3h"] == metrics[f"judge:{j}"]
        for t, g in p["scores"]["groups"]["task"].items():
            assert g["3c3h"] == metrics[f"judge:{j}/cluster:{t}"]
    for t, v in judged["summary"]["mean_of_judges"]["tasks"].items():
        assert metrics[f"cluster:{t}"]["value"] == v
    report = cli("report", str(runs[0]))
    assert report.returncode == 0, report.stderr
    proc = cli("compare", *map(str, runs), "--format", "json", "--resamples", "100")
    assert proc.returncode == 0, proc.stderr
    r = json.loads(proc.stdout)["pairs"][0]["metrics"]["3c3h"]
    assert r["a"] == pytest.approx(metrics["final"]["value"]) and "headline" not in r
