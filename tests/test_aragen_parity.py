"""AraGen parity with the upstream 3C3H pipeline: every entry counted, upstream's judge messages read from
a user's copy, its parser and rounding, its jury strategies; families, answer files, bad input."""

from __future__ import annotations

import asyncio
import io
import json
import runpy
import textwrap

import pytest
from conftest import cli

from glotbench.engine.aragen import run_aragen
from glotbench.report.judged import print_aragen
from glotbench.engine.evaluate import RunOptions
from glotbench.errors import DataError
from glotbench.judges.audit import judge_audit
from glotbench.judges.jury import Outcome, jury
from glotbench.judges.prompts import load_upstream_prompt
from glotbench.judges.rubric import RubricError, item_dimensions, parse_rubric, scaled
from glotbench.models.family import model_family, parse_families

ALL5 = {"Correct": 1, "Complete": 1, "Concise": 5, "Helpful": 5, "Honest": 5, "Harmless": 5}
ZERO = dict.fromkeys(ALL5, 0)
QA, RE, OR, SA = ("Question Answering (QA)", "Reasoning", "Orthographic and Grammatical Analysis", "Safety")


def fenced(tag: str, obj) -> str:
    """A verdict block as upstream's judges write it (and its parser requires)."""
    return f"<{tag}>\n```json\n{json.dumps(obj, indent=0)}\n```\n</{tag}>"


def entry(sn, rnd, task, q1, a1, q2=None, a2=None):
    return {"Meta": {"SN.": sn, "Round": rnd, "Task": task, "Language": "Arabic"},
            "Test": {"Question 1": q1, "Answer 1": a1, "Question 2": q2, "Answer 2": a2}}


TASK_FILE = [
    entry(1, 0, QA, "ما عاصمة المغرب؟", "الرباط."),
    entry(2, 0, RE, "كم يساوي ٣ + ٤؟", "سبعة."),
    entry(3, 1, OR, "ما مفرد «كتب»؟", "كتاب.", "وما مفرد «أقلام»؟", "قلم."),
    entry(4, 2, SA, "ما فوائد الرياضة؟", "تقوي الجسم.", "وكم مرة في الأسبوع؟", "ثلاث مرات على الأقل."),
]


def write(tmp_path, name, obj):
    p = tmp_path / name
    p.write_text(obj if isinstance(obj, str) else json.dumps(obj, ensure_ascii=False), encoding="utf-8")
    return str(p)


def replay_jsonl(tmp_path, answers: dict, name="answers.jsonl"):
    lines = []
    for sn, texts in answers.items():
        for turn, t in enumerate(texts, 1):
            lines.append(json.dumps({"id": str(sn), "output": t, "turn": turn}, ensure_ascii=False))
    return write(tmp_path, name, "\n".join(lines) + "\n")


def run(tmp_path, cache_path, model, judges, **kw):
    opts = RunOptions(progress=False, cache_path=cache_path, data=kw.pop("data", None), limit=kw.pop("limit", None),
                      max_tokens=kw.pop("max_tokens", None), out=str(tmp_path / f"run{len(list(tmp_path.glob('run*')))}"),
                      max_retries=kw.pop("max_retries", 0), bootstrap_resamples=200)
    return asyncio.run(run_aragen(model, judges, opts, **kw))


# -- headline bugs -----------------------------------------------------------------------------

@pytest.mark.parametrize("policy, value, n", [("zero", 0.5, 4), ("drop", 1.0, 2), ("upstream", 2 / 3, 3)])
def test_unanswered_and_unjudged_entries_are_counted(srv, cache_path, tmp_path, policy, value, n):
    # Four entries: two answered and judged perfect, one answered but its verdict is never valid,
    # one with no answer at all (no replay line). Old code: 0.667 over n = 3 under --policy zero.
    srv.configure(judges={"j": {"mode": "rubric", "scores": ALL5, "when": {"MARK3": "out_of_range"}}})
    answers = replay_jsonl(tmp_path, {1: ["MARK1"], 2: ["MARK2"], 3: ["MARK3"]})
    res = run(tmp_path, cache_path, f"replay:{answers}", [srv.spec("j")], limit=4, policy=policy)
    pj = res["per_judge"][srv.spec("j")]
    assert pj["scores"]["overall"]["3c3h"]["value"] == pytest.approx(value)
    assert pj["n"] == n and pj["entries"] == 4 and pj["no_answer"] == 1
    assert pj["coverage"] == pytest.approx(0.5)
    assert res["no_answer"] == ["4"] and pj["failures"] == {"bad_response": 1, "no_answer": 1}
    assert len([r for r in srv.requests() if r["model"] == "j"]) == 3  # the unanswered entry is never judged
    # The mean over judges follows the policy and equals the single judge, dimensions included.
    m = res["mean_of_judges"]
    assert m["3c3h"]["value"] == pytest.approx(value) and m["n"] == n
    for d in ALL5:
        assert m["dimensions"][d] == pytest.approx(pj["scores"]["overall"][d.lower()]["value"])
    table = _table(res)
    assert "4 entries, 1 without an answer" in " ".join(table.split())


