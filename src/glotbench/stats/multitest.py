"""Corrections for many comparisons (statsmodels.stats.multitest).

A board of ten models tests nine of them against the column's best; `compare` over five runs makes
ten pairwise tests per metric. At alpha 0.05 each, some "differences" are found by chance alone.
- `holm` (default): Holm's step-down correction; controls the family-wise error rate (the chance
  of any false "different") at alpha, under any dependence between the tests; never less powerful
  than Bonferroni.
- `bh`: Benjamini–Hochberg; controls the false discovery rate (the expected share of false
  "different" among those declared) at alpha, for independent or positively dependent tests.
- `none`: the raw p-values.
Adjusted p-values are compared with alpha as raw ones are; both are kept in every JSON export.
"""

from __future__ import annotations

from typing import Sequence

CORRECTIONS = {"holm": "holm", "bh": "fdr_bh", "none": None}
NAMES = {"holm": "Holm (family-wise error rate)", "bh": "Benjamini–Hochberg (false discovery rate)",
         "none": "no correction"}


def check_correction(method: str) -> str:
    if method not in CORRECTIONS:
        from glotbench.errors import GlotbenchError

        raise GlotbenchError(f"--correction must be one of {', '.join(CORRECTIONS)}, got {method!r}")
    return method


def adjust(pvalues: Sequence[float], method: str = "holm") -> list[float]:
    """The p-values adjusted for their family (all of `pvalues`), in the same order."""
    check_correction(method)
    p = [float(x) for x in pvalues]
    if not p or CORRECTIONS[method] is None:
        return p
    from statsmodels.stats.multitest import multipletests

    return [float(x) for x in multipletests(p, method=CORRECTIONS[method])[1]]
