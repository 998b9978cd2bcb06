"""Catalog adapters, one module (or package) per catalog kind, loaded lazily by kind.

Adding a catalog kind: write `reconciler/adapters/<kind>.py` (or a package) with a
`ReadOnlyAdapter` or `WritableAdapter` subclass implementing the contract in `base.py`
(a metastore-style catalog extends `metastore.base.MetastoreAdapter`) and its `Options` model, add one line
to `registry.py`, run `python scripts/regen_options.py`, and give it a backend fixture in
`tests/adapters/contract/conftest.py` listed in `CATALOGS` (`tests/helpers/contract.py`): the
contract suite then runs on it.
"""

from __future__ import annotations

from typing import Any

from reconciler.adapters.base import AdapterError, CatalogAdapter
from reconciler.adapters.registry import REGISTRY, adapter_class

__all__ = ["REGISTRY", "AdapterError", "CatalogAdapter", "adapter_class", "open_adapter"]

def open_adapter(name: str, options: dict[str, Any]) -> CatalogAdapter:
    kind = str(options.get("type"))
    try:
        cls = adapter_class(kind)
    except ImportError as err:  # a client library missing from this installation
        raise AdapterError(f"catalog {name!r}: support for {kind!r} is not available ({err})") from None
    return cls(name, {k: v for k, v in options.items() if k != "type"})
