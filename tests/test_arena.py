"""Arena: verdict parsing, swap-and-average arithmetic, ties, self-skip, bootstrap, judge server runs."""

from __future__ import annotations

import json

import pytest

from judged_helpers import summary
from glotbench.engine.arena import cross_judge_report, run_arena
from glotbench.engine.evaluate import RunOptions
from glotbench.errors import GlotbenchError
from glotbench.judges.pairwise import VerdictError, arena_scores, game_value, parse_verdict

NOTES = {c: "ok" for c in ("correctness", "completeness", "reasoning", "clarity", "lao_fluency")}


def test_parse_verdict_is_strict():
    assert parse_verdict(json.dumps({"winner": "A", "notes": NOTES}))["winner"] == "A"
    assert parse_verdict("```json\n" + json.dumps({"winner": "tie", "notes": NOTES}) + "\n```")["winner"] == "tie"
    assert parse_verdict("<think>hmm</think>" + json.dumps({"winner": "B", "notes": NOTES}))["winner"] == "B"
    for bad in ("A is better", json.dumps({"winner": "a", "notes": NOTES}), json.dumps({"winner": "A"}),
                json.dumps({"winner": "A", "notes": {**NOTES, "clarity": 3}}), "Verdict: " + json.dumps({"winner": "A", "notes": NOTES}),
                "<think>" + json.dumps({"winner": "A", "notes": NOTES})):
        with pytest.raises(VerdictError):
            parse_verdict(bad)


def test_game_values():
    assert (game_value("A", "A"), game_value("B", "A"), game_value("tie", "B")) == (1.0, 0.0, 0.5)


def test_swap_average_and_judge_means_by_hand():
    values = {"j1": {"p1": [1.0, 0.0], "p2": [0.5, 0.5], "p3": [1.0, 1.0]},  # 0.5, 0.5, 1.0 -> 2/3
              "j2": {"p1": [1.0], "p2": [0.0, 0.0]}}  # p3 unjudged -> (1 + 0) / 2 = 0.5
    s = arena_scores(values, ["p1", "p2", "p3"], resamples=200)
    assert s["judges"]["j1"]["value"] == pytest.approx(2 / 3)
    assert s["judges"]["j2"]["value"] == pytest.approx(0.5)
    assert s["final"]["value"] == pytest.approx((2 / 3 + 0.5) / 2)
    assert s["prompts_judged"] == {"j1": 3, "j2": 2}
    assert 0 <= s["final"]["ci_low"] <= s["final"]["value"] <= s["final"]["ci_high"] <= 1


def test_bootstrap_resamples_prompts():
    # Every prompt has the same value: whatever prompts are drawn, the bootstrap has no width (were
    # games drawn, it would); so the interval is Wilson's over the 30 prompts (never a point).
    from glotbench.stats import wilson

    s = arena_scores({"j": {f"p{i}": [1.0, 0.0] for i in range(30)}}, [f"p{i}" for i in range(30)], resamples=300)
    assert s["final"]["ci_method"] == "wilson_fallback"
    assert (s["final"]["ci_low"], s["final"]["ci_high"]) == pytest.approx(wilson(15, 30))


@pytest.fixture
def judge_srv(srv):
    srv.configure(judges={"fair": {"mode": "prefer", "prefer": "GOOD"}, "biased": {"mode": "always_A"},
                          "flaky": {"mode": "prefer", "prefer": "GOOD", "malformed_first": 1},
                          "broken": {"mode": "malformed"}, "tied": {"mode": "tie"}})
    return srv


def _arena(tmp_path, cache_path, judges, candidate="python:helpers:good_answer", **policies):
    import asyncio

    opts = RunOptions(progress=False, cache_path=cache_path, out=str(tmp_path / f"a{len(list(tmp_path.iterdir()))}"),
                      max_retries=2)
    return asyncio.run(run_arena(candidate, "python:helpers:plain_answer", judges, opts, **policies)).results


