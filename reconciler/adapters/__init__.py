"""Catalog adapters, one module (or package) per catalog kind, loaded lazily by kind.

Adding a catalog kind: write `reconciler/adapters/<kind>.py` (or a package) with a
`ReadOnlyAdapter` or `WritableAdapter` subclass implementing the contract in `base.py`
(a metastore-style catalog extends `metastore.base.MetastoreAdapter`) and its `Options` model, add one line
here, run `python scripts/regen_options.py`, and give it a backend fixture in
`tests/adapters/contract/conftest.py` listed in `CATALOGS` (`tests/helpers/contract.py`): the
contract suite then runs on it.
"""

from __future__ import annotations

import importlib
from typing import Any

from reconciler.adapters.base import AdapterError, CatalogAdapter

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


def open_adapter(name: str, options: dict[str, Any]) -> CatalogAdapter:
    kind = str(options.get("type"))
    try:
        cls = adapter_class(kind)
    except ImportError as err:  # a client library missing from this installation
        raise AdapterError(f"catalog {name!r}: support for {kind!r} is not available ({err})") from None
    return cls(name, {k: v for k, v in options.items() if k != "type"})
