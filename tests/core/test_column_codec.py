"""HMS and Glue share one column codec, each with its real comment limit: the metastore's
COLUMNS_V2.COMMENT holds 256 characters, Glue's CommentString 255. A comment the catalog
cannot hold is left out of its columns and still reads back exactly (through the extras)."""

from __future__ import annotations

import pytest

from reconciler.adapters.metastore import formats
from reconciler.adapters.metastore.formats.params import COLUMN_COMMENT_LIMIT
from reconciler.adapters.metastore.glue import codec as glue_codec
from reconciler.adapters.metastore.glue import legacy_codec
from reconciler.core.model import Column, ViewId, ViewSpec
from tests.helpers.specs import spec

VIEW = ViewId("c", "db", "v")


def _spec(comment: str) -> ViewSpec:
    return spec("SELECT 1 AS id", dialects=("hive", "spark", "trino"),
                columns=[{"name": "id", "type": "bigint", "comment": comment}]).resolved(VIEW)


def test_the_real_limits() -> None:
    assert COLUMN_COMMENT_LIMIT == 256 and glue_codec.MAX_COLUMN_COMMENT == 255


@pytest.mark.parametrize("view_format", ["spark", "hive", "athena"])
def test_a_256_character_comment_fits_hms_but_not_glue(view_format: str) -> None:
    spec = _spec("x" * 256)
    table = legacy_codec.encode(view_format, VIEW.name, VIEW.schema, spec, {})
    assert all("Comment" not in c for c in table["StorageDescriptor"]["Columns"])  # Glue would refuse it
    assert legacy_codec.decode(table, VIEW.schema).spec.columns[0].comment == "x" * 256  # read back exactly
    if view_format != "athena":  # the same spec in the metastore keeps the comment in its column
        desc = formats.write_view(view_format, VIEW.schema, VIEW.name, spec, {})
        assert desc.columns[0].comment == "x" * 256


def test_multi_dialect_columns_use_the_same_codec() -> None:
    cols = glue_codec.glue_columns([Column(name="id", type="bigint", comment="x" * 255),
                                    Column(name="n", type="string", comment="y" * 256)])
    assert cols == [{"Name": "id", "Type": "bigint", "Comment": "x" * 255}, {"Name": "n", "Type": "string"}]
