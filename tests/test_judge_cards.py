"""Judge validity cards per judge and language: agreement with people (Cohen's kappa against
scikit-learn, Krippendorff's alpha against the krippendorff package, both with bootstrap CIs), position
consistency, self-family preference, length bias and parse failures, written by judge-audit and
arena-report; a judged score without a passing card is marked "judge not validated for LANG" in
the results, the table, the report and the board."""

from __future__ import annotations

import asyncio
import json

import numpy as np
import pytest

from conftest import cli
from judged_helpers import summary
from glotbench.engine.aragen import run_aragen
from glotbench.engine.arena import run_arena
from glotbench.engine.evaluate import RunOptions
from glotbench.errors import DataError, GlotbenchError
from glotbench.judges.cards import JudgeCard, read_cards, validation, validation_text
from glotbench.stats.agreement import two_raters


def test_two_raters_against_sklearn_and_krippendorff():
    import krippendorff
    from sklearn.metrics import cohen_kappa_score

    people = ["candidate", "baseline", "tie", "candidate", "candidate", "baseline", "tie", "candidate", "baseline", "tie"]
    judge = ["candidate", "baseline", "candidate", "candidate", "tie", "baseline", "tie", "candidate", "candidate", "tie"]
    r = two_raters(people, judge, resamples=300)
    assert r["cohens_kappa"]["value"] == pytest.approx(cohen_kappa_score(people, judge))
    codes = {c: i for i, c in enumerate(sorted(set(people) | set(judge)))}
    ref = krippendorff.alpha(reliability_data=[[codes[x] for x in people], [codes[x] for x in judge]],
                             level_of_measurement="nominal")
    assert r["krippendorff_alpha"]["value"] == pytest.approx(ref)
    assert r["raw_agreement"] == pytest.approx(0.7) and r["n"] == 10
    for k in ("cohens_kappa", "krippendorff_alpha"):
        assert r[k]["ci_low"] <= r[k]["value"] <= r[k]["ci_high"]
    # one category only: kappa undefined, never 0 or 1
    assert two_raters(["a", "a"], ["a", "a"], resamples=10)["cohens_kappa"]["value"] is None


def test_validation_rule_and_text(tmp_path):
    def card(judge, lang, kappa, labels):
        est = {"value": kappa, "ci_low": None, "ci_high": None, "n": labels}
        return JudgeCard.model_validate({
            "judge": judge, "language": lang, "family": None, "source": "arena", "runs": [], "labels": labels,
            "agreement": {"on": "winner", "cohens_kappa": est, "krippendorff_alpha": est, "raw_agreement": None},
            "position_consistency": None, "position_consistency_prompts": 0, "self_family_preference": None,
            "self_family_items": {}, "length_bias": {"on": "x", "spearman": None, "p_value": None, "n": 0},
            "parse_failure_rate": None, "verdicts_asked": 0, "made": "now"})

    from glotbench.judges.cards import write_cards

    write_cards([card("openai:good", "lo", 0.72, 40), card("openai:weak", "lo", 0.41, 40),
                 card("openai:few", "lo", 0.9, 12), card("openai:good", "km", 0.1, 50)], tmp_path / "cards")
    v = validation(["openai:good@http://127.0.0.1:9/v1", "openai:weak", "openai:few", "openai:none"], "lo",
                   str(tmp_path / "cards"))
    ok = {j.split("@")[0]: x["validated"] for j, x in v["judges"].items()}
    assert ok == {"openai:good": True, "openai:weak": False, "openai:few": False, "openai:none": False}
    text = validation_text({"judge_validation": v})
    assert text == ("judge not validated for lo: openai:weak (kappa 0.41 below 0.6); openai:few (12 labelled answers, "
                    "30 needed); openai:none (no card for lo)")
    assert validation(["openai:good"], "km", str(tmp_path / "cards"))["judges"]["openai:good"]["validated"] is False
    assert validation_text({"judge_validation": validation(["openai:good"], "lo", str(tmp_path / "cards"))}) is None
    # a malformed card is one FILE:LINE error; a missing directory is named
    (tmp_path / "cards" / "bad.json").write_text('{"judge": 3}\n', encoding="utf-8")
    with pytest.raises(DataError, match=r"bad\.json:1"):
        read_cards(tmp_path / "cards")
    with pytest.raises(GlotbenchError, match="is not a directory"):
        validation(["openai:good"], "lo", str(tmp_path / "nowhere"))


