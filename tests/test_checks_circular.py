"""`--bench-opt permute=circular` (OpenCompass CircularEval) on the option tasks: rotations, the
figures computed by hand on four items, the cache key and the signature."""

from __future__ import annotations

import json

import pytest

from checks_models import MCQ_ROWS, write_mcq
from conftest import cli
from glotbench.checks.circular import rotate, unrotate
from glotbench.engine.evaluate import RunOptions, evaluate
from glotbench.errors import GlotbenchError
from glotbench.items import Item


def _opts(tmp_path, cache_path, data, name="run", **kw):
    return RunOptions(data=data, out=str(tmp_path / name), cache_path=cache_path, progress=False,
                      bench_options=(("permute", "circular"),), **kw)


def test_rotation_moves_the_gold_letter_with_its_text():
    it = Item.create("q", {"options": {"A": "a", "B": "b", "C": "c", "D": "d"}}, {"answer": "B"}, {"g": "x"})
    r1 = rotate(it, 1)
    assert r1.id == "q#rot1" and r1.public["options"] == {"A": "b", "B": "c", "C": "d", "D": "a"}
    assert r1.gold["answer"] == "A" and r1.meta == {"g": "x", "circular_item": "q", "rotation": 1}
    assert rotate(it, 0).id == "q" and rotate(it, 0).public["options"] == it.public["options"]
    assert rotate(it, 3).gold["answer"] == "C"
    assert unrotate("A", 1, 4) == "B" and unrotate("D", 3, 4) == "C"
    choices = Item.create("t", {"choices": ["x", "y", "z"]}, {"answer": "C"})
    assert rotate(choices, 2).public["choices"] == ["z", "x", "y"] and rotate(choices, 2).gold["answer"] == "A"


def test_a_model_that_always_answers_a_follows_the_position(tmp_path, cache_path):
    """Gold B, A, D, C. Always "A": plain accuracy 1/4 (q2); each item has its gold at A in exactly one
    of 4 rotations, so rotation accuracy 1/4 and circular accuracy 0; every item follows the position;
    no item keeps its content."""
    data = write_mcq(tmp_path / "mcq.jsonl")
    res = evaluate("laobench-mcq", "python:checks_models:always_a", _opts(tmp_path, cache_path, data)).results
    o = res["scores"]["overall"]
    assert o["accuracy"]["value"] == 0.0 and o["accuracy"]["n"] == 4
    assert o["plain_accuracy"]["value"] == 0.25 and o["rotation_accuracy"]["value"] == 0.25
    assert o["follows_position"]["value"] == 1.0 and o["consistent"]["value"] == 0.0
    assert res["metrics"]["accuracy"]["label"] == "circular accuracy"
    assert res["counts"]["samples"] == 16 and res["selection"]["n"] == 4
    assert res["scores"]["circular"] == {"items": 4, "samples": 16, "rotations": {"4": 4}}
    assert res["signature"].endswith("|permute:circular|thinking:default")


def test_a_model_that_knows_the_content_is_right_in_every_rotation(tmp_path, cache_path):
    data = write_mcq(tmp_path / "mcq.jsonl")
    res = evaluate("laobench-mcq", "python:checks_models:knows_content", _opts(tmp_path, cache_path, data)).results
    o = res["scores"]["overall"]
    assert o["accuracy"]["value"] == 1.0 and o["plain_accuracy"]["value"] == 1.0
    assert o["follows_position"]["value"] == 0.0 and o["consistent"]["value"] == 1.0


def test_rotations_are_in_the_cache_key_and_rotation_zero_is_the_plain_prompt(tmp_path, cache_path, srv):
    data = write_mcq(tmp_path / "mcq.jsonl")
    plain = evaluate("laobench-mcq", srv.spec(), RunOptions(data=data, out=str(tmp_path / "plain"),
                                                            cache_path=cache_path, progress=False)).results
    assert plain["counts"]["model_calls"] == 4
    circ = evaluate("laobench-mcq", srv.spec(), _opts(tmp_path, cache_path, data, name="c1")).results
    assert circ["counts"]["cache_hits"] == 4 and circ["counts"]["model_calls"] == 12  # rotations 1-3 are new
    again = evaluate("laobench-mcq", srv.spec(), _opts(tmp_path, cache_path, data, name="c2")).results
    assert again["counts"]["model_calls"] == 0
    prompts = [r["messages"][-1]["content"] for r in srv.requests()]
    assert len(set(prompts)) == 16


