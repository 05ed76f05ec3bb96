"""A live progress bar (rich, on stderr): items done, errors, retries, rate, ETA."""

from __future__ import annotations

import sys
import time
from typing import Any

from glotbench.engine.runner import RunCounters


class ProgressBar:
    """A rich live bar on a terminal; on a pipe or log file, a plain status line every 10 s."""

    def __init__(self, description: str, enabled: bool = True, total: int | None = None):
        self.enabled = enabled
        self.total = total
        self.plain = enabled and not sys.stderr.isatty()
        self._progress: Any = None
        self._task: Any = None
        from glotbench.report.terminal import visible

        self._description = visible(description)  # a model spec is user text: no escape sequences
        self._last = 0.0

    def __enter__(self) -> "ProgressBar":
        self._t0 = time.perf_counter()
        if not self.enabled or self.plain:
            return self
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        from glotbench.report.terminal import console

        self._progress = Progress(
            TextColumn("{task.description}", style="bold", markup=False),  # a model spec is user text
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("errors {task.fields[errors]}"),
            TextColumn("retries {task.fields[retries]}"),
            TextColumn("{task.fields[rate]}/s"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=console(stderr=True),
            transient=False,
        )
        self._progress.__enter__()
        self._task = self._progress.add_task(self._description, total=self.total, errors=0, retries=0, rate="-")
        self._t0 = time.perf_counter()
        return self

    def _plain_line(self, c: RunCounters, now: float) -> None:
        elapsed = max(now - self._t0, 1e-9)
        rate = c.done / elapsed
        eta = f"{(c.total - c.done) / rate:.0f} s" if rate > 0 else "?"
        print(f"{self._description}: {c.done}/{c.total} done, {c.errors} errors, {c.retries} retries, "
              f"{rate:.1f}/s, ETA {eta}", file=sys.stderr, flush=True)

    def update(self, c: RunCounters) -> None:
        now = time.perf_counter()
        if self.plain:
            if now - self._last >= 10 or (c.done == c.total and c.total):
                self._last = now
                self._plain_line(c, now)
            return
        if self._progress is None:
            return
        if now - self._last < 0.1 and c.done < c.total:  # at most 10 updates a second
            return
        self._last = now
        elapsed = max(now - self._t0, 1e-9)
        self._progress.update(self._task, total=c.total, completed=c.done, errors=c.errors,
                              retries=c.retries, rate=f"{c.done / elapsed:.1f}")

    def __exit__(self, *exc: Any) -> None:
        if self._progress is not None:
            self._progress.__exit__(*exc)