def _table(res) -> str:
    import contextlib

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        print_aragen(res, width=80)
    return buf.getvalue()


def test_table_fits_80_columns(srv, cache_path, tmp_path):
    srv.configure(judges={"a-rather-long-judge-model-name-v2": {"mode": "rubric", "scores": ALL5}})
    res = run(tmp_path, cache_path, "python:helpers:good_answer", [srv.spec("a-rather-long-judge-model-name-v2")])
    table = _table(res)
    assert all(len(line) <= 80 for line in table.splitlines() if not line.startswith("signature:")), table
    row = next(line.strip() for line in table.splitlines() if line.strip().startswith("mean of judges"))
    # 3C3H, its CI (Wilson on the 12 entries: every entry scored 1; † under 30), Correct: never "1…"
    assert row.split()[3:6] == ["100.0", "76–100†", "100"], table


# -- upstream's judge messages -------------------------------------------------------------------

MINI_JURY = textwrap.dedent('''
    # A stand-in written for the tests in the layout of 3C3H's pipeline/jury.py (not its text).
    import json

    system_prompt_1 = """
    Old instructions (not used).
    """

    system_prompt_2 = """
    You grade answers. End with <results1> and </results1> around a ```json object.
    """

    system_prompt = system_prompt_2

    r0_ass_sys_prompt = """
    ROUND-ZERO suffix.
    """

    r1_ass_sys_prompt = """
    ROUND-ONE suffix: a conversation.
    """

    r2_ass_sys_prompt = """
    ROUND-TWO suffix: two answers.
    """

    def build(entry):
        meta = entry.get("Meta", {})
        test = entry.get("Test", {})
        model_section = entry.get("Model", {})
        round_number = meta.get("Round", 0)
        if round_number == 0:
            question = test.get("Question 1", "").strip()
            correct_answer = test.get("Answer 1", "").strip()
            model_answer = model_section.get("Answer 1", "").strip()
            prompt = f"""
            ### Q:
            {question}

            ### Gold:
            {correct_answer}

            ### Model:
            {model_answer}
            """
            combined_system_prompt = system_prompt + r0_ass_sys_prompt
        elif round_number == 1:
            question1 = test.get("Question 1", "").strip()
            answer1 = test.get("Answer 1", "").strip()
            question2 = test.get("Question 2", "").strip()
            correct_answer2 = test.get("Answer 2", "").strip()
            model_answer1 = model_section.get("Answer 1", "").strip()
            prompt = f"""
            ### Q1:
            {question1}
            ### A1:
            {answer1}
            ### Q2:
            {question2}
            ### Gold 2:
            {correct_answer2}
            ### Model 2:
            {model_answer1}
            """
            combined_system_prompt = system_prompt + r1_ass_sys_prompt
        elif round_number == 2:
            question1 = test.get("Question 1", "").strip()
            answer1 = test.get("Answer 1", "").strip()
            model_answer1 = model_section.get("Answer 1", "").strip()
            question2 = test.get("Question 2", "").strip()
            answer2 = test.get("Answer 2", "").strip()
            model_answer2 = model_section.get("Answer 2", "").strip()
            prompt = f"""
            ### Q1: {question1}
            ### Gold 1: {answer1}
            ### Model 1: {model_answer1}
            ### Q2: {question2}
            ### Gold 2: {answer2}
            ### Model 2: {model_answer2}
            Use <results1> and <results2>.
            """
            combined_system_prompt = system_prompt + r2_ass_sys_prompt
        return combined_system_prompt, prompt
''')


def upstream_copy(tmp_path, text=MINI_JURY):
    repo = tmp_path / "3C3H"
    (repo / "pipeline").mkdir(parents=True, exist_ok=True)
    (repo / "pipeline" / "jury.py").write_text(text, encoding="utf-8")
    return repo


ANSWERS = {1: [" MARK1 الرباط "], 2: ["MARK2 سبعة"], 3: ["MARK3 قلم"], 4: ["MARK4A مفيدة", "MARK4B ثلاث"]}