def test_limit_counts_items_not_rotations(tmp_path, cache_path):
    data = write_mcq(tmp_path / "mcq.jsonl")
    res = evaluate("laobench-mcq", "python:checks_models:always_a", _opts(tmp_path, cache_path, data, limit=2)).results
    assert res["selection"]["n"] == 2 and res["counts"]["samples"] == 8
    rows = [json.loads(x) for x in (tmp_path / "run" / "samples.jsonl").read_text().splitlines()]
    assert [r["id"] for r in rows] == ["q1", "q1#rot1", "q1#rot2", "q1#rot3", "q2", "q2#rot1", "q2#rot2", "q2#rot3"]


def test_deepsea_indommlu_and_a_task_file_rotate_too(tmp_path, cache_path):
    res = evaluate("deepsea-indommlu", "python:helpers:deepsea_letter_b",
                   RunOptions(out=str(tmp_path / "ds"), cache_path=cache_path, progress=False,
                              bench_options=(("permute", "circular"),))).results
    assert res["scores"]["groups"]["lang"]["id"]["follows_position"]["value"] == 1.0
    assert "permute:circular" in res["signature"]


def test_permute_needs_options(tmp_path, cache_path):
    with pytest.raises(GlotbenchError, match="no options to rotate"):
        evaluate("laobench-translation", "python:helpers:good_answer",
                 RunOptions(out=str(tmp_path / "t"), cache_path=cache_path, progress=False,
                            bench_options=(("permute", "circular"),)))


def test_a_task_file_option_task_rotates_its_choices(tmp_path, cache_path):
    """Belebele (task file, choices as a list) with a model that always answers A."""
    from pathlib import Path

    data = str(Path(__file__).parent / "fixtures" / "tasks" / "belebele_lao_Laoo.jsonl")
    res = evaluate("belebele", "python:checks_models:always_a",
                   RunOptions(data=data, out=str(tmp_path / "b"), cache_path=cache_path, progress=False,
                              bench_options=(("config", "lao_Laoo"), ("permute", "circular")))).results
    o = res["scores"]["overall"]
    assert res["counts"]["samples"] == 12 and o["accuracy"]["n"] == 3
    assert o["accuracy"]["value"] == 0.0 and o["follows_position"]["value"] == 1.0
    assert o["rotation_accuracy"]["value"] == 0.25


def test_compare_and_the_dry_run_know_the_rotations(tmp_path, cache_path):
    from conftest import cli

    data = write_mcq(tmp_path / "mcq.jsonl")
    for name in ("always_a", "knows_content"):
        evaluate("laobench-mcq", f"python:checks_models:{name}", _opts(tmp_path, cache_path, data, name=name))
    r = cli("compare", str(tmp_path / "always_a"), str(tmp_path / "knows_content"))
    assert r.returncode == 0, r.stderr
    assert "over 4 shared items" in r.stdout  # per original item, not per rotation
    line = next(x for x in r.stdout.splitlines() if x.strip().startswith("accuracy "))
    assert line.split()[1:4] == ["0.0", "100.0", "+100.0"]  # circular accuracy: 0 against 100
    r = cli("run", "laobench-mcq", "--model", "python:checks_models:always_a", "--data", data, "--dry-run",
            "--bench-opt", "permute=circular", "--cache-path", cache_path)
    assert r.returncode == 0, r.stderr
    assert ": 16 requests, 16 cached (free), 0 to send" in r.stdout  # 4 items x 4 rotations, asked above


