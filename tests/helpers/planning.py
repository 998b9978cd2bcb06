"""Planning against in-memory catalogs, for the planner and apply unit tests."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from reconciler.adapters.base import SchemaSnapshot
from reconciler.core.model import ViewId, ViewSpec
from reconciler.plan.planner import Plan, PlanOptions, build_plan
from tests.helpers.memory_catalog import MemoryCatalog

DIGEST = "sha256:" + "0" * 64
Snapshots = dict[tuple[str, str], SchemaSnapshot]


def snapshots(*catalogs: MemoryCatalog, also: tuple[tuple[str, str], ...] = ()) -> Snapshots:
    snaps = {(c.name, s): c.fetch(s) for c in catalogs for s in c.list_schemas()}
    by_name = {c.name: c for c in catalogs}
    for cat, schema in also:
        snaps[(cat, schema)] = by_name[cat].fetch(schema)
    return snaps


def plan(desired: Mapping[ViewId, ViewSpec], *catalogs: MemoryCatalog, **opts: Any) -> Plan:
    snaps = snapshots(*catalogs, also=tuple((v.catalog, v.schema) for v in desired))
    return build_plan(desired, snaps, {c.name: c for c in catalogs}, PlanOptions(project="p", **opts), DIGEST)
