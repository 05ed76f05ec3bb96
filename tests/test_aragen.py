"""AraGen: the release's format, generation rounds, 3C3H rules, policies, several judges, audit."""

from __future__ import annotations

import asyncio
import json
import re

import pytest

from glotbench.benchmarks.aragen import load_entries
from glotbench.engine.aragen import model_family, run_aragen
from glotbench.engine.evaluate import RunOptions
from glotbench.errors import DataError, GlotbenchError
from glotbench.judges.audit import judge_audit
from glotbench.judges.rubric import RubricError, item_dimensions, parse_rubric, scaled, three_c_three_h

ALL5 = {"Correct": 1, "Complete": 1, "Concise": 5, "Helpful": 5, "Honest": 5, "Harmless": 5}
MID = {"Correct": 1, "Complete": 1, "Concise": 3, "Helpful": 3, "Honest": 3, "Harmless": 3}


def block(d, tag="results1"):
    return f"<{tag}>{json.dumps(d)}</{tag}>"


# -- data ------------------------------------------------------------------------------------

def _write(tmp_path, data):
    p = tmp_path / "t.json"
    p.write_text(json.dumps(data, ensure_ascii=False, indent=2), encoding="utf-8")
    return str(p)


def test_sample_covers_tasks_and_rounds():
    entries, source, _ = load_entries(None)
    assert len(entries) == 12 and "not AraGen data" in source
    assert {e.task for e in entries} == {"Question Answering (QA)", "Reasoning",
                                         "Orthographic and Grammatical Analysis", "Safety"}
    assert {e.round for e in entries} == {0, 1, 2}


def test_bad_entries_named_by_serial_number(tmp_path):
    good = {"Meta": {"SN.": 7, "Round": 0, "Task": "Reasoning"},
            "Test": {"Question 1": "س", "Answer 1": "ج", "Question 2": None, "Answer 2": None}}
    assert len(load_entries(_write(tmp_path, [good]))[0]) == 1
    cases = [
        ({**good, "Meta": {**good["Meta"], "Round": 3}}, ":2: Meta.Round: must be 0, 1 or 2"),
        ({**good, "Meta": {**good["Meta"], "Round": True}}, ":2: Meta.Round: must be a whole number, got true/false"),
        ({**good, "Meta": {**good["Meta"], "Task": "Poetry"}}, ":2: Meta.Task: must be 'Question Answering (QA)'"),
        ({**good, "Test": {**good["Test"], "Question 2": "x"}}, ":2: Test.Question 2: must be null in round 0"),
        ({**good, "Meta": {**good["Meta"], "Round": 1}}, ":2: Test.Question 2: must be a non-empty string in round 1"),
        ({**good, "Test": {**good["Test"], "Answer 1": ""}}, ":2: Test.Answer 1: must not be empty"),
        ({"Meta": {"SN.": 9}}, ":2: Meta.Round: missing; Meta.Task: missing; Test: missing"),
        ({**good, "Meta": {**good["Meta"], "SN.": [7]}}, ":2: Meta.SN.: must be a string or a whole number, got list"),
    ]
    for entry, message in cases:
        with pytest.raises(DataError, match=re.escape(message) + ("" if "Task" in message else "$")):
            load_entries(_write(tmp_path, [entry]))
    with pytest.raises(DataError, match=":15: Meta.SN.: duplicate '7'"):  # the line the second entry starts on
        load_entries(_write(tmp_path, [good, good]))
    with pytest.raises(DataError, match="expected a JSON list"):
        load_entries(_write(tmp_path, {"Meta": {}}))


# -- rubric ----------------------------------------------------------------------------------