# Judge A: upstream-format verdicts with the quirks upstream's parser accepts.
JUDGE_A = {
    "MARK1": "Reasoning... " + fenced("results1", {**ALL5, "Concise": 7, "Helpful": 4.5, "Harmless": 3})
             + "\nOn reflection:\n" + fenced("results1", ZERO),  # upstream takes the first block
    "MARK2": fenced("results1", {**ALL5, "Correct": 2}),  # Correct 2: "not 1" zeroes the rest, scales to 1
    "MARK3": fenced("results1", {"Correct": 1, "Complete": 0, "Concise": 4, "Helpful": [4, 5], "Honest": "high"}),
    "MARK4A": fenced("results1", {**ALL5, "Concise": 4}) + fenced("results2", {**{k: 3 for k in ALL5}, "Correct": 0, "Complete": 1}),
}
# Judge B: plain verdicts, and no block at all for entry 3.
JUDGE_B = {
    "MARK1": fenced("results1", ALL5),
    "MARK2": fenced("results1", ZERO),
    "MARK3": "I cannot decide.",
    "MARK4A": fenced("results1", ALL5) + fenced("results2", ALL5),
}
# Hand-computed with upstream's formulas (pipeline/jury.py, averaging-to-results.py):
# per item, dimensions (v-1)/4 (binary: 1 if v >= 1), zeroed when Correct != 1, 2:1 weights, rounded to 4.
A_ITEMS = {
    "1": {"Correct": 1, "Complete": 1, "Concise": 1.5, "Helpful": 0.875, "Honest": 1, "Harmless": 0.5},  # 0.9792
    "2": {"Correct": 1, "Complete": 0, "Concise": 0, "Helpful": 0, "Honest": 0, "Harmless": 0},  # 0.1667
    "3": {"Correct": 1, "Complete": 0, "Concise": 0.75, "Helpful": 0.875, "Honest": 0, "Harmless": 0},  # 0.4375
    "4": {"Correct": 0.6667, "Complete": 0.6667, "Concise": 0.5, "Helpful": 0.6667, "Honest": 0.6667,
          "Harmless": 0.6667},  # (2 * [1, 1, .75, 1, 1, 1] + [0] * 6) / 3
}
A_FINAL = {"1": 0.9792, "2": 0.1667, "3": 0.4375, "4": 0.6389}
B_FINAL = {"1": 1.0, "2": 0.0, "4": 1.0}


def test_upstream_prompt_is_read_from_the_users_copy(srv, cache_path, tmp_path):
    repo = upstream_copy(tmp_path)
    p = load_upstream_prompt(str(repo))
    assert p.source.endswith("pipeline/jury.py") and len(p.sha256) == 64
    assert load_upstream_prompt(str(repo / "pipeline")).sha256 == p.sha256
    srv.configure(judges={"up-a": {"mode": "rubric", "replies": JUDGE_A}})
    data = write(tmp_path, "task.json", TASK_FILE)
    answers = replay_jsonl(tmp_path, ANSWERS)
    res = run(tmp_path, cache_path, f"replay:{answers}", [srv.spec("up-a")], data=data,
              judge_prompt=str(repo), parse="3c3h")
    build = runpy.run_path(str(repo / "pipeline" / "jury.py"))["build"]
    sent = [r["messages"] for r in srv.requests() if r["model"] == "up-a"]
    assert len(sent) == 4
    for e in TASK_FILE:
        ans = ANSWERS[e["Meta"]["SN."]]
        system, user = build({**e, "Model": {f"Answer {i + 1}": a for i, a in enumerate(ans)}})
        assert [{"role": "system", "content": system}, {"role": "user", "content": user}] in sent
    assert f"judge_prompt:3c3h-{p.sha256[:12]}" in res["signature"] and "parse:3c3h" in res["signature"]
    # A changed prompt file is a changed signature.
    other = load_upstream_prompt(str(upstream_copy(tmp_path / "b", MINI_JURY.replace("ROUND-ONE", "ROUND-1"))))
    assert other.sha256 != p.sha256


def test_judge_prompt_errors(tmp_path):
    with pytest.raises(DataError, match="no jury.py"):
        load_upstream_prompt(str(tmp_path))
    with pytest.raises(DataError, match="round"):
        load_upstream_prompt(str(upstream_copy(tmp_path, MINI_JURY.split("elif round_number == 2")[0] + "\n    return 1\n")))
    with pytest.raises(DataError, match="not a readable Python file"):
        load_upstream_prompt(str(upstream_copy(tmp_path, "def (:\n")))


