"""initial schema

Revision ID: 0001
Revises:
"""
import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "test_sets",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(100), nullable=False, unique=True),
        sa.Column("benchmark", sa.String(100), nullable=False),
        sa.Column("options", sa.JSON, nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("blind_until", sa.DateTime, nullable=True),
        sa.Column("release_date", sa.DateTime, nullable=True),
        sa.Column("released_at", sa.DateTime, nullable=True),
        sa.Column("data_sha256", sa.String(64), nullable=False),
        sa.Column("created", sa.DateTime, nullable=False),
    )
    op.create_table(
        "set_items",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("set_id", sa.Integer, sa.ForeignKey("test_sets.id", ondelete="CASCADE"), nullable=False, index=True),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("item_id", sa.String(200), nullable=False),
        sa.Column("public", sa.JSON, nullable=False),
        sa.Column("gold", sa.JSON, nullable=False),
        sa.Column("meta", sa.JSON, nullable=False),
        sa.UniqueConstraint("set_id", "item_id"),
    )
    op.create_table(
        "api_keys",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("key_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("created", sa.DateTime, nullable=False),
        sa.Column("revoked", sa.Boolean, nullable=False),
    )
    op.create_table(
        "submissions",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("key_id", sa.Integer, sa.ForeignKey("api_keys.id"), nullable=False, index=True),
        sa.Column("set_id", sa.Integer, sa.ForeignKey("test_sets.id"), nullable=False, index=True),
        sa.Column("kind", sa.String(20), nullable=False),
        sa.Column("model", sa.String(300), nullable=False),
        sa.Column("description", sa.Text, nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("error", sa.Text, nullable=True),
        sa.Column("score", sa.Float, nullable=True),
        sa.Column("result", sa.JSON, nullable=True),
        sa.Column("public", sa.Boolean, nullable=False),
        sa.Column("created", sa.DateTime, nullable=False, index=True),
        sa.Column("finished", sa.DateTime, nullable=True),
    )


def downgrade() -> None:
    op.drop_table("submissions")
    op.drop_table("api_keys")
    op.drop_table("set_items")
    op.drop_table("test_sets")
