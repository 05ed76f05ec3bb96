"""`--concurrency auto`: a limit on requests in flight that finds what the endpoint serves.

Hosted APIs publish no concurrency limit; a server past its capacity answers 429 (or stops
answering in time). The gate below is TCP's congestion control applied to requests, as inspect_ai's
adaptive connections do it:

- **Slow start.** From `start` (default 4) the limit grows by one per successful reply, so it
  doubles every round trip, until the first congestion signal.
- **Congestion signal:** a 429 (`rate_limited`) or a timeout. Other failures (400, 500, malformed
  bodies) say nothing about load and change nothing.
- **Multiplicative decrease, once per episode.** The limit becomes `decrease` (0.9) times what the
  endpoint was seen to take: the fewest of the limit, the requests in flight when the signal came
  (the rejected one included) and when the rejected request was sent (itself included). In slow
  start a burst of replies can double the limit within milliseconds, far above what the endpoint
  serves; cutting from the limit would then take several episodes (each a burst of 429s), and
  halving it would fall to half the capacity.
  Signals from requests sent before the last decrease belong to the same episode and are ignored,
  so a burst of 429s from one overshoot lowers the limit once, not once per rejected request.
- **Additive increase.** After slow start the limit grows by 1/limit per successful reply: one more
  request in flight per round trip, back to the limit of the last episode; from one below it the
  growth is `plateau_probe` (4) times slower, so the limit lingers just under what the endpoint
  took last time and probes above it rarely (CUBIC's plateau, in its simplest form). Each episode
  that ends within one request of the last one doubles that slowness (up to 32 times): a limit that
  keeps being confirmed is probed ever more rarely, so with a small capacity (where one request more
  is 10% more) the probes do not become a steady stream of 429s. What each rule is worth,
  measured: docs/performance.md.
- The limit stays within [`min_limit`, `max_limit`] (`--max-concurrency`); the runner starts
  `max_limit` workers and each attempt passes this gate, so memory is bounded by `max_limit`.

A retried request waits its backoff outside the gate (it holds no slot while it sleeps).
Measured against a server with a hidden capacity: `bench/auto_concurrency.py`, docs/performance.md.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from dataclasses import dataclass, field

CONGESTION_KINDS = frozenset({"rate_limited", "timeout"})


@dataclass
class AdaptiveLimit:
    """An AIMD gate: `token = await acquire()`, then `release(token, kind)` with the attempt's
    outcome (`None` for a reply, else the error kind)."""

    max_limit: int
    start: int = 4
    min_limit: int = 1
    decrease: float = 0.9
    plateau_probe: float = 4.0
    limit: float = field(init=False)
    in_flight: int = field(init=False, default=0)
    slow_start: bool = field(init=False, default=True)
    episodes: int = field(init=False, default=0)  # multiplicative decreases made
    requests: int = field(init=False, default=0)  # attempts that passed the gate
    rejected: int = field(init=False, default=0)  # attempts answered by a congestion signal
    answered: int = field(init=False, default=0)  # attempts that got a reply
    peak: float = field(init=False, default=0.0)
    last_congested: float = field(init=False, default=0.0)  # the limit when the last episode began
    probe: float = field(init=False, default=0.0)  # the current plateau slowness
    trace: list[tuple[float, float]] = field(init=False, default_factory=list)  # (s since start, limit)

    def __post_init__(self) -> None:
        if self.max_limit < 1:
            raise ValueError("--max-concurrency must be at least 1")
        self.min_limit = max(1, min(self.min_limit, self.max_limit))
        self.limit = float(max(self.min_limit, min(self.start, self.max_limit)))
        self.peak = self.limit
        self.probe = self.plateau_probe
        self._t0 = time.perf_counter()
        self._waiters: deque[asyncio.Future] = deque()
        self.trace.append((0.0, self.limit))

    @property
    def current(self) -> int:
        """Requests allowed in flight now."""
        return max(self.min_limit, int(self.limit))

    async def acquire(self) -> tuple[int, int]:
        while self.in_flight >= self.current:
            fut = asyncio.get_running_loop().create_future()
            self._waiters.append(fut)
            try:
                await fut
            except asyncio.CancelledError:
                if fut in self._waiters:
                    self._waiters.remove(fut)
                raise
        self.in_flight += 1
        self.requests += 1
        return self.episodes, self.in_flight

    def release(self, token: tuple[int, int], kind: str | None) -> None:
        """`token`: what `acquire` returned (the episode and the requests in flight at sending)."""
        self.in_flight -= 1
        episode, in_flight_at_send = token
        if kind is None:
            self.answered += 1
            if self.slow_start:
                step = 1.0
            elif self.limit + 1.0 < self.last_congested:
                step = 1.0 / max(self.limit, 1.0)
            else:
                step = 1.0 / (self.probe * max(self.limit, 1.0))
            self._set(min(float(self.max_limit), self.limit + step))
        elif kind in CONGESTION_KINDS:
            self.rejected += 1
            if episode == self.episodes:  # sent after the last decrease: a new episode
                base = float(min(self.limit, self.in_flight + 1, in_flight_at_send))
                confirmed = not self.slow_start and abs(base - self.last_congested) <= 1.0
                self.probe = min(self.probe * 2, 32.0) if confirmed else self.plateau_probe
                self.slow_start = False
                self.episodes += 1
                self.last_congested = base
                self._set(max(float(self.min_limit), base * self.decrease))
        free = self.current - self.in_flight
        while free > 0 and self._waiters:
            fut = self._waiters.popleft()
            if not fut.done():
                fut.set_result(None)
                free -= 1

    def _set(self, value: float) -> None:
        if int(value) != int(self.limit):
            self.trace.append((round(time.perf_counter() - self._t0, 3), value))
        self.limit = value
        self.peak = max(self.peak, value)

    def summary(self) -> dict:
        """What results.json records: the limit it settled at and how it got there. With no reply
        at all the limit found nothing (the floor is not what the endpoint serves): `settled` is
        null and a note says why."""
        out = {"mode": "auto", "start": int(self.trace[0][1]), "max": self.max_limit,
               "settled": self.current if self.answered else None, "peak": int(self.peak), "decreases": self.episodes,
               "requests": self.requests, "rejected": self.rejected,
               "rejected_rate": round(self.rejected / self.requests, 4) if self.requests else 0.0}
        if not self.answered and self.requests:
            out["note"] = "no request was answered: the endpoint's limit was not found"
        return out
