"""The results store: one row per finished run, so a matrix of runs can be listed and compared.

SQLAlchemy over SQLite (a file under the cache directory, the default) or PostgreSQL (by URL, for a
cluster), schema by Alembic (store/migrations, with its own version table so the store can share a
PostgreSQL database with the scoring service). A run is identified by `run_key`, a hash of its run
directory's name and its start time: indexing the same run twice, or from two workers at once, keeps
one row (INSERT ... ON CONFLICT DO NOTHING, a unique index), and concurrent writers never lose one
(SQLite: WAL and BEGIN IMMEDIATE with a busy timeout; PostgreSQL: row-level conflicts only).
"""

from __future__ import annotations

import hashlib
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable

from sqlalchemy import JSON, DateTime, Float, Integer, String, Text, create_engine, event, select
from sqlalchemy.engine import Engine
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

from glotbench.errors import GlotbenchError
from glotbench.signature import Signature
from glotbench.store.index import HEAD_REVISION, VERSION_TABLE, default_store_url, record_of, run_key, sqlite_path

__all__ = ["Base", "ResultsStore", "RunRow", "board", "board_columns", "default_store_url", "find_run_dirs", "migrate", "unfinished_run_dirs", "run_key",
           "run_record"]


class Base(DeclarativeBase):
    pass


class RunRow(Base):
    __tablename__ = "runs"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_key: Mapped[str] = mapped_column(String(64), unique=True)
    benchmark: Mapped[str] = mapped_column(String(200), index=True)
    benchmark_version: Mapped[str] = mapped_column(String(50), default="")
    signature: Mapped[str] = mapped_column(Text, default="")
    model: Mapped[str] = mapped_column(String(500), index=True)
    model_info: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    options: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    headline: Mapped[str] = mapped_column(String(100), default="")
    score: Mapped[float | None] = mapped_column(Float, nullable=True)
    scale: Mapped[str | None] = mapped_column(String(20), nullable=True)  # fraction | points (None: unknown)
    ci_low: Mapped[float | None] = mapped_column(Float, nullable=True)
    ci_high: Mapped[float | None] = mapped_column(Float, nullable=True)
    scores: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)  # overall and per group, with CIs
    items: Mapped[int] = mapped_column(Integer, default=0)
    failed: Mapped[int] = mapped_column(Integer, default=0)
    prompt_tokens: Mapped[int] = mapped_column(Integer, default=0)
    completion_tokens: Mapped[int] = mapped_column(Integer, default=0)
    cost_usd: Mapped[float | None] = mapped_column(Float, nullable=True)
    # What the number is of (rundir/selection.py, rundir/validity.py): the item set, whether the run
    # is valid (with the failure share), and the bundled-data label. None for rows indexed before.
    selection: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    validity: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    data_label: Mapped[str | None] = mapped_column(Text, nullable=True)
    # A judged run's judges, validated for its language or not (judges/cards.py); None: not recorded.
    judge_validation: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    run_dir: Mapped[str] = mapped_column(Text)
    started: Mapped[str] = mapped_column(String(40), default="")
    finished: Mapped[str] = mapped_column(String(40), default="")
    indexed: Mapped[datetime] = mapped_column(
        DateTime, default=lambda: datetime.now(timezone.utc).replace(tzinfo=None))


def _engine(url: str) -> Engine:
    if url.startswith("sqlite"):
        path = sqlite_path(url)
        if path:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 60})

        @event.listens_for(engine, "connect")
        def _connect(dbapi_conn: Any, _: Any) -> None:
            dbapi_conn.isolation_level = None
            dbapi_conn.execute("PRAGMA journal_mode=WAL")
            dbapi_conn.execute("PRAGMA busy_timeout=60000")

        @event.listens_for(engine, "begin")
        def _begin(conn: Any) -> None:
            conn.exec_driver_sql("BEGIN IMMEDIATE")  # one writer at a time, waiting instead of failing

        return engine
    return create_engine(url, pool_pre_ping=True, pool_size=5, max_overflow=5)


