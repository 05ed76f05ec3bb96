"""Metrics: per-item sufficient statistics, aggregation over items and groups, signatures."""

from glotbench.metrics.ratio import ItemScore, RatioMetric, ScoredSample, aggregate, repeat_stability

__all__ = ["ItemScore", "RatioMetric", "ScoredSample", "aggregate", "repeat_stability"]