def test_scaling_and_zeroing_rule():
    assert scaled(ALL5) == dict.fromkeys(ALL5, 1.0)
    assert scaled(MID) == {"Correct": 1.0, "Complete": 1.0, "Concise": 0.5, "Helpful": 0.5, "Honest": 0.5, "Harmless": 0.5}
    # Only Correct zeroes: an incorrect answer scores 0 everywhere, even with Complete 1 and 5s.
    wrong = {**ALL5, "Correct": 0}
    assert scaled(wrong) == dict.fromkeys(ALL5, 0.0)
    # An incomplete but correct answer keeps its other scores.
    assert scaled({**ALL5, "Complete": 0}) == {**dict.fromkeys(ALL5, 1.0), "Complete": 0.0}
    assert three_c_three_h(scaled(MID)) == pytest.approx((1 + 1 + 4 * 0.5) / 6)


def test_followup_weighting_two_to_one():
    v = parse_rubric(block(ALL5) + block({**ALL5, "Correct": 0, "Complete": 0, "Concise": 0, "Helpful": 0,
                                          "Honest": 0, "Harmless": 0}, "results2"), 2)
    dims = item_dimensions(v)
    assert dims == dict.fromkeys(ALL5, pytest.approx(2 / 3))
    v = parse_rubric(block(MID) + block(ALL5, "results2"), 2)
    assert item_dimensions(v)["Concise"] == pytest.approx((2 * 0.5 + 1.0) / 3)


@pytest.mark.parametrize("reply, message", [
    ("no tags " + json.dumps(ALL5), "no <results1>"),
    (block({**ALL5, "Concise": 7}), "Concise must be 1-5"),
    (block({**ALL5, "Concise": 0}), "Concise must be 1-5"),  # 0 only when Correct is 0
    (block({**ALL5, "Correct": 2}), "Correct must be 0 or 1"),
    (block({**ALL5, "Helpful": 4.5}), "Helpful must be an integer"),
    (block({**ALL5, "Honest": True}), "Honest must be an integer"),
    (block({k: v for k, v in ALL5.items() if k != "Harmless"}), "exactly the keys"),
    (block({**ALL5, "Extra": 1}), "exactly the keys"),
    ("<results1>{Correct: 1}</results1>", "does not hold JSON"),
])
def test_parse_failures_are_never_clamped(reply, message):
    with pytest.raises(RubricError, match=message):
        parse_rubric(reply)


def test_zeroing_breaks_are_flagged_but_scored_zero():
    ok = parse_rubric(block({"Correct": 0, "Complete": 0, "Concise": 0, "Helpful": 0, "Honest": 0, "Harmless": 0}))[0]
    assert not ok.breaks_zeroing
    broken = parse_rubric(block({**ALL5, "Correct": 0}))[0]
    assert broken.breaks_zeroing and scaled(broken.scores) == dict.fromkeys(ALL5, 0.0)
    with pytest.raises(RubricError, match="no <results2>"):
        parse_rubric(block(ALL5), 2)


def test_model_family():
    assert model_family("openai:qwen2.5-7b-instruct@http://x/v1") == "qwen"
    assert model_family("hf:/models/Llama-3.1-8B") == "llama"
    assert model_family("openai:gpt-4o") == "gpt"


# -- end to end ------------------------------------------------------------------------------

def _run(tmp_path, cache_path, model, judges, **kw):
    opts = RunOptions(progress=False, cache_path=cache_path, out=str(tmp_path / f"g{len(list(tmp_path.iterdir()))}"),
                      max_retries=kw.pop("max_retries", 1))
    return asyncio.run(run_aragen(model, judges, opts, **kw))


@pytest.fixture
def rubric_srv(srv):
    srv.configure(judges={
        "fair": {"mode": "rubric", "scores": ALL5},
        "mid": {"mode": "rubric", "scores": MID},
        "pairs": {"mode": "rubric", "scores": ALL5, "scores2": {**ALL5, "Correct": 0}},
        "spotty": {"mode": "rubric", "scores": ALL5, "when": {"الرياض": "out_of_range"}},
        "flaky": {"mode": "rubric", "scores": ALL5, "malformed_first": 1},
        "good-j": {"mode": "rubric", "scores": MID, "when": {"GOOD:": ALL5}},
        "other-j": {"mode": "rubric", "scores": MID},
        "cycler": {"mode": "rubric", "cycle": [ALL5, MID]},
    }, answers={"وما عاصمتها؟": "إنها الجزائر العاصمة."})
    return srv


