"""A task scored by a rubric through the judge panel: pointwise criteria on their scales (reference-
guided), pairwise against the reference in both orders, two judges averaged with a CI, a malformed
verdict asked again, the candidate never judging itself, an unanswered item scoring 0 for every judge."""

from __future__ import annotations

import asyncio
import json

import pytest

from conftest import cli
from glotbench.engine.evaluate import RunOptions
from glotbench.engine.judged import run_judged
from glotbench.errors import GlotbenchError
from glotbench.tasks.rubric import VerdictError, parse_pointwise
from glotbench.tasks.spec import Criterion

TASK = """\
name: lao-open-qa
version: "1.0"
language: lo
data: {file: qa.jsonl}
fields: {id: id, public: {question: question}, gold: {reference: reference}}
prompt: {user: "{{ question }}", max_tokens: 256}
scorer:
  kind: rubric
  criteria:
    - {name: correct, description: "Does the answer agree with the reference?", scale: [0, 1]}
    - {name: fluent, description: "Is it fluent, natural Lao?", scale: [1, 5]}
"""
QA = [{"id": "q1", "question": "ນະຄອນຫຼວງຂອງລາວແມ່ນຫຍັງ?", "reference": "ວຽງຈັນ"},
      {"id": "q2", "question": "ແມ່ນ້ຳໃດໄຫຼຜ່ານວຽງຈັນ?", "reference": "ແມ່ນ້ຳຂອງ"},
      {"id": "q3", "question": "ລາວມີຈັກແຂວງ?", "reference": "17 ແຂວງ ແລະ 1 ນະຄອນຫຼວງ"}]


def files(tmp_path, text=TASK):
    (tmp_path / "qa.jsonl").write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in QA) + "\n")
    p = tmp_path / "qa.yaml"
    p.write_text(text, encoding="utf-8")
    return str(p)


def verdict(correct: int, fluent: int) -> str:
    return f'The answer is checked against the reference.\n<verdict>{{"correct": {correct}, "fluent": {fluent}}}</verdict>'


def summary(run_dir):
    """A rubric run's summary: its results.json's `judged` section (rubric.json before)."""
    return json.loads((run_dir / "results.json").read_text(encoding="utf-8"))["judged"]["summary"]


def opts(tmp_path, **kw):
    return RunOptions(progress=False, out=str(tmp_path / "out"), cache_path=str(tmp_path / "c.sqlite"),
                      max_retries=2, **kw)


def test_pointwise_rubric_two_judges_with_a_retried_verdict(tmp_path, srv):
    srv.configure(answers={"ນະຄອນຫຼວງຂອງລາວ": "ວຽງຈັນ ເປັນນະຄອນຫຼວງ", "ແມ່ນ້ຳໃດ": "ແມ່ນ້ຳແດງ", "ລາວມີຈັກແຂວງ": ""},
                  sequences={"ວຽງຈັນ ເປັນນະຄອນຫຼວງ": ["I think it is good.", verdict(1, 5), verdict(1, 3)],
                             "ແມ່ນ້ຳແດງ": [verdict(0, 3), verdict(0, 1)]})
    res = asyncio.run(run_judged(files(tmp_path), srv.spec("cand"), [srv.spec("judge1"), srv.spec("judge2")],
                                 opts(tmp_path)))
    # judge1: q1 (1 + 1)/2 = 1 after one malformed verdict, q2 (0 + 0.5)/2 = 0.25, q3 unanswered 0 -> 1.25/3
    # judge2: q1 (1 + 0.5)/2 = 0.75, q2 (0 + 0)/2 = 0, q3 0 -> 0.75/3
    judges = res["scores"]["judges"]
    assert judges[srv.spec("judge1")]["value"] == pytest.approx(1.25 / 3)
    assert judges[srv.spec("judge2")]["value"] == pytest.approx(0.75 / 3)
    assert res["scores"]["final"]["value"] == pytest.approx((1.25 / 3 + 0.75 / 3) / 2)
    assert res["unanswered"] == ["q3"] and res["answered"] == 2 and res["items"] == 3
    assert res["criteria"][srv.spec("judge1")] == {"correct": 0.5, "fluent": 0.75}  # over the judged items
    assert "judge_prompt:" in res["signature"] and "mode:pointwise" in res["signature"]
    judge1 = [json.loads(x) for x in (tmp_path / "out" / f"judge-openai_judge1_http_127.0.0.1_{srv.port}_v1" /
                                      "samples.jsonl").read_text().splitlines()]
    assert sum(s["retries"] for s in judge1) == 1  # the malformed verdict was asked again
    prompts = [r["messages"][-1]["content"] for r in srv.requests() if r["model"] == "judge1"]
    assert any("[Reference answer]\nວຽງຈັນ" in p and "- fluent (1-5): Is it fluent, natural Lao?" in p for p in prompts)
    assert all("Lao" in p for p in prompts)
    assert summary(tmp_path / "out")["scores"] == res["scores"]