def test_a_run_stopped_between_rotations_does_not_score_the_item_as_circular(tmp_path, srv):
    """--max-cost stops a circular run part-way through an item's rotations: the rotations asked were
    right (rotation 0) but the others were never asked, so the item is not 'right in every
    rotation': it is left out of the circular scores and named under scores.circular.incomplete
    (before, q2 asked in rotation 0 only scored circular accuracy 100%)."""
    srv.configure(answers={"Capital of Laos?": "Answer: B", "River through": "Answer: A", "7 + 8": "Answer: D",
                           "Days in": "Answer: C"})  # right in rotation 0 only
    data = write_mcq(tmp_path / "mcq.jsonl")
    out = tmp_path / "run"
    r = cli("run", "laobench-mcq", "--data", data, "--model", srv.spec(), "--bench-opt", "permute=circular",
            "--out", str(out), "--cache-path", str(tmp_path / "c.sqlite"), "--price-in", "1000",
            "--price-out", "1000", "--max-tokens", "5", "--concurrency", "1", "--max-cost", "0.215", "--no-progress")
    assert r.returncode == 3, r.stderr
    res = json.loads((out / "results.json").read_text())
    ids = [json.loads(x)["id"] for x in (out / "samples.jsonl").read_text().splitlines()]
    asked = {i.split("#")[0]: sum(1 for j in ids if j.split("#")[0] == i.split("#")[0]) for i in ids}
    partial = sorted(i for i, n in asked.items() if n < 4)
    whole = sorted(i for i, n in asked.items() if n == 4)
    assert res["status"] == "stopped" and partial, (ids, res["stopped"])  # the cap falls inside an item
    circ = res["scores"]["circular"]
    assert circ["incomplete"]["items"] == len(partial) and circ["incomplete"]["ids"] == partial
    assert circ["items"] == len(whole) and res["scores"]["overall"]["accuracy"]["n"] == len(whole)
    assert res["scores"]["overall"]["accuracy"]["value"] in (0.0, None)  # wrong in rotations 1-3, or nothing whole
    html = cli("report", str(out), "--html", str(tmp_path / "r.html"))
    assert html.returncode == 0, html.stderr
    assert "asked in only some of their rotations" in (tmp_path / "r.html").read_text()


def test_extraction_bounds_of_a_circular_run_are_of_its_headline(tmp_path, cache_path):
    """q3 unreadable in rotation 0 only, every other reply right by content. The headline (circular
    accuracy, right in every rotation) is 3/4; the parser bounds were computed on the 16 rotations
    (strict 15/16, upper 16/16: not the number in the table). Now strict = lower = 3/4 (q3 scored
    wrong), upper = 1 (q3's unread reply right), lenient 3/4 (no letter to read), unread 1 reply."""
    data = write_mcq(tmp_path / "mcq.jsonl")
    res = evaluate("laobench-mcq", "python:checks_models:knows_content_but_one_unreadable",
                   _opts(tmp_path, cache_path, data)).results
    assert res["scores"]["overall"]["accuracy"]["value"] == 0.75
    x = res["checks"]["extraction"]
    assert x["unread"] == 1 and x["samples"] == 16
    assert x["strict"] == x["lower"] == 0.75 and x["upper"] == 1.0 and x["lenient"] == 0.75
    assert x["groups"]["dimension"]["K12 Foundational Education"] == {"strict": 0.5, "upper": 1.0}


def test_an_item_with_two_options_of_the_same_text_is_named_and_consistent_compares_texts(tmp_path, cache_path):
    """Options A and B both 'Vientiane' (gold A). A model that picks 'Vientiane' by its text (the
    first copy shown) is right in rotation 0 and in the rotation where the gold copy comes first,
    wrong where the other copy does: circular accuracy 0 for an answer that never changed. The
    item is now named under scores.circular.duplicate_options and on the run page, and 'consistent'
    (the same option, by its text, in every rotation) is 1, as documented; it was 0."""
    row = {**MCQ_ROWS[0], "id": "d1", "A": "Vientiane", "B": "Vientiane", "answer": "A"}
    data = tmp_path / "dup.jsonl"
    data.write_text(json.dumps(row) + "\n" + json.dumps(MCQ_ROWS[1]) + "\n", encoding="utf-8")
    res = evaluate("laobench-mcq", "python:checks_models:knows_content", _opts(tmp_path, cache_path, str(data))).results
    o = res["scores"]["overall"]
    assert o["consistent"]["value"] == 1.0 and o["follows_position"]["value"] == 0.0
    assert o["accuracy"]["value"] == 0.5  # q2 right in every rotation; d1 not (the scoring rule is the benchmark's)
    dup = res["scores"]["circular"]["duplicate_options"]
    assert dup["items"] == 1 and dup["ids"] == ["d1"]
    html = cli("report", str(tmp_path / "run"), "--html", str(tmp_path / "r.html"))
    assert html.returncode == 0, html.stderr
    assert "two options of the same text" in (tmp_path / "r.html").read_text()