def test_arena_with_judges_on_a_test_server(judge_srv, cache_path, tmp_path):
    spec = judge_srv.spec
    res = _arena(tmp_path, cache_path, [spec("fair"), spec("biased"), spec("flaky"), spec("broken"), spec("tied")])
    j = res["scores"]["judges"]
    assert j[spec("fair")]["value"] == 1.0 and j[spec("flaky")]["value"] == 1.0  # retried, then valid
    assert j[spec("biased")]["value"] == 0.5  # wins as A, loses as B: swapping cancels the bias
    assert j[spec("tied")]["value"] == 0.5 and res["tie_rate"][spec("tied")] == 1.0
    assert res["position_consistency"][spec("fair")] == 1.0 and res["position_consistency"][spec("biased")] == 0.0
    assert spec("broken") not in j and res["failures"][spec("broken")] == {"bad_response": 16}
    assert res["scores"]["final"]["value"] == pytest.approx((1 + 0.5 + 1 + 0.5) / 4)
    assert res["prompts"] == {"total": 8, "answered_by_both": 8, "scored": 8}
    flaky_calls = [r for r in judge_srv.requests() if r["model"] == "flaky"]
    assert len(flaky_calls) == 32  # 16 games, each malformed once and then asked again


def test_each_verdict_is_parsed_once(judge_srv, cache_path, tmp_path, monkeypatch):
    """The runner extracts a judge's reply once: the same parse both rejects a malformed verdict
    (asked again, not cached) and gives the accepted one to scoring; no second validating pass."""
    import glotbench.benchmarks.arena as arena_bench

    parsed: list[str] = []

    def counting(text):
        parsed.append(text)
        return parse_verdict(text)

    monkeypatch.setattr(arena_bench, "parse_verdict", counting)
    res = _arena(tmp_path, cache_path, [judge_srv.spec("flaky")])
    asked = [r for r in judge_srv.requests() if r["model"] == "flaky"]
    assert len(asked) == 32 and len(parsed) == len(asked)  # 16 games, each malformed once, then valid
    assert res["scores"]["judges"][judge_srv.spec("flaky")]["value"] == 1.0


def test_a_verdict_never_valid_names_its_failure(judge_srv, cache_path, tmp_path):
    import glob

    res = _arena(tmp_path, cache_path, [judge_srv.spec("fair"), judge_srv.spec("broken")])
    assert res["failures"][judge_srv.spec("broken")] == {"bad_response": 16}
    rows = [json.loads(line) for f in glob.glob(str(tmp_path / "*" / "judge-*broken*" / "samples.jsonl"))
            for line in open(f, encoding="utf-8")]
    assert len(rows) == 16 and all(r["failure"] == "bad_response" and r["output"] is None for r in rows)
    assert all(r["error"].startswith("bad_response: malformed verdict (bad_verdict): ") for r in rows), rows[0]["error"]


def test_self_judging_is_skipped(judge_srv, cache_path, tmp_path):
    spec = judge_srv.spec
    res = _arena(tmp_path, cache_path, [spec("fair"), "python:helpers:good_answer"])
    assert res["skipped_judges"] == ["python:helpers:good_answer"]
    assert list(res["scores"]["judges"]) == [spec("fair")]
    with pytest.raises(GlotbenchError, match="no judge produced a valid verdict"):
        _arena(tmp_path, cache_path, ["python:helpers:good_answer"])


