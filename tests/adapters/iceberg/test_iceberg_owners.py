"""Issue 16: a declared view owner is the Iceberg view property `owner`, read back without a
perpetual diff."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.iceberg import IcebergServer
from tests.helpers.owners import owner_roundtrip, schema_owner_roundtrip

pytestmark = pytest.mark.slow  # starts a JVM, Spark or a slow backend (pytest -m 'not slow' skips it)


def test_owner_round_trips_on_iceberg_rest(tmp_path: Path, iceberg_server: IcebergServer, namespace: str) -> None:
    client = iceberg_server.client_catalog()

    def stored(name: str) -> str | None:
        return client.load_view((namespace, name)).metadata.properties.get("owner")  # type: ignore[no-any-return]

    owner_roundtrip(tmp_path, "lake", {"type": "iceberg-rest", "uri": iceberg_server.uri}, namespace,
                    ["spark", "trino"], stored)


def test_schema_owner_is_the_namespace_property_owner(tmp_path: Path, iceberg_server: IcebergServer,
                                                       namespace: str) -> None:
    client = iceberg_server.client_catalog()

    def stored() -> str | None:
        return client.load_namespace_properties(namespace).get("owner")  # type: ignore[no-any-return]

    schema_owner_roundtrip(tmp_path, "lake", {"type": "iceberg-rest", "uri": iceberg_server.uri}, namespace,
                           ["spark"], stored)
