"""SEA-MT-Bench (issue #34): two turns, pairwise against the data's baseline in both orders, SEA-HELM's
weighted win rate. A scripted candidate and scripted judges on the loopback server; the numbers by
hand, and by SEA-HELM's own formula run on the same verdicts (its lines copied below as the oracle)."""

from __future__ import annotations

import json
from collections import Counter
from enum import Enum
from pathlib import Path

import pytest
from conftest import cli
from judged_helpers import summary

FIXTURE = str(Path(__file__).parent / "fixtures" / "tasks" / "sea_mt_bench_th.jsonl")
QUESTIONS = {json.loads(x)["question_id"]: json.loads(x) for x in Path(FIXTURE).read_text(encoding="utf-8").splitlines()}

# The judge prompts' anchors of the candidate's (C) or the baseline's (B) answer in position A: turn 1
# shows one answer ("[The Start of Assistant A's Answer]\n..."), turn 2 the conversation ("### Assistant A:\n...").
T1, T2 = "[The Start of Assistant A's Answer]\n", "### Assistant A:\n"
# j1's verdict per (question, turn): (baseline-before game, baseline-after game). In baseline-before
# the candidate is B: "[[B]]" there is a win; in baseline-after it is A.
WIN, LOSE, TIE, BAD = "[[B]]", "[[A]]", "[[C]]", "Both answers are fine."
J1 = {
    (1, 1): (WIN, "[[A]]"),  # win, win: WIN 1
    (1, 2): (WIN, "Explanation. [[A]]"),  # WIN 1
    (2, 1): (TIE, "[[A]]"),  # a tie first: TIE 0.5, whatever the second
    (2, 2): (LOSE, "[[B]]"),  # LOSE 0
    (3, 1): (WIN, "[[A]]"),  # WIN 1
    (3, 2): (WIN, "[[B]]"),  # win then lose: TIE 0.5
    (4, 1): (BAD, BAD),  # ERROR twice: ERROR 0
    (4, 2): (WIN, BAD),  # win then error: they differ, TIE 0.5
    (5, 1): (LOSE, "[[B]]"),  # LOSE 0
    (5, 2): (WIN, "[[A]]"),  # WIN 1
    (6, 1): (WIN, "[[A]]"),  # WIN 1
    (6, 2): (WIN, "[[A]] or maybe [[B]]"),  # two labels in one reply: ERROR; win then error: TIE 0.5
}
# by hand: writing q1 [1, 1], q2 [.5, 0], q5 [0, 1] -> 3.5/6; math q3 [1, .5], q4 [0, .5] -> 2/4;
# reasoning q6 [1, .5] -> 1.5/2. Weighted: the mean of the three; pooled (SEA-HELM's win_rate): 7/12.
J1_WEIGHTED = (3.5 / 6 + 2 / 4 + 1.5 / 2) / 3
J1_TURN1 = (1.5 / 3 + 1 / 2 + 1 / 1) / 3
J1_TURN2 = (2 / 3 + 1 / 2 + 0.5 / 1) / 3


def _models() -> dict:
    """The scripted models: the candidates answer `C<question>-<turn>`; j1 gives the verdicts of `J1`
    (keyed by the answer in position A); j2 always says A: it loses every baseline-before game and wins
    every baseline-after one, so every turn is a tie (0.5): SEA-HELM's two orders cancel a position bias."""
    cand = {r["prompts"][t - 1]["text"]: f"C{q}-{t}" for q, r in QUESTIONS.items() for t in (1, 2)}
    j1 = {}
    for (q, t), (before, after) in J1.items():
        anchor = T1 if t == 1 else T2
        j1[f"{anchor}B{q}-{t}\n"], j1[f"{anchor}C{q}-{t}\n"] = before, after  # baseline in A: baseline-before
    return {"cand": cand, "cand2": cand, "j1": j1, "j2": {"Assistant A": "[[A]]"}}


def _script(srv, **more) -> None:
    srv.configure(model_answers={**_models(), **more})


def _run(srv, tmp_path, *extra, judges=("j1", "j2"), data=FIXTURE, out="out", model="cand"):
    args = ["run", "sea-mt-bench", "--model", srv.spec(model), "--bench-opt", "config=th", "--data", data,
            "--out", str(tmp_path / out), "--cache-path", str(tmp_path / "cache.sqlite"), "--no-progress", *extra]
    for j in judges:
        args += ["--judge", srv.spec(j)]
    return cli(*args)


