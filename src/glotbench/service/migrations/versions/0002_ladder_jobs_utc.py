"""the Ladder's per-key state, persisted leased jobs, quota refunds, endpoint mode per set, aware UTC times

Revision ID: 0002
Revises: 0001
"""
import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

_TIMES = {"test_sets": ("blind_until", "release_date", "released_at", "created"),
          "api_keys": ("created",), "submissions": ("created", "finished")}


def upgrade() -> None:
    with op.batch_alter_table("submissions") as b:
        b.add_column(sa.Column("charged", sa.Boolean, nullable=False, server_default=sa.true()))
        b.add_column(sa.Column("endpoint_url", sa.Text, nullable=True))
        b.add_column(sa.Column("key_holder", sa.String(64), nullable=True))
        b.add_column(sa.Column("lease_owner", sa.String(64), nullable=True))
        b.add_column(sa.Column("lease_until", sa.DateTime(timezone=True), nullable=True))
        b.add_column(sa.Column("attempts", sa.Integer, nullable=False, server_default="0"))
    op.create_index("ix_submissions_lease_until", "submissions", ["lease_until"])
    with op.batch_alter_table("test_sets") as b:
        b.add_column(sa.Column("endpoint_mode", sa.Boolean, nullable=False, server_default=sa.true()))
    op.create_table(
        "ladder_states",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("key_id", sa.Integer, sa.ForeignKey("api_keys.id"), nullable=False, index=True),
        sa.Column("set_id", sa.Integer, sa.ForeignKey("test_sets.id"), nullable=False),
        sa.Column("cell", sa.String(200), nullable=False),
        sa.Column("best", sa.Float, nullable=False),
        sa.Column("released", sa.Float, nullable=False),
        sa.Column("step", sa.Float, nullable=False),
        sa.Column("ci95", sa.JSON, nullable=True),
        sa.Column("vector", sa.LargeBinary, nullable=False),
        sa.UniqueConstraint("key_id", "set_id", "cell"),
    )
    if op.get_bind().dialect.name == "postgresql":  # naive times were UTC: make them TIMESTAMPTZ
        for table, cols in _TIMES.items():
            for c in cols:
                op.execute(f'ALTER TABLE {table} ALTER COLUMN {c} TYPE TIMESTAMPTZ USING {c} AT TIME ZONE \'UTC\'')


def downgrade() -> None:
    op.drop_table("ladder_states")
    with op.batch_alter_table("test_sets") as b:
        b.drop_column("endpoint_mode")
    op.drop_index("ix_submissions_lease_until", "submissions")
    with op.batch_alter_table("submissions") as b:
        for c in ("attempts", "lease_until", "lease_owner", "key_holder", "endpoint_url", "charged"):
            b.drop_column(c)