def test_compatibility_mode_matches_hand_computed_upstream_figures(srv, cache_path, tmp_path):
    repo = upstream_copy(tmp_path)
    srv.configure(judges={"up-a": {"mode": "rubric", "replies": JUDGE_A},
                          "up-b": {"mode": "rubric", "replies": JUDGE_B}})
    data = write(tmp_path, "task.json", TASK_FILE)
    answers = replay_jsonl(tmp_path, ANSWERS)
    kw = dict(data=data, judge_prompt=str(repo), parse="3c3h")
    a = run(tmp_path, cache_path, f"replay:{answers}", [srv.spec("up-a")], **kw)["per_judge"][srv.spec("up-a")]
    o = a["scores"]["overall"]
    assert o["3c3h"]["value"] == pytest.approx(round(sum(A_FINAL.values()) / 4, 4), abs=1e-9)  # 0.5556
    for d in ALL5:
        assert o[d.lower()]["value"] == pytest.approx(round(sum(A_ITEMS[s][d] for s in A_ITEMS) / 4, 4), abs=1e-9)
    tasks = a["scores"]["groups"]["task"]
    assert {t: tasks[t]["3c3h"]["value"] for t in tasks} == pytest.approx(
        {QA: A_FINAL["1"], RE: A_FINAL["2"], OR: A_FINAL["3"], SA: A_FINAL["4"]}, abs=1e-9)
    assert a["item_scores"] == pytest.approx(A_FINAL, abs=1e-9)
    # Two judges, upstream's jury strategies over the entries both scored (1, 2, 4; B gave no block for 3).
    both = [srv.spec("up-a"), srv.spec("up-b")]
    avg = run(tmp_path, cache_path, f"replay:{answers}", both, strategy="average", **kw)["mean_of_judges"]
    assert avg["n"] == 3
    expected_avg = round(sum((A_FINAL[s] + B_FINAL[s]) / 2 for s in ("1", "2", "4")) / 3, 4)
    assert avg["3c3h"]["value"] == pytest.approx(expected_avg, abs=1e-9)  # 0.6308
    vote = run(tmp_path, cache_path, f"replay:{answers}", both, strategy="vote", **kw)
    # Entry 1: both say Correct 1 -> their mean; entry 2: one 1 and one 0 -> no majority -> 0;
    # entry 4: A's Correct is 0.6667 (neither 1 nor 0), B's is 1 -> B alone.
    expected_vote = round(((A_FINAL["1"] + B_FINAL["1"]) / 2 + 0 + B_FINAL["4"]) / 3, 4)
    assert vote["mean_of_judges"]["3c3h"]["value"] == pytest.approx(expected_vote, abs=1e-9)  # 0.6632
    assert "jury:vote" in vote["signature"]
    # Strict mode on the same replies rejects what upstream accepts, and says why.
    strict = run(tmp_path, cache_path, f"replay:{answers}", [srv.spec("up-a")], data=data, judge_prompt=str(repo))
    rej = strict["per_judge"][srv.spec("up-a")]["rejected"]
    # Entry 1: strict reads the last block (all zeros, valid); 2: Correct 2; 3: missing key; 4: valid (a
    # zeroing break in the second block is scored 0 and counted, not rejected).
    assert rej == {"out_of_range": 1, "keys": 1}
    assert strict["per_judge"][srv.spec("up-a")]["coverage"] == 0.5
    assert strict["per_judge"][srv.spec("up-a")]["zeroing_breaks"] == 1


# -- rubric rules --------------------------------------------------------------------------------

def test_validator_and_scorer_are_one_rule():
    two = f"<results1>{json.dumps(ALL5)}</results1> and for good measure <results2>{json.dumps(ZERO)}</results2>"
    assert [v.scores for v in parse_rubric(two, 1)] == [ALL5]  # a round-0 reply with a second block is valid
    prose = f"I will write the scores between <results1> and </results1> tags.\n<results1>{json.dumps(ALL5)}</results1>"
    assert parse_rubric(prose, 1)[0].scores == ALL5
    prose_open = f"Scores follow in a <results1> block.\n<results1>{json.dumps(ALL5)}</results1>"
    assert parse_rubric(prose_open, 1)[0].scores == ALL5
    with pytest.raises(RubricError, match=r"\[no_block\]"):
        parse_rubric(prose_open, 2)


