"""`glotbench score`: sacrebleu-like scoring of plain text files, one segment per line."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

from glotbench.errors import GlotbenchError
from glotbench.stats import Estimate, bootstrap_many, ratio_fn

FILE_METRICS = ("bleu", "chrf", "chrf++", "token_f1")


def read_lines(path: str) -> list[str]:
    p = Path(path)
    if not p.is_file():
        raise GlotbenchError(f"file not found: {p}")
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise GlotbenchError(f"{p}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    # One segment per line; only the line break is removed (no other normalisation).
    return text.split("\n")[:-1] if text.endswith("\n") else text.split("\n")


def score_files(metric: str, hyps_path: str, refs_paths: Sequence[str], *, lang: str | None = None,
                f1_norm: str = "unicode", tokenize: str | None = None, resamples: int = 1000, seed: int = 12345) -> tuple[Estimate, str]:
    metric = metric.lower()
    if metric not in FILE_METRICS:
        raise GlotbenchError(f"unknown metric {metric!r}; choose one of {', '.join(FILE_METRICS)}")
    if f1_norm != "unicode" and metric != "token_f1":
        raise GlotbenchError(f"--f1-norm applies to token_f1 only, not {metric}")
    if tokenize is not None and metric != "bleu":
        raise GlotbenchError(f"--tokenize applies to bleu only, not {metric}")
    hyps = read_lines(hyps_path)
    streams = [read_lines(p) for p in refs_paths]
    for p, s in zip(refs_paths, streams):
        if len(s) != len(hyps):
            raise GlotbenchError(f"{p} has {len(s)} lines but {hyps_path} has {len(hyps)}")
    refs = [list(r) for r in zip(*streams)]
    if metric == "token_f1":
        from glotbench.metrics.token_f1 import NORMS, token_f1, token_f1_signature

        if f1_norm not in NORMS:
            raise GlotbenchError(f"unknown token F1 normalisation {f1_norm!r}; choose one of {', '.join(NORMS)}")
        stats = np.array([[token_f1(h, r, lang, norm=f1_norm), 1.0] for h, r in zip(hyps, refs)]).reshape(-1, 2)
        est = bootstrap_many(stats, {"f1": ratio_fn(0, 1)}, resamples=resamples, seed=seed)["f1"]
        est = Estimate(100 * est.value, 100 * est.ci_low, 100 * est.ci_high, est.n)
        return est, f"glotbench:{token_f1_signature(lang, norm=f1_norm)}|boot:{resamples},seed:{seed}"
    from glotbench.metrics.corpus import SacreMetric

    try:
        m = SacreMetric(metric, lang, **({"tokenize": tokenize} if tokenize else {}))
    except (ValueError, RuntimeError) as e:
        raise GlotbenchError(str(e)) from None
    res = m.corpus_score(hyps, refs, resamples=resamples, seed=seed)
    return res.estimate, res.signature
