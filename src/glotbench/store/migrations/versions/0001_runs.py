"""results store: runs

Revision ID: s0001
Revises:
"""
import sqlalchemy as sa
from alembic import op

revision = "s0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "runs",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("run_key", sa.String(64), nullable=False),
        sa.Column("benchmark", sa.String(200), nullable=False),
        sa.Column("benchmark_version", sa.String(50), nullable=False),
        sa.Column("signature", sa.Text, nullable=False),
        sa.Column("model", sa.String(500), nullable=False),
        sa.Column("model_info", sa.JSON, nullable=False),
        sa.Column("options", sa.JSON, nullable=False),
        sa.Column("headline", sa.String(100), nullable=False),
        sa.Column("score", sa.Float, nullable=True),
        sa.Column("ci_low", sa.Float, nullable=True),
        sa.Column("ci_high", sa.Float, nullable=True),
        sa.Column("scores", sa.JSON, nullable=False),
        sa.Column("items", sa.Integer, nullable=False),
        sa.Column("failed", sa.Integer, nullable=False),
        sa.Column("prompt_tokens", sa.Integer, nullable=False),
        sa.Column("completion_tokens", sa.Integer, nullable=False),
        sa.Column("cost_usd", sa.Float, nullable=True),
        sa.Column("run_dir", sa.Text, nullable=False),
        sa.Column("started", sa.String(40), nullable=False),
        sa.Column("finished", sa.String(40), nullable=False),
        sa.Column("indexed", sa.DateTime, nullable=False),
    )
    op.create_index("ix_runs_run_key", "runs", ["run_key"], unique=True)
    op.create_index("ix_runs_benchmark", "runs", ["benchmark"])
    op.create_index("ix_runs_model", "runs", ["model"])


def downgrade() -> None:
    op.drop_table("runs")
