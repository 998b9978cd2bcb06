"""Issue 16: a declared view owner is Glue's table `Owner`, read back without a perpetual diff,
for every view format viewsync writes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.helpers.glue_support import ACCOUNT, REGION
from tests.helpers.owners import owner_roundtrip, schema_owner_roundtrip


@pytest.mark.parametrize(("view_format", "dialects"), [
    ("multi-dialect", ["spark", "trino"]), ("athena", ["trino"]), ("spark", ["spark"]), ("hive", ["hive"])])
def test_owner_round_trips_on_glue(tmp_path: Path, glue_url: str, raw_glue: Any, view_format: str,
                                   dialects: list[str]) -> None:
    raw_glue.create_database(DatabaseInput={"Name": "sales"})

    def stored(name: str) -> str | None:
        owner: str | None = raw_glue.get_table(DatabaseName="sales", Name=name)["Table"].get("Owner")
        return owner

    owner_roundtrip(tmp_path, "glue", {"type": "glue", "region": REGION, "catalog_id": ACCOUNT,
                                       "endpoint_url": glue_url, "engine_format": view_format,
                                       "trino_owner": "trino_svc"},  # owner-less Trino definer views run as it
                    "sales", dialects, stored)


def test_glue_keeps_no_schema_owner_and_says_so(tmp_path: Path, glue_url: str, raw_glue: Any) -> None:
    raw_glue.create_database(DatabaseInput={"Name": "sales"})
    schema_owner_roundtrip(tmp_path, "glue", {"type": "glue", "region": REGION, "catalog_id": ACCOUNT,
                                              "endpoint_url": glue_url, "engine_format": "spark"},
                           "sales", ["spark"], None)
