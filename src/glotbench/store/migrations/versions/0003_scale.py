"""results store: the headline metric's scale (fraction or points), so listings print percent or points

Revision ID: s0003
Revises: s0002
"""
import json
from pathlib import Path

import sqlalchemy as sa
from alembic import op

revision = "s0003"
down_revision = "s0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("scale", sa.String(20), nullable=True))
    # Rows indexed before: the scale from the run's results.json where it can still be read;
    # otherwise it stays unknown (NULL) and listings print the stored number with a "?".
    conn = op.get_bind()
    for rid, run_dir, head in conn.execute(sa.text("SELECT id, run_dir, headline FROM runs")).fetchall():
        try:
            res = json.loads((Path(run_dir) / "results.json").read_text(encoding="utf-8"))
            scale = res["metrics"][head].get("scale", "fraction")
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            continue
        if scale in ("fraction", "points"):
            conn.execute(sa.text("UPDATE runs SET scale = :s WHERE id = :i"), {"s": scale, "i": rid})


def downgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("scale")
