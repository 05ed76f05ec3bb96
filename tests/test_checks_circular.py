"""`--bench-opt permute=circular` (OpenCompass CircularEval) on the option tasks: rotations, the
figures computed by hand on four items, the cache key and the signature."""

from __future__ import annotations

import json

import pytest

from checks_models import write_mcq
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