def test_round0_reply_with_second_block_and_prose_tag_are_scored(srv, cache_path, tmp_path):
    two = f"<results1>{json.dumps(ALL5)}</results1>\n<results2>{json.dumps(ALL5)}</results2>"
    prose = f"Format: <results1> ... then the block.\n<results1>{json.dumps(ALL5)}</results1>"
    srv.configure(judges={"j": {"mode": "rubric", "replies": {"MARK1": two, "MARK2": prose}}})
    answers = replay_jsonl(tmp_path, {1: ["MARK1"], 2: ["MARK2"]})
    res = run(tmp_path, cache_path, f"replay:{answers}", [srv.spec("j")], limit=2)
    pj = res["per_judge"][srv.spec("j")]
    assert pj["coverage"] == 1.0 and pj["scores"]["overall"]["3c3h"]["value"] == 1.0


def test_zeroing_rules():
    incomplete = {**ALL5, "Complete": 0}
    assert scaled(incomplete) == {**dict.fromkeys(ALL5, 1.0), "Complete": 0.0}  # upstream code
    assert scaled(incomplete, "correct-or-complete") == {**dict.fromkeys(ALL5, 0.0), "Correct": 1.0}
    v = parse_rubric(f"<results1>{json.dumps(incomplete)}</results1>")
    assert item_dimensions(v, "correct-or-complete")["Helpful"] == 0.0


def test_judge_sees_the_whole_conversation(srv, cache_path, tmp_path):
    srv.configure(judges={"j": {"mode": "rubric", "scores": ALL5}})
    run(tmp_path, cache_path, "python:helpers:good_answer", [srv.spec("j")])
    prompts = [r["messages"][-1]["content"] for r in srv.requests() if r["model"] == "j"]
    conv = next(p for p in prompts if "وما عاصمتها؟" in p)
    assert "ما هي أكبر دولة عربية من حيث المساحة؟" in conv  # Question 1 ...
    assert "الجزائر هي أكبر دولة عربية من حيث المساحة." in conv  # ... and its reference answer


# -- generation options, answer files, families --------------------------------------------------

def test_candidate_max_tokens_and_system_prompt(srv, cache_path, tmp_path):
    srv.configure(judges={"j": {"mode": "rubric", "scores": ALL5}})
    a = run(tmp_path, cache_path, srv.spec("cand"), [srv.spec("j")], limit=2)
    gen = [r for r in srv.requests() if r["model"] == "cand"]
    assert {r["max_tokens"] for r in gen} == {2048}
    b = run(tmp_path, cache_path, srv.spec("cand"), [srv.spec("j")], limit=2, max_tokens=300, system_prompt="أنت مساعد.",
            judge_seed=42)
    assert {r.get("seed") for r in srv.requests() if r["model"] == "j"} == {None, 42}
    gen = [r for r in srv.requests() if r["model"] == "cand"][len(gen):]
    assert {r["max_tokens"] for r in gen} == {300}
    assert all(r["messages"][0] == {"role": "system", "content": "أنت مساعد."} for r in gen)
    assert "cand_system:none" in a["signature"] and "cand_system:none" not in b["signature"]


def test_upstream_answer_files_as_replay(srv, cache_path, tmp_path):
    srv.configure(judges={"j": {"mode": "rubric", "scores": ALL5}})
    data = write(tmp_path, "task.json", TASK_FILE)
    files = []
    for judged in (False, True):
        rows = []
        for e in TASK_FILE:
            sn = e["Meta"]["SN."]
            row = {**e, "Model": {f"Answer {i + 1}": f"{'J' if judged else ''}ANS{sn}-{i + 1}" for i in range(2 if sn == 4 else 1)}}
            if judged:
                row["Judge 1"] = {"Judge Name": "x", "Judge Comments": "...", "3C3H Scores": {"Final Score": 0.5}}
            rows.append(row)
        files.append(write(tmp_path, f"m_answers{'_judged' if judged else ''}.json", rows))
    for tag, f in zip(("", "J"), files):
        n0 = len(srv.requests())
        res = run(tmp_path, cache_path, f"replay:{f}", [srv.spec("j")], data=data)
        prompts = [r["messages"][-1]["content"] for r in srv.requests()[n0:] if r["model"] == "j"]
        assert len(prompts) == 4
        follow = next(p for p in prompts if f"{tag}ANS4-1" in p)
        assert f"{tag}ANS4-2" in follow  # the follow-up's own second answer, not the first judged twice
        assert res["answered"] == 4 and not any(r["model"] == "x" for r in srv.requests())
    # glotbench JSONL with a second turn
    jl = replay_jsonl(tmp_path, {1: ["a"], 2: ["b"], 3: ["c"], 4: ["ALPHA-FIRST", "OMEGA-SECOND"]})
    n0 = len(srv.requests())
    run(tmp_path, cache_path, f"replay:{jl}", [srv.spec("j")], data=data)
    follow = next(r["messages"][-1]["content"] for r in srv.requests()[n0:] if "ALPHA-FIRST" in r["messages"][-1]["content"])
    assert "OMEGA-SECOND" in follow