def test_pairwise_against_the_reference_both_orders_and_the_candidate_skipped(tmp_path, srv):
    srv.configure(answers={"ນະຄອນຫຼວງຂອງລາວ": "ວຽງຈັນ (good)", "ແມ່ນ້ຳໃດ": "ແມ່ນ້ຳຂອງ (good)", "ລາວມີຈັກແຂວງ": "ບໍ່ຮູ້"},
                  judges={"pj": {"mode": "prefer", "prefer": "(good)", "malformed_first": 1}})
    text = TASK.replace("  criteria:\n    - {name: correct, description: \"Does the answer agree with the reference?\", "
                        "scale: [0, 1]}\n    - {name: fluent, description: \"Is it fluent, natural Lao?\", scale: [1, 5]}\n",
                        "  pairwise: true\n")
    res = asyncio.run(run_judged(files(tmp_path, text), srv.spec("cand"), [srv.spec("pj"), srv.spec("cand")],
                                 opts(tmp_path)))
    # q1, q2: the candidate's answer holds the preferred mark in both orders (1); q3: neither does (tie, 0.5)
    assert res["scores"]["final"]["value"] == pytest.approx((1 + 1 + 0.5) / 3)
    assert res["skipped_judges"] == [srv.spec("cand")] and res["mode"] == "pairwise"
    games = [r["messages"][-1]["content"] for r in srv.requests() if r["model"] == "pj"]
    assert len(games) == 6 + 6  # three items in two orders, each asked twice (the first verdict malformed)


def test_a_rubric_needs_a_judge_and_a_reference(tmp_path, srv):
    with pytest.raises(GlotbenchError, match="name a judge with --judge SPEC"):
        asyncio.run(run_judged(files(tmp_path), srv.spec("cand"), [], opts(tmp_path)))
    from glotbench.errors import DataError
    from glotbench.registry import get_benchmark

    with pytest.raises(DataError, match="criteria: a pointwise rubric needs at least one criterion"):
        get_benchmark(files(tmp_path, TASK.split("  criteria:")[0]))


def test_the_verdict_reader_is_strict():
    criteria = [Criterion(name="correct", description="c", scale=(0, 1)), Criterion(name="fluent", description="f")]
    assert parse_pointwise(verdict(1, 4), criteria) == {"correct": 1, "fluent": 4}
    for bad, kind in ((verdict(1, 6), "out_of_range"), ('<verdict>{"correct": 1}</verdict>', "keys"),
                      ('<verdict>{"correct": 1, "fluent": 4.5}</verdict>', "not_integer"),
                      ("<verdict>nope</verdict>", "not_json"), ("no block", "no_block"),
                      ('<think>' + verdict(1, 4), "think_unclosed")):
        with pytest.raises(VerdictError) as e:
            parse_pointwise(bad, criteria)
        assert e.value.kind == kind


def test_cli_runs_a_rubric_task_with_judge(tmp_path, srv):
    srv.configure(answers={"ນະຄອນຫຼວງຂອງລາວ": "ວຽງຈັນ", "ແມ່ນ້ຳໃດ": "ແມ່ນ້ຳຂອງ", "ລາວມີຈັກແຂວງ": "17"},
                  sequences={"[Answer]\nວຽງຈັນ": [verdict(1, 5)], "[Answer]\nແມ່ນ້ຳຂອງ": [verdict(1, 5)],
                             "[Answer]\n17": [verdict(0, 1)]})
    proc = cli("run", files(tmp_path), "--model", srv.spec("cand"), "--judge", srv.spec("judge1"),
               "--out", str(tmp_path / "r"), "--no-progress", "--no-cache")
    assert proc.returncode == 0, proc.stderr
    assert "score 0.667" in proc.stdout and "unanswered: 0" in proc.stdout
    assert (tmp_path / "r" / "answers" / "results.json").is_file() and not (tmp_path / "r" / "rubric.json").exists() and summary(tmp_path / "r")