def migrate(url: str) -> None:
    """Create or upgrade the store's schema to the newest Alembic revision."""
    from alembic import command
    from alembic.config import Config

    path = sqlite_path(url)
    cfg = Config()
    cfg.set_main_option("script_location", str(Path(__file__).parent / "migrations"))
    cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    cfg.set_main_option("version_table", VERSION_TABLE)
    if not path:  # PostgreSQL: env.py takes an advisory lock, so concurrent upgrades queue
        command.upgrade(cfg, "head")
        return
    import fcntl

    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path + ".migrate.lock", "a") as lock:  # many workers opening a new store at once
        fcntl.flock(lock, fcntl.LOCK_EX)
        command.upgrade(cfg, "head")


def run_record(run_dir: str | Path) -> dict[str, Any]:
    """The store's row for a finished run directory (reads its results.json)."""
    from glotbench.rundir import RESULTS, read_results
    from glotbench.rundir.schema import FinishedResults

    from glotbench.report import rundata

    if rundata.judged_kind(run_dir) is not None:
        # a judged run: one row, the candidate's, with the judged score (never a judge's or a phase's)
        res, _ = rundata.judged_view(run_dir)
        try:
            return record_of(res, run_dir)
        except (KeyError, TypeError, AttributeError, ValueError) as e:
            raise GlotbenchError(f"{run_dir} is not in the expected format ({type(e).__name__}: {e})") from None
    path = Path(run_dir) / RESULTS
    if not path.exists():
        raise GlotbenchError(f"{run_dir} has no results.json: not a finished run")
    res = read_results(run_dir, FinishedResults)
    try:
        return record_of(res, run_dir)
    except (KeyError, TypeError, AttributeError, ValueError) as e:
        raise GlotbenchError(f"{path} is not in the expected format ({type(e).__name__}: {e})") from None


class ResultsStore:
    """Index, list and show finished runs."""

    def __init__(self, url: str | None = None):
        self.url = url or default_store_url()
        try:
            self.engine = _engine(self.url)
            if not self._current():
                migrate(self.url)
        except Exception as e:  # noqa: BLE001 - a bad URL or an unreachable server: one line
            if isinstance(e, GlotbenchError):
                raise
            raise GlotbenchError(f"cannot open the results store {self._safe_url()}: "
                                 f"{type(e).__name__}: {str(e).splitlines()[0]}") from None

    def _current(self) -> bool:
        """Whether the schema is at HEAD_REVISION already (Alembic's import and check skipped)."""
        from sqlalchemy import text

        try:
            with self.engine.connect() as conn:
                return conn.execute(text(f"SELECT version_num FROM {VERSION_TABLE}")).scalar() == HEAD_REVISION
        except Exception:  # noqa: BLE001 - no table yet, or no database: migrate() decides
            return False

    def _safe_url(self) -> str:
        from sqlalchemy.engine import make_url

        try:
            return make_url(self.url).render_as_string(hide_password=True)
        except Exception:  # noqa: BLE001
            return "(unparseable URL)"

    def add(self, record: dict[str, Any]) -> bool:
        """Insert a run; False when it was already indexed (same run_key): then its row is refreshed
        with the record as read today (`runs import` re-indexes: a row an earlier release indexed
        takes today's rules, e.g. an older judged run with no judged item is invalid). Safe under
        concurrency. A directory holds one run: the rows of earlier runs in the same directory (an
        invalid run finished in place by the same command) are replaced, not listed beside it."""
        from sqlalchemy import delete, update

        from sqlalchemy.dialects import postgresql, sqlite

        insert = postgresql.insert if self.engine.dialect.name == "postgresql" else sqlite.insert
        stmt = (insert(RunRow).values(**record).on_conflict_do_nothing(index_elements=["run_key"])
                .returning(RunRow.id))
        with self.engine.begin() as conn:
            conn.execute(delete(RunRow).where(RunRow.run_dir == record["run_dir"],
                                              RunRow.run_key != record["run_key"]))
            if conn.execute(stmt).first() is not None:
                return True
            conn.execute(update(RunRow).where(RunRow.run_key == record["run_key"]).values(  # it was already there
                **{k: v for k, v in record.items() if k != "run_key"}))
            return False

    def index_dir(self, run_dir: str | Path) -> bool:
        return self.add(run_record(run_dir))

    def list(self, *, benchmark: str | None = None, model: str | None = None,
             limit: int | None = None) -> list[RunRow]:
        q = select(RunRow).order_by(RunRow.benchmark, RunRow.model, RunRow.finished)
        if benchmark:
            q = q.where(RunRow.benchmark == benchmark)
        if model:
            q = q.where(RunRow.model.contains(model))
        if limit:
            q = q.limit(limit)
        with Session(self.engine) as s:
            return list(s.scalars(q))

    def get(self, ref: str) -> RunRow:
        """A run by id, by run_key (or a prefix of 8+ characters) or by its directory."""
        with Session(self.engine) as s:
            if ref.isdigit():
                row = s.get(RunRow, int(ref))
            elif len(ref) >= 8 and all(c in "0123456789abcdef" for c in ref):
                row = s.scalars(select(RunRow).where(RunRow.run_key.startswith(ref))).first()
            else:
                row = s.scalars(select(RunRow).where(RunRow.run_dir == str(Path(ref).resolve()))).first()
        if row is None:
            raise GlotbenchError(f"no run {ref!r} in the results store {self._safe_url()}")
        return row

    def count(self) -> int:
        from sqlalchemy import func

        with Session(self.engine) as s:
            return int(s.scalar(select(func.count()).select_from(RunRow)) or 0)

    def close(self) -> None:
        self.engine.dispose()


