"""submissions' Idempotency-Key (unique per API key) and the hash of the request it came with

Revision ID: 0004
Revises: 0003
"""
import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("submissions") as b:
        b.add_column(sa.Column("idempotency_key", sa.String(100), nullable=True))
        b.add_column(sa.Column("request_sha256", sa.String(64), nullable=True))
    op.create_index("uq_submissions_key_idempotency", "submissions", ["key_id", "idempotency_key"], unique=True)


def downgrade() -> None:
    op.drop_index("uq_submissions_key_idempotency", "submissions")
    with op.batch_alter_table("submissions") as b:
        b.drop_column("request_sha256")
        b.drop_column("idempotency_key")
