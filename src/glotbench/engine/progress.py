"""The live progress line of a run (rich, on stderr): samples done, failures, retries, rate, ETA.

The ETA comes from the samples the model answered in this run (cached ones finish at once and would
make it look shorter), over the time since the first call went out (model loading excluded): after
the first completed batch of a batched local backend (16 replies in one go after a minute) it is
already a real estimate, and between batches it counts down from the estimate made at the last
completion rather than waiting for the next one. rich's own ETA column needs two completions within
30 s, so it showed `-:--:--` through a whole CPU run.

The line fits the console: when it is narrow (80 columns), the bar goes first, then the elapsed
time, the rate and the retries, then the description is shortened; the count and the ETA stay."""

from __future__ import annotations

import sys
import time
from typing import Any

from glotbench.engine.runner import RunCounters


def hms(seconds: float | None) -> str:
    """`H:MM:SS`, or `-:--:--` when unknown."""
    if seconds is None:
        return "-:--:--"
    s = max(0, int(round(seconds)))
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


def eta_seconds(c: RunCounters, now: float) -> float | None:
    """Seconds left, from the samples answered by the model since its first call (None: no estimate
    yet). Between completions the estimate made at the last one counts down."""
    if c.total and c.done >= c.total:
        return 0.0
    answered = c.done - c.cache_hits
    if c.first_call_at is None or answered <= 0 or c.last_answered_at is None:
        return None
    per_sample = max(c.last_answered_at - c.first_call_at, 1e-9) / answered
    return max(0.0, (c.total - c.done) * per_sample - (now - c.last_answered_at))


class _Line:
    """The renderable the live display redraws (4 times a second): built for the console's width."""

    BAR_MIN = 10

    def __init__(self, bar: "ProgressBar"):
        self.bar = bar

    def __rich_console__(self, console: Any, options: Any) -> Any:
        yield self.bar.render(options.max_width)


class ProgressBar:
    """A rich live line on a terminal; on a pipe or log file, a plain status line every 10 s. `out`:
    the console to draw on (default: stderr's)."""

    def __init__(self, description: str, enabled: bool = True, total: int | None = None, *, out: Any = None):
        self.enabled = enabled
        self.total = total
        self._out = out
        self.plain = enabled and out is None and not sys.stderr.isatty()
        self._live: Any = None
        from glotbench.report.terminal import visible

        self._description = visible(description)  # a model spec is user text: no escape sequences
        self._last = 0.0
        self._counters = RunCounters(total=total or 0)

    def __enter__(self) -> "ProgressBar":
        self._t0 = time.perf_counter()
        if not self.enabled or self.plain:
            return self
        from rich.live import Live

        from glotbench.report.terminal import console

        out = self._out if self._out is not None else console(stderr=True)
        self._live = Live(_Line(self), console=out, refresh_per_second=4, transient=False)
        self._live.__enter__()
        return self

    def fields(self, now: float) -> dict[str, str]:
        """The line's parts as text (the plain line and the live one say the same)."""
        c = self._counters
        elapsed = max(now - self._t0, 1e-9)
        return {"count": f"{c.done}/{c.total}", "failures": f"failures {c.errors}", "retries": f"retries {c.retries}",
                "rate": f"{c.done / elapsed:.1f}/s", "elapsed": hms(elapsed), "eta": f"ETA {hms(eta_seconds(c, now))}"}

    def render(self, width: int) -> Any:
        """The live line in at most `width` cells: what does not fit is left out in this order: the
        bar, the elapsed time, the rate, the retries; then the description is shortened."""
        from rich.progress_bar import ProgressBar as Bar
        from rich.table import Table
        from rich.text import Text

        f = self.fields(time.perf_counter())
        keep = ["count", "failures", "retries", "rate", "elapsed", "eta"]
        drop_order = ["elapsed", "rate", "retries"]
        desc = Text(self._description, style="bold")

        def used(parts: list[str], with_desc: bool, bar: int) -> int:
            n = sum(len(f[p]) for p in parts) + len(parts) - 1
            if with_desc:
                n += desc.cell_len + 1
            return n + (bar + 1 if bar else 0)

        room = width - used(keep, True, 0) - 1
        bar_width = min(40, room) if room >= _Line.BAR_MIN else 0
        while not bar_width and drop_order and used(keep, True, 0) > width:
            keep.remove(drop_order.pop(0))
        rest = width - used(keep, False, 0) - 1
        if desc.cell_len > rest:
            desc.truncate(max(rest, 0), overflow="ellipsis")
        grid = Table.grid(padding=(0, 1))
        cells: list[Any] = []
        if desc.cell_len:
            grid.add_column(no_wrap=True)
            cells.append(desc)
        if bar_width:
            grid.add_column(width=bar_width, no_wrap=True)
            c = self._counters
            cells.append(Bar(total=max(c.total, 1), completed=c.done, width=bar_width))
        for p in keep:
            grid.add_column(no_wrap=True, justify="right" if p == "count" else "left")
            cells.append(Text(f[p]))
        grid.add_row(*cells)
        return grid

    def _plain_line(self, now: float) -> None:
        f = self.fields(now)
        print(f"{self._description}: {f['count']} done, {f['failures']}, {f['retries']}, {f['rate']}, "
              f"{f['eta']}", file=sys.stderr, flush=True)

    def update(self, c: RunCounters) -> None:
        self._counters = c
        now = time.perf_counter()
        if self.plain and (now - self._last >= 10 or (c.done == c.total and c.total)):
            self._last = now
            self._plain_line(now)

    def __exit__(self, *exc: Any) -> None:
        if self._live is not None:
            self._live.__exit__(*exc)