def row_key(r: RunRow) -> str:
    """What a row's number may share a column with: its signature and item set
    (rundir/selection.py `comparability`)."""
    from glotbench.rundir.selection import comparability

    return "\n".join(comparability({"signature": r.signature, "selection": r.selection,
                                     "config": r.options or {}, "counts": {"items": r.items}}))


def row_notes(r: RunRow) -> list[str]:
    """The notes shown beside a row's number (invalid, subset, sample data, a judge not validated for
    the language)."""
    from glotbench.rundir.validity import notes

    label = {"label": r.data_label} if r.data_label else None
    return notes({"validity": r.validity, "selection": r.selection, "data_label": label,
                  "config": r.options or {}, "counts": {"items": r.items}, "judge_validation": r.judge_validation})


def cell_notes(r: RunRow) -> list[str]:
    """The notes a board cell shows beside its one run's number: invalid, and a judge not validated
    for the language (the item set and the bundled data are the column's, `board_columns`)."""
    from glotbench.rundir.validity import validation_text, validity_text

    return [t for t in (validity_text({"validity": r.validity}),
                        validation_text({"judge_validation": r.judge_validation})) if t]


def headline_estimate(r: RunRow) -> dict[str, Any]:
    """A row's headline estimate as its run recorded it (the overall row of its scores: value,
    interval, n, clusters, `too_few_units`), or, for a row without one, the row's own columns."""
    return ((r.scores or {}).get("overall") or {}).get(r.headline) or {
        "value": r.score, "ci_low": r.ci_low, "ci_high": r.ci_high}


def board(rows: Iterable[RunRow]) -> tuple[list[str], dict[str, dict[str, str]]]:
    """A model × benchmark matrix of headline scores. Runs with different signatures or item sets
    never share a column: a benchmark with several gets one column per signature and item set (a
    short hash added). A cell with one run shows its score and 95% CI; with several (seeds), their
    mean and range, with each pooled run's notes; an invalid run is never pooled with others and says so. In percent for a
    fraction, in points for a points metric, with † and n as every view prints an interval
    (report/terminal.py `interval_text`)."""
    from glotbench.report.terminal import interval_text, scaled

    rows = list(rows)
    name = _column_names(rows)
    cells: dict[tuple[str, str], list[RunRow]] = {}
    for r in rows:
        cells.setdefault((r.model, name(r)), []).append(r)
    columns = sorted({c for _, c in cells})
    table: dict[str, dict[str, str]] = {}
    for (model, col), runs in sorted(cells.items()):
        valid = [r for r in runs if (r.validity or {}).get("valid", True)]
        runs = valid or runs[-1:]  # invalid runs are not pooled; the newest stands only when none is valid
        scores = [r.score for r in runs if r.score is not None]
        unit = runs[0].scale
        if len(runs) == 1 or not scores:  # one run, or none with a number (an invalid one with none: says why)
            r = runs[-1]
            text = (interval_text(headline_estimate(r), unit) if scores else "-") + "".join(f" [{t}]" for t in cell_notes(r))
        else:
            text = (f"{scaled(sum(scores) / len(scores), unit)} [{len(scores)} runs "
                    f"{scaled(min(scores), unit)}–{scaled(max(scores), unit)}]"
                    # every pooled run's notes (a judge not validated), each once: a pool never hides one
                    + "".join(f" [{t}]" for t in dict.fromkeys(t for r in runs for t in cell_notes(r))))
        table.setdefault(model, {})[col] = text
    return columns, table


