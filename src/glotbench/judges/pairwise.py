"""Pairwise (arena) judging: the judge prompt, strict verdict parsing, and the score arithmetic.

A game shows a judge one prompt and two answers (A and B). Every pair is judged twice, with the
positions swapped. A win is 1, a tie 0.5, a loss 0 (from the candidate's side); the two orders are
averaged per prompt; a judge's score is the mean over prompts; the final score is the mean over
judges. The bootstrap resamples prompts, never single games.
"""

from __future__ import annotations

import json
from typing import Any, Mapping, Sequence


from glotbench.extract import strict_json_object, strip_think

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
    the panel's mean of judges (glotbench.judges.panel), orders averaged per prompt."""
    from glotbench.judges.panel import mean_of_judges

    return mean_of_judges(values, prompts, resamples=resamples, seed=seed)