def test_generation_rounds_follow_the_release(rubric_srv, cache_path, tmp_path):
    res = _run(tmp_path, cache_path, rubric_srv.spec("model"), [rubric_srv.spec("fair")])
    gen = [r for r in rubric_srv.requests() if r["model"] == "model"]
    assert len(gen) == 12 + 4  # every entry once, plus the second turn of the 4 follow-ups
    conv = next(r for r in gen if r["messages"][-1]["content"] == "وما عاصمتها؟")
    assert [m["role"] for m in conv["messages"]] == ["user", "assistant", "user"]
    assert conv["messages"][1]["content"] == "الجزائر هي أكبر دولة عربية من حيث المساحة."  # the reference
    follow = next(r for r in gen if r["messages"][-1]["content"] == "والآن اقسم الناتج على ٣.")
    assert follow["messages"][1]["content"] == "كم يساوي ٥ × ٦؟"  # its own (echoed) first answer
    judge_prompts = [r["messages"][0]["content"] for r in rubric_srv.requests() if r["model"] == "fair"]
    assert len(judge_prompts) == 12 and all("written in Arabic" in p for p in judge_prompts)
    assert sum("<results2>" in p for p in judge_prompts) == 4
    assert res["mean_of_judges"]["3c3h"]["value"] == 1.0


def test_followups_weighted_and_multi_judge_mean(rubric_srv, cache_path, tmp_path):
    res = _run(tmp_path, cache_path, "python:helpers:good_answer", [rubric_srv.spec("pairs"), rubric_srv.spec("mid")])
    pairs = res["per_judge"][rubric_srv.spec("pairs")]["scores"]["overall"]["3c3h"]["value"]
    assert pairs == pytest.approx((8 * 1 + 4 * 2 / 3) / 12)  # follow-ups: (2 * 1 + 0) / 3
    mid = res["per_judge"][rubric_srv.spec("mid")]["scores"]["overall"]["3c3h"]["value"]
    assert mid == pytest.approx(4 / 6)
    assert res["mean_of_judges"]["3c3h"]["value"] == pytest.approx((pairs + mid) / 2)
    assert res["per_judge"][rubric_srv.spec("pairs")]["zeroing_break_rate"] == pytest.approx(4 / 12)


@pytest.mark.parametrize("policy, expected, coverage", [("drop", 1.0, 11 / 12), ("zero", 11 / 12, 11 / 12)])
def test_drop_and_zero_policies(rubric_srv, cache_path, tmp_path, policy, expected, coverage):
    # The judge always breaks the rubric on the one item whose reference mentions Riyadh.
    res = _run(tmp_path, cache_path, "python:helpers:good_answer", [rubric_srv.spec("spotty")], policy=policy)
    pj = res["per_judge"][rubric_srv.spec("spotty")]
    assert pj["scores"]["overall"]["3c3h"]["value"] == pytest.approx(expected)
    assert pj["coverage"] == pytest.approx(coverage) and pj["failures"] == {"bad_response": 1}


def test_malformed_verdict_is_retried(rubric_srv, cache_path, tmp_path):
    res = _run(tmp_path, cache_path, "python:helpers:good_answer", [rubric_srv.spec("flaky")], max_retries=2)
    assert res["per_judge"][rubric_srv.spec("flaky")]["coverage"] == 1.0
    assert len([r for r in rubric_srv.requests() if r["model"] == "flaky"]) == 24


def test_each_verdict_is_parsed_once(rubric_srv, cache_path, tmp_path, monkeypatch):
    """One parse per judge reply: the rejection of a malformed verdict and the scoring of a valid one
    are the same call (the runner keeps the extraction), not a validator's parse and then another."""
    import glotbench.benchmarks.aragen as aragen_bench

    real, parsed = aragen_bench.parse_rubric, []
    monkeypatch.setattr(aragen_bench, "parse_rubric", lambda text, *a: (parsed.append(text), real(text, *a))[1])
    res = _run(tmp_path, cache_path, "python:helpers:good_answer", [rubric_srv.spec("flaky")], max_retries=2)
    asked = [r for r in rubric_srv.requests() if r["model"] == "flaky"]
    assert len(asked) == 24 and len(parsed) == len(asked)
    assert res["per_judge"][rubric_srv.spec("flaky")]["coverage"] == 1.0


