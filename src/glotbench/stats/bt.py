"""Bradley–Terry ratings from pairwise games, as Arena-Hard-Auto fits them: a logistic model.

A game between models i and j with outcome y (i's share: win 1, tie 1/2, loss 0; two judged orders
averaged) has P(i beats j) = σ(β_i − β_j + x·γ), x the game's style covariates (none by default).
The log-likelihood Σ w·[y·log σ + (1 − y)·log(1 − σ)] is what Arena-Hard-Auto's `compute_mle_elo`
maximises with scikit-learn (a tie there is a win for each side at half weight: the same function),
here by Newton's method with one model's β held at 0 (the model is identified only up to a shift)
and a ridge of `RIDGE` on every parameter, so a model that won or lost every game gets a large
finite rating instead of none (it is flagged `separated`). The fit equals scikit-learn's and
statsmodels' logistic regressions on the same game matrix (tests/test_arena_rank.py).

Ratings are reported on the Elo scale, centred on the mean model: 1000 + 400·log10(e)·(β − mean β):
no model is the anchor, and a 400-point gap is 10:1 odds. Bootstrap CIs resample prompts (each
prompt's games together, for every judge at once); `style_features` gives Arena-Hard-Auto's style
covariates (answer length and markdown headers, lists and bold: (a − b)/(a + b), scaled).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    import numpy as np

RIDGE = 1e-6
ELO = 400.0 / math.log(10.0)


@dataclass(frozen=True)
class Fit:
    beta: np.ndarray  # (models,), anchor at 0
    gamma: np.ndarray  # (covariates,)
    iterations: int


def fit(pairs: np.ndarray, y: np.ndarray, n_models: int, *, weights: np.ndarray | None = None,
        covariates: np.ndarray | None = None, anchor: int = 0, ridge: float = RIDGE,
        start: np.ndarray | None = None, tol: float = 1e-10, max_iter: int = 100) -> Fit:
    """Maximum (ridge-penalised) likelihood: `pairs` (games x 2) model indices (i, j), `y` i's
    outcome in [0, 1], `weights` per game (a bootstrap's prompt counts), `covariates` (games x p)."""
    import numpy as np

    g = len(y)
    w = np.ones(g) if weights is None else np.asarray(weights, dtype=np.float64)
    cols = [k for k in range(n_models) if k != anchor]
    pos = {k: c for c, k in enumerate(cols)}
    p = 0 if covariates is None else covariates.shape[1]
    X = np.zeros((g, len(cols) + p))
    rows = np.arange(g)
    for side, sign in ((0, 1.0), (1, -1.0)):
        idx = np.array([pos.get(int(k), -1) for k in pairs[:, side]])
        mask = idx >= 0
        X[rows[mask], idx[mask]] += sign
    if p:
        X[:, len(cols):] = covariates
    theta = np.zeros(X.shape[1]) if start is None else np.array(start, dtype=np.float64)
    it = 0
    for it in range(1, max_iter + 1):  # noqa: B007 - `it` is read after the loop (iterations run)
        eta = X @ theta
        prob = 1.0 / (1.0 + np.exp(-eta))
        grad = X.T @ (w * (y - prob)) - ridge * theta
        hess = (X * (w * prob * (1 - prob))[:, None]).T @ X + ridge * np.eye(X.shape[1])
        step = np.linalg.solve(hess, grad)
        theta = theta + step
        if np.max(np.abs(step)) < tol:
            break
    beta = np.zeros(n_models)
    beta[cols] = theta[:len(cols)]
    return Fit(beta, theta[len(cols):], it)


def theta_of(f: Fit, anchor: int = 0) -> np.ndarray:
    """A fit's parameters in `fit`'s order (a warm start for the bootstrap's fits)."""
    import numpy as np

    return np.concatenate([np.delete(f.beta, anchor), f.gamma])


def elo(beta: np.ndarray) -> np.ndarray:
    """Ratings on the Elo scale, the mean model at 1000."""
    return 1000.0 + ELO * (beta - beta.mean())


def separated(pairs: np.ndarray, y: np.ndarray, n_models: int) -> list[bool]:
    """Models that won (or lost) every game they played: their maximum-likelihood rating is
    infinite; the ridge keeps it finite and large."""
    import numpy as np

    out = []
    for k in range(n_models):
        own = np.concatenate([y[pairs[:, 0] == k], 1 - y[pairs[:, 1] == k]])
        out.append(bool(len(own)) and (bool(np.all(own == 1)) or bool(np.all(own == 0))))
    return out


def connected(pairs: np.ndarray, n_models: int) -> bool:
    """Do the games link every model to every other (else their ratings share no scale)?"""
    seen, todo = {0}, [0]
    links: dict[int, set[int]] = {k: set() for k in range(n_models)}
    for i, j in pairs.tolist():
        links[i].add(j)
        links[j].add(i)
    while todo:
        for nb in links[todo.pop()] - seen:
            seen.add(nb)
            todo.append(nb)
    return len(seen) == n_models


# -- style covariates (Arena-Hard-Auto / FastChat `count_markdown_elements`) -----------------------
_CODE = re.compile(r"```[^`]*```")
_HEADER = re.compile(r"^#{1,6}\s", re.MULTILINE)
_LIST = re.compile(r"^\s*(?:\d+\.|[-*+])\s", re.MULTILINE)
_BOLD = re.compile(r"\*\*[^*\n]+\*\*|__[^_\n]+__")
STYLE = ("length", "headers", "lists", "bold")


def style_counts(text: str) -> tuple[int, int, int, int]:
    """Characters (of the whole answer), and markdown headers, list items and bold spans outside
    code blocks. Length in characters, not tokens: a tokenizer splits Lao or Khmer very differently
    from English, characters do not."""
    bare = _CODE.sub("", text)
    return len(text), len(_HEADER.findall(bare)), len(_LIST.findall(bare)), len(_BOLD.findall(bare))


def style_features(a: Sequence[tuple[int, ...]], b: Sequence[tuple[int, ...]]) -> tuple[np.ndarray, list[str]]:
    """Per game, (a − b) / (a + b) for each count (0 when both are 0), scaled to unit root mean square
    over the games; a feature that is 0 in every game is left out. Returns the matrix and the names
    kept. Not centred, unlike FastChat's (which draws each battle's sides at random, so its mean is
    near 0 anyway): in an arena the candidate is always the first side, and centring would hand the
    candidates' average style advantage back to their ratings."""
    import numpy as np

    A, B = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    total = A + B
    diff = np.divide(A - B, total, out=np.zeros_like(total), where=total > 0)
    rms = np.sqrt((diff ** 2).mean(axis=0)) if len(diff) else np.zeros(A.shape[1] if A.ndim == 2 else 0)
    keep = [k for k in range(diff.shape[1]) if rms[k] > 1e-12]
    return diff[:, keep] / rms[keep], [STYLE[k] for k in keep]
