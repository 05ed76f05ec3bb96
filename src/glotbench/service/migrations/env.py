"""Alembic environment: the URL comes from the config set by glotbench.service.db.migrate."""

from alembic import context
from sqlalchemy import create_engine

from glotbench.service.db import Base

config = context.config
url = config.get_main_option("sqlalchemy.url") or ""  # set by service/db.py before any migration
engine = create_engine(url)
with engine.connect() as connection:
    context.configure(connection=connection, target_metadata=Base.metadata, render_as_batch=url.startswith("sqlite"))
    with context.begin_transaction():
        context.run_migrations()
engine.dispose()
