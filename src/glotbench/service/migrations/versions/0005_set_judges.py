"""a judged set's judges (the model specs its operator named; none for a set scored without judges)

Revision ID: 0005
Revises: 0004
"""
import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("test_sets") as b:
        b.add_column(sa.Column("judges", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("test_sets") as b:
        b.drop_column("judges")
