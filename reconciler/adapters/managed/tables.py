"""The managed store's tables (SQLAlchemy), for its writes and for tests.

Tables follow the Gravitino view design: `view_meta` (one row per view, with
current/latest version and soft delete via `deleted_at`) and
`view_version_info` (one immutable row per version). Imported only by what
writes: a plan reads the store with text SQL (reconciler.db.store_reads).
"""

from __future__ import annotations

import sqlalchemy as sa

metadata = sa.MetaData()

view_meta = sa.Table(
    "view_meta", metadata,
    sa.Column("view_id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("catalog_name", sa.String(255), nullable=False),
    sa.Column("schema_name", sa.String(255), nullable=False),
    sa.Column("view_name", sa.String(255), nullable=False),
    sa.Column("managed_by", sa.String(255)),
    sa.Column("spec_digest", sa.String(80)),
    sa.Column("audit_info", sa.Text, nullable=False),
    sa.Column("current_version", sa.Integer, nullable=False),
    sa.Column("last_version", sa.Integer, nullable=False),
    sa.Column("deleted_at", sa.BigInteger, nullable=False, default=0),
    sa.UniqueConstraint("catalog_name", "schema_name", "view_name", "deleted_at", name="uk_view_meta_name"),
)

view_version_info = sa.Table(
    "view_version_info", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("view_id", sa.Integer, nullable=False, index=True),
    sa.Column("version", sa.Integer, nullable=False),
    sa.Column("view_comment", sa.Text),
    sa.Column("columns", sa.Text, nullable=False),
    sa.Column("properties", sa.Text, nullable=False),
    sa.Column("security_mode", sa.String(16), nullable=False),
    sa.Column("owner", sa.String(255)),
    sa.Column("default_catalog", sa.String(255)),
    sa.Column("default_namespace", sa.Text),
    sa.Column("representations", sa.Text, nullable=False),
    sa.Column("spec_digest", sa.String(80)),
    sa.Column("audit_info", sa.Text, nullable=False),
    sa.Column("deleted_at", sa.BigInteger, nullable=False, default=0),
    sa.UniqueConstraint("view_id", "version", name="uk_view_version"),
)
