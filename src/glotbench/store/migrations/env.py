"""Alembic environment for the results store (own version table: it may share a database)."""

from alembic import context
from sqlalchemy import create_engine

from glotbench.store.db import VERSION_TABLE, Base

config = context.config
url = config.get_main_option("sqlalchemy.url") or ""  # set by store/db.py before any migration
engine = create_engine(url)
with engine.connect() as connection:
    context.configure(connection=connection, target_metadata=Base.metadata, version_table=VERSION_TABLE,
                      render_as_batch=url.startswith("sqlite"))
    with context.begin_transaction():
        if connection.dialect.name == "postgresql":  # serialise concurrent upgrades from many workers
            connection.exec_driver_sql("SELECT pg_advisory_xact_lock(7131580015)")
        context.run_migrations()
engine.dispose()
