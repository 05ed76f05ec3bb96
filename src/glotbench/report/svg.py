"""Plots as inline SVG written in Python: no JavaScript library, no CDN, works offline, a few hundred
bytes per plot, and as fast as string formatting. Every number a plot shows is also in its text (or
in a `<title>` tooltip), tagged with `data-src` (where in results.json it came from) so tests can check
it against the run's files."""

from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape
from typing import Sequence

from glotbench.report.terminal import interval_text, n_text

PALETTE = ("#2b6cb0", "#c05621", "#2f855a", "#9b2c2c", "#6b46c1", "#b7791f", "#2c7a7b", "#97266d")


def num(value: float | None, src: str, *, factor: float = 1.0, digits: int = 1, raw: float | None = None,
        suffix: str = "") -> str:
    """A number as shown on a page: an element that carries its source and unrounded value."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return f'<span class="num na" data-src="{escape(src)}">—</span>'
    shown = f"{factor * value:.{digits}f}"
    return (f'<span class="num" data-src="{escape(src)}" data-raw="{raw if raw is not None else value!r}" '
            f'data-factor="{factor}" data-digits="{digits}">{shown}{escape(suffix)}</span>')


@dataclass(frozen=True)
class Row:
    label: str
    value: float | None
    lo: float | None = None
    hi: float | None = None
    src: str = ""
    note: str = ""
    header: bool = False  # a group heading ("by category"), no value
    n: str = ""  # the units beside the interval ("12", "12‡4": items‡clusters)
    few: bool = False  # the interval rests on too few units (†, docs/metrics.md)


def units(est: dict | None) -> dict:
    """A plot row's units and † from its estimate (`Row(..., **units(est))`): a plotted interval
    always shows its n (items‡clusters) and its mark."""
    return {"n": n_text(est), "few": bool(est and est.get("too_few_units"))}


def _x(v: float, lo: float, hi: float, x0: float, width: float) -> float:
    return x0 + (v - lo) / (hi - lo or 1.0) * width


def ci_plot(rows: Sequence[Row], *, factor: float = 100.0, domain: tuple[float, float] | None = None,
            unit: str = "%", width: int = 640, label_w: int = 190) -> str:
    """Dots with 95% CI error bars, one row per group, with the value and CI written at the right."""
    vals = [factor * v for r in rows for v in (r.value, r.lo, r.hi) if v is not None and v == v]
    # Percentages span 0-100; points (BLEU, chrF) span 0 to a little above the largest value shown.
    lo, hi = domain or (min([0.0, *vals]), 100.0 if factor == 100 else max([10.0, *(1.1 * v for v in vals)]))
    row_h, top, plot_w = 22, 22, width - label_w - 200
    h = top + row_h * len(rows) + 8
    out = [f'<svg class="plot ci" role="img" viewBox="0 0 {width} {h}" width="100%" '
           f'preserveAspectRatio="xMinYMin meet">']
    for t in _ticks(lo, hi):
        x = _x(t, lo, hi, label_w, plot_w)
        out.append(f'<line x1="{x:.1f}" y1="{top - 4}" x2="{x:.1f}" y2="{h - 6}" class="grid"/>'
                   f'<text x="{x:.1f}" y="{top - 8}" class="tick">{t:g}{escape(unit)}</text>')
    for i, r in enumerate(rows):
        y = top + row_h * i + row_h / 2
        if r.header:
            out.append(f'<text x="4" y="{y + 4:.1f}" class="grp">{escape(_short(r.label, 60))}</text>')
            continue
        out.append(f'<text x="{label_w - 8}" y="{y + 4:.1f}" class="lbl">{escape(_short(r.label, 25))}'
                   f'<title>{escape(r.label)}</title></text>')
        if r.value is None or r.value != r.value:
            out.append(f'<text x="{label_w}" y="{y + 4:.1f}" class="na">no score {escape(r.note)}</text>')
            continue
        if r.lo is not None and r.hi is not None and r.lo == r.lo:
            x1, x2 = _x(factor * r.lo, lo, hi, label_w, plot_w), _x(factor * r.hi, lo, hi, label_w, plot_w)
            out.append(f'<line x1="{x1:.1f}" y1="{y:.1f}" x2="{x2:.1f}" y2="{y:.1f}" class="err"/>'
                       f'<line x1="{x1:.1f}" y1="{y - 5:.1f}" x2="{x1:.1f}" y2="{y + 5:.1f}" class="err"/>'
                       f'<line x1="{x2:.1f}" y1="{y - 5:.1f}" x2="{x2:.1f}" y2="{y + 5:.1f}" class="err"/>')
        x = _x(factor * r.value, lo, hi, label_w, plot_w)
        # the value, interval, † and n as every view prints them (report/terminal.py `interval_text`)
        text = interval_text({"value": r.value, "ci_low": r.lo, "ci_high": r.hi, "too_few_units": r.few},
                             "fraction" if factor == 100 else "points", n=False) + (f" n={r.n}" if r.n else "")
        out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4.5" class="dot"><title>{escape(r.label)}: '
                   f'{escape(text)}</title></circle>')
        tag = (f' class="val num" data-src="{escape(r.src)}" data-raw="{r.value!r}" data-factor="{factor}" data-digits="1"'
               if r.src else ' class="val"')
        out.append(f'<text x="{width - 195}" y="{y + 4:.1f}"{tag}>{escape(text)}</text>')
    out.append("</svg>")
    return "".join(out)


def bar_plot(rows: Sequence[tuple[str, float, str]], *, unit: str = "", width: int = 640,
             label_w: int = 190, digits: int = 0) -> str:
    """Horizontal bars (counts or rates): (label, value, data-src)."""
    top = max([1e-9, *(v for _, v, _ in rows)])
    row_h, plot_w = 22, width - label_w - 90
    h = row_h * len(rows) + 6
    out = [f'<svg class="plot bars" role="img" viewBox="0 0 {width} {h}" width="100%" '
           f'preserveAspectRatio="xMinYMin meet">']
    for i, (label, v, _) in enumerate(rows):
        y = row_h * i + 3
        w = max(1.0, v / top * plot_w) if v else 0.0
        out.append(f'<text x="{label_w - 8}" y="{y + 14}" class="lbl">{escape(_short(label, 28))}</text>'
                   f'<rect x="{label_w}" y="{y + 2}" width="{w:.1f}" height="{row_h - 8}" class="bar"/>'
                   f'<text x="{label_w + w + 6:.1f}" y="{y + 14}" class="val">{v:.{digits}f}{escape(unit)}</text>')
    out.append("</svg>")
    return "".join(out)


@dataclass(frozen=True)
class Point:
    label: str
    x: float
    y: float
    lo: float | None = None
    hi: float | None = None


def scatter(points: Sequence[Point], front: Sequence[str], *, xlabel: str, ylabel: str, factor: float = 100.0,
            width: int = 640, height: int = 360) -> str:
    """Score (y, with CI bars) against cost/tokens/latency (x, log scale when it spans a decade);
    the Pareto front joined by a line and its models named."""
    if not points:
        return ""
    left, right, top, bottom = 56, 20, 16, 44
    xs = [p.x for p in points]
    logx = min(xs) > 0 and max(xs) / min(xs) >= 10
    tx = (lambda v: math.log10(v)) if logx else (lambda v: v)
    x_lo, x_hi = tx(min(xs)), tx(max(xs))
    pad = (x_hi - x_lo) * 0.08 or (abs(x_hi) * 0.1 or 1.0)
    x_lo, x_hi = x_lo - pad, x_hi + pad
    ys = [factor * v for p in points for v in (p.y, p.lo, p.hi) if v is not None]
    y_lo, y_hi = min(ys), max(ys)
    ypad = (y_hi - y_lo) * 0.1 or 1.0
    y_lo, y_hi = max(0.0, y_lo - ypad), y_hi + ypad
    pw, ph = width - left - right, height - top - bottom
    X = lambda v: left + (tx(v) - x_lo) / (x_hi - x_lo) * pw  # noqa: E731
    Y = lambda v: top + ph - (factor * v - y_lo) / (y_hi - y_lo) * ph  # noqa: E731
    out = [f'<svg class="plot scatter" role="img" viewBox="0 0 {width} {height}" width="100%" '
           f'preserveAspectRatio="xMinYMin meet">',
           f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" class="frame"/>']
    for t in _ticks(y_lo, y_hi):
        y = top + ph - (t - y_lo) / (y_hi - y_lo) * ph
        out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + pw}" y2="{y:.1f}" class="grid"/>'
                   f'<text x="{left - 6}" y="{y + 4:.1f}" class="lbl">{t:g}</text>')
    for t in (_log_ticks(x_lo, x_hi) if logx else _ticks(x_lo, x_hi)):
        x = left + (tx(t) - x_lo) / (x_hi - x_lo) * pw
        out.append(f'<text x="{x:.1f}" y="{top + ph + 16}" class="tick">{t:g}</text>')
    out.append(f'<text x="{left + pw / 2}" y="{height - 6}" class="tick">{escape(xlabel)}'
               f'{" (log scale)" if logx else ""}</text>'
               f'<text x="14" y="{top + ph / 2}" class="tick" transform="rotate(-90 14 {top + ph / 2})">'
               f'{escape(ylabel)}</text>')
    on_front = [p for p in sorted(points, key=lambda p: p.x) if p.label in front]
    if len(on_front) > 1:
        out.append('<polyline class="front" points="' + " ".join(f"{X(p.x):.1f},{Y(p.y):.1f}" for p in on_front)
                   + '"><title>Pareto front</title></polyline>')
    for p in points:
        x, y = X(p.x), Y(p.y)
        if p.lo is not None and p.hi is not None:
            out.append(f'<line x1="{x:.1f}" y1="{Y(p.lo):.1f}" x2="{x:.1f}" y2="{Y(p.hi):.1f}" class="err"/>')
        cls = "dot front-dot" if p.label in front else "dot"
        anchor = ' text-anchor="end"' if x > left + 0.6 * pw else ""  # right-hand labels go left
        out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="5" class="{cls}" data-model="{escape(p.label)}">'
                   f'<title>{escape(p.label)}: {factor * p.y:.1f} at {p.x:g}</title></circle>'
                   f'<text x="{x - 8 if anchor else x + 8:.1f}" y="{y - 6:.1f}" class="ptlbl"{anchor}>'
                   f'{escape(_short(p.label, 24))}'
                   f'{" ◆" if p.label in front else ""}</text>')
    out.append("</svg>")
    return "".join(out)


def heat_color(v: float | None, lo: float, hi: float) -> str:
    """A white-to-blue background (and a readable text colour) for a heatmap cell."""
    if v is None or v != v:
        return "background:#eee"
    t = 0.0 if hi <= lo else (v - lo) / (hi - lo)
    r, g, b = (int(255 - 0.8 * t * (255 - c)) for c in (43, 108, 176))
    return f"background:rgb({r},{g},{b});color:{'#fff' if t > 0.6 else '#1a202c'}"


def _short(s: str, n: int) -> str:
    return s if len(s) <= n else s[: n - 1] + "…"


def _ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    span = hi - lo
    if span <= 0:
        return [lo]
    step = 10 ** math.floor(math.log10(span / n))
    for m in (1, 2, 2.5, 5, 10):
        if span / (step * m) <= n:
            step *= m
            break
    first = math.ceil(lo / step) * step
    return [round(first + i * step, 10) for i in range(int((hi - first) / step) + 1)]


def _log_ticks(lo: float, hi: float) -> list[float]:
    return [10.0 ** e for e in range(math.ceil(lo), math.floor(hi) + 1)] or [10 ** lo]
