"""Metrics: per-item sufficient statistics, aggregation over items and groups, signatures.

Two kinds share one aggregation path (statistic rows -> column sums -> score; bootstrap over rows):
ratio metrics (`RatioMetric`: accuracy, exact match, word accuracy, token F1 as a mean) and corpus
metrics (`SacreMetric`: BLEU, chrF, chrF++ through sacrebleu).
"""

from glotbench.metrics.ratio import (
    ItemScore,
    MacroMetric,
    Metric,
    MissingStatistic,
    RatioMetric,
    Scored,
    ScoredSample,
    aggregate,
    check_statistics,
    needed_keys,
    normalise_to_floor,
    repeat_stability,
    zero_credit,
)


def accuracy(name: str = "accuracy") -> RatioMetric:
    """Share of items answered correctly: stats `correct` / `items`."""
    return RatioMetric(name, "correct", "items", "share of items answered correctly")


def exact_match(name: str = "exact_match") -> RatioMetric:
    """Share of items whose answer equals a reference: stats `exact` / `items`."""
    return RatioMetric(name, "exact", "items", "share of exact matches")


def word_accuracy(name: str = "word_accuracy") -> RatioMetric:
    """Micro word accuracy: stats `words_correct` / `words`."""
    return RatioMetric(name, "words_correct", "words", "correct words / reference words")


__all__ = ["ItemScore", "MacroMetric", "Metric", "MissingStatistic", "RatioMetric", "Scored", "ScoredSample", "accuracy", "aggregate", "check_statistics", "exact_match", "needed_keys", "normalise_to_floor",
           "repeat_stability", "word_accuracy", "zero_credit"]