def _column_names(rows: list[RunRow]) -> Any:
    """A row's column: its benchmark, with a short hash of its signature and item set when the
    benchmark has several."""
    sigs: dict[str, set[str]] = {}
    for r in rows:
        sigs.setdefault(r.benchmark, set()).add(row_key(r))
    return lambda r: r.benchmark if len(sigs[r.benchmark]) == 1 else (
        f"{r.benchmark} [{hashlib.sha256(row_key(r).encode()).hexdigest()[:6]}]")


def board_columns(rows: Iterable[RunRow]) -> dict[str, str]:
    """What each column of `board(rows)` is of: its item set (`all 164 items`, `subset: 5 of 164
    items (--limit 5)`), the bundled data's label, and the signature parts no other column of its
    benchmark has (`data:…`, `method:loglik`); the same for every run of a column (its key holds the
    signature, whose data hash decides the label, and the item set)."""
    from glotbench.rundir.selection import describe_item_set

    rows = list(rows)
    name = _column_names(rows)
    parts: dict[str, list[frozenset[str]]] = {r.benchmark: [] for r in rows}  # each column's signature parts, per benchmark
    for r in rows:
        parts[r.benchmark].append(Signature.parse(r.signature).without("subset").texts())
    out: dict[str, str] = {}
    for r in rows:
        res = {"selection": r.selection, "config": r.options or {}, "counts": {"items": r.items}}
        # what tells this column from the benchmark's others besides its items: its own signature parts
        own = sorted(Signature.parse(r.signature).without("subset").texts() - parts[r.benchmark][0].intersection(*parts[r.benchmark][1:]))
        out.setdefault(name(r), "; ".join([describe_item_set(res), *([r.data_label] if r.data_label else []),
                                           *([" ".join(own)] if own else [])]))
    return dict(sorted(out.items()))


def find_run_dirs(paths: Iterable[str | Path]) -> list[Path]:
    """Run directories (holding results.json) at or below each path; a judged run (results.json with a
    `judged` section; an older one's arena.json, aragen.json, rubric.json) is one directory, its top one: its phases (the candidate's answers, the
    baseline's, each judge's) are never runs of their own in the store."""
    from glotbench.report.rundata import JUDGED_FILES, judged_phase
    from glotbench.rundir import RESULTS

    out: list[Path] = []
    for p in map(Path, paths):
        if not p.exists():
            raise GlotbenchError(f"{p} does not exist")
        names = (RESULTS, *JUDGED_FILES.values())
        if any((p / n).is_file() for n in names):
            found = [p]
        else:
            found = sorted({r.parent for n in names for r in p.rglob(n)})
        out.extend(d for d in found if not judged_phase(d))
    return out


UNFINISHED = "a run that did not finish (run.json, no results.json): run the same command again to finish it"
UNFINISHED_JUDGED = ("a judged run that did not finish (its phases are there, its results.json is not): run the "
                     "same command again to finish it")


def unfinished_run_dirs(paths: Iterable[str | Path]) -> list[tuple[Path, str]]:
    """The folders at or below each path holding a run that did not finish, each with why (`runs
    import` names every one it skips): a run's run.json without its results.json, or a judged run
    whose phases are there and whose results.json is not (named once, by its top directory)."""
    from glotbench.report.rundata import JUDGED_FILES, judged_phase
    from glotbench.rundir import RESULTS, RUN_JSON

    out: dict[Path, str] = {}

    def judged_top(top: Path) -> None:
        if not any((top / n).is_file() for n in (RESULTS, *JUDGED_FILES.values())):
            out[top] = UNFINISHED_JUDGED

    for p in map(Path, paths):
        if not p.is_dir():
            continue
        for d in sorted({f.parent for name in (RUN_JSON, RESULTS) for f in p.rglob(name)}):
            if judged_phase(d):  # a phase: its judged run is named, when that did not finish
                judged_top(d.parent)
            elif not (d / RESULTS).is_file():
                out[d] = UNFINISHED
    return sorted(out.items())
