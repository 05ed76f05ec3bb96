"""organisations and keys' grid secrets; charged-from-first-prompt, fingerprints and flags on
submissions; each set's item count and answers-body size

Revision ID: 0003
Revises: 0002
"""
import secrets

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "organisations",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(200), nullable=False, unique=True),
        sa.Column("daily_limit", sa.Integer, nullable=True),
        sa.Column("max_keys", sa.Integer, nullable=False, server_default="5"),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
    )
    with op.batch_alter_table("api_keys") as b:
        b.add_column(sa.Column("org_id", sa.Integer, sa.ForeignKey("organisations.id", name="fk_api_keys_org"),
                               nullable=True))
        b.add_column(sa.Column("grid_secret", sa.String(64), nullable=True))
        b.create_index("ix_api_keys_org_id", ["org_id"])
    with op.batch_alter_table("submissions") as b:
        b.add_column(sa.Column("prompts_sent_at", sa.DateTime(timezone=True), nullable=True))
        b.add_column(sa.Column("fingerprint", sa.LargeBinary, nullable=True))
        for i in range(3):
            b.add_column(sa.Column(f"band{i}", sa.String(16), nullable=True))
        b.add_column(sa.Column("flag", sa.Text, nullable=True))
    for i in range(3):
        op.create_index(f"ix_submissions_set_band{i}", "submissions", ["set_id", f"band{i}"])
    with op.batch_alter_table("test_sets") as b:
        b.add_column(sa.Column("items", sa.Integer, nullable=True))
        b.add_column(sa.Column("body_bytes", sa.Integer, nullable=True))
    # Every existing key becomes its own organisation (as before: one key, one budget) with a secret.
    conn = op.get_bind()
    orgs = sa.table("organisations", sa.column("id", sa.Integer), sa.column("name", sa.String),
                    sa.column("max_keys", sa.Integer))
    keys = sa.table("api_keys", sa.column("id", sa.Integer), sa.column("name", sa.String),
                    sa.column("org_id", sa.Integer), sa.column("grid_secret", sa.String))
    for kid, name in conn.execute(sa.select(keys.c.id, keys.c.name)).all():
        conn.execute(orgs.insert().values(name=f"key-{kid}: {name}"[:200], max_keys=5))
        oid = conn.execute(sa.select(orgs.c.id).where(orgs.c.name == f"key-{kid}: {name}"[:200])).scalar_one()
        conn.execute(keys.update().where(keys.c.id == kid).values(org_id=oid, grid_secret=secrets.token_hex(32)))


def downgrade() -> None:
    with op.batch_alter_table("test_sets") as b:
        b.drop_column("body_bytes")
        b.drop_column("items")
    for i in range(3):
        op.drop_index(f"ix_submissions_set_band{i}", "submissions")
    with op.batch_alter_table("submissions") as b:
        for c in ("flag", "band2", "band1", "band0", "fingerprint", "prompts_sent_at"):
            b.drop_column(c)
    with op.batch_alter_table("api_keys") as b:
        b.drop_index("ix_api_keys_org_id")
        b.drop_column("grid_secret")
        b.drop_column("org_id")
    op.drop_table("organisations")