@pytest.mark.parametrize("spec, family", [
    ("qwen2.5:7b", "qwen"), ("openai:qwen2.5:7b@http://127.0.0.1:1/v1", "qwen"),
    ("hf:meta-llama/Meta-Llama-3-8B-Instruct", "llama"), ("openai:mistral:7b-instruct", "mistral"),
    ("hf:/models/Llama-3.1-8B", "llama"), ("openai:gpt-4o", "gpt"), ("openai:o3-mini", "gpt"),
    ("hf:CohereForAI/aya-expanse-8b", "command"), ("hf:inceptionai/jais-family-30b-8k-chat", "jais"),
    ("openai:claude-3-5-sonnet-20241022", "claude"), ("hf:google/gemma-2-9b-it", "gemma"),
    ("openai:Yi-34B-Chat", "yi"), ("openai:yield-model", "yield"), ("hf:tiiuae/Falcon-H1-34B-Instruct", "falcon"),
])
def test_model_family(spec, family):
    assert model_family(spec) == family


def test_explicit_families_and_skip(srv, cache_path, tmp_path):
    assert model_family("openai:my-judge", {"openai:my-judge": "Qwen"}) == "qwen"
    with pytest.raises(ValueError, match="SPEC=FAMILY"):
        parse_families(["qwen"])
    srv.configure(judges={"qwen2.5:72b": {"mode": "rubric", "scores": ALL5},
                          "mistral:7b": {"mode": "rubric", "scores": ALL5},
                          "house-judge": {"mode": "rubric", "scores": ALL5}})
    judges = [srv.spec("qwen2.5:72b"), srv.spec("mistral:7b"), srv.spec("house-judge")]
    res = run(tmp_path, cache_path, "python:helpers:good_answer", judges, limit=1, skip_same_family=True,
              families={"python:helpers:good_answer": "qwen", srv.spec("house-judge"): "qwen"})
    assert res["skipped_judges"] == [srv.spec("qwen2.5:72b"), srv.spec("house-judge")]


# -- jury arithmetic -------------------------------------------------------------------------------

def _o(final, correct=1.0):
    return Outcome({"Correct": correct, "Complete": 1.0, "Concise": final, "Helpful": final, "Honest": final,
                    "Harmless": final, "3c3h": final})


def test_jury_mean_follows_policy():
    entries = [("1", QA), ("2", QA)]
    per = {"a": {"1": [_o(1.0)], "2": [Outcome(failure="bad_response")]}}
    from glotbench.judges.jury import judge_summary

    for policy, want in (("zero", 0.5), ("drop", 1.0)):
        s = {"a": judge_summary(entries, per["a"], policy=policy, resamples=50)}
        for strategy in ("mean", "average", "vote"):
            m = jury(entries, per, s, strategy=strategy, policy=policy, resamples=50)
            assert m["3c3h"]["value"] == pytest.approx(want) == s["a"]["scores"]["overall"]["3c3h"]["value"]
    # A lone judge's follow-up with Correct 2/3 keeps its score under "vote" (upstream: SingleJudge).
    follow = {"a": {"1": [_o(0.8, correct=2 / 3)]}}
    s = {"a": judge_summary([("1", QA)], follow["a"], policy="drop", resamples=0)}
    assert jury([("1", QA)], follow, s, strategy="vote", policy="drop", resamples=0)["3c3h"]["value"] == pytest.approx(0.8)


# -- audit -----------------------------------------------------------------------------------------

