"""`glotbench rescore` shows equal scores as ties (`a = b > c`), never as a strict order, and a tie
is never a flip."""

from __future__ import annotations

from glotbench.checks.rescore import RunRescore, rankings, tiers
from glotbench.report.checks_text import rescore_markdown


def _run(model, as_run, variant):
    return RunRescore("p", model, "b", "sig", None,
                      {"as_run": {"m": {"overall": as_run, "groups": {}}}, "v": {"m": {"overall": variant, "groups": {}}}}, {})


def test_equal_scores_form_one_tier():
    assert tiers({"a": 0.5, "b": 0.5, "c": 0.25}) == [["a", "b"], ["c"]]
    assert tiers({"x": 0.1 + 0.2, "y": 0.3}) == [["x", "y"]]  # float noise of one formula is no order
    assert tiers({"a": 0.3, "b": None, "c": 0.3000001}) == [["c"], ["a"], ["b"]]  # a real difference; no score last
    assert tiers({}) == []


def test_ties_are_printed_as_ties_and_are_not_flips():
    r = rankings([_run("a", 0.9, 0.6), _run("b", 0.9, 0.7), _run("c", 0.5, 0.6)])[0]
    assert r["variants"]["as_run"]["tiers"] == [["a", "b"], ["c"]]
    # as run a and b tie: b above a afterwards is no flip; c rising to a's 0.6 is a tie, not a flip
    assert r["variants"]["v"]["tiers"] == [["b"], ["a", "c"]]
    assert r["variants"]["v"]["flips"] == []
    got = {"runs": [], "rankings": [r]}
    text = rescore_markdown(got)
    assert "  - as_run: a = b > c" in text and "  - v: b > a = c" in text and "order flips" not in text


def test_a_strict_reversal_is_still_a_flip():
    r = rankings([_run("a", 0.9, 0.5), _run("b", 0.8, 0.6), _run("c", 0.8, 0.8)])[0]
    assert r["variants"]["as_run"]["tiers"] == [["a"], ["b", "c"]]
    assert r["variants"]["v"]["flips"] == [["a", "b"], ["a", "c"]]  # b and c tied as run: no flip between them
    assert "  - v: c > b > a — **order flips:** a ↔ b; a ↔ c" in rescore_markdown({"runs": [], "rankings": [r]})