def test_one_self_judging_policy_with_the_family_rule(srv, cache_path, tmp_path):
    """The arena takes the panel's SelfJudging, as AraGen does: with same_family, a judge of the
    candidate's family (parsed from its name, or stated) is skipped too, before any call."""
    from glotbench.judges.panel import SelfJudging

    srv.configure(judges={"fair": {"mode": "prefer", "prefer": "GOOD"}, "good-judge": {"mode": "prefer", "prefer": "GOOD"}})
    judges = [srv.spec("fair"), srv.spec("good-judge")]
    res = _arena(tmp_path, cache_path, judges, self_judging=SelfJudging(same_family=True))
    assert res["skipped_judges"] == [srv.spec("good-judge")] and list(res["scores"]["judges"]) == [srv.spec("fair")]
    assert not [r for r in srv.requests() if r.get("model") == "good-judge"]
    # A family stated for a judge counts too; with every judge skipped the arena stops before any answer.
    before = len(srv.requests())
    with pytest.raises(GlotbenchError, match="every judge was skipped as the candidate"):
        _arena(tmp_path, cache_path, judges, self_judging=SelfJudging(True, {srv.spec("fair"): "Good"}))
    assert len(srv.requests()) == before
    # Without the family rule only the candidate's own model is skipped.
    res = _arena(tmp_path, cache_path, [*judges, "python:helpers:good_answer"])
    assert res["skipped_judges"] == ["python:helpers:good_answer"] and len(res["scores"]["judges"]) == 2


def test_cross_judge_report_and_human_agreement(judge_srv, cache_path, tmp_path):
    spec = judge_srv.spec
    _arena(tmp_path, cache_path, [spec("fair"), spec("biased")], candidate="python:helpers:good_answer")
    _arena(tmp_path, cache_path, [spec("fair"), spec("biased")], candidate="python:helpers:plain_answer")
    dirs = sorted(str(p) for p in tmp_path.iterdir() if (p / "results.json").exists())
    human = tmp_path / "human.jsonl"
    human.write_text("\n".join(json.dumps({"candidate": "python:helpers:good_answer", "prompt_id": f"arena-0{i}",
                                           "winner": "candidate"}) for i in range(1, 5)) + "\n")
    rep = cross_judge_report(dirs, str(human))
    assert rep["scores"]["python:helpers:good_answer"][spec("fair")] == 1.0
    assert rep["scores"]["python:helpers:plain_answer"][spec("fair")] == 0.5  # identical answers: ties
    assert rep["judge_spread"]["python:helpers:good_answer"] == 0.5
    # One label only (the humans always chose the candidate): agreement 1, kappa undefined.
    assert rep["human_agreement"][spec("fair")] == {"n": 4, "agreement": 1.0, "cohens_kappa": None}
    assert rep["human_agreement"][spec("biased")]["agreement"] == 0.0  # it calls every prompt a tie
    # Two models, judges agree on the order (fair: 1.0 > 0.5); biased gives both 0.5: rho undefined.
    corr = rep["rank_correlations"][f"{spec('biased')} ~ {spec('fair')}"]
    assert corr["models"] == 2 and corr["spearman"] is None
    json.dumps(rep, allow_nan=False)


def _odd_ids():
    from glotbench.benchmarks.arena import ArenaPrompts
    from helpers import odd_prompt

    prompts = ArenaPrompts().load()
    odd = sorted(p.id for p in prompts if odd_prompt(p.public["prompt"]))
    assert 0 < len(odd) < len(prompts)  # the selector picks some prompts, not all
    return odd, len(prompts)


def test_unanswered_prompt_is_a_loss_by_default(judge_srv, cache_path, tmp_path):
    odd, n = _odd_ids()
    fair = judge_srv.spec("fair")
    res = _arena(tmp_path, cache_path, [fair], candidate="python:helpers:silent_on_odd")
    assert res["scores"]["judges"][fair]["value"] == pytest.approx((n - len(odd)) / n)
    assert res["scores"]["prompts"] == n
    assert sorted(res["unanswered"]["candidate"]) == odd and res["unanswered"]["policy"] == "loss"
    assert res["prompts"]["answered_by_both"] == n - len(odd)
    dropped = _arena(tmp_path, cache_path, [fair], candidate="python:helpers:silent_on_odd", unanswered="drop")
    assert dropped["scores"]["judges"][fair]["value"] == 1.0 and sorted(dropped["unanswered"]["dropped"]) == odd
    assert dropped["scores"]["prompts"] == n - len(odd)
    with pytest.raises(GlotbenchError, match="--unanswered must be one of loss, drop"):
        _arena(tmp_path, cache_path, [fair], unanswered="ignore")