# -- SEA-HELM's own formula: the oracle -----------------------------------------------------------
# Copied from aisingapore/SEA-HELM@6844e6c5cae439a413281df31271d388fcbad12f,
# src/metrics/llm_judges/pairwise_llm_judge_metric.py (PairwiseLLMJudgeMetric: parse_judgement,
# get_final_judgement, get_score, get_win_rate, get_judge_metrics), with ties allowed and the
# config's judgement_labels; pandas replaced by plain lists.

class JudgementOutcome(Enum):
    WIN = 1
    LOSE = 2
    TIE = 3
    ERROR = 4


LABELS = {"A_wins": "[[A]]", "B_wins": "[[B]]", "Tie": "[[C]]"}


def seahelm_parse_judgement(judgement, reverse):
    win = LABELS["A_wins"] in judgement
    lose = LABELS["B_wins"] in judgement
    tie = LABELS["Tie"] in judgement
    if (win + lose + tie) != 1:
        return JudgementOutcome.ERROR
    elif tie:
        return JudgementOutcome.TIE
    else:
        if reverse:
            if win:
                return JudgementOutcome.LOSE
            elif lose:
                return JudgementOutcome.WIN
        else:
            if win:
                return JudgementOutcome.WIN
            elif lose:
                return JudgementOutcome.LOSE


def seahelm_final_judgement(judgement_1, judgement_2):
    if judgement_1 == JudgementOutcome.TIE or judgement_1 != judgement_2:
        return JudgementOutcome.TIE
    else:
        return judgement_1


def seahelm_get_score(judgement):
    if judgement == JudgementOutcome.WIN:
        return 1
    elif judgement == JudgementOutcome.TIE:
        return 0.5
    else:
        return 0


def seahelm_win_rate(judgement_list):
    total_count = len(judgement_list)
    counts = Counter(judgement_list)
    return (counts[JudgementOutcome.WIN] + (counts[JudgementOutcome.TIE] * 0.5)) / total_count


def seahelm_judge_metrics(judgement_list, category_list):
    metric_dict = {"categories": {}}
    for category in set(category_list):
        subset_judgements = [j for js, c in zip(judgement_list, category_list) if c == category for j in js]
        metric_dict["categories"][category] = seahelm_win_rate(subset_judgements)
    metric_dict["win_rate"] = seahelm_win_rate([j for pair in judgement_list for j in pair])
    metric_dict["weighted_win_rate"] = sum(metric_dict["categories"].values()) / len(metric_dict["categories"]) * 100
    return metric_dict


def seahelm_from_judge_run(judge_dir: Path) -> dict:
    """SEA-HELM's metrics over a judge phase's recorded replies: its custom ids are our game ids."""
    replies = {}
    for line in (judge_dir / "samples.jsonl").read_text(encoding="utf-8").splitlines():
        s = json.loads(line)
        replies[s["id"]] = s["output"] or ""
    finals, cats = [], []
    for q, row in QUESTIONS.items():
        per_turn = []
        for t in (1, 2):
            # the dataloader's order within a turn: baseline-before, then baseline-after
            j = [seahelm_parse_judgement(replies[f"{q}_turn{t}_{o}"], o == "baseline-before")
                 for o in ("baseline-before", "baseline-after")]
            per_turn.append(seahelm_final_judgement(*j))
        finals.append(per_turn)
        cats.append(row["metadata"]["category"])
    return seahelm_judge_metrics(finals, cats)


# -- the tests -------------------------------------------------------------------------------------

@pytest.fixture
def scripted(srv):
    _script(srv)
    return srv


