"""GlueAdapter.table_schemas on moto: columns, partition keys after them, views and unknown names left out."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from reconciler.adapters.metastore.glue import GlueAdapter
from reconciler.core.model import Column


def test_table_columns_for_the_verifier(raw_glue: Any, make_adapter: Callable[..., GlueAdapter]) -> None:
    raw_glue.create_database(DatabaseInput={"Name": "sales"})
    raw_glue.create_table(DatabaseName="sales", TableInput={
        "Name": "orders", "TableType": "EXTERNAL_TABLE",
        "StorageDescriptor": {"Columns": [{"Name": "id", "Type": "bigint", "Comment": "key"},
                                          {"Name": "amount", "Type": "decimal(18,2)"},
                                          {"Name": "tags", "Type": "array<string>"}]},
        "PartitionKeys": [{"Name": "day", "Type": "date"}]})
    raw_glue.create_table(DatabaseName="sales", TableInput={
        "Name": "a_view", "TableType": "VIRTUAL_VIEW", "ViewOriginalText": "SELECT 1",
        "StorageDescriptor": {"Columns": [{"Name": "x", "Type": "int"}]}})
    adapter = make_adapter()
    got = adapter.table_schemas([("sales", "orders"), ("sales", "a_view"), ("sales", "nope"), ("none", "t")])
    assert got == {("sales", "orders"): [Column(name="id", type="bigint", comment="key"),
                                         Column(name="amount", type="decimal(18,2)"),
                                         Column(name="tags", type="array<string>"),
                                         Column(name="day", type="date")]}
