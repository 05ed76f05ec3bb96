"""Power of the paired test between two models on the same items (`glotbench plan`).

Each item gives two 0/1 outcomes (model A right?, model B right?). With accuracies p_A, p_B and the
correlation ρ (phi coefficient) of the two outcomes over items, the four cells are
    p11 = p_A·p_B + ρ·√(p_A(1−p_A)·p_B(1−p_B)),  p10 = p_A − p11,  p01 = p_B − p11,  p00 = rest
(p11 held within the bounds the margins allow: a ρ they cannot reach is capped, and said so).

glotbench's paired test, approximate randomisation, swaps each item's two outcomes: only the
m discordant items move, and its p-value is the exact two-sided binomial test of the m01 items B
won among them against 1/2 — McNemar's exact test. Its power is computed exactly (`power`):

    power = Σ_m Binomial(m; n, ψ) · P(reject | m),   ψ = p10 + p01,

P(reject | m) the probability that Binomial(m, p01/ψ) falls in the test's two tails at level α.
`power_normal` is the normal approximation (Connor 1987, "Sample size for testing differences in
proportions for the paired-sample design", Biometrics 43:207):

    power ≈ Φ((|d|·√n − z_{1−α/2}·√ψ) / √(ψ − d²)) (+ the other tail),   d = p_B − p_A,

whose closed form for n starts the search for the items needed. The approximation is optimistic
for the exact test (37 items, base rate 0.8, ρ 0.3: its smallest detectable difference, 23.1
points, has power 0.77, not 0.80; the exact answer is 23.7 points; at 279 items, base 0.6, ρ 0.5:
8.3 against 8.5 points): `plan` uses the exact power, the approximation only above `EXACT_MAX` items. The smallest difference detected is found by
root finding in d (p_A = base − d/2, p_B = base + d/2); the items needed by bisection on n (the
exact power saw-tooths in n, so a few larger n may fall just under the target). Clustered items
count as n / design_effect independent items. Both are checked against simulated paired outcomes
(tests/test_plan.py): McNemar's exact test, and glotbench's own randomisation test.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

_N = NormalDist()


@dataclass(frozen=True, slots=True)
class Cells:
    p11: float
    p10: float
    p01: float
    p00: float
    capped: bool  # the correlation asked for is beyond what the margins allow

    @property
    def discordant(self) -> float:
        return self.p10 + self.p01


def cells(p_a: float, p_b: float, correlation: float) -> Cells:
    """The joint distribution of two 0/1 outcomes with these margins and phi correlation."""
    if not (0.0 <= p_a <= 1.0 and 0.0 <= p_b <= 1.0):
        raise ValueError(f"accuracies must lie in [0, 1], got {p_a:g} and {p_b:g}")
    if not -1.0 <= correlation <= 1.0:
        raise ValueError(f"the correlation must lie in [-1, 1], got {correlation:g}")
    p11 = p_a * p_b + correlation * math.sqrt(p_a * (1 - p_a) * p_b * (1 - p_b))
    lo, hi = max(0.0, p_a + p_b - 1.0), min(p_a, p_b)
    capped = not (lo - 1e-12 <= p11 <= hi + 1e-12)
    p11 = min(max(p11, lo), hi)
    return Cells(p11, p_a - p11, p_b - p11, 1.0 - p_a - p_b + p11, capped)


def phi(p11: float, p_a: float, p_b: float) -> float | None:
    """The phi correlation of two 0/1 outcomes (None when one of them never varies)."""
    den = p_a * (1 - p_a) * p_b * (1 - p_b)
    return (p11 - p_a * p_b) / math.sqrt(den) if den > 0 else None


EXACT_MAX = 200_000  # items: above, the normal approximation (exact power costs O(n))


def _reject_given_m(m, q: float, alpha: float):
    """P(the exact two-sided McNemar test rejects | m discordant items), the share of B's wins
    among them being q: for each m, the largest k with 2·P(Binomial(m, 1/2) ≤ k) ≤ alpha bounds
    the lower tail, m − k the upper."""
    import numpy as np
    from scipy.stats import binom

    m = np.asarray(m)
    k = binom.ppf(alpha / 2, m, 0.5)
    k = np.where(2 * binom.cdf(k, m, 0.5) <= alpha + 1e-12, k, k - 1)  # the lower tail's last value
    lower = np.where(k >= 0, binom.cdf(k, m, q), 0.0)
    upper = np.where(k >= 0, binom.sf(m - k - 1, m, q), 0.0)
    return lower + upper


def power(n: float, p_a: float, p_b: float, correlation: float, alpha: float = 0.05) -> float:
    """The power of the paired test (McNemar's exact test; glotbench's randomisation) over `n`
    items at two-sided level `alpha`; a fractional n (n / design effect) is rounded down. Above
    `EXACT_MAX` items, the normal approximation."""
    import numpy as np
    from scipy.stats import binom

    n = int(math.floor(n + 1e-9))
    c = cells(p_a, p_b, correlation)
    psi = c.discordant
    if n <= 0 or psi <= 0:
        return 0.0
    if n > EXACT_MAX:
        return power_normal(n, p_a, p_b, correlation, alpha)
    m = np.arange(n + 1)
    weights = binom.pmf(m, n, psi)
    keep = weights > 1e-15 * weights.max()  # the far tails add nothing
    return float(min(1.0, weights[keep] @ _reject_given_m(m[keep], c.p01 / psi, alpha)))


def power_normal(n: float, p_a: float, p_b: float, correlation: float, alpha: float = 0.05) -> float:
    """Connor's normal approximation of the paired test's power over `n` items."""
    c = cells(p_a, p_b, correlation)
    d = abs(p_b - p_a)
    psi = c.discordant
    var = psi - d * d
    if n <= 0 or psi <= 0:
        return alpha if d == 0 else 0.0
    z = _N.inv_cdf(1 - alpha / 2)
    if var <= 1e-15:  # every discordant item favours one side: detected as soon as n allows
        return 1.0 if d * math.sqrt(n) > z * math.sqrt(psi) else 0.0
    sd = math.sqrt(var)
    return _N.cdf((d * math.sqrt(n) - z * math.sqrt(psi)) / sd) + _N.cdf((-d * math.sqrt(n) - z * math.sqrt(psi)) / sd)


def items_needed_normal(diff: float, base_rate: float, correlation: float, alpha: float = 0.05,
                        target_power: float = 0.8) -> float | None:
    """Connor's closed form for the items `diff` needs (not rounded); None without discordance."""
    c = cells(base_rate - diff / 2, base_rate + diff / 2, correlation)
    psi, d = c.discordant, abs(diff)
    if d == 0 or psi <= 0:
        return None
    za, zb = _N.inv_cdf(1 - alpha / 2), _N.inv_cdf(target_power)
    return ((za * math.sqrt(psi) + zb * math.sqrt(max(psi - d * d, 0.0))) / d) ** 2


