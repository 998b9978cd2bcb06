"""The catalog kinds and the module of each, imported on first use (a kind's client library may
be missing from an installation)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from reconciler.core.errors import AdapterError

if TYPE_CHECKING:
    from reconciler.adapters.base import CatalogAdapter
    from reconciler.adapters.options import CatalogOptions

REGISTRY: dict[str, str] = {
    "managed": "reconciler.adapters.managed.adapter:ManagedAdapter",
    "iceberg-rest": "reconciler.adapters.iceberg:IcebergRestAdapter",
    "hms": "reconciler.adapters.metastore.hms:HiveMetastoreAdapter",
    "glue": "reconciler.adapters.metastore.glue:GlueAdapter",
    "jdbc": "reconciler.adapters.jdbc:JdbcAdapter",
}


def adapter_class(kind: str) -> type[CatalogAdapter]:
    try:
        target = REGISTRY[kind]
    except KeyError:
        raise AdapterError(f"unknown catalog type {kind!r} (known: {', '.join(sorted(REGISTRY))})") from None
    module_name, _, cls_name = target.partition(":")
    module = importlib.import_module(module_name)
    cls: type[CatalogAdapter] = getattr(module, cls_name)
    return cls


def all_models() -> dict[str, type[CatalogOptions]]:
    """The option model of every registered kind (imports every adapter: tooling only)."""
    return {kind: adapter_class(kind).Options for kind in REGISTRY}