def test_weighted_win_rate_by_hand_and_by_seahelms_formula(scripted, tmp_path):
    p = _run(scripted, tmp_path, "--max-failure-rate", "0.5")
    assert p.returncode == 0, p.stderr
    res = summary(tmp_path / "out")
    j1, j2 = scripted.spec("j1"), scripted.spec("j2")
    s = res["scores"]
    assert s["judges"][j1]["value"] == pytest.approx(J1_WEIGHTED)
    assert s["judges"][j2]["value"] == pytest.approx(0.5)
    assert s["final"]["value"] == pytest.approx((J1_WEIGHTED + 0.5) / 2)
    assert s["win_rate"][j1] == pytest.approx(7 / 12)  # SEA-HELM's unweighted win_rate, reported beside
    assert s["category_win_rate"][j1] == pytest.approx({"writing": 3.5 / 6, "math": 0.5, "reasoning": 0.75})
    assert s["turns"]["1"]["value"] == pytest.approx((J1_TURN1 + 0.5) / 2)
    assert s["turns"]["2"]["value"] == pytest.approx((J1_TURN2 + 0.5) / 2)
    assert s["categories"]["math"]["value"] == pytest.approx((0.5 + 0.5) / 2)
    assert s["categories"]["reasoning"]["n"] == 1 and s["final"]["n"] == 6
    assert s["final"]["ci_low"] <= s["final"]["value"] <= s["final"]["ci_high"]
    assert res["outcomes"][j1] == {"win": 5, "tie": 4, "lose": 2, "error": 1}
    assert res["turn_outcomes"][j1]["4"] == ["error", "tie"]
    # SEA-HELM's own code on the replies the judge phase recorded gives the same number (x 100)
    (judge_dir,) = (tmp_path / "out").glob("judge-*j1*")
    oracle = seahelm_from_judge_run(judge_dir)
    assert oracle["weighted_win_rate"] == pytest.approx(100 * s["judges"][j1]["value"])
    assert oracle["win_rate"] == pytest.approx(s["win_rate"][j1])
    assert oracle["categories"] == pytest.approx(s["category_win_rate"][j1])
    # the terminal table: the judges by name, the mean, per turn and category
    assert "mean of judges" in p.stdout and "reasoning" in p.stdout and "turn 2" in p.stdout


def test_both_orders_and_the_second_turn_carries_the_first(scripted, tmp_path):
    assert _run(scripted, tmp_path, "--max-failure-rate", "0.5").returncode == 0
    reqs = scripted.requests()
    q1 = QUESTIONS[1]["prompts"]
    cand = [r for r in reqs if r["model"] == "cand"]
    assert len(cand) == 12  # 6 questions x 2 turns
    turn2 = next(r for r in cand if r["messages"][-1]["content"] == q1[1]["text"])
    assert turn2["messages"] == [{"role": "user", "content": q1[0]["text"]}, {"role": "assistant", "content": "C1-1"},
                                 {"role": "user", "content": q1[1]["text"]}]
    assert turn2["max_tokens"] == 1024  # SEA-HELM's max_tokens for mt-bench
    judge = [r for r in reqs if r["model"] == "j1"]
    assert len(judge) == 24  # 6 questions x 2 turns x 2 orders, no unreadable verdict asked again
    assert {r["temperature"] for r in judge} == {0.6} and {r["max_tokens"] for r in judge} == {2048}
    firsts = [r for r in judge if "C1-1" in r["messages"][1]["content"] and "[User Question]" in r["messages"][1]["content"]]
    assert len(firsts) == 2  # turn 1 of q1, both orders
    a_first = {r["messages"][1]["content"].index("C1-1") < r["messages"][1]["content"].index("B1-1") for r in firsts}
    assert a_first == {True, False}
    # a math turn 2 shows the references of both turns (categories_with_reference)
    math2 = next(r for r in judge if f"{T2}C3-2" in r["messages"][1]["content"])
    assert "<|The Start of Reference Answer|>" in math2["messages"][1]["content"]
    assert math2["messages"][0]["role"] == "system" and '"[[C]]" for a tie' in math2["messages"][0]["content"]


def test_an_unreadable_verdict_counts_against_max_failure_rate(scripted, tmp_path):
    # j1 gives 4 unreadable verdicts of 24 (17%): over the default 5%, the judge's phase and the run are invalid
    p = _run(scripted, tmp_path)
    assert p.returncode == 3, (p.returncode, p.stderr)
    assert "Traceback" not in p.stderr and p.stderr.strip().startswith("error:")
    res = summary(tmp_path / "out")
    assert res["validity"]["valid"] is False
    assert res["validity"]["phases"][f"judge {scripted.spec('j1')}"]["valid"] is False
    assert res["validity"]["phases"][f"judge {scripted.spec('j2')}"]["valid"] is True
    # the number is still SEA-HELM's (an error is 0 or makes a tie), shown invalid beside it
    assert res["scores"]["judges"][scripted.spec("j1")]["value"] == pytest.approx(J1_WEIGHTED)
    rep = cli("report", str(tmp_path / "out"))
    assert rep.returncode == 0 and "invalid" in rep.stdout.lower(), rep.stdout


