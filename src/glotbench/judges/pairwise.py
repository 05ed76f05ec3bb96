"""Pairwise (arena) judging: the judge prompt, strict verdict parsing, and the score arithmetic.

A game shows a judge one prompt and two answers (A and B). Every pair is judged twice, with the
positions swapped. A win is 1, a tie 0.5, a loss 0 (from the candidate's side); the two orders are
averaged per prompt; a judge's score is the mean over prompts; the final score is the mean over
judges. The bootstrap resamples prompts, never single games.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from glotbench.errors import GlotbenchError
from glotbench.extract import strict_json_object, strip_think

UNANSWERED_POLICIES = ("loss", "drop")  # an unanswered prompt: a loss for the side that did not answer, or left out
SINGLE_ORDER_POLICIES = ("fail", "accept")  # a prompt judged in one order: failed, or scored from it

CRITERIA = ("correctness", "completeness", "reasoning", "clarity", "lao_fluency")

JUDGE_PROMPT = """You are an impartial judge of answers written for Lao-speaking users.
Compare the two answers to the user's prompt below on correctness, completeness, reasoning, clarity
and fluency in Lao. Do not let the order of the answers or their length sway you.

[User prompt]
{prompt}

[Answer A]
{answer_a}

[Answer B]
{answer_b}

Reply with one JSON object and nothing else, in exactly this form:
{{"winner": "A" or "B" or "tie", "notes": {{"correctness": "...", "completeness": "...", "reasoning": "...", "clarity": "...", "lao_fluency": "..."}}}}"""



class VerdictError(ValueError):
    """A judge reply that is not a valid verdict."""


def parse_verdict(text: str) -> dict[str, Any]:
    """Strict: after think-stripping (and one optional code fence) the reply must be exactly one JSON
    object with `winner` in A/B/tie and `notes` holding a string for each criterion."""
    body, ok = strip_think(text)
    if not ok:
        raise VerdictError("unclosed think block")
    try:
        obj = strict_json_object(body)
    except ValueError as e:  # JSONDecodeError, or a number over Python's digit limit (a plain ValueError)
        raise VerdictError(f"not a JSON object ({e.msg if isinstance(e, json.JSONDecodeError) else e})") from None
    if not isinstance(obj, dict):
        raise VerdictError("not a JSON object")
    winner = obj.get("winner")
    if winner not in ("A", "B", "tie"):
        raise VerdictError(f"winner must be A, B or tie, got {winner!r}")
    notes = obj.get("notes")
    if not isinstance(notes, dict) or any(not isinstance(notes.get(c), str) for c in CRITERIA):
        raise VerdictError(f"notes must hold a string for each of {', '.join(CRITERIA)}")
    return {"winner": winner, "notes": {c: notes[c] for c in CRITERIA}}


def game_value(winner: str, candidate_position: str) -> float:
    """1 for a candidate win, 0.5 for a tie, 0 for a loss."""
    if winner == "tie":
        return 0.5
    return 1.0 if winner == candidate_position else 0.0


def arena_scores(values: Mapping[str, Mapping[str, Sequence[float]]], prompts: Sequence[str], *,
                 resamples: int = 1000, seed: int = 12345) -> dict[str, Any]:
    """`values[judge][prompt]` holds the game values that judge gave (one per order that parsed):
    the panel's mean of judges (judges/stats.py), orders averaged per prompt."""
    from glotbench.judges.stats import JudgedMetrics, JudgedStats, judged_metrics, panel_scores

    stats = JudgedStats.of(values, prompts)
    return panel_scores(stats, judged_metrics(stats, JudgedMetrics(), resamples=resamples, seed=seed))


@dataclass(frozen=True)
class PromptAccounting:
    """Per judge, the values each prompt enters the score with, and what happened to every prompt."""

    values: dict[str, dict[str, list[float]]]  # judge -> prompt -> values (one per order)
    ids: list[str]  # the prompts in the denominator
    unanswered: dict[str, list[str]]  # "candidate" / "baseline" / "both" -> prompt ids
    dropped: list[str]  # unanswered prompts left out (policy "drop")
    failed: dict[str, list[str]]  # judge -> prompts without both valid orders (policy "fail") or with none
    single_order: dict[str, list[str]]  # judge -> prompts scored from one order (policy "accept")
    consistency: dict[str, dict[str, Any]]  # judge -> {"value", "prompts"}


def account_prompts(prompt_ids: list[str], answered: dict[str, set[str]],
                    by_order: dict[str, dict[str, dict[str, float]]], *, unanswered: str = "loss",
                    single_order: str = "fail") -> PromptAccounting:
    """The arena's arithmetic over every prompt (the seed's formula averages over all N prompts).

    An unanswered prompt (missing or empty answer, or an error) is, with `unanswered="loss"`, a loss
    for the candidate when only the candidate failed, a win when only the baseline failed, a tie when
    both did, for every judge; with "drop" it leaves the denominator and is listed. A judged prompt
    needs both orders: with `single_order="fail"` one valid order counts the prompt as failed for
    that judge (listed, not scored); with "accept" it is scored from that order and flagged.
    Position consistency is over the prompts with both orders, and says how many those are."""
    if unanswered not in UNANSWERED_POLICIES:
        raise GlotbenchError(f"--unanswered must be one of {', '.join(UNANSWERED_POLICIES)}, got {unanswered!r}")
    if single_order not in SINGLE_ORDER_POLICIES:
        raise GlotbenchError(f"--single-order must be one of {', '.join(SINGLE_ORDER_POLICIES)}, got {single_order!r}")
    missing = {"candidate": [], "baseline": [], "both": []}  # type: dict[str, list[str]]
    forfeit: dict[str, float] = {}
    for pid in prompt_ids:
        c, b = pid in answered["candidate"], pid in answered["baseline"]
        if not (c and b):
            kind = "both" if not (c or b) else "candidate" if not c else "baseline"
            missing[kind].append(pid)
            forfeit[pid] = {"candidate": 0.0, "baseline": 1.0, "both": 0.5}[kind]
    dropped = list(forfeit) if unanswered == "drop" else []
    ids = [p for p in prompt_ids if p not in dropped]
    values: dict[str, dict[str, list[float]]] = {}
    failed: dict[str, list[str]] = {}
    single: dict[str, list[str]] = {}
    consistency: dict[str, dict[str, Any]] = {}
    for judge, orders_of in by_order.items():
        vals: dict[str, list[float]] = {}
        failed[judge], single[judge] = [], []
        agree = both = 0
        for pid in ids:
            if pid in forfeit:
                vals[pid] = [forfeit[pid]]
                continue
            orders = orders_of.get(pid, {})
            if len(orders) == 2:
                vals[pid] = [orders["0"], orders["1"]]
                both += 1
                agree += orders["0"] == orders["1"]
            elif len(orders) == 1 and single_order == "accept":
                vals[pid] = list(orders.values())
                single[judge].append(pid)
            else:
                failed[judge].append(pid)
        if any(p not in forfeit for p in vals):  # a judge with no valid verdict is reported by its failures
            values[judge] = vals
        consistency[judge] = {"value": agree / both if both else None, "prompts": both}
    return PromptAccounting(values, ids, missing, dropped, failed, single, consistency)
