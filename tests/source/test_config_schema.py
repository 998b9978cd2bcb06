"""viewsync.yaml's JSON Schema and the adapters agree on every catalog option."""

from __future__ import annotations

import json

import pytest

from reconciler.adapters.iceberg import adapter as iceberg
from reconciler.adapters.metastore.glue import adapter as glue
from tests.helpers.paths import ROOT

SCHEMA = json.loads((ROOT / "schemas" / "config.schema.json").read_text())


def _options(kind: str) -> set[str]:
    for branch in SCHEMA["$defs"]["catalog"]["allOf"]:
        if branch["if"]["properties"]["type"]["const"] == kind:
            return set(branch["then"]["properties"]) - {"type"}
    raise AssertionError(kind)


@pytest.mark.parametrize(("kind", "known"), [("iceberg-rest", iceberg.OPTIONS), ("glue", glue._KNOWN_OPTIONS)])
def test_schema_allows_exactly_the_adapter_options(kind: str, known: frozenset[str]) -> None:
    assert _options(kind) == set(known)


def test_hms_options_in_schema() -> None:
    assert _options("hms") == {"uri", "engine_format", "write_format", "timeout", "spark_catalog", "trino_catalog",
                               "trino_owner"}