def test_a_card_out_of_range_is_refused_and_a_validated_reason_names_kappas_interval(tmp_path):
    """A hand-edited card claiming kappa 1.4 (or a CI out of order, a share above 1, a negative
    count) validated its judge; it is a FILE error now. A validated judge's reason names kappa's CI."""
    from glotbench.judges.cards import write_cards

    good = {"value": 0.72, "ci_low": 0.55, "ci_high": 0.86, "n": 40}
    base = {"judge": "openai:j", "language": "lo", "family": None, "source": "arena", "runs": [], "labels": 40,
            "agreement": {"on": "winner", "cohens_kappa": good, "krippendorff_alpha": good, "raw_agreement": 0.8},
            "position_consistency": 0.9, "position_consistency_prompts": 40, "self_family_preference": None,
            "self_family_items": {}, "length_bias": {"on": "x", "spearman": None, "p_value": None, "n": 40},
            "parse_failure_rate": 0.0, "verdicts_asked": 80, "made": "now"}
    card = JudgeCard.model_validate(base)
    assert card.validated() == (True, "kappa 0.72 (95% CI 0.55–0.86) on 40 labels")
    (tmp_path / "cards").mkdir()
    bad = [{"agreement": {**base["agreement"], "cohens_kappa": {**good, "value": 1.4, "ci_high": 1.5}}},
           {"agreement": {**base["agreement"], "cohens_kappa": {**good, "ci_low": 0.9}}},
           {"agreement": {**base["agreement"], "raw_agreement": 1.2}},
           {"parse_failure_rate": -0.1}, {"labels": -5}, {"verdicts_asked": -1}]
    for i, change in enumerate(bad):
        f = tmp_path / "cards" / "j.lo.json"
        f.write_text(json.dumps({**base, **change}) + "\n", encoding="utf-8")
        with pytest.raises(DataError, match=r"j\.lo\.json"):
            read_cards(tmp_path / "cards")
    f.unlink()
    write_cards([card], tmp_path / "cards")  # what glotbench writes reads back
    assert read_cards(tmp_path / "cards")[("openai:j", "lo")][1] == card


# -- arenas: 32 Lao prompts, a candidate that is better on some of them ---------------------------------
MIXED, PLAIN = "python:helpers:mixed_answer", "python:helpers:plain_answer"


