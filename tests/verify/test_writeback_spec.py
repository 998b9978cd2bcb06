"""`writeback.write_spec`, the text `viewsync revert` writes: only the fields that differ are
rewritten, every other byte of the file (comments, blank lines, tests, other views) is kept,
and the file reads back as exactly the recorded spec."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from reconciler.core.errors import UserError
from reconciler.core.model import ViewId, ViewSpec
from reconciler.source.config import CatalogConfig, Config
from reconciler.source.declarations import load
from reconciler.verify.writeback import write_spec

REL = "views/local/sales.yaml"
VIEW = ViewId("local", "sales", "orders_v")
TEXT = """\
# the sales team's views
catalog: local
schema: sales
views:
  - name: other
    representations: [{dialect: spark, sql: SELECT 1 AS x}]

  - name: orders_v   # read by the dashboards
    comment: Orders
    columns:
      - {name: id, type: bigint}    # the key
      - {name: amount, type: "decimal(18,2)"}
    representations:
      - dialect: spark
        sql: |
          SELECT id, amount
          FROM sales.orders
      - dialect: trino
        sql: SELECT id, amount FROM sales.orders
    owner: sales-team
    properties: {tier: gold}
    # how it is tested
    tests:
      - name: one
        given: {sales.orders: {rows: []}}
        expect: {rows: []}
"""


def _config() -> Config:
    return Config(Path("viewsync.yaml"), "t", "sqlite://", {"local": CatalogConfig("local", "managed", {})})


def _declared(text: str) -> ViewSpec:
    return load([(REL, text)], _config()).views[VIEW]


def _write(change: dict[str, Any]) -> tuple[str, ViewSpec]:
    current = _declared(TEXT)
    target = ViewSpec.model_validate({**current.canonical(), **change}).resolved(VIEW)
    out = write_spec(TEXT, 1, VIEW.namespace, current.canonical(), target.canonical(), REL)
    assert _declared(out).digest() == target.digest()  # it reads back as the recorded version
    return out, target


def _diff(before: str, after: str) -> tuple[list[str], list[str]]:
    old, new = before.splitlines(), after.splitlines()
    return [line for line in old if line not in new], [line for line in new if line not in old]


def test_only_the_changed_sql_is_rewritten_and_comments_stay() -> None:
    out, _ = _write({"representations": [{"dialect": "spark", "sql": "SELECT id, amount\nFROM sales.old_orders"},
                                         {"dialect": "trino", "sql": "SELECT id, amount FROM sales.orders"}]})
    assert _diff(TEXT, out) == (["          FROM sales.orders"], ["          FROM sales.old_orders"])


def test_changed_removed_and_added_fields() -> None:
    out, _ = _write({"comment": "Orders: all of them, #1", "owner": None, "properties": {},
                     "security": "invoker", "columns": [{"name": "id", "type": "bigint", "comment": "key"}]})
    removed, added = _diff(TEXT, out)
    assert removed == ["    comment: Orders", "      - {name: id, type: bigint}    # the key",
                       '      - {name: amount, type: "decimal(18,2)"}', "    owner: sales-team",
                       "    properties: {tier: gold}"]
    assert added == ["    security: invoker", '    comment: "Orders: all of them, #1"',
                     "      - {name: id, type: bigint, comment: key}"]
    assert "    # how it is tested" in out and out.startswith("# the sales team's views\n")


def test_representations_with_other_dialects_are_written_whole() -> None:
    out, _ = _write({"representations": [{"dialect": "spark", "sql": "SELECT 1 AS id,\n   \n  'it''s' AS amount"}]})
    assert "      - dialect: trino" not in out
    assert "        sql: |\n          SELECT 1 AS id,\n             \n            'it''s' AS amount\n    owner:" in out


def test_a_default_namespace_other_than_the_schema_is_written_and_removed_again() -> None:
    out, target = _write({"default_namespace": ["crm", "eu"]})
    assert "    default_namespace: [crm, eu]\n" in out
    back = write_spec(out, 1, VIEW.namespace, target.canonical(), _declared(TEXT).canonical(), REL)
    assert back == TEXT


def test_a_view_in_flow_style_is_refused_by_name() -> None:
    text = "catalog: local\nschema: sales\nviews:\n  - {name: orders_v, representations: [{dialect: spark, " \
           "sql: SELECT 1 AS id}]}\n"
    current = _declared(text)
    target = current.model_copy(update={"comment": "x"})
    with pytest.raises(UserError, match=r"views\[0\]: cannot rewrite a view written as a flow mapping"):
        write_spec(text, 0, VIEW.namespace, current.canonical(), target.canonical(), REL)
