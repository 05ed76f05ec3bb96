"""The service's database: SQLAlchemy models; SQLite by default, PostgreSQL by URL.

The schema is created and upgraded by Alembic (service/migrations). On SQLite every transaction
starts with BEGIN IMMEDIATE, so two concurrent submissions cannot both read a limit as unreached.
Times are aware UTC in Python on both databases (`UTCDateTime`): a date given with an offset is
converted, never read as if it were UTC.
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
    create_engine,
    event,
)
from sqlalchemy.engine import Engine
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, sessionmaker


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


def as_utc(d: datetime | None) -> datetime | None:
    """Aware UTC; a naive time is taken to be UTC already."""
    if d is None:
        return None
    return d.replace(tzinfo=timezone.utc) if d.tzinfo is None else d.astimezone(timezone.utc)


class UTCDateTime(TypeDecorator):
    """Aware UTC datetimes: TIMESTAMPTZ on PostgreSQL, UTC text on SQLite; an offset is converted."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Any) -> datetime | None:
        v = as_utc(value)
        return v.replace(tzinfo=None) if v is not None and dialect.name == "sqlite" else v

    def process_result_value(self, value: datetime | None, dialect: Any) -> datetime | None:
        return as_utc(value)


class Base(DeclarativeBase):
    pass


class TestSet(Base):
    __tablename__ = "test_sets"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(100), unique=True)
    benchmark: Mapped[str] = mapped_column(String(100))
    options: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    status: Mapped[str] = mapped_column(String(20), default="pending")  # pending | current | released
    blind_until: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    release_date: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    released_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    data_sha256: Mapped[str] = mapped_column(String(64))
    endpoint_mode: Mapped[bool] = mapped_column(Boolean, default=True)  # operators may disable it per set
    created: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    items: Mapped[int | None] = mapped_column(Integer, nullable=True)  # item count, for the member cap
    body_bytes: Mapped[int | None] = mapped_column(Integer, nullable=True)  # the largest answers body it needs
    judges: Mapped[list[str] | None] = mapped_column(JSON, nullable=True)  # a judged set's judges (model specs)


class SetItem(Base):
    __tablename__ = "set_items"
    __table_args__ = (UniqueConstraint("set_id", "item_id"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    set_id: Mapped[int] = mapped_column(ForeignKey("test_sets.id", ondelete="CASCADE"), index=True)
    position: Mapped[int] = mapped_column(Integer)
    item_id: Mapped[str] = mapped_column(String(200))
    public: Mapped[dict[str, Any]] = mapped_column(JSON)
    gold: Mapped[dict[str, Any]] = mapped_column(JSON)
    meta: Mapped[dict[str, Any]] = mapped_column(JSON)


class Organisation(Base):
    """Who keys are issued to: its keys share one daily limit (many keys of one team are one budget)."""

    __tablename__ = "organisations"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    daily_limit: Mapped[int | None] = mapped_column(Integer, nullable=True)  # None: the server's --org-daily-limit
    max_keys: Mapped[int] = mapped_column(Integer, default=5)  # keys that may be issued to it
    created: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class ApiKey(Base):
    __tablename__ = "api_keys"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)  # sha256 of the key; the key is shown once
    created: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    revoked: Mapped[bool] = mapped_column(Boolean, default=False)
    org_id: Mapped[int | None] = mapped_column(ForeignKey("organisations.id"), nullable=True, index=True)
    grid_secret: Mapped[str | None] = mapped_column(String(64), nullable=True)  # the key's secret rounding offsets


class Submission(Base):
    __tablename__ = "submissions"
    __table_args__ = (*(Index(f"ix_submissions_set_band{i}", "set_id", f"band{i}") for i in range(3)),
                      Index("uq_submissions_key_idempotency", "key_id", "idempotency_key", unique=True))
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    key_id: Mapped[int] = mapped_column(ForeignKey("api_keys.id"), index=True)
    set_id: Mapped[int] = mapped_column(ForeignKey("test_sets.id"), index=True)
    kind: Mapped[str] = mapped_column(String(20))  # answers | endpoint
    model: Mapped[str] = mapped_column(String(300))
    description: Mapped[str] = mapped_column(Text, default="")
    status: Mapped[str] = mapped_column(String(20), default="queued")  # queued | running | done | failed
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    score: Mapped[float | None] = mapped_column(Float, nullable=True)
    result: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)  # aggregates only
    public: Mapped[bool] = mapped_column(Boolean, default=False)
    created: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, index=True)
    finished: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    charged: Mapped[bool] = mapped_column(Boolean, default=True)  # counts against the daily limit
    endpoint_url: Mapped[str | None] = mapped_column(Text, nullable=True)  # private: never published
    key_holder: Mapped[str | None] = mapped_column(String(64), nullable=True)  # process holding its endpoint key
    lease_owner: Mapped[str | None] = mapped_column(String(64), nullable=True)
    lease_until: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True, index=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    prompts_sent_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)  # charged for good from then
    fingerprint: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True)  # answers, hashed per item
    band0: Mapped[str | None] = mapped_column(String(16), nullable=True)  # the fingerprint's thirds, hashed:
    band1: Mapped[str | None] = mapped_column(String(16), nullable=True)  # a near-copy shares one of them
    band2: Mapped[str | None] = mapped_column(String(16), nullable=True)  # (service/duplicates.py)
    flag: Mapped[str | None] = mapped_column(Text, nullable=True)  # e.g. a near-copy of another key's submission
    idempotency_key: Mapped[str | None] = mapped_column(String(100), nullable=True)  # the client's, unique per key
    request_sha256: Mapped[str | None] = mapped_column(String(64), nullable=True)  # the request it came with


