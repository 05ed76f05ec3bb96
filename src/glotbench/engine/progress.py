"""The live progress line of a run (rich, on stderr): samples done, failures, retries, rate, ETA.

The ETA comes from the samples the model answered in this run (cached ones finish at once and would
make it look shorter), over the time since the first call went out (model loading excluded), and is
given from the first completed batch on: once as many replies came back as were sent at first (the
concurrency: a batched local backend's first batch, an endpoint's first round of requests). Before,
one reply of a 16-item batch made it say 29 batches' time for 30 items ("1/30 done … ETA 1:25:06"
for a 7-minute run): the counters are now read once the event loop has run every task a batch woke,
so a batch counts all at once. The time per sample is that of the last round (the last
`concurrency` replies): an endpoint's replies come back in waves (all 64 after 100 ms, then the
next 64), and over one round a wave is counted whole, as a batch is. Once every unit left is in
flight the run cannot end before one round after the last one went out. Between completions the
estimate counts down. Measured against scripted models of known speed (tests/test_eta.py): within
±50% of the real remaining time until the last round. rich's own ETA
column needs two completions within 30 s, so it showed `-:--:--` through a whole CPU run.

The line fits the console: when it is narrow (80 columns), the bar goes first, then the elapsed
time, the rate and the retries, then the description is shortened; the count and the ETA stay."""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import sys
import time
from typing import Any

from glotbench.engine.runner import RunCounters


# The time per sample is measured over the last ROUNDS rounds (the concurrency's worth of replies
# each): over one, a round slowed by a stall (the machine busy, a pause of the endpoint) made the
# ETA twice too long at once (the bench's endpoint figure, ±50.2% on a quiet machine, ±92-231% at
# load 9); over four such a round counts a quarter, and a change of pace shows within four rounds.
ROUNDS = 4


def hms(seconds: float | None) -> str:
    """`H:MM:SS`, or `-:--:--` when unknown."""
    if seconds is None:
        return "-:--:--"
    s = max(0, int(round(seconds)))
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


