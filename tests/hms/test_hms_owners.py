"""Issue 16: a declared view owner is the HMS table owner (and Trino's definer), read back
without a perpetual diff, in every engine format viewsync writes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.access.owners_support import owner_roundtrip, schema_owner_roundtrip


@pytest.mark.parametrize(("write_format", "dialects", "security"), [
    ("spark", ["spark"], "definer"), ("hive", ["hive"], "definer"), ("trino", ["trino"], "definer"),
    ("trino", ["trino"], "invoker"), ("spark", ["spark", "trino"], "invoker")])
def test_owner_round_trips_on_hms(tmp_path: Path, metastore: Any, database: str, hms_client: Any,
                                  write_format: str, dialects: list[str], security: str) -> None:
    def stored(name: str) -> str | None:
        owner: str | None = hms_client.get_table(database, name).owner
        return owner

    # trino_owner: the user an owner-less Trino definer view runs as (else a plan error, issue 11)
    owner_roundtrip(tmp_path, "hive", {"type": "hms", "uri": metastore.uri, "engine_format": write_format,
                                       "trino_owner": "trino_svc"},
                    database, dialects, stored, security)


def test_schema_owner_is_the_hms_database_owner(tmp_path: Path, metastore: Any, database: str,
                                                 hms_client: Any) -> None:
    def stored() -> str | None:
        owner: str | None = hms_client.get_database(database).ownerName
        return owner or None

    schema_owner_roundtrip(tmp_path, "hive", {"type": "hms", "uri": metastore.uri}, database, ["spark"], stored)
