"""Re-applying the same commit after an out-of-band replace converges (real Iceberg REST server).

Iceberg reuses a view version equal to an existing one (ViewMetadata.Builder.sameViewVersion), so
the commit must point `set-current-view-version` at that version's id, not at "last added" (-1).
"""

from __future__ import annotations

from typing import Any

import pytest

from reconciler.adapters.iceberg import IcebergRestAdapter
from reconciler.core.model import ViewId
from tests.adapters.iceberg.test_iceberg_adapter import (
    adapter,
    assert_converged,
    fetch_view,
    make_spec,
    other_client_commit,
    raw_metadata,
)
from tests.adapters.iceberg.test_iceberg_adapter import write as write_view
from tests.helpers.iceberg import IcebergServer

pytestmark = pytest.mark.slow  # starts a JVM, Spark or a slow backend (pytest -m 'not slow' skips it)

__all__ = ["adapter"]  # the fixture, imported so pytest finds it here


def spark_replace(server: IcebergServer, view: ViewId, sql: str) -> None:
    """What Spark's CREATE OR REPLACE VIEW commits: a new version with its own summary, made current."""
    meta = raw_metadata(server, view)
    current = next(v for v in meta["versions"] if v["version-id"] == meta["current-version-id"])
    new_id = max(v["version-id"] for v in meta["versions"]) + 1
    version: dict[str, Any] = {
        "version-id": new_id, "schema-id": current["schema-id"], "timestamp-ms": 1,
        "summary": {"engine-name": "spark", "engine-version": "3.5.6", "app-id": "local-1"},
        "representations": [{"type": "sql", "sql": sql, "dialect": "spark"}],
        "default-namespace": current["default-namespace"],
    }
    other_client_commit(server, view, [
        {"action": "set-properties", "updates": {"replace.drop-dialect.allowed": "true"}},
        {"action": "add-view-version", "view-version": version},
        {"action": "set-current-view-version", "view-version-id": -1},
    ])


def test_reapply_at_the_same_commit_after_an_out_of_band_replace_converges(
        adapter: IcebergRestAdapter, iceberg_server: IcebergServer, namespace: str) -> None:
    view = ViewId("lake", namespace, "restored")
    desired = make_spec()
    write_view(adapter, view, desired, commit="c0ffee")
    props = raw_metadata(iceberg_server, view)["properties"]
    assert props["spark.query-column-names"] == "customer_id,total_amount,segment"  # as Spark+Iceberg write it
    assert props["create_engine_version"].startswith("viewsync ")
    # The catalog stamps its own summary on a created version; a replace carries ours.
    spark_replace(iceberg_server, view, "SELECT 1 AS customer_id, 2 AS total_amount, 'x' AS segment")
    write_view(adapter, view, desired, fetch_view(adapter, view), commit="c0ffee")
    ours = raw_metadata(iceberg_server, view)["current-version-id"]

    # Replaced again out of band, then the same commit applied again: Iceberg sees our version
    # as an existing one (same summary, SQL, namespace, schema) and must be told its id.
    spark_replace(iceberg_server, view, "SELECT 2 AS customer_id, 3 AS total_amount, 'y' AS segment")
    drifted = fetch_view(adapter, view)
    assert drifted.spec.dialects() == ["spark"]
    write_view(adapter, view, desired, drifted, commit="c0ffee")
    meta = raw_metadata(iceberg_server, view)
    assert meta["current-version-id"] == ours  # our version is current again; none added
    assert len(meta["versions"]) == 4
    live = assert_converged(adapter, view, desired)
    # The next apply has nothing to do.
    write_view(adapter, view, desired, live, commit="c0ffee")
    assert len(raw_metadata(iceberg_server, view)["versions"]) == 4


def test_reapply_at_a_new_commit_adds_a_version(adapter: IcebergRestAdapter, iceberg_server: IcebergServer,
                                                namespace: str) -> None:
    view = ViewId("lake", namespace, "restored_later")
    desired = make_spec()
    write_view(adapter, view, desired, commit="c0ffee")
    spark_replace(iceberg_server, view, "SELECT 1 AS customer_id, 2 AS total_amount, 'x' AS segment")
    write_view(adapter, view, desired, fetch_view(adapter, view), commit="beef")
    meta = raw_metadata(iceberg_server, view)
    assert meta["current-version-id"] == 3 and len(meta["versions"]) == 3
    assert_converged(adapter, view, desired)