def eta_seconds(c: RunCounters, now: float, *, wave: int = 1, first_answered_at: float | None = None,
                last_sent_at: float | None = None, round_start: tuple[int, float] | None = None) -> float | None:
    """Seconds left, from the samples answered by the model since its first call (None: no estimate
    yet). `wave`: how many replies make the first completed batch (the concurrency); until then no
    estimate, unless twice the time the first reply took has passed (a slow straggler holds the
    first round). `round_start`: (samples answered, time) one round (`wave` replies) ago: the time
    per sample is that of the last round, the same for an endpoint's replies that come back in
    waves (every 100 ms, 64 at a time) as for a batched backend's batches. `last_sent_at`: when the
    last unit went out (every one left is in flight): the run cannot end before one round's time
    after it. Between completions the estimate counts down."""
    if c.total and c.done >= c.total:
        return 0.0
    answered = c.done - c.cache_hits
    if c.first_call_at is None or answered <= 0 or c.last_answered_at is None:
        return None
    wave = max(wave, 1)
    left = c.total - c.done
    if answered < min(wave, answered + left) and not (
            first_answered_at is not None and now - c.first_call_at >= 2 * (first_answered_at - c.first_call_at)):
        return None
    if round_start is not None and round_start[0] < answered:
        done0, t0 = round_start
    else:  # the first round: from when it was all sent, if that was before its first reply came back
        sent = c.round_sent_at
        done0, t0 = 0, (sent if sent is not None and first_answered_at is not None and sent <= first_answered_at
                        else c.first_call_at)
    per_sample = max(c.last_answered_at - t0, 1e-9) / (answered - done0)
    eta = left * per_sample - (now - c.last_answered_at)
    if last_sent_at is not None:
        eta = max(eta, wave * per_sample - (now - last_sent_at))
    return max(0.0, eta)


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

    def __init__(self, description: str, enabled: bool = True, total: int | None = None, *, out: Any = None,
                 concurrency: int = 1):
        self.enabled = enabled
        self.total = total
        self.wave = max(1, concurrency)  # the replies of the first completed batch (eta_seconds)
        self._answered: collections.deque[tuple[int, float]] = collections.deque()  # (answered, when)
        self._first_answered_at: float | None = None
        self._last_sent_at: float | None = None
        self._pending = False
        self._out = out
        self.plain = enabled and out is None and not sys.stderr.isatty()
        self._live: Any = None
        from glotbench.console import visible

        self._description = visible(description)  # a model spec is user text: no escape sequences
        self._last = 0.0
        self._counters = RunCounters(total=total or 0)

    def __enter__(self) -> "ProgressBar":
        self._t0 = time.perf_counter()
        if not self.enabled or self.plain:
            return self
        from rich.live import Live

        from glotbench.console import console

        out = self._out if self._out is not None else console(stderr=True)
        self._live = Live(_Line(self), console=out, refresh_per_second=4, transient=False)
        self._live.__enter__()
        return self

    def fields(self, now: float) -> dict[str, str]:
        """The line's parts as text (the plain line and the live one say the same)."""
        c = self._counters
        elapsed = max(now - self._t0, 1e-9)
        return {"count": f"{c.done}/{c.total}", "failures": f"failures {c.errors}", "retries": f"retries {c.retries}",
                "rate": f"{c.done / elapsed:.1f}/s", "elapsed": hms(elapsed), "eta": f"ETA {hms(self.eta(now))}"}

    def eta(self, now: float) -> float | None:
        answered = self._counters.done - self._counters.cache_hits
        # Whole rounds back (at most ROUNDS): the time of reply `answered - k × wave`, the first reading
        # that counts it (replies read together came together), before the replies read last. Reply n
        # and reply n - k × wave sit at the same place in their waves, so the time between them is k
        # rounds, however far into its wave reply n is (at 17 of 16 + 16 in flight, the time since
        # the first call is two rounds for 17 replies: twice too long).
        k = min(ROUNDS, (answered - 1) // self.wave) if answered > 0 else 0
        start = None
        if k >= 1:
            n0 = answered - k * self.wave
            t0 = next((t for done, t in self._answered if n0 <= done < answered), None)
            start = (n0, t0) if t0 is not None else None
        return eta_seconds(self._counters, now, wave=self.wave, first_answered_at=self._first_answered_at,
                           last_sent_at=self._last_sent_at, round_start=start)

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
        """The runner's counters after a sample (or a retry). Read once the event loop has run the
        other tasks woken with this one: the replies of one batch come back together, and a line
        drawn after the first of them said the batch had made one reply."""
        self._live_counters = c
        if self._pending:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self._commit()
            return
        self._pending = True
        loop.call_soon(self._commit)

    def _commit(self) -> None:
        self._pending = False
        c = self._live_counters
        # what the line shows until the next commit: a copy where the live display draws it from its own
        # thread; without one, only this loop's thread reads them (a copy per sample: 2,000 for nothing)
        self._counters = dataclasses.replace(c) if self._live is not None else c
        if self._first_answered_at is None and c.done > c.cache_hits:
            self._first_answered_at = c.last_answered_at
        answered = c.done - c.cache_hits
        if answered > 0 and c.last_answered_at is not None and (not self._answered or self._answered[-1][0] < answered):
            self._answered.append((answered, c.last_answered_at))
            while self._answered and self._answered[0][0] < answered - ROUNDS * self.wave:
                self._answered.popleft()  # the readings of the last ROUNDS rounds
        if self._last_sent_at is None and c.first_call_at is not None and c.total - c.done <= self.wave:
            # every unit left is in flight: the last went out at the last reply (or the first call)
            self._last_sent_at = c.last_answered_at if c.done > c.cache_hits else c.first_call_at
        now = time.perf_counter()
        if self.plain and (now - self._last >= 10 or (c.done == c.total and c.total)):
            self._last = now
            self._plain_line(now)

    def __exit__(self, *exc: Any) -> None:
        if self._pending:
            self._commit()
        if self._live is not None:
            self._live.__exit__(*exc)
