"""results store: each run's item selection, validity and data label

Revision ID: s0002
Revises: s0001
"""
import sqlalchemy as sa
from alembic import op

revision = "s0002"
down_revision = "s0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("runs") as batch:  # SQLite: batch mode
        batch.add_column(sa.Column("selection", sa.JSON, nullable=True))
        batch.add_column(sa.Column("validity", sa.JSON, nullable=True))
        batch.add_column(sa.Column("data_label", sa.Text, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("data_label")
        batch.drop_column("validity")
        batch.drop_column("selection")