def test_prompt_needs_both_orders_unless_accepted(cache_path, tmp_path):
    odd, n = _odd_ids()
    judge = "python:helpers:judge_fails_swapped_odd"
    res = _arena(tmp_path, cache_path, [judge])
    assert sorted(res["incomplete_prompts"]["failed"][judge]) == odd
    assert res["scores"]["prompts_judged"][judge] == n - len(odd)
    assert res["position_consistency"][judge] == 1.0
    assert res["position_consistency_prompts"][judge] == n - len(odd)
    assert res["failures"][judge] == {"bad_response": len(odd)}  # retried, then counted
    acc = _arena(tmp_path, cache_path, [judge], single_order="accept")
    assert sorted(acc["incomplete_prompts"]["single_order"][judge]) == odd
    assert acc["incomplete_prompts"]["failed"][judge] == []
    assert acc["scores"]["prompts_judged"][judge] == n
    assert acc["position_consistency_prompts"][judge] == n - len(odd)  # one order tells nothing about position


def test_account_prompts_by_hand():
    from glotbench.judges.pairwise import account_prompts

    by_order = {"j": {"p1": {"0": 1.0, "1": 0.0}, "p2": {"0": 1.0}, "p4": {"0": 0.5, "1": 0.5}}}
    answered = {"candidate": {"p1", "p2", "p4"}, "baseline": {"p1", "p2", "p4", "p3"}}
    a = account_prompts(["p1", "p2", "p3", "p4"], answered, by_order)
    assert a.values["j"] == {"p1": [1.0, 0.0], "p3": [0.0], "p4": [0.5, 0.5]}
    assert a.failed["j"] == ["p2"] and a.unanswered["candidate"] == ["p3"] and a.ids == ["p1", "p2", "p3", "p4"]
    assert a.consistency["j"] == {"value": 0.5, "prompts": 2}
    b = account_prompts(["p1", "p2", "p3"], {"candidate": {"p1", "p2"}, "baseline": {"p1", "p3"}}, {"j": {}},
                        unanswered="loss")
    assert b.values == {} and b.unanswered == {"candidate": ["p3"], "baseline": ["p2"], "both": []}


def test_arena_cli_reports_unanswered_and_incomplete_prompts(tmp_path):
    from conftest import cli
    from test_cli_inputs import _one_error_line

    odd, n = _odd_ids()
    env = {"GLOTBENCH_CACHE_DIR": str(tmp_path / "cache")}
    base = ["run", "laobench-arena", "--model", "python:helpers:silent_on_odd", "--bench-opt", "baseline=python:helpers:plain_answer",
            "--judge", "python:helpers:judge_fails_swapped_odd", "--no-progress"]
    proc = cli(*base, "--out", str(tmp_path / "a"), env=env)
    assert proc.returncode == 0, proc.stderr
    assert f"unanswered prompts: candidate {len(odd)}, baseline 0, both 0: scored as losses" in proc.stdout
    res = summary(tmp_path / "a")
    assert res["scores"]["final"]["value"] == pytest.approx((n - len(odd)) / n)
    line = _one_error_line(cli(*base, "--out", str(tmp_path / "b"), "--bench-opt", "single_order=maybe", env=env))
    assert "single_order must be one of fail, accept" in line


def test_the_table_prints_judge_and_model_names_as_text(judge_srv, cache_path, tmp_path, capsys):
    """Names are user text: rich markup in them (`[/x]` stopped the table with a MarkupError) or
    emoji codes are printed as they are."""
    from glotbench.report.judged import print_arena

    spec = judge_srv.spec
    res = _arena(tmp_path, cache_path, [spec("fair"), spec("broken")])
    hostile = json.loads(json.dumps(res).replace(spec("fair"), "openai:[/fair] :fire:@http://h/v1")
                         .replace("python:helpers:good_answer", "python:[bold]cand[/bold]"))
    print_arena(hostile)
    out = capsys.readouterr().out
    assert "openai:[/fair] :fire:" in out and "python:[bold]cand[/bold]" in "".join(out.split("\n"))