class LadderState(Base):
    """Per key, set and cell ("" = the headline): the key's best submission so far and what was released."""

    __tablename__ = "ladder_states"
    __table_args__ = (UniqueConstraint("key_id", "set_id", "cell"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    key_id: Mapped[int] = mapped_column(ForeignKey("api_keys.id"), index=True)
    set_id: Mapped[int] = mapped_column(ForeignKey("test_sets.id"))
    cell: Mapped[str] = mapped_column(String(200))
    best: Mapped[float] = mapped_column(Float)
    released: Mapped[float] = mapped_column(Float)
    step: Mapped[float] = mapped_column(Float)
    ci95: Mapped[list[float] | None] = mapped_column(JSON, nullable=True)
    vector: Mapped[bytes] = mapped_column(LargeBinary)  # the best submission's per-item values (float32)


def _ensure_sqlite_dir(url: str) -> None:
    if url.startswith("sqlite"):
        path = url.split("///", 1)[-1]
        if path and path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)


def make_engine(url: str, hold_s: float | None = None) -> Engine:
    """`hold_s` (PostgreSQL): the server ends a session that sits inside a transaction longer than
    this (`idle_in_transaction_session_timeout`), releasing its row locks. A server process paused
    (SIGSTOP, a stalled VM) between two statements of a transaction would otherwise hold the claim
    lock until it resumes, and no other process could take its jobs back. SQLite has no server to
    do this: a paused process inside a write transaction holds the file until it resumes."""
    if url.startswith("sqlite"):
        _ensure_sqlite_dir(url)
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})

        @event.listens_for(engine, "connect")
        def _connect(dbapi_conn: Any, _: Any) -> None:
            dbapi_conn.isolation_level = None  # let us issue BEGIN ourselves
            dbapi_conn.execute("PRAGMA journal_mode=WAL")
            dbapi_conn.execute("PRAGMA foreign_keys=ON")

        @event.listens_for(engine, "begin")
        def _begin(conn: Any) -> None:
            conn.exec_driver_sql("BEGIN IMMEDIATE")  # serialise writers: limits hold under concurrency

        return engine
    args = {} if hold_s is None else {"options": f"-c idle_in_transaction_session_timeout={max(1, round(hold_s * 1000))}"}
    return create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=20, connect_args=args)


def migrate(url: str) -> None:
    """Create or upgrade the schema to the newest Alembic revision."""
    from alembic import command
    from alembic.config import Config

    _ensure_sqlite_dir(url)
    cfg = Config()
    cfg.set_main_option("script_location", str(Path(__file__).parent / "migrations"))
    cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    command.upgrade(cfg, "head")


def session_factory(url: str, hold_s: float | None = None) -> sessionmaker:
    migrate(url)
    return sessionmaker(make_engine(url, hold_s), expire_on_commit=False)
