"""Writing into a managed store behind viewsync's back."""

from __future__ import annotations

from pathlib import Path

from reconciler.adapters.managed.tables import view_meta


def _insert_foreign_view(repo: Path, schema: str, name: str, managed_by: str | None, sql: str) -> None:
    """A view written into the store by someone else (no marker, or another project's)."""
    from reconciler.adapters.base import Marker, WriteContext
    from reconciler.adapters.managed.adapter import ManagedAdapter
    from reconciler.core.model import Representation, ViewId, ViewSpec

    url = f"sqlite:///{repo / '.viewsync' / 'catalog.db'}"
    (repo / ".viewsync").mkdir(exist_ok=True)
    adapter = ManagedAdapter("local", {"url": url})
    spec = ViewSpec(representations=[Representation(dialect="spark", sql=sql)], default_namespace=[schema])
    adapter.create(ViewId("local", schema, name), spec, Marker(managed_by or "x", spec.digest()), WriteContext())
    if managed_by is None:
        with adapter.engine.begin() as conn:
            conn.execute(view_meta.update().where(view_meta.c.view_name == name)
                         .values(managed_by=None, spec_digest=None))