@pytest.fixture(scope="module")
def labelled(server, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cards")
    data = tmp / "prompts.jsonl"
    data.write_text("".join(json.dumps({"id": f"p{i:02d}", "prompt": "ຄຳຖາມ " + "ກ" * i}, ensure_ascii=False) + "\n"
                            for i in range(32)), encoding="utf-8")
    server.configure(judges={"fair": {"mode": "prefer", "prefer": "GOOD"}, "biased": {"mode": "always_A"}})
    opts = RunOptions(progress=False, cache_path=str(tmp / "calls.sqlite"), out=str(tmp / "arena"), data=str(data))
    res = asyncio.run(run_arena(MIXED, PLAIN, [server.spec("fair"), server.spec("biased")], opts)).results
    fair = res["per_prompt"][server.spec("fair")]
    # People agree with the fair judge except on two prompts.
    winner = {p: "candidate" if v > 0.5 else "baseline" if v < 0.5 else "tie" for p, v in fair.items()}
    flip = sorted(winner)[:2]
    for p in flip:
        winner[p] = "baseline"
    human = tmp / "human.jsonl"
    human.write_text("".join(json.dumps({"candidate": MIXED, "prompt_id": p, "winner": w}) + "\n"
                             for p, w in winner.items()), encoding="utf-8")
    return tmp, res, winner, data


def test_arena_cards_measure_the_judges(labelled, server):
    from sklearn.metrics import cohen_kappa_score

    tmp, res, winner, _ = labelled
    r = cli("report", "--judges", str(tmp / "arena"), "--human", str(tmp / "human.jsonl"), "--write-cards", str(tmp / "cards"))
    assert r.returncode == 0, r.stderr
    assert len(json.loads(r.stdout)["cards"]) == 2
    cards = read_cards(tmp / "cards")
    fair = cards[("openai:fair", "lo")][1]
    fair_vals = res["per_prompt"][server.spec("fair")]
    judge_says = {p: "candidate" if v > 0.5 else "baseline" if v < 0.5 else "tie" for p, v in fair_vals.items()}
    ids = sorted(winner)
    assert fair.labels == 32 and fair.source == "arena" and fair.language == "lo"
    assert fair.agreement.cohens_kappa.value == pytest.approx(
        cohen_kappa_score([winner[p] for p in ids], [judge_says[p] for p in ids]))
    assert fair.agreement.raw_agreement == pytest.approx(30 / 32)
    assert fair.position_consistency == 1.0 and fair.position_consistency_prompts == 32
    assert fair.parse_failure_rate == 0.0 and fair.verdicts_asked == 64
    # the length bias: Spearman of the score with the relative length difference, from the answers
    assert fair.length_bias.n == 32 and fair.length_bias.spearman is not None
    biased = cards[("openai:biased", "lo")][1]
    assert biased.position_consistency == 0.0  # A in both orders: never the same winner
    # it calls every prompt a tie: its agreement is no better than chance (kappa 0), alpha below 0
    assert biased.agreement.cohens_kappa.value == pytest.approx(0.0) and biased.agreement.krippendorff_alpha.value < 0
    k = fair.agreement.cohens_kappa
    assert fair.validated() == (True, f"kappa {k.value:.2f} (95% CI {k.ci_low:.2f}–{k.ci_high:.2f}) on 32 labels")


def test_arena_marks_judges_without_a_passing_card(labelled, server):
    tmp, _, _, data = labelled
    if not (tmp / "cards").is_dir():
        cli("report", "--judges", str(tmp / "arena"), "--human", str(tmp / "human.jsonl"), "--write-cards", str(tmp / "cards"))
    out = tmp / "arena2"
    r = cli("run", "laobench-arena", "--model", MIXED, "--bench-opt", f"baseline={PLAIN}", "--judge", server.spec("fair"), "--judge", server.spec("biased"),
            "--data", str(data), "--out", str(out), "--cache-path", str(tmp / "calls.sqlite"), "--no-progress",
            "--judge-cards", str(tmp / "cards"))
    assert r.returncode == 0, r.stderr
    a = summary(out)
    v = a["judge_validation"]
    assert v["language"] == "lo" and v["judges"][server.spec("fair")]["validated"] is True
    assert v["judges"][server.spec("biased")]["validated"] is False
    line = "judge not validated for lo: openai:biased (kappa 0.00 below 0.6)"
    assert line in " ".join(r.stdout.split())  # the table's notes
    rep = cli("report", str(out), "--html")
    assert rep.returncode == 0, rep.stderr
    assert "judge not validated for lo: openai:biased" in (out / "report.html").read_text(encoding="utf-8")
    board = cli("board", str(out), "--resamples", "20")
    assert board.returncode == 0, board.stderr
    assert "judge not validated for lo: openai:biased" in board.stdout
    # without cards (and no $GLOTBENCH_JUDGE_CARDS) every judge is marked
    r = cli("run", "laobench-arena", "--model", MIXED, "--bench-opt", f"baseline={PLAIN}", "--judge", server.spec("fair"), "--data", str(data),
            "--out", str(tmp / "arena3"), "--cache-path", str(tmp / "calls.sqlite"), "--no-progress",
            env={"GLOTBENCH_JUDGE_CARDS": ""})
    assert r.returncode == 0, r.stderr
    assert "judge not validated for lo: openai:fair (no card for lo" in " ".join(r.stdout.split())
    # the cards directory from the environment
    r = cli("run", "laobench-arena", "--model", MIXED, "--bench-opt", f"baseline={PLAIN}", "--judge", server.spec("fair"), "--data", str(data),
            "--out", str(tmp / "arena4"), "--cache-path", str(tmp / "calls.sqlite"), "--no-progress",
            env={"GLOTBENCH_JUDGE_CARDS": str(tmp / "cards")})
    assert r.returncode == 0, r.stderr
    assert "not validated" not in r.stdout
    bad = cli("run", "laobench-arena", "--model", MIXED, "--bench-opt", f"baseline={PLAIN}", "--judge", server.spec("fair"), "--data", str(data),
              "--out", str(tmp / "arena5"), "--no-progress", "--judge-cards", str(tmp / "nowhere"))
    assert bad.returncode == 2 and "is not a directory" in bad.stderr and not (tmp / "arena5").exists()


ALL5 = {"Correct": 1, "Complete": 1, "Concise": 5, "Helpful": 5, "Honest": 5, "Harmless": 5}
WRONG = {"Correct": 0, "Complete": 1, "Concise": 3, "Helpful": 3, "Honest": 3, "Harmless": 3}


def test_aragen_cards_from_judge_audit(srv, tmp_path):
    import krippendorff
    from scipy.stats import spearmanr
    from sklearn.metrics import cohen_kappa_score

    from glotbench.judges.audit import judge_audit

    srv.configure(judges={"good-j": {"mode": "rubric", "scores": WRONG, "when": {"GOOD:": ALL5}},
                          "other-j": {"mode": "rubric", "scores": WRONG}})
    judges = [srv.spec("good-j"), srv.spec("other-j")]
    dirs = []
    for n, model in enumerate(("python:helpers:good_answer", "python:helpers:plain_answer")):
        opts = RunOptions(progress=False, cache_path=str(tmp_path / "c.sqlite"), out=str(tmp_path / f"g{n}"), max_retries=1)
        dirs.append(asyncio.run(run_aragen(model, judges, opts))["out_dir"])
    human = tmp_path / "human.jsonl"
    rows = [{"model": m, "sn": str(i), "Correct": int(i % 3 != 0), "Complete": 1, "score": 1.0}
            for m in ("python:helpers:good_answer", "python:helpers:plain_answer") for i in range(1, 13)]
    human.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    r = cli("report", *dirs, "--human", str(human), "--write-cards", str(tmp_path / "cards"))
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    cards = read_cards(tmp_path / "cards")
    good = cards[("openai:good-j", "ar")][1]
    audit = judge_audit(dirs, str(human))["judges"][srv.spec("good-j")]
    assert out["judges"][srv.spec("good-j")]["self_bias"] == audit["self_bias"] == good.self_family_preference
    # the judge's first verdict: Correct 1 on the good model's answers, 0 on the plain one's
    people = [r["Correct"] for r in rows]
    aragen = [summary(tmp_path / f"g{n}") for n in range(2)]
    judge = [int(a["per_judge"][srv.spec("good-j")]["first_verdicts"][str(i)]["Correct"] >= 1)
             for a in aragen for i in range(1, 13)]
    assert judge == [1] * 12 + [0] * 12
    assert good.labels == 24 and good.agreement.cohens_kappa.value == pytest.approx(cohen_kappa_score(people, judge))
    assert good.agreement.krippendorff_alpha.value == pytest.approx(
        krippendorff.alpha(reliability_data=[people, judge], level_of_measurement="nominal"))
    assert good.parse_failure_rate == 0.0 and good.verdicts_asked == 24 and good.position_consistency is None
    # length bias: Spearman of the judge's item 3C3H with the answer's length, both answers of a follow-up
    lengths, scores = [], []
    for n, a in enumerate(aragen):
        outs = {}
        for phase in ("answers-1", "answers-2"):
            f = tmp_path / f"g{n}" / phase / "samples.jsonl"
            if f.exists():
                for line in f.read_text().splitlines():
                    rec = json.loads(line)
                    outs[rec["id"]] = outs.get(rec["id"], 0) + len(rec.get("output") or "")
        for sn, v in a["per_judge"][srv.spec("good-j")]["item_scores"].items():
            lengths.append(outs[sn])
            scores.append(v)
    assert good.length_bias.n == 24
    assert good.length_bias.spearman == pytest.approx(spearmanr(lengths, scores).statistic)
    assert good.validated() == (False, "24 labelled answers, 30 needed")
    # an AraGen run judged with these cards: not validated, said in results.json and the table
    r = cli("run", "aragen", "--model", "python:helpers:good_answer", "--judge", srv.spec("good-j"), "--out",
            str(tmp_path / "g9"), "--cache-path", str(tmp_path / "c.sqlite"), "--no-progress", "--judge-cards",
            str(tmp_path / "cards"))
    assert r.returncode == 0, r.stderr
    assert "judge not validated for ar: openai:good-j (24 labelled answers, 30 needed)" in " ".join(r.stdout.split())
    assert summary(tmp_path / "g9")["judge_validation"]["judges"][
        srv.spec("good-j")]["validated"] is False
    np.testing.assert_equal(len(cards), 2)
    # the board lists an AraGen run among the judged runs, with the mark
    from glotbench.report.rundata import judged_notes

    assert "judge not validated for ar: openai:good-j (24 labelled answers, 30 needed)" in judged_notes(tmp_path / "g9")