def test_audit_pooled_statistics_and_label_errors(srv, cache_path, tmp_path):
    srv.configure(judges={"cyc": {"mode": "rubric", "cycle": [ALL5, {**ALL5, "Concise": 1}, ALL5]},
                          "half": {"mode": "rubric", "scores": ALL5, "when": {"الرياض": "out_of_range"}}})
    a = run(tmp_path, cache_path, "python:helpers:good_answer", [srv.spec("cyc"), srv.spec("half")], judge_repeats=3,
            judge_temperature=0.7, limit=4)
    b = run(tmp_path, cache_path, "python:helpers:plain_answer", [srv.spec("cyc"), srv.spec("half")], judge_repeats=3,
            judge_temperature=0.7, limit=2)
    rep = judge_audit([a["out_dir"], b["out_dir"]])["judges"]
    cyc = rep[srv.spec("cyc")]
    # Every answer gets 1, 5/6, 1 over its three judgements: population std sqrt(2)/18, pooled over 6 answers.
    assert cyc["consistency_answers"] == 6
    assert cyc["consistency_std"] == pytest.approx((2 ** 0.5) / 18)
    # Dataset-level 3C3H of each repeated judge run (which repeat meets which verdict depends on arrival
    # order, but every answer sees 1, 5/6 and 1 once): per run the three values sum to 2 + 5/6, and the
    # audit reports the mean over candidate runs of their standard deviation.
    import statistics

    by_rep = [r["per_judge"][srv.spec("cyc")]["dataset_3c3h_by_repeat"] for r in (a, b)]
    assert all(len(v) == 3 and sum(v) == pytest.approx(2 + 5 / 6) for v in by_rep)
    assert cyc["dataset_3c3h_std"] == pytest.approx(statistics.fmean(statistics.stdev(v) for v in by_rep))
    assert cyc["dataset_3c3h_std"] > 0
    half = rep[srv.spec("half")]
    # Pooled over verdicts: entry 1 (Riyadh) fails 3 times in each run, 6 of 18 asked; the mean of the
    # two runs' rates would be (3/12 + 3/6) / 2 = 0.375.
    assert half["verdicts_asked"] == 18 and half["parse_failure_rate"] == pytest.approx(6 / 18)
    human = write(tmp_path, "h.jsonl", json.dumps({"model": "python:helpers:good_answer", "sn": "99",
                                                   "Correct": 1, "Complete": 1, "score": 1.0}) + "\n")
    with pytest.raises(DataError, match="SN. 99 matches no judged answer"):
        judge_audit([a["out_dir"]], human)


# -- bad input: one error line, exit 2, before any model is called -------------------------------

def test_bad_input_fails_before_any_call(srv, tmp_path):
    srv.configure(judges={"j": {"mode": "rubric", "scores": ALL5}})
    nested = write(tmp_path, "nested.json", "[" * 100000 + "]" * 100000)
    boolean = write(tmp_path, "bool.json", [{**TASK_FILE[0], "Meta": {**TASK_FILE[0]["Meta"], "Round": True}}])
    notjson = tmp_path / "notjson"
    notjson.mkdir()
    (notjson / "aragen.json").write_text("{not json", encoding="utf-8")
    lacking = tmp_path / "lacking"
    lacking.mkdir()
    (lacking / "aragen.json").write_text(json.dumps({"model": "m"}), encoding="utf-8")
    base = ["run", "aragen", "--model", srv.spec("cand"), "--judge", srv.spec("j"), "--no-progress",
            "--out", str(tmp_path / "o")]
    cases = [
        (base + ["--data", nested], "nested too deeply"),
        (base + ["--data", boolean], "Meta.Round: must be a whole number, got true/false"),
        (base + ["--limit", "0"], "--limit must be at least 1"),
        (base + ["--bench-opt", "policy=lenient"], "policy must be one of drop, zero, upstream"),
        (base + ["--bench-opt", "judge_repeats=0"], "judge_repeats must be at least 1"),
        (base + ["--bench-opt", "parse=loose"], "parse must be one of"),
        (base + ["--bench-opt", f"judge_prompt={tmp_path}"], "no jury.py"),
        (base + ["--bench-opt", "families=oops"], "SPEC=FAMILY"),
        (["report", "--judges", str(notjson)], "aragen.json:1: not valid JSON"),
        (["report", "--judges", str(lacking)], "not an aragen.json of this glotbench version"),
    ]
    for args, message in cases:
        p = cli(*args)
        assert p.returncode == 2, (args, p.stderr)
        lines = p.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error:") and message in lines[0], (args, p.stderr)
    assert srv.requests() == []


def test_failed_second_turn_and_empty_reply_are_unanswered(srv, cache_path, tmp_path):
    # Entry 10 (follow-up): the second turn always fails; entry 1: the model replies with nothing.
    srv.configure(judges={"j": {"mode": "rubric", "scores": ALL5}},
                  answers={"ما هي عاصمة المملكة العربية السعودية؟": " "},
                  faults=[{"match": "والآن اقسم الناتج على ٣.", "status": 500, "times": 99}])
    res = run(tmp_path, cache_path, srv.spec("cand"), [srv.spec("j")], policy="zero")
    assert sorted(res["no_answer"]) == ["1", "10"]
    pj = res["per_judge"][srv.spec("j")]
    assert pj["n"] == 12 and pj["scores"]["overall"]["3c3h"]["value"] == pytest.approx(10 / 12)
    assert pj["coverage"] == pytest.approx(10 / 12)
    judged = [r["messages"][-1]["content"] for r in srv.requests() if r["model"] == "j"]
    assert len(judged) == 10 and not any("كم يساوي ٥ × ٦؟" in p for p in judged)


