"""The public views: sets, released-set downloads and the leaderboard (cached for `ttl_s`).

The leaderboard has one row per model and key: the key's published submission of that model with the
highest released (Ladder) score. A set's rows stay hidden while it is blind (`blind_until`).
"""

from __future__ import annotations

import json
import time
from typing import Any

from sqlalchemy import func, select

from glotbench.service.core import Service, ServiceError, iso
from glotbench.service.db import SetItem, Submission, TestSet, utcnow
from glotbench.service.sets import identity, public_scoring


class Views:
    def __init__(self, service: Service, ttl_s: float = 2.0):
        self.svc, self.ttl_s = service, ttl_s  # admin commands from another process show within ttl_s
        self._board: tuple[float, list[dict[str, Any]]] | None = None
        self._downloads: dict[int, tuple[tuple[Any, ...], bytes]] = {}  # set id -> (its identity, its body)

    def sets(self) -> list[dict[str, Any]]:
        with self.svc.Session() as s:
            counts = dict(s.execute(select(SetItem.set_id, func.count()).group_by(SetItem.set_id)).all())
            return [{"name": ts.name, "benchmark": ts.benchmark,
                     "status": "released" if self.svc.is_released(ts) else ts.status,
                     "items": counts.get(ts.id, 0), "endpoint_submissions": ts.endpoint_mode,
                     "blind_until": iso(ts.blind_until), "release_date": iso(ts.release_date),
                     "released_at": iso(ts.released_at), **public_scoring(ts.judges or (), ts.options or {})}
                    for ts in s.scalars(select(TestSet).order_by(TestSet.benchmark, TestSet.created))]

    def download(self, name: str) -> bytes:
        """A released set as JSON bytes, made once per process: anyone may ask for it, and a released
        set never changes (10,000 items: 2.8 MB, ~280 ms of CPU to build and serialise), so a repeat
        costs a lookup, not unauthenticated CPU."""
        with self.svc.Session() as s:
            ts = s.scalar(select(TestSet).where(TestSet.name == name))
            if ts is None or not self.svc.is_released(ts):
                raise ServiceError(404, "no released set by that name")
            ident = identity(ts)
            hit = self._downloads.get(ts.id)
            if hit is not None and hit[0] == ident:
                return hit[1]
            rows = s.scalars(select(SetItem).where(SetItem.set_id == ts.id).order_by(SetItem.position)).all()
            body = json.dumps({"name": ts.name, "benchmark": ts.benchmark, "data_sha256": ts.data_sha256,
                               "items": [{"id": r.item_id, "public": r.public, "gold": r.gold, "meta": r.meta}
                                         for r in rows]}, ensure_ascii=False).encode("utf-8", "surrogatepass")
        self._downloads[ts.id] = (ident, body)
        return body

    def invalidate(self) -> None:
        self._board = None

    def stale(self) -> bool:
        c = self._board
        return c is None or time.monotonic() - c[0] >= self.ttl_s

    def leaderboard(self) -> list[dict[str, Any]]:
        cached = self._board
        if cached is not None and time.monotonic() - cached[0] < self.ttl_s:
            return cached[1]
        board = self._build()
        self._board = (time.monotonic(), board)
        return board

    def _build(self) -> list[dict[str, Any]]:
        now = utcnow()
        with self.svc.Session() as s:
            tables = []
            for ts in s.scalars(select(TestSet).where(TestSet.status != "pending")
                                .order_by(TestSet.benchmark, TestSet.created.desc())):
                released = self.svc.is_released(ts)
                blind = not released and ts.blind_until is not None and now < ts.blind_until
                best: dict[tuple[int, str], Submission] = {}
                if not blind:
                    for x in s.scalars(select(Submission).where(
                            Submission.set_id == ts.id, Submission.public.is_(True), Submission.status == "done")):
                        k = (x.key_id, x.model)
                        if k not in best or (x.score or 0) > (best[k].score or 0):
                            best[k] = x
                subs = sorted(best.values(), key=lambda x: -(x.score or 0))
                groups = sorted({g for x in subs for g in (x.result or {}).get("subdomains", {})})
                tables.append({
                    "set": ts.name, "benchmark": ts.benchmark, "released": released, "blind": blind,
                    "release_date": iso(ts.released_at or ts.release_date), "blind_until": iso(ts.blind_until),
                    "metric": (subs[0].result or {}).get("metric") if subs else None, "subdomains": groups,
                    "rows": [{"model": x.model, "description": x.description, "score": x.score,
                              "ci95": (x.result or {}).get("ci95"), "coverage": (x.result or {}).get("coverage"),
                              # n: the set's item count (a reply stored before `n` has it as `items`)
                              "n": (x.result or {}).get("n", (x.result or {}).get("items")),
                              "too_few_units": bool((x.result or {}).get("too_few_units")),
                              "subdomains": (x.result or {}).get("subdomains", {}), "date": x.created.date().isoformat()}
                             for x in subs],
                })
            return tables
