"""compare of judged runs pairs each run's items by the run's declared rule (results.json
`judged.rule` over `judged.stats`: judges/stats.py `judged_rows`), so its A and B are the runs'
headlines even where a judge has no verdict on some items (issue #33). Where the paired figure is not
the headline (a run written before `judged.rule`), the terminal and --format json say what it is
paired on and show each headline beside it."""

from __future__ import annotations

import json
import random

import pytest
from conftest import cli
from test_aragen import rubric_srv  # noqa: F401 - the fixture
from test_stats33_judged_plugin import ANSWERS, QUESTIONS, PluginGraded

from glotbench.engine.evaluate import RunOptions, evaluate
from glotbench.judges.stats import JudgedMetrics, JudgedStats, judged_metrics, judged_rows

# B answers q1-q3 otherwise; each judge grades an (item, answer); judge2 gives no readable verdict
# on A's q4 and on B's q2 and q4: the judges' own means then differ from the items' means
OTHER = {"q1": "เชียงใหม่", "q2": "เจ้าพระยา", "q3": "เจ็ดสิบหก"}
GRADES = {"cand": {"judge1": {"q1": 10, "q2": 5, "q3": 0, "q4": 10}, "judge2": {"q1": 10, "q2": 10, "q3": 5}},
          "cand2": {"judge1": {"q1": 0, "q2": 5, "q3": 10, "q4": 10}, "judge2": {"q1": 5, "q3": 10}}}
HEADLINE = {"cand": ((1 + .5 + 0 + 1) / 4 + (1 + 1 + .5) / 3) / 2, "cand2": ((0 + .5 + 1 + 1) / 4 + (.5 + 1) / 2) / 2}
ITEM_MEANS = {"cand": (1 + .75 + .25 + 1) / 4, "cand2": (.25 + .5 + 1 + 1) / 4}


def _answers(cand: str) -> dict[str, str]:
    return {i: OTHER.get(i, a) if cand == "cand2" else a for i, a in ANSWERS.items()}


@pytest.fixture
def two_runs(tmp_path, srv):
    scripts: dict[str, dict[str, str]] = {"cand2": {q: _answers("cand2")[i] for i, q in QUESTIONS.items()}}
    for cand, per in GRADES.items():
        for judge, grades in per.items():
            for i, a in _answers(cand).items():
                scripts.setdefault(judge, {})[f"GRADE {i}: {a}"] = f"SCORE: {grades[i]}" if i in grades else "no idea"
    srv.configure(answers={q: ANSWERS[i] for i, q in QUESTIONS.items()}, model_answers=scripts)
    judges = (srv.spec("judge1"), srv.spec("judge2"))
    out = {}
    for cand in ("cand", "cand2"):
        res = evaluate(PluginGraded(), srv.spec(cand), RunOptions(progress=False, out=str(tmp_path / cand),
                                                                  cache_path=str(tmp_path / "c.sqlite"), max_retries=0,
                                                                  judges=judges, max_failure_rate=0.6))
        out[cand] = res.out_dir
    return out


def _compare(runs, *extra: str):
    p = cli("compare", str(runs["cand"]), str(runs["cand2"]), "--resamples", "200", *extra)
    assert p.returncode == 0, p.stderr
    return p


def test_compare_pairs_judged_runs_on_their_headline(two_runs):
    for cand, d in two_runs.items():
        record = json.loads((d / "results.json").read_text(encoding="utf-8"))
        assert record["scores"]["overall"]["grade"]["value"] == pytest.approx(HEADLINE[cand])
        assert record["judged"]["rule"] == {"rule": "mean_of_items", "slots": 0, "clusters": False, "policy": "drop"}
    [pair] = json.loads(_compare(two_runs, "--format", "json").stdout)["pairs"]
    r = pair["metrics"]["grade"]
    assert r["a"] == pytest.approx(HEADLINE["cand"]) and r["b"] == pytest.approx(HEADLINE["cand2"])
    assert r["delta"] == pytest.approx(HEADLINE["cand2"] - HEADLINE["cand"]) and r["n"] == 4
    assert "headline" not in r and "judged rule" in r["paired_on"]
    text = _compare(two_runs).stdout
    assert f"{100 * HEADLINE['cand']:.1f}" in text and f"{100 * HEADLINE['cand2']:.1f}" in text, text
    assert f"{100 * ITEM_MEANS['cand']:.1f}" not in text and "‡" not in text, text
    assert "grade: paired on the run's judged rule" in text, text


def test_an_older_run_shows_its_headline_beside_the_paired_figure(two_runs):
    for d in two_runs.values():  # a run written before judged.rule: its items' means are paired
        path = d / "results.json"
        record = json.loads(path.read_text(encoding="utf-8"))
        del record["judged"]["rule"]
        path.write_text(json.dumps(record), encoding="utf-8")
    [pair] = json.loads(_compare(two_runs, "--format", "json").stdout)["pairs"]
    r = pair["metrics"]["grade"]
    assert r["a"] == pytest.approx(ITEM_MEANS["cand"]) and r["b"] == pytest.approx(ITEM_MEANS["cand2"])
    assert r["headline"] == {"a": pytest.approx(HEADLINE["cand"]), "b": pytest.approx(HEADLINE["cand2"])}
    assert "each item's mean over the judges" in r["paired_on"]
    text = " ".join(_compare(two_runs).stdout.split())
    assert "grade ‡" in text and "‡: the paired figure is not the run's headline" in text, text
    assert (f"‡ not the runs' headlines: A {100 * HEADLINE['cand']:.1f} (paired {100 * ITEM_MEANS['cand']:.1f}), "
            f"B {100 * HEADLINE['cand2']:.1f} (paired {100 * ITEM_MEANS['cand2']:.1f})") in text, text