def test_the_judge_is_never_a_model(scripted, tmp_path):
    assert _run(scripted, tmp_path, "--max-failure-rate", "0.5").returncode == 0
    assert _run(scripted, tmp_path, "--max-failure-rate", "0.5", out="out2", model="cand2").returncode == 0
    from glotbench.report.board import build_board

    b = build_board([str(tmp_path)], resamples=50)
    assert sorted(b["models"]) == sorted([scripted.spec("cand"), scripted.spec("cand2")])
    (col,) = b["columns"]
    assert col["headline"] == "weighted_win_rate" and col["benchmark"] == "sea-mt-bench · th"
    assert col["cells"][scripted.spec("cand")]["value"] == pytest.approx((J1_WEIGHTED + 0.5) / 2)
    assert set(col["groups"]) == {"turn", "category"}
    proc = cli("board", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    rows = [x for x in proc.stdout.splitlines() if x.startswith("| openai:")]
    assert len(rows) == 2 * 3 and not any(r.startswith(("| openai:j1", "| openai:j2")) for r in rows), proc.stdout
    db = f"sqlite:///{tmp_path / 'store.sqlite'}"
    p = cli("runs", "import", str(tmp_path), "--db", db)
    assert p.returncode == 0 and "2 runs indexed" in p.stdout, (p.stdout, p.stderr)
    ls = [json.loads(x) for x in cli("runs", "ls", "--db", db, "--json").stdout.splitlines() if x.strip()]
    assert sorted(r["model"] for r in ls) == sorted([scripted.spec("cand"), scripted.spec("cand2")])
    assert {r["benchmark"] for r in ls} == {"sea-mt-bench"}
    assert all(r["score"] == pytest.approx((J1_WEIGHTED + 0.5) / 2) for r in ls)


def test_a_baseline_model_answers_both_turns_and_is_never_a_judge(scripted, tmp_path):
    # a baseline model that answers what the data's baseline did
    _script(scripted, base={r["prompts"][t - 1]["text"]: f"B{q}-{t}" for q, r in QUESTIONS.items() for t in (1, 2)})
    p = _run(scripted, tmp_path, "--max-failure-rate", "0.5", "--bench-opt", f"baseline={scripted.spec('base')}",
             judges=("j1", "j2", "base"))
    assert p.returncode == 0, p.stderr
    res = summary(tmp_path / "out")
    # the baseline model gave the data's answers: the same number as against the data
    assert res["scores"]["judges"][scripted.spec("j1")]["value"] == pytest.approx(J1_WEIGHTED)
    assert res["baseline"] == scripted.spec("base") and res["skipped_judges"] == [scripted.spec("base")]
    assert scripted.spec("base") not in res["scores"]["judges"]
    reqs = [r for r in scripted.requests() if r["model"] == "base"]
    assert len(reqs) == 12  # its two turns, never a judge's games
    q3 = QUESTIONS[3]["prompts"]
    turn2 = next(r for r in reqs if r["messages"][-1]["content"] == q3[1]["text"])
    assert turn2["messages"][1] == {"role": "assistant", "content": "B3-1"}
    assert {p.name for p in (tmp_path / "out").iterdir() if p.is_dir()} >= {"baseline-turn1", "baseline-turn2"}


@pytest.mark.parametrize("policy,writing", [("loss", 1.5 / 6), ("drop", 1.5 / 4)])
def test_a_turn_the_candidate_did_not_answer(scripted, tmp_path, policy, writing):
    # q1's turn 1 fails (a 400, not retried): its turn 2 is not asked; both turns lose (loss) or leave (drop)
    q1 = QUESTIONS[1]["prompts"][0]["text"]
    scripted._post("/_control", {"faults": [{"match": q1, "status": 400, "times": 100, "model": "cand"}]})
    p = _run(scripted, tmp_path, "--max-failure-rate", "0.5", "--bench-opt", f"unanswered={policy}", judges=("j1",))
    assert p.returncode == 0, p.stderr
    res = summary(tmp_path / "out")
    assert res["scores"]["final"]["value"] == pytest.approx((writing + 0.5 + 0.75) / 3)
    assert res["unanswered"]["turns"] == ["1_turn1", "1_turn2"]
    assert res["unanswered"]["dropped"] == ([] if policy == "loss" else ["1_turn1", "1_turn2"])
    asked = [r for r in scripted.requests() if r["model"] == "cand"]
    assert not any(r["messages"][-1]["content"] == QUESTIONS[1]["prompts"][1]["text"] for r in asked)
    judged = [r for r in scripted.requests() if r["model"] == "j1"]
    assert len(judged) == 20 and not any("C1-" in r["messages"][1]["content"] for r in judged)
    assert f"turns not answered: 2: {'scored as losses' if policy == 'loss' else 'left out'}" in p.stdout


def test_the_bundled_sample_says_so_and_other_languages_need_data(scripted, tmp_path):
    p = cli("run", "sea-mt-bench", "--model", scripted.spec("cand"), "--judge", scripted.spec("j2"), "--limit", "2",
            "--out", str(tmp_path / "s"), "--cache-path", str(tmp_path / "c.sqlite"), "--no-progress")
    assert p.returncode == 0, p.stderr
    assert "sample data (4 items written for glotbench, not the published benchmark)" in p.stdout
    assert summary(tmp_path / "s")["data_label"]["sample"] is True
    p = cli("run", "sea-mt-bench", "--model", scripted.spec("cand"), "--judge", scripted.spec("j2"),
            "--bench-opt", "config=lo", "--out", str(tmp_path / "lo"), "--no-progress")
    assert p.returncode == 2 and p.stderr.strip().splitlines()[-1].startswith("error: sea-mt-bench: give the rows with --data FILE")
    assert not (tmp_path / "lo").exists()


@pytest.mark.parametrize("row,message", [
    ({"question_id": 1, "prompts": [{"text": "a"}], "metadata": {"category": "x"}}, "prompts: expected 2 objects"),
    ({"question_id": 1, "prompts": [{"text": "a"}, {"text": "b"}], "metadata": {"category": "math"},
      "baselines": {"gpt-4.1-2025-04-14": ["x", "y"]}}, "references: expected a list of 2"),
    ({"question_id": "1_2", "prompts": [{"text": "a"}, {"text": "b"}], "metadata": {"category": "x"}}, "holds '_'"),
    ({"question_id": 1, "prompts": [{"text": "a"}, {"text": "b"}], "metadata": {"category": "x"},
      "baselines": {"gpt-4.1-2025-04-14": ["x", 3]}}, "baselines.gpt-4.1-2025-04-14[1]: expected a string"),
])
def test_a_malformed_row_is_one_error_line(scripted, tmp_path, row, message):
    f = tmp_path / "rows.jsonl"
    f.write_text(json.dumps(row) + "\n", encoding="utf-8")
    p = _run(scripted, tmp_path, data=str(f))
    last = p.stderr.strip().splitlines()[-1]
    assert p.returncode == 2 and last.startswith(f"error: {f}:1: ") and message in last, p.stderr
    assert "Traceback" not in p.stderr and not scripted.requests()


def test_prompts_labels_and_settings_are_seahelms():
    """judges/mt_bench.py against SEA-HELM's config.yaml (a copy in tests/fixtures/seahelm), word for word."""
    import yaml

    from glotbench.benchmarks.sea_mt_bench import LANGUAGES
    from glotbench.judges import mt_bench as m

    cfg = yaml.safe_load((Path(__file__).parent / "fixtures" / "seahelm" / "mt_bench_config.yaml")
                         .read_text(encoding="utf-8"))["mt-bench"]
    for kind, turns in cfg["judge"]["judge_prompts"].items():
        assert [(t["system_prompt"], t["prompt_template"]) for t in turns] == list(m.JUDGE_PROMPTS[kind])
    assert cfg["judgement_labels"] == m.LABELS and cfg["ties_allowed"] is True
    assert cfg["judge"]["judge_generation_kwargs"] == {"temperature": m.JUDGE_TEMPERATURE, "max_tokens": m.JUDGE_MAX_TOKENS}
    assert cfg["baseline_model"] == m.BASELINE_MODEL
    assert tuple(cfg["categories_with_reference"]) == m.CATEGORIES_WITH_REFERENCE
    assert sorted(cfg["languages"]) == sorted(LANGUAGES)
    assert {v["max_tokens"] for v in cfg["languages"].values()} == {m.ANSWER_MAX_TOKENS}
    assert {v["prompt_template"]["task_template"] for v in cfg["languages"].values()} == {"{text}"}


@pytest.mark.parametrize("reply,reverse,outcome", [
    ("[[A]]", False, "WIN"), ("[[A]]", True, "LOSE"), ("[[B]]", False, "LOSE"), ("[[B]]", True, "WIN"),
    ("[[C]]", True, "TIE"), ("[[A]] ... [[A]]", False, "WIN"), ("[[A]] [[C]]", False, "ERROR"),
    ("", False, "ERROR"), ("[A]", False, "ERROR"), ("[[a]]", False, "ERROR"),
])
def test_a_verdict_reads_as_seahelm_reads_it(reply, reverse, outcome):
    from glotbench.judges.mt_bench import parse_judgement

    assert parse_judgement(reply, reverse).name == outcome == seahelm_parse_judgement(reply, reverse).name


def test_two_orders_become_one_outcome_as_in_seahelm():
    from itertools import product

    from glotbench.judges.mt_bench import Outcome, final_judgement

    for a, b in product(Outcome, Outcome):  # every pair, errors included
        assert final_judgement(a, b).name == seahelm_final_judgement(JudgementOutcome[a.name], JudgementOutcome[b.name]).name


def test_a_sweep_and_a_language_suite_run_it_with_the_datas_baseline(scripted, tmp_path):
    import yaml

    body = {"out": str(tmp_path / "sweep"), "models": [{"spec": scripted.spec("cand")}], "judges": [scripted.spec("j1")],
            "max_failure_rate": 0.5,
            "benchmarks": [{"name": "sea-mt-bench", "data": FIXTURE, "options": {"config": "th"}}]}
    (tmp_path / "sweep.yaml").write_text(yaml.safe_dump(body), encoding="utf-8")
    r = cli("sweep", str(tmp_path / "sweep.yaml"), "--no-progress", env={"GLOTBENCH_CACHE_DIR": str(tmp_path / "c")})
    assert r.returncode == 0, r.stdout + r.stderr
    (top,) = [p.parent for p in (tmp_path / "sweep").rglob("results.json") if "judged" in json.loads(p.read_text("utf-8"))]
    assert summary(top)["scores"]["final"]["value"] == pytest.approx(J1_WEIGHTED)
    # the Thai suite runs it from --data DIR/sea-mt-bench.jsonl (its datasheet: th runs only with --data)
    data = tmp_path / "suite-data"
    data.mkdir()
    (data / "sea-mt-bench.jsonl").write_bytes(Path(FIXTURE).read_bytes())
    from glotbench.engine.sweep import language_suite

    suite = language_suite("th", str(data), judges=(scripted.spec("j1"),))
    assert [(e.label, e.options) for e in suite.benchmarks] == [("sea-mt-bench-th", {"config": "th"})]


def test_a_dry_run_says_what_it_leaves_out(scripted, tmp_path):
    p = _run(scripted, tmp_path, "--dry-run")
    assert p.returncode == 0, p.stderr
    assert "6 requests" in p.stdout and "at most 6,144 (max_tokens)" in p.stdout  # turn 1, 1,024 tokens each
    assert "not counted: the second turn of every question" in p.stdout and "not counted: the judges'" in p.stdout
    assert not scripted.requests() and not (tmp_path / "out").exists()


def test_seahelms_judgements_replayed_by_their_custom_ids(scripted, tmp_path):
    """SEA-HELM's judge responses carry custom ids `QID_turnN_ORDER`, the games' ids here: a file of
    them (id, output) is a replay judge, re-scored by SEA-HELM's rule with no judge call."""
    verdicts = tmp_path / "judgements.jsonl"
    with verdicts.open("w", encoding="utf-8") as f:
        for (q, t), (before, after) in J1.items():
            f.write(json.dumps({"id": f"{q}_turn{t}_baseline-before", "output": before}) + "\n")
            f.write(json.dumps({"id": f"{q}_turn{t}_baseline-after", "output": after}) + "\n")
    p = cli("run", "sea-mt-bench", "--model", scripted.spec("cand"), "--judge", f"replay:{verdicts}", "--data", FIXTURE,
            "--max-failure-rate", "0.5", "--out", str(tmp_path / "out"), "--cache-path", str(tmp_path / "c.sqlite"),
            "--no-progress")
    assert p.returncode == 0, p.stderr
    res = summary(tmp_path / "out")
    assert res["scores"]["final"]["value"] == pytest.approx(J1_WEIGHTED)
    assert not [r for r in scripted.requests() if r["model"] != "cand"]
