"""The results store: every finished run indexed in a database (SQLite by default, PostgreSQL by URL).

`glotbench.store.index` (a run's row, and indexing a run just finished) imports no SQLAlchemy; the
names from `glotbench.store.db` load it when first used."""

from __future__ import annotations

from typing import Any

from glotbench.store.index import default_store_url, index_run

__all__ = ["ResultsStore", "default_store_url", "index_run", "run_record"]


def __getattr__(name: str) -> Any:
    if name in ("ResultsStore", "run_record"):
        from glotbench.store import db

        return getattr(db, name)
    raise AttributeError(name)
