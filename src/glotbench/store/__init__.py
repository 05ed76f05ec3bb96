"""The results store: every finished run indexed in a database (SQLite by default, PostgreSQL by URL)."""

from glotbench.store.db import ResultsStore, default_store_url, run_record

__all__ = ["ResultsStore", "default_store_url", "run_record"]
