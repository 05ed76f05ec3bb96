"""`glotbench score`: sacrebleu-like scoring of plain text files, one segment per line.

BLEU, chrF and chrF++ take sacrebleu's own settings (smoothing method and value, effective order,
maximum n-gram order, lower-casing; chrF's β, character order, whitespace and epsilon smoothing),
each recorded in the signature; token F1 and exact match (SQuAD) take the normalisation and the
empty-answer rule. Corpus scores come with a bootstrap CI; `sentence_level` gives one score per
segment instead, as sacrebleu's `--sentence-level` does (BLEU with effective order, as its CLI sets).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from glotbench.errors import GlotbenchError
from glotbench.signature import Signature
from glotbench.stats import Estimate, bootstrap_many, ratio_fn

CORPUS_METRICS = ("bleu", "chrf", "chrf++")
SQUAD_METRICS = ("token_f1", "exact_match")
FILE_METRICS = CORPUS_METRICS + SQUAD_METRICS


@dataclass(frozen=True)
class FileScoreOptions:
    """The settings of `glotbench score`. None or False: the metric's default (sacrebleu's for BLEU
    and chrF). Each setting names the metrics it applies to in `APPLIES`."""

    lang: str | None = None
    f1_norm: str = "unicode"
    f1_empty: str = "v1.1"
    tokenize: str | None = None
    smooth_method: str | None = None
    smooth_value: float | None = None
    effective_order: bool = False
    max_ngram_order: int | None = None
    chrf_beta: int | None = None
    chrf_char_order: int | None = None
    chrf_whitespace: bool = False
    chrf_eps_smoothing: bool = False
    lowercase: bool = False
    sentence_level: bool = False
    resamples: int = 1000
    seed: int = 12345


# option -> (its CLI flag, the metrics it applies to, its default: a value other than this is "set")
APPLIES: dict[str, tuple[str, tuple[str, ...], Any]] = {
    "f1_norm": ("--f1-norm", SQUAD_METRICS, "unicode"),
    "f1_empty": ("--f1-empty", SQUAD_METRICS, "v1.1"),
    "tokenize": ("--tokenize", ("bleu",), None),
    "smooth_method": ("--smooth-method", ("bleu",), None),
    "smooth_value": ("--smooth-value", ("bleu",), None),
    "effective_order": ("--effective-order", ("bleu",), False),
    "max_ngram_order": ("--max-ngram-order", ("bleu",), None),
    "chrf_beta": ("--chrf-beta", ("chrf", "chrf++"), None),
    "chrf_char_order": ("--chrf-char-order", ("chrf", "chrf++"), None),
    "chrf_whitespace": ("--chrf-whitespace", ("chrf", "chrf++"), False),
    "chrf_eps_smoothing": ("--chrf-eps-smoothing", ("chrf", "chrf++"), False),
    "lowercase": ("--lowercase", CORPUS_METRICS, False),
}
# sacrebleu's keyword for each option that goes to BLEU or CHRF
_SACRE_KW = {"tokenize": "tokenize", "smooth_method": "smooth_method", "smooth_value": "smooth_value",
             "effective_order": "effective_order", "max_ngram_order": "max_ngram_order", "chrf_beta": "beta",
             "chrf_char_order": "char_order", "chrf_whitespace": "whitespace",
             "chrf_eps_smoothing": "eps_smoothing", "lowercase": "lowercase"}


@dataclass(frozen=True)
class FileScore:
    """One metric's result: the corpus estimate (CI from the bootstrap), its signature and, at
    sentence level, the per-segment scores (0-100)."""

    metric: str
    estimate: Estimate
    signature: str
    segments: tuple[float, ...] | None = None

    def to_dict(self) -> dict[str, Any]:
        """Full precision (no rounding), for `--format json`."""
        e = self.estimate.to_dict()
        out: dict[str, Any] = {"name": self.metric}
        if self.segments is None:
            out.update(score=e["value"], ci_low=e["ci_low"], ci_high=e["ci_high"], confidence=0.95, n=e["n"])
        else:
            out.update(segments=list(self.segments), n=len(self.segments))
        out["signature"] = self.signature
        return out


def read_lines(path: str) -> list[str]:
    """One segment per line, as sacrebleu's CLI reads its files: lines end at "\\n" only (a lone "\\r"
    inside a line stays in it; Python's universal newlines would split it there), each line's trailing
    whitespace removed (`str.rstrip`, sacrebleu's: a CRLF file's "\\r", spaces before the break, which
    `--chrf-whitespace` would count), nothing else changed (a byte-order mark stays, as there). A
    file with no line at all is an error (sacrebleu: "contains no sentence"), not one empty segment.
    (Not `data.py`'s reader: it strips a byte-order mark, and its pydantic import costs `score` 0.17 s.)"""
    p = Path(path)
    if p.is_dir():
        raise GlotbenchError(f"{p}: is a directory, not a file")
    if not p.is_file():
        raise GlotbenchError(f"file not found: {p}")
    try:
        text = p.read_bytes().decode("utf-8")
    except UnicodeDecodeError as e:
        raise GlotbenchError(f"{p}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    if not lines:
        raise GlotbenchError(f"{p}: empty, no line to score")
    return [line.rstrip() for line in lines]


def check_options(metrics: Sequence[str], opts: FileScoreOptions) -> list[str]:
    """The metrics, lower-cased and checked; every option set must apply to one of them."""
    names = [m.lower() for m in metrics] or ["chrf++"]
    unknown = [m for m in names if m not in FILE_METRICS]
    if unknown:
        raise GlotbenchError(f"unknown metric {unknown[0]!r}; choose one of {', '.join(FILE_METRICS)}")
    if len(set(names)) != len(names):
        raise GlotbenchError(f"--metric {next(m for m in names if names.count(m) > 1)} is given twice")
    for field, (flag, applies, default) in APPLIES.items():
        if getattr(opts, field) != default and not set(applies) & set(names):
            raise GlotbenchError(f"{flag} applies to {' and '.join(applies)} only, not {', '.join(names)}")
    if opts.sentence_level and len(names) > 1:
        raise GlotbenchError("--sentence-level scores one metric at a time (as sacrebleu's)")
    if opts.smooth_method is not None:
        from sacrebleu.metrics import BLEU

        if opts.smooth_method not in BLEU.SMOOTH_DEFAULTS:
            raise GlotbenchError(f"unknown --smooth-method {opts.smooth_method!r}; sacrebleu has "
                                 f"{', '.join(BLEU.SMOOTH_DEFAULTS)}")
    if opts.smooth_value is not None and opts.smooth_method not in ("floor", "add-k"):
        raise GlotbenchError("--smooth-value applies to --smooth-method floor or add-k only")
    for flag, value in (("--max-ngram-order", opts.max_ngram_order), ("--chrf-char-order", opts.chrf_char_order),
                        ("--chrf-beta", opts.chrf_beta)):
        if value is not None and value < 1:
            raise GlotbenchError(f"{flag} must be at least 1, got {value}")
    if opts.resamples < 0:
        raise GlotbenchError(f"--resamples must be 0 (no bootstrap) or more, got {opts.resamples}")
    return names


def score_files(metrics: str | Sequence[str], hyps_path: str, refs_paths: Sequence[str],
                opts: FileScoreOptions = FileScoreOptions()) -> list[FileScore]:
    """Score a hypothesis file against reference files (aligned by line) with each metric."""
    names = check_options([metrics] if isinstance(metrics, str) else metrics, opts)
    hyps = read_lines(hyps_path)
    streams = [read_lines(p) for p in refs_paths]
    for p, s in zip(refs_paths, streams):
        if len(s) != len(hyps):
            raise GlotbenchError(f"{p} has {len(s)} lines but {hyps_path} has {len(hyps)}")
    refs = [list(r) for r in zip(*streams)]
    return [_squad(m, hyps, refs, opts) if m in SQUAD_METRICS else _corpus(m, hyps, refs, opts) for m in names]


def _signed(sig: str, resamples: int = 0, seed: int = 0) -> str:
    """A metric's signature as glotbench's (`glotbench:token_f1|…`), with its bootstrap when resampled."""
    return Signature.parse(sig).under("glotbench").plus(("boot", f"{resamples},seed:{seed}") if resamples else None).format()


def _squad(metric: str, hyps: list[str], refs: list[list[str]], opts: FileScoreOptions) -> FileScore:
    from glotbench.metrics.token_f1 import exact_match, token_f1, token_f1_signature

    fn = token_f1 if metric == "token_f1" else exact_match
    try:
        values = [fn(h, r, opts.lang, norm=opts.f1_norm, empty=opts.f1_empty) for h, r in zip(hyps, refs)]
        sig = token_f1_signature(opts.lang, norm=opts.f1_norm, empty=opts.f1_empty, metric=metric)
    except ValueError as e:
        raise GlotbenchError(str(e)) from None
    if opts.sentence_level:
        mean = 100 * sum(values) / len(values) if values else float("nan")
        return FileScore(metric, Estimate(mean, mean, mean, len(values)), _signed(sig),
                         tuple(100 * v for v in values))
    stats = np.array([[v, 1.0] for v in values]).reshape(-1, 2)
    est = bootstrap_many(stats, {metric: ratio_fn(0, 1)}, resamples=opts.resamples, seed=opts.seed)[metric]
    est = Estimate(100 * est.value, 100 * est.ci_low, 100 * est.ci_high, est.n)
    return FileScore(metric, est, _signed(sig, opts.resamples, opts.seed))


def _corpus(metric: str, hyps: list[str], refs: list[list[str]], opts: FileScoreOptions) -> FileScore:
    from glotbench.metrics.corpus import SacreMetric

    kw = {_SACRE_KW[f]: getattr(opts, f) for f, (_, applies, default) in APPLIES.items()
          if f in _SACRE_KW and metric in applies and getattr(opts, f) != default}
    if opts.sentence_level and metric == "bleu":
        kw["effective_order"] = True  # as sacrebleu's CLI does for sentence-level BLEU
    try:
        m = SacreMetric(metric, opts.lang, **kw)
    except (ValueError, RuntimeError, AssertionError) as e:
        raise GlotbenchError(str(e)) from None
    if not opts.sentence_level:
        res = m.corpus_score(hyps, refs, resamples=opts.resamples, seed=opts.seed)
        return FileScore(metric, res.estimate, res.signature)
    rows = m.stats(hyps, refs)
    segments = tuple(m.score_from_stats(r) for r in rows)
    value = m.score_stats(rows, resamples=0).estimate.value
    return FileScore(metric, Estimate(value, value, value, len(rows)), m.signature(), segments)
