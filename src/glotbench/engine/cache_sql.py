"""The call cache in a database server (PostgreSQL by URL), for Ray clusters: every node reads and
writes the same cache, so a run retried on another node resumes without repeating finished calls.

Same interface and write-behind as the SQLite `CallCache` (replies are committed in one transaction
per flush, every 50 ms); rows are inserted with ON CONFLICT DO NOTHING, so two workers writing the
same reply never conflict. Chosen by `cache_path` (or a sweep's `cache:`) being a
`postgresql+psycopg://...` URL. Each lookup is one indexed query on the server."""

from __future__ import annotations

import json
from typing import Any, Sequence

from sqlalchemy import Column, Float, MetaData, String, Table, Text, create_engine, func, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.exc import SQLAlchemyError

from glotbench.engine.cache import decode_response, decode_score, queued_replies
from glotbench.rundir.files import to_json
from glotbench.errors import GlotbenchError
from glotbench.models.base import Response

_meta = MetaData()
calls = Table(
    "glotbench_calls", _meta,
    Column("key", String(64), primary_key=True),
    Column("model", Text, nullable=False),
    Column("response", Text, nullable=False),
    Column("created", Float, server_default=func.extract("epoch", func.now())),
)
scores = Table(  # extraction and score of a cached reply, as in the SQLite cache's `scores` table
    "glotbench_scores", _meta,
    Column("key", String(64), primary_key=True),
    Column("record", Text, nullable=False),
)
aggregates = Table(  # a run's aggregate, as in the SQLite cache's `aggregates` table
    "glotbench_aggregates", _meta,
    Column("key", String(64), primary_key=True),
    Column("record", Text, nullable=False),
)


class SqlCallCache:
    def __init__(self, url: str):
        try:
            self.engine = create_engine(url, pool_pre_ping=True, pool_size=2, max_overflow=2)
            _meta.create_all(self.engine, tables=[calls, scores], checkfirst=True)
        except Exception as e:  # noqa: BLE001 - unreachable server, bad URL: one line
            from sqlalchemy.engine import make_url

            raise GlotbenchError(f"cannot open the call cache {make_url(url).render_as_string(hide_password=True)}: "
                                 f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}") from None
        try:  # a read-only role on a cache made before the table existed still reads replies and scores
            _meta.create_all(self.engine, tables=[aggregates], checkfirst=True)
        except SQLAlchemyError:
            pass
        self._pending: dict[str, dict[str, str]] = {}
        self._pending_scores: dict[str, dict[str, str]] = {}

    def get(self, key: str) -> Response | None:
        pending = self._pending.get(key)
        if pending is not None:
            return decode_response(pending["response"])
        with self.engine.connect() as conn:
            row = conn.execute(select(calls.c.response).where(calls.c.key == key)).first()
        return decode_response(row[0]) if row else None  # a damaged row: asked again (first writer's row kept)

    def get_many(self, keys: Sequence[str]) -> dict[str, Response]:
        """The stored replies among `keys` (`CallCache.get_many`): one round trip per 500 keys."""
        out, rest = queued_replies(keys, lambda key: None if (p := self._pending.get(key)) is None else p["response"])
        if rest:
            with self.engine.connect() as conn:
                for i in range(0, len(rest), 500):
                    for key, text in conn.execute(select(calls.c.key, calls.c.response)
                                                  .where(calls.c.key.in_(rest[i:i + 500]))):
                        if (resp := decode_response(text)) is not None:
                            out[key] = resp
        return out

    def put(self, key: str, model_id: str, response: Response) -> None:
        self._pending[key] = {"key": key, "model": model_id,
                              "response": to_json(response.to_dict())}

    def get_score(self, key: str) -> dict | None:
        pending = self._pending_scores.get(key)
        if pending is not None:
            return decode_score(pending["record"])
        with self.engine.connect() as conn:
            row = conn.execute(select(scores.c.record).where(scores.c.key == key)).first()
        return decode_score(row[0]) if row else None

    def put_score(self, key: str, record: dict) -> None:
        self._pending_scores[key] = {"key": key, "record": to_json(record)}

    def get_aggregate(self, key: str) -> Any:
        """The stored aggregate, or None (none stored, no table, a damaged row: computed afresh)."""
        try:
            with self.engine.connect() as conn:
                row = conn.execute(select(aggregates.c.record).where(aggregates.c.key == key)).first()
            return json.loads(row[0]) if row else None
        except (SQLAlchemyError, ValueError):
            return None

    def put_aggregate(self, key: str, blob: str) -> None:
        with self.engine.begin() as conn:
            conn.execute(insert(aggregates).on_conflict_do_nothing(index_elements=["key"]),
                         [{"key": key, "record": blob}])

    def flush(self) -> None:
        if not self._pending and not self._pending_scores:
            return
        rows, score_rows = list(self._pending.values()), list(self._pending_scores.values())
        with self.engine.begin() as conn:
            if rows:
                conn.execute(insert(calls).on_conflict_do_nothing(index_elements=["key"]), rows)
            if score_rows:
                conn.execute(insert(scores).on_conflict_do_nothing(index_elements=["key"]), score_rows)
        self._pending.clear()
        self._pending_scores.clear()

    def __len__(self) -> int:
        with self.engine.connect() as conn:
            return int(conn.execute(select(func.count()).select_from(calls)).scalar() or 0)

    def close(self) -> None:
        self.flush()
        self.engine.dispose()
