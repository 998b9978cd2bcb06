"""Test helpers shared by the Glue tests (not fixtures)."""

from __future__ import annotations

from reconciler.adapters.base import Marker, WriteContext
from reconciler.adapters.metastore.glue import GlueAdapter
from reconciler.core.model import LiveView, ViewId, ViewSpec


class Writer:
    """Drives an adapter the way apply does: storable spec, marker with its digest."""

    def __init__(self, project: str = "t") -> None:
        self.project = project

    def marker(self, adapter: GlueAdapter, view: ViewId, spec: ViewSpec, live: LiveView | None = None) -> Marker:
        return Marker(self.project, adapter.storable(view, spec, live).digest())

    def create(self, adapter: GlueAdapter, view: ViewId, spec: ViewSpec) -> LiveView:
        assert adapter.check(view, spec) == []
        adapter.create(view, adapter.storable(view, spec), self.marker(adapter, view, spec), WriteContext())
        return self.assert_round_trip(adapter, view, spec)

    def update(self, adapter: GlueAdapter, live: LiveView, spec: ViewSpec) -> LiveView:
        assert adapter.check(live.id, spec, live) == []
        view = live.id
        adapter.update(live, adapter.storable(view, spec, live), self.marker(adapter, view, spec, live),
                       WriteContext())
        return self.assert_round_trip(adapter, view, spec)

    def assert_round_trip(self, adapter: GlueAdapter, view: ViewId, spec: ViewSpec) -> LiveView:
        """The key invariant: what we wrote reads back as storable(desired), markers intact."""
        snap = adapter.fetch(view.schema)
        live = snap.views[view.name]
        want = adapter.storable(view, spec, live)  # live holds the format that was just written
        assert live.spec.canonical() == want.canonical()
        assert live.spec.digest() == want.digest()
        assert live.managed_by == self.project
        assert live.spec_digest == want.digest()
        assert not any(k.startswith("viewsync.") for k in live.spec.properties)
        return live


ACCOUNT = "123456789012"
REGION = "us-east-1"