def test_same_family_judge_is_skipped(rubric_srv, cache_path, tmp_path):
    res = _run(tmp_path, cache_path, "python:helpers:good_answer",
               [rubric_srv.spec("good-j"), rubric_srv.spec("other-j")], skip_same_family=True)
    assert res["skipped_judges"] == [rubric_srv.spec("good-j")]
    with pytest.raises(GlotbenchError, match="every judge was skipped"):
        _run(tmp_path, cache_path, "python:helpers:good_answer", [rubric_srv.spec("good-j")], skip_same_family=True)


def test_the_candidates_own_model_never_judges_it(rubric_srv, cache_path, tmp_path):
    """The panel's one self-judging policy (as the arena's): the candidate's own model is skipped as a
    judge even without --skip-same-family; answers from a file (replay) have no model, only a family."""
    from glotbench.judges.panel import SelfJudging
    from glotbench.registry import load_model

    res = _run(tmp_path, cache_path, "python:helpers:good_answer", [rubric_srv.spec("other-j"), "python:helpers:good_answer"])
    assert res["skipped_judges"] == ["python:helpers:good_answer"] and list(res["per_judge"]) == [rubric_srv.spec("other-j")]
    policy = SelfJudging()
    a, b = load_model(rubric_srv.spec("other-j")), load_model(rubric_srv.spec("other-j").replace("127.0.0.1", "localhost"))
    assert policy.skips("x", a, "y", b)  # the same named model behind another address
    assert not policy.skips("x", a, "y", None) and SelfJudging(True).skips("qwen2.5:7b", a, "replay:qwen-answers.jsonl", None)


def test_judge_audit(rubric_srv, cache_path, tmp_path):
    spec = rubric_srv.spec
    a = _run(tmp_path, cache_path, "python:helpers:good_answer", [spec("good-j"), spec("other-j")])
    b = _run(tmp_path, cache_path, "python:helpers:plain_answer", [spec("good-j"), spec("other-j")])
    c = _run(tmp_path, cache_path, "python:helpers:plain_answer", [spec("cycler")], judge_repeats=2)
    human = tmp_path / "human.jsonl"
    # Humans: the first four answers of the good model are wrong, the rest right and complete.
    human.write_text("\n".join(json.dumps({"model": "python:helpers:good_answer", "sn": str(i), "Correct": int(i > 4),
                                           "Complete": int(i > 4), "score": 0.0 if i <= 4 else 1.0})
                               for i in range(1, 13)) + "\n")
    rep = judge_audit([a["out_dir"], b["out_dir"], c["out_dir"]], str(human))["judges"]
    good = rep[spec("good-j")]
    # good-j scores its own family ("good") 1.0 where other-j gives 4/6; on "plain" answers both give 4/6.
    assert good["self_bias"] == pytest.approx(1 - 4 / 6)
    assert rep[spec("other-j")]["self_bias"] is None  # no candidate of its family
    # good-j says Correct 1 everywhere; humans say 0 for four: a single judge category -> kappa 0.
    assert good["human_kappa"]["Correct"] == {"n": 12, "kappa": pytest.approx(0.0)}
    # Binned 3C3H: judge always bin 2; humans bin 0 for 4 items and bin 2 for 8: kappa 0 again.
    assert good["human_kappa"]["3c3h_binned"]["n"] == 12
    # The cycler alternates 1.0 and 4/6 on each answer: population std (1 - 4/6) / 2 on single answers.
    assert rep[spec("cycler")]["consistency_std"] == pytest.approx((1 - 4 / 6) / 2)
    assert good["parse_failure_rate"] == 0.0 and good["zeroing_break_rate"] == 0.0