def test_a_damaged_rule_is_one_error_line(two_runs):
    path = two_runs["cand2"] / "results.json"
    record = json.loads(path.read_text(encoding="utf-8"))
    record["judged"]["rule"]["policy"] = "sometimes"
    path.write_text(json.dumps(record), encoding="utf-8")
    p = cli("compare", str(two_runs["cand"]), str(two_runs["cand2"]))
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert "judged.rule.policy: expected one of drop, zero, upstream, got 'sometimes'" in p.stderr, p.stderr


@pytest.mark.parametrize("declared", [JudgedMetrics(), JudgedMetrics(policy="zero"), JudgedMetrics(policy="upstream"),
                                      JudgedMetrics(rule="weighted_by_cluster", slots=2, clusters=True)])
def test_the_paired_rows_sum_to_every_declared_metric(declared):
    """The rows compare pairs: their sum scores every metric judged_metrics records, for every rule
    and policy, with judges missing values on random items (3 judges, 2 repeats, 3 clusters)."""
    rng = random.Random(33)
    ids = [f"ข{i}" for i in range(30)]
    judges = ["j1", "j2", "j3"]
    values = {j: {i: [rng.choice([0.0, 0.5, 1.0]) for _ in range(rng.choice([0, 1, 2]))] for i in ids} for j in judges}
    stats = JudgedStats.of(values, ids, clusters={i: rng.choice(["math", "writing", "ภาษา"]) for i in ids}, repeats=2,
                           unanswered=ids[:3])
    found = judged_metrics(stats, declared, resamples=0)
    built = judged_rows(stats, declared)
    assert set(built.fns) == set(found)
    for name, fn in built.fns.items():
        assert fn(built.rows.sum(0)) == pytest.approx(found[name]["value"]), name
    assert JudgedMetrics.read(declared.record()) == declared


def test_the_board_tests_judged_runs_on_their_headlines(two_runs, tmp_path):
    """The board's Δ against the best is the headlines' difference (the same pairing as compare)."""
    b = cli("board", str(tmp_path), "--format", "json", "--resamples", "200")
    assert b.returncode == 0, b.stderr
    [column] = json.loads(b.stdout)["columns"]
    cells = {m.split(":")[1].split("@")[0]: c for m, c in column["cells"].items()}
    assert cells["cand"]["best"] and cells["cand"]["value"] == pytest.approx(HEADLINE["cand"])
    assert cells["cand2"]["delta_vs_best"] == pytest.approx(HEADLINE["cand2"] - HEADLINE["cand"])
    assert cells["cand2"]["shared_items"] == 4


@pytest.mark.parametrize("args", [("compare", "--items"), ("compare", "--html"), ("diff",)])
def test_the_items_view_of_judged_runs_is_one_error_line(two_runs, args):
    p = cli(*args[:1], str(two_runs["cand"]), str(two_runs["cand2"]), *args[1:])
    errors = [line for line in p.stderr.splitlines() if not line.startswith("note: ")]  # diff: its new name
    assert p.returncode == 2 and "Traceback" not in p.stderr and len(errors) == 1, p.stderr
    assert f"error: {two_runs['cand']} is a judged run (" in p.stderr and "the items view" in p.stderr
    assert "`glotbench compare RUN_A RUN_B`" in p.stderr


@pytest.mark.parametrize("judges,kw", [(("mid", "spotty"), {"strategy": "vote"}), (("mid", "pairs"), {"strategy": "vote"}),
                                       (("mid", "spotty"), {"judge_repeats": 2, "policy": "zero"})])
def test_aragen_is_paired_on_its_declared_rule(rubric_srv, cache_path, tmp_path, judges, kw):  # noqa: F811
    """AraGen's headline is its jury's figure (judges/jury.py); compare pairs the declared rule's
    (judged.metrics `final`, recorded in judged.rule), under the jury strategy and policy."""
    from test_aragen import _run

    for m in ("model", "model2"):
        _run(tmp_path, cache_path, rubric_srv.spec(m), [rubric_srv.spec(j) for j in judges], **kw)
    runs = sorted(p for p in tmp_path.glob("g*") if (p / "results.json").is_file())
    records = [json.loads((p / "results.json").read_text(encoding="utf-8")) for p in runs]
    proc = cli("compare", *map(str, runs), "--format", "json", "--resamples", "100")
    assert proc.returncode == 0, proc.stderr
    r = json.loads(proc.stdout)["pairs"][0]["metrics"]["3c3h"]
    rule = [rec["judged"]["metrics"]["final"]["value"] for rec in records]
    heads = [rec["scores"]["overall"]["3c3h"]["value"] for rec in records]
    assert (r["a"], r["b"]) == (pytest.approx(rule[0]), pytest.approx(rule[1]))
    # these panels (one verdict per entry and judge, or every entry alike) give the jury's figure
    # the rule's value: no ‡ (tests above show it where they differ)
    assert heads == pytest.approx(rule) and "headline" not in r and "judged rule" in r["paired_on"]