def test_a_rubric_judge_without_a_card_is_marked_for_the_tasks_language(tmp_path, srv):
    """judges/cards.py: the task's language (lo) names the card the judge needs; without one the
    score is marked in results.json's summary and under the printed score."""
    srv.configure(answers={"ນະຄອນຫຼວງຂອງລາວ": "ວຽງຈັນ", "ແມ່ນ້ຳໃດ": "ແມ່ນ້ຳຂອງ", "ລາວມີຈັກແຂວງ": "17"},
                  sequences={"[Answer]": [verdict(1, 5)]})
    (tmp_path / "cards").mkdir()
    proc = cli("run", files(tmp_path), "--model", srv.spec("cand"), "--judge", srv.spec("judge1"),
               "--out", str(tmp_path / "r"), "--no-progress", "--no-cache", "--judge-cards", str(tmp_path / "cards"))
    assert proc.returncode == 0, proc.stderr
    assert "judge not validated for lo: openai:judge1 (no card for lo)" in " ".join(proc.stdout.split())
    v = summary(tmp_path / "r")["judge_validation"]
    assert v["language"] == "lo" and v["judges"][srv.spec("judge1")]["validated"] is False


def test_a_rubric_run_whose_answers_mostly_failed_is_invalid_exits_3_and_runs_again(tmp_path, srv):
    """A rubric run is only as valid as its phases (as the arena and AraGen): the candidate's calls
    failing on 2 of 3 items make the run (results.json) invalid and the command exit 3; the same command
    then sets the invalid run aside and runs again (it refused any finished summary before)."""
    replies = dict(answers={"ນະຄອນຫຼວງຂອງລາວ": "ວຽງຈັນ", "ແມ່ນ້ຳໃດ": "ແມ່ນ້ຳຂອງ", "ລາວມີຈັກແຂວງ": "17"},
                   sequences={"[Answer]\nວຽງຈັນ": [verdict(1, 5)] * 4, "[Answer]\nແມ່ນ້ຳຂອງ": [verdict(1, 5)] * 4,
                              "[Answer]\n17": [verdict(0, 1)] * 4})
    srv.configure(**replies, faults=[{"match": q, "status": 500, "times": 10} for q in ("ແມ່ນ້ຳໃດ", "ລາວມີຈັກແຂວງ")])
    args = ("run", files(tmp_path), "--model", srv.spec("cand"), "--judge", srv.spec("judge1"), "--out",
            str(tmp_path / "r"), "--no-progress", "--max-retries", "0", "--cache-path", str(tmp_path / "c.sqlite"))
    proc = cli(*args)
    assert proc.returncode == 3, proc.stderr
    assert proc.stderr.startswith("error: invalid: answers: 2 of 3 items failed"), proc.stderr
    rubric = summary(tmp_path / "r")
    assert rubric["validity"]["valid"] is False and rubric["validity"]["phases"]["answers"]["valid"] is False
    assert rubric["validity"]["phases"][f"judge {srv.spec('judge1')}"]["valid"] is True
    # the endpoint recovered: the same command finishes the run (the judge's verdicts configured again:
    # a reset server's default reply is no verdict, which an unreadable-verdict share above the limit
    # now makes invalid, where it passed for a finished run before)
    srv.configure(**replies)
    proc = cli(*args)
    assert proc.returncode == 0, proc.stderr
    assert summary(tmp_path / "r")["validity"]["valid"] is True
    assert [p.name.split("-")[0] for p in tmp_path.iterdir() if p.name.startswith("r.")] == ["r.invalid"]
    proc = cli(*args)  # a finished valid run is refused
    assert proc.returncode == 2 and "already holds a finished run" in proc.stderr, proc.stderr
