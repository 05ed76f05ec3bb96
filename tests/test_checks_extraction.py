"""Extraction bounds and a lenient re-reading, and error types, on runs whose figures are computed
by hand (glotbench.checks.extraction, glotbench.checks.errors)."""

from __future__ import annotations

from checks_models import write_mcq, write_mgsm, write_vi
from glotbench.engine.evaluate import RunOptions, evaluate


def _run(bench, model, tmp_path, cache_path, data, **kw):
    return evaluate(bench, model, RunOptions(data=data, out=str(tmp_path / "run"), cache_path=cache_path,
                                             progress=False, **kw)).results


def test_mcq_bounds_and_lenient(tmp_path, cache_path):
    """q1 right, q2 wrong, q3 unreadable, q4 "c" (gold C; the strict rule reads no bare lower-case
    letter). Strict 1/4; unread 2/4; if both were right 3/4; the lenient rule reads q4's c: 2/4."""
    res = _run("laobench-mcq", "python:checks_models:mixed_replies", tmp_path, cache_path, write_mcq(tmp_path / "m.jsonl"))
    x = res["checks"]["extraction"]
    assert res["scores"]["overall"]["accuracy"]["value"] == 0.25
    assert (x["kind"], x["strict"], x["unread"], x["unread_share"]) == ("letter", 0.25, 2, 0.5)
    assert x["unread_by_failure"] == {"no_letter": 2} and x["call_failures"] == 0
    assert (x["lower"], x["upper"], x["lenient"], x["lenient_read"]) == (0.25, 0.75, 0.5, 1)
    assert x["groups"]["dimension"]["K12 Foundational Education"] == {"strict": 0.0, "upper": 1.0}
    e = res["checks"]["errors"]
    # Chosen letters of the read replies: B (q1), C (q2); gold of those: B, A. C is over-chosen (+1/2):
    # q2's wrong C is a position error; q3, q4 have no answer.
    assert e["overall"]["errors"] == {"position": 1, "distractor": 0, "no_answer": 2, "call_failed": 0}
    assert e["letters"] == {"chosen": {"B": 1, "C": 1}, "gold": {"A": 1, "B": 1}, "over_chosen": "C"}


def test_numeric_error_types_and_bounds(tmp_path, cache_path):
    """Gold 18, 20, 1000, 9. Replies: right; 20 in the text but "8 boys" in the tag (format); 1001
    (value); no answer tag (no number: unread, the lenient rule reads the last number, 9: right)."""
    res = _run("deepsea-mgsm", "python:checks_models:mgsm_replies", tmp_path, cache_path,
               write_mgsm(tmp_path / "mgsm.json"))
    e = res["checks"]["errors"]
    assert e["kind"] == "number" and e["overall"]["errors"] == {"format": 1, "value": 1, "no_number": 1, "call_failed": 0}
    assert e["groups"]["lang"]["en"]["samples_with_error"] == 3
    x = res["checks"]["extraction"]
    assert x["scale"] == "points" and x["strict"] == 25.0
    assert (x["unread"], x["upper"], x["lenient"]) == (1, 50.0, 50.0)


def test_vietnamese_error_types(tmp_path, cache_path):
    """quá→quà (tone); đi→di (d) and trường→trương (tone); nấu→nau (vowel mark) and rất twice (a word
    added). 15 reference words."""
    res = _run("vi-diacritics", "python:checks_models:vi_replies", tmp_path, cache_path, write_vi(tmp_path / "vi.jsonl"))
    e = res["checks"]["errors"]
    assert e["kind"] == "vietnamese"
    zero = dict.fromkeys(("tone", "d", "vowel_mark", "case", "word_added", "word_removed", "no_answer", "call_failed"), 0)
    assert e["overall"] == {"samples": 3, "errors": {**zero, "d": 1, "tone": 2, "vowel_mark": 1, "word_added": 1},
                            "words": 15}
    assert e["groups"]["category"]["a"]["errors"] == {**zero, "d": 1, "tone": 2}
    assert e["groups"]["category"]["b"] == {"samples": 1, "errors": {**zero, "vowel_mark": 1, "word_added": 1}, "words": 5}
    assert res["checks"]["language"]["wrong"] == 0 and res["checks"]["language"]["checked"] == 3


def test_translation_has_no_extraction_check(srv, tmp_path, cache_path):
    res = _run("laobench-translation", srv.spec(), tmp_path, cache_path, None, limit=2)
    assert "extraction" not in res["checks"] and "errors" not in res["checks"]
