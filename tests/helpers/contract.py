"""The adapter contract suite's backends, by catalog kind."""

from __future__ import annotations

from dataclasses import dataclass

from reconciler.adapters import CatalogAdapter


@dataclass
class Backend:
    """A catalog of one kind on a real backend, with one existing, empty schema."""

    adapter: CatalogAdapter
    schema: str


# kind -> the fixtures that provide it (writable kinds are run through the whole contract)
CATALOGS: dict[str, list[str]] = {
    "managed": ["managed_sqlite", "managed_postgres"],
    "iceberg-rest": ["iceberg_rest", "iceberg_nessie"],
    "hms": ["hms"],
    "glue": ["glue_moto"],
    "jdbc": ["jdbc_sqlite"],
}
READ_ONLY = {"jdbc"}
# Emulators that do not enforce a catalog's optimistic concurrency (the adapter's handling of
# the real error is tested with botocore's Stubber instead).
NO_VERSION_CHECKS = {"glue_moto": "moto ignores UpdateTable's VersionId; "
                                  "tests/adapters/metastore/glue/test_glue_stubbed.py "
                                  "covers Glue's ConcurrentModificationException"}
WRITABLE_BACKENDS = [f for kind, fs in CATALOGS.items() if kind not in READ_ONLY for f in fs]
