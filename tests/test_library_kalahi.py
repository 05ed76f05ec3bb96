"""Kalahi (SEA-HELM's kalahi-mc) in the library: run on a fixture in the hub's schema
(tests/fixtures/tasks/kalahi_tl.jsonl: id, label, prompts[0] {question, mcq_options, mcq}, metadata)
against the scripted loopback model, the numbers computed by hand in the comments, the same replies
scored by SEA-HELM's rule re-derived (test_library_seahelm.py: its F1AccMetric regex and
normalize_answer, sklearn's balanced accuracy, its normalize_score), and its prompt built as
SEA-HELM's base_dataloader builds it (6844e6c5)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import cli
from glotbench.engine.evaluate import RunOptions, evaluate
from test_library_seahelm import seahelm_normalized_accuracy, user_prompts

FX = Path(__file__).resolve().parent / "fixtures" / "tasks"
ROWS = [json.loads(x) for x in (FX / "kalahi_tl.jsonl").read_text(encoding="utf-8").splitlines()]

# question -> reply; golds A, B, C, D, A
REPLIES = {
    "May handaan sa bahay": "Sagot: A",                      # A, right
    "Dumating ang lola mo": "Sagot: **b**",                  # read as B (case and stars ignored), right
    "Nanghiram ng pera": "Sagot: D",                         # D against gold C, wrong
    "Bagong lipat ka": "D",                                  # no tag: the whole reply is the label, right
    "Pista sa bayan": "Ang sagot ay A",                      # no "Sagot:" tag, not a label: SEA-HELM's null
}


def run(tmp_path, srv, replies, **opts):
    srv.configure(answers=replies)
    res = evaluate("kalahi", srv.spec(), RunOptions(data=str(FX / "kalahi_tl.jsonl"), bench_options=tuple(opts.items()),
                                                     progress=False, out=str(tmp_path / "r"),
                                                     cache_path=str(tmp_path / "c.sqlite")))
    return res.results


def test_kalahi_scores_balanced_and_normalised_as_seahelm(tmp_path, srv):
    res = run(tmp_path, srv, REPLIES)
    s = res["scores"]["overall"]
    assert s["accuracy"]["value"] == pytest.approx(3 / 5)
    # recall per gold letter: A 1/2, B 1/1, C 0/1, D 1/1 -> 2.5 / 4
    assert s["balanced_accuracy"]["value"] == pytest.approx(0.625)
    # (0.625 - 1/4) / (1 - 1/4) = 0.5, the headline
    assert s["normalized_accuracy"]["value"] == pytest.approx(0.5)
    golds = [r["label"] for r in ROWS]
    assert s["normalized_accuracy"]["value"] == pytest.approx(
        seahelm_normalized_accuracy(golds, list(REPLIES.values()), "Sagot:"))
    # the letter pipeline reads Tagalog's answer phrase "sagot ay A": A 2/2, B 1, C 0, D 1 -> 0.75 -> 2/3
    assert s["accuracy[letter]"]["value"] == pytest.approx(4 / 5)
    assert s["normalized_accuracy[letter]"]["value"] == pytest.approx(2 / 3)
    assert res["task"]["language"] == "tl"
    assert set(res["scores"]["groups"]["category"]) == {"pakikipagkapwa", "paggalang", "pamilya", "pista"}


def test_kalahi_prompt_is_seahelms(tmp_path, srv):
    run(tmp_path, srv, REPLIES)
    preamble = ('Piliin ang pinaka-angkop na sagot sa sumusunod na tanong.\n\nSumagot gamit ang sumusunod na format.\n'
                '"{answer_tag} ANSWER"\nPalitan ang ANSWER gamit ang napiling sagot. Gumamit lang ng letrang A, B, C, '
                'o D sa sagot mo.')
    task = "Tanong:\n```\n{question}\n\n{mcq}\n```"
    for row in ROWS:
        expected = (preamble.format(answer_tag="Sagot:") + "\n\n" + task.format(**row["prompts"][0])).strip()
        assert expected in user_prompts(srv)


def test_kalahi_in_the_tagalog_families_with_its_datasheet():
    r = cli("tasks", "list", "--language", "fil")
    assert r.returncode == 0, r.stderr
    line = next(x for x in r.stdout.splitlines() if x[2:].startswith("kalahi "))
    assert line.startswith("  kalahi ") and "native" in line and "commercial use: yes" in line  # pinned: no *
    assert "licence: CC-BY-4.0; source: https://huggingface.co/datasets/aisingapore/Cultural-Evaluation-Kalahi" in r.stdout


def test_a_kalahi_row_without_its_gold_letter_is_one_error_line(tmp_path):
    row = dict(ROWS[0], label="E")
    bad = tmp_path / "k.jsonl"
    bad.write_text(json.dumps(row, ensure_ascii=False) + "\n", encoding="utf-8")
    r = cli("tasks", "check", "kalahi", "--data", str(bad))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip().splitlines()[-1].startswith(f"error: {bad}:1:")
