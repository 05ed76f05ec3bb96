"""The paired bootstrap's p-value where every resample gives the same difference (issue #30, honest at
small n): one item, or every item moving alike, gave p = 1/(R+1) = 0.001 beside a randomisation p of
1.0 (one item) or 0.12 (four clusters); the centred distribution is a point and says nothing."""

from __future__ import annotations

import numpy as np
import pytest

from glotbench.stats import paired_test


def acc(sums):
    return float(sums[0] / sums[1]) if sums[1] else 0.0


@pytest.mark.parametrize("a,b", [
    ([[0, 1]], [[1, 1]]),                                  # one item: wrong, then right
    ([[0, 3], [0, 3], [0, 3], [0, 3]], [[3, 3]] * 4),      # four clusters of 3, each 0 -> 100%
    ([[0.2, 1]], [[0.9, 1]]),                               # one sentence's score
])
def test_a_collapsed_bootstrap_gives_no_evidence(a, b):
    r = paired_test(np.array(a, float), np.array(b, float), acc, resamples=200, trials=200)
    assert r.delta > 0 and r.ci_low == r.ci_high == pytest.approx(r.delta)
    assert r.p_bootstrap == 1.0


def test_a_spread_bootstrap_keeps_its_p_value():
    rng = np.random.default_rng(3)
    a = np.stack([rng.integers(0, 2, 60), np.ones(60)], axis=1).astype(float)
    b = a.copy()
    b[:20, 0] = 1.0  # B right where A was right, and on the first 20 items
    r = paired_test(a, b, acc, resamples=500, trials=500)
    assert r.delta > 0 and r.ci_low < r.ci_high
    assert r.p_bootstrap < 0.05 and r.p_randomization < 0.05