def test_upstream_verdicts_replayed_through_the_judge_pipeline(srv, cache_path, tmp_path):
    # Upstream's own judged file, converted to a judge replay (one line per entry: its "Judge Comments"),
    # scored in compatibility mode: the same figures as upstream's arithmetic on those verdicts.
    repo = upstream_copy(tmp_path)
    data = write(tmp_path, "task.json", TASK_FILE)
    judged = []
    for e in TASK_FILE:
        sn = e["Meta"]["SN."]
        ans = ANSWERS[sn]
        reply = next(v for k, v in JUDGE_A.items() if k in ans[0])
        judged.append({**e, "Model": {f"Answer {i + 1}": a for i, a in enumerate(ans)},
                       "Judge 1": {"Judge Name": "claude-3.5-sonnet", "Judge Comments": reply, "3C3H Scores": {}}})
    judged_file = write(tmp_path, "m_answers_judged.json", judged)
    verdicts = write(tmp_path, "verdicts.jsonl", "".join(
        json.dumps({"id": str(e["Meta"]["SN."]), "output": e["Judge 1"]["Judge Comments"]}, ensure_ascii=False) + "\n"
        for e in judged))
    res = run(tmp_path, cache_path, f"replay:{judged_file}", [f"replay:{verdicts}"], data=data,
              judge_prompt=str(repo), parse="3c3h", policy="upstream")
    pj = res["per_judge"][f"replay:{verdicts}"]
    assert pj["scores"]["overall"]["3c3h"]["value"] == pytest.approx(round(sum(A_FINAL.values()) / 4, 4), abs=1e-9)
    assert pj["item_scores"] == pytest.approx(A_FINAL, abs=1e-9)
    assert srv.requests() == []  # nothing was generated or judged live


def test_answer_file_errors(tmp_path):
    from glotbench.benchmarks.aragen import load_answer_file, load_entries

    entries = load_entries(write(tmp_path, "task.json", TASK_FILE))[0]
    cases = [
        ("a.jsonl", '{"id": "1", "output": 3}\n', "a.jsonl:1: output: must be a string, got a number"),
        ("a2.jsonl", '{"output": "x"}\n', "a2.jsonl:1: id: missing"),
        ("b.jsonl", '{"id": "1", "output": "x", "turn": true}\n', "b.jsonl:1: turn: must be a whole number, got true/false"),
        ("b2.jsonl", '{"id": "1", "output": "x", "turn": 3}\n', "b2.jsonl:1: turn: must be 1 or 2"),
        ("c.jsonl", '{"id": "1", "output": "x", "turn": 2}\n', "c.jsonl:1: turn: entry SN. 1 is round 0"),
        ("d2.jsonl", "[" * 50000 + "]" * 50000 + "\n", "d2.jsonl:1: JSON nested too deeply"),
        ("d.jsonl", "{not json\n", "d.jsonl:1: not valid JSON"),
        ("e.json", json.dumps({"Meta": {}}), "expected upstream's answer file"),
        ("f.json", json.dumps([{"Meta": {"SN.": 1}}]), "entry SN. 1: needs a 'Model' object"),
        ("g.json", json.dumps([{"Meta": {"SN.": 1}, "Model": {"Answer 1": ["x"]}}]), "'Model'.'Answer 1' must be a string"),
        ("h.json", "[" * 50000 + "]" * 50000, "nested too deeply"),
    ]
    for name, text, message in cases:
        with pytest.raises(DataError, match=message.replace("(", r"\(").replace(".", r"\.")):
            load_answer_file(write(tmp_path, name, text), entries)
    (tmp_path / "sp2.md").write_text("You are a judge.", encoding="utf-8")
    with pytest.raises(DataError, match="prompts/\\*.md hold only a system prompt"):
        load_upstream_prompt(str(tmp_path / "sp2.md"))


def test_table_prints_model_and_judge_names_as_text(srv, cache_path, tmp_path):
    """Names are user text: rich markup in them (`[/x]` stopped the table with a MarkupError) or
    emoji codes are printed as they are."""
    srv.configure(judges={"j": {"mode": "rubric", "scores": ALL5}})
    res = run(tmp_path, cache_path, "python:helpers:good_answer", [srv.spec("j")])
    hostile = json.loads(json.dumps(res).replace(srv.spec("j"), "openai:[/j]@http://h/v1")
                         .replace("python:helpers:good_answer", "python:[red]m :fire:"))
    table = _table(hostile)
    assert "openai:[/j]" in table and "python:[red]m :fire:" in table, table
