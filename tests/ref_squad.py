"""Test-only reference: the scoring functions of SQuAD's two official evaluation scripts, restated.

Sources: the evaluation scripts distributed with the SQuAD dataset
(https://rajpurkar.github.io/SQuAD-explorer/, "Evaluation Script v1.1" and "v2.0"), read in public
copies of evaluate-v1.1.py (github.com/seominjoon/denspi) and evaluate-v2.0.py (github.com/qwang70/bert).
The scripts carry no licence header of their own; SQuAD is distributed under CC BY-SA 4.0. This module
is our own restatement of their scoring logic (names kept so the two can be read side by side), used
only by the tests as the reference that glotbench.metrics.token_f1 must agree with. It is not part of
the package and nothing in src/ imports it.

What the scripts do, and this module reproduces step for step:
- normalize_answer (both): lower(); drop every character in string.punctuation; replace the words
  a/an/the (regex \\b(a|an|the)\\b) by a space; collapse whitespace with ' '.join(split()).
- v1.1 f1_score: token multiset overlap; `if num_same == 0: return 0` comes first, so two answers that
  both normalise to nothing score 0. exact_match_score: normalised strings equal (two empties: True).
  metric_max_over_ground_truths: the max over every ground truth.
- v2.0 compute_f1: `if len(gold_toks) == 0 or len(pred_toks) == 0: return int(gold_toks == pred_toks)`
  before the overlap test, so two empties score 1. compute_exact: normalised strings equal.
  get_raw_scores keeps only gold answers whose normalisation is non-empty, or [''] when none is.
"""

from __future__ import annotations

import collections
import re
import string


def normalize_answer(s: str) -> str:
    def remove_articles(text: str) -> str:
        return re.sub(r"\b(a|an|the)\b", " ", text)

    def white_space_fix(text: str) -> str:
        return " ".join(text.split())

    def remove_punc(text: str) -> str:
        exclude = set(string.punctuation)
        return "".join(ch for ch in text if ch not in exclude)

    return white_space_fix(remove_articles(remove_punc(s.lower())))


# -- evaluate-v1.1.py --------------------------------------------------------------------------

def v11_f1_score(prediction: str, ground_truth: str) -> float:
    prediction_tokens = normalize_answer(prediction).split()
    ground_truth_tokens = normalize_answer(ground_truth).split()
    common = collections.Counter(prediction_tokens) & collections.Counter(ground_truth_tokens)
    num_same = sum(common.values())
    if num_same == 0:
        return 0
    precision = 1.0 * num_same / len(prediction_tokens)
    recall = 1.0 * num_same / len(ground_truth_tokens)
    return (2 * precision * recall) / (precision + recall)


def v11_exact_match_score(prediction: str, ground_truth: str) -> bool:
    return normalize_answer(prediction) == normalize_answer(ground_truth)


def v11_metric_max_over_ground_truths(metric_fn, prediction: str, ground_truths: list[str]) -> float:
    return max(metric_fn(prediction, gt) for gt in ground_truths)


def v11(prediction: str, ground_truths: list[str]) -> tuple[float, float]:
    """(exact match, F1) for one question, as evaluate() of v1.1 adds them up (before the * 100)."""
    return (float(v11_metric_max_over_ground_truths(v11_exact_match_score, prediction, ground_truths)),
            float(v11_metric_max_over_ground_truths(v11_f1_score, prediction, ground_truths)))


# -- evaluate-v2.0.py --------------------------------------------------------------------------

def v20_get_tokens(s: str) -> list[str]:
    if not s:
        return []
    return normalize_answer(s).split()


def v20_compute_exact(a_gold: str, a_pred: str) -> int:
    return int(normalize_answer(a_gold) == normalize_answer(a_pred))


def v20_compute_f1(a_gold: str, a_pred: str) -> float:
    gold_toks = v20_get_tokens(a_gold)
    pred_toks = v20_get_tokens(a_pred)
    common = collections.Counter(gold_toks) & collections.Counter(pred_toks)
    num_same = sum(common.values())
    if len(gold_toks) == 0 or len(pred_toks) == 0:
        return int(gold_toks == pred_toks)
    if num_same == 0:
        return 0
    precision = 1.0 * num_same / len(pred_toks)
    recall = 1.0 * num_same / len(gold_toks)
    return (2 * precision * recall) / (precision + recall)


def v20(prediction: str, answers: list[str]) -> tuple[float, float]:
    """(exact, F1) for one question, as get_raw_scores of v2.0 computes them."""
    gold_answers = [a for a in answers if normalize_answer(a)]
    if not gold_answers:
        gold_answers = [""]
    return (float(max(v20_compute_exact(a, prediction) for a in gold_answers)),
            float(max(v20_compute_f1(a, prediction) for a in gold_answers)))