def items_needed(diff: float, base_rate: float, correlation: float, alpha: float = 0.05,
                 target_power: float = 0.8) -> int | None:
    """The items (independent) for the paired test to detect `diff` (p_B − p_A around `base_rate`)
    with `target_power`: bisection on the exact power from Connor's estimate. None when the
    margins leave no discordance."""
    guess = items_needed_normal(diff, base_rate, correlation, alpha, target_power)
    if guess is None:
        return None
    p_a, p_b = base_rate - diff / 2, base_rate + diff / 2
    if guess > EXACT_MAX:
        return math.ceil(guess)
    ok = lambda n: power(n, p_a, p_b, correlation, alpha) >= target_power  # noqa: E731
    lo, hi = 1, max(2, math.ceil(guess))
    while not ok(hi):
        lo, hi = hi, hi * 2
        if hi > EXACT_MAX:
            return math.ceil(guess)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi if not ok(lo) else lo


def min_detectable(n: float, base_rate: float, correlation: float, alpha: float = 0.05,
                   target_power: float = 0.8) -> float | None:
    """The smallest difference d (p_B − p_A around `base_rate`) the paired test detects with
    `target_power` on `n` items; None when no difference the base rate allows is enough."""
    from scipy.optimize import brentq

    d_max = 2 * min(base_rate, 1 - base_rate)
    f = lambda d: power(n, base_rate - d / 2, base_rate + d / 2, correlation, alpha) - target_power  # noqa: E731
    if d_max <= 0 or f(d_max) < 0:
        return None
    return float(brentq(f, 1e-9, d_max, xtol=1e-7))


def simulate(n: int, p_a: float, p_b: float, correlation: float, alpha: float = 0.05, sims: int = 10_000,
             seed: int = 0) -> float:
    """The share of `sims` simulated benchmarks (n items, paired 0/1 outcomes drawn from `cells`)
    where McNemar's exact two-sided test (scipy.stats.binomtest's rule, vectorised) rejects."""
    import numpy as np
    from scipy.stats import binom

    c = cells(p_a, p_b, correlation)
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(n, [c.p11, c.p10, c.p01, max(c.p00, 0.0)], size=sims)
    n10, n01 = counts[:, 1], counts[:, 2]
    m = n10 + n01
    p = np.minimum(1.0, 2 * binom.cdf(np.minimum(n10, n01), m, 0.5))
    return float((p <= alpha + 1e-12).mean())
