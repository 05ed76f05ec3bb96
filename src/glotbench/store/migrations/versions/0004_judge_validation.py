"""results store: whether each judged run's judges are validated for its language (judges/cards.py),
so `runs ls`, `runs show` and `runs board` say "judge not validated" beside the number as report does

Revision ID: s0004
Revises: s0003
"""
import json
from pathlib import Path

import sqlalchemy as sa
from alembic import op

revision = "s0004"
down_revision = "s0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    from glotbench.errors import GlotbenchError
    from glotbench.report.rundata import run_results
    from glotbench.rundir.validity import judge_validation_of

    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("judge_validation", sa.JSON, nullable=True))
    # Rows indexed before: from the run's record where it can still be read (results.json; an older
    # judged run's summary file, arena.json, aragen.json, rubric.json); otherwise NULL (no judge
    # validation recorded: no note).
    conn = op.get_bind()
    for rid, run_dir in conn.execute(sa.text("SELECT id, run_dir FROM runs")).fetchall():
        try:
            res = run_results(Path(run_dir))
        except (OSError, ValueError, GlotbenchError):
            continue
        found = judge_validation_of(res) if isinstance(res, dict) else None
        if found is not None:
            conn.execute(sa.text("UPDATE runs SET judge_validation = :v WHERE id = :i"),
                         {"v": json.dumps(found), "i": rid})


def downgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("judge_validation")
