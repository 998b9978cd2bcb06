"""A copy's SQL, per dialect: references to views with a copy point to the copy, every other
reference to the live object, qualified."""

from __future__ import annotations

import pytest

from reconciler.core.model import ViewId, ViewSpec
from reconciler.preview.copies import copy_ids, copy_spec
from reconciler.preview.rewrite import RewriteError, rewrite

A, B = ViewId("lake", "sales", "a"), ViewId("lake", "sales", "b")
COPIES = copy_ids([A, B], "pr1", "{schema}__{env}")


def _spec(sql: str, dialect: str = "spark", **over: object) -> ViewSpec:
    return ViewSpec.model_validate({"representations": [{"dialect": dialect, "sql": sql}], **over})


@pytest.mark.parametrize(("dialect", "sql", "want"), [
    ("spark", "SELECT * FROM a JOIN orders o ON a.id = o.id",
     "SELECT * FROM sales__pr1.a JOIN sales.orders AS o ON a.id = o.id"),
    ("trino", 'SELECT "x" FROM lake.sales.a, "Other"."T"', 'SELECT "x" FROM lake.sales__pr1.a, "Other"."T"'),
    ("hive", "WITH q AS (SELECT id FROM sales.a) SELECT * FROM q",
     "WITH q AS (SELECT id FROM sales__pr1.a) SELECT * FROM q"),
    ("spark", "SELECT `weird name`.id FROM `weird name`", "SELECT `weird name`.id FROM sales.`weird name`"),
])
def test_references_point_to_copies_or_qualified_live_objects(dialect: str, sql: str, want: str) -> None:
    assert rewrite(sql, dialect, B, _spec(sql, dialect), COPIES) == want


def test_the_default_namespace_resolves_unqualified_names() -> None:
    spec = _spec("SELECT * FROM orders", default_namespace=["raw"])
    assert rewrite("SELECT * FROM orders", "spark", B, spec, COPIES) == "SELECT * FROM raw.orders"


def test_a_separate_preview_catalog_qualifies_everything_with_catalogs() -> None:
    copies = copy_ids([A, B], "pr1", "{schema}__{env}", catalog="scratch")
    assert rewrite("SELECT * FROM a JOIN t", "spark", B, _spec("SELECT 1"), copies) == \
        "SELECT * FROM scratch.sales__pr1.a JOIN lake.sales.t ON TRUE"


def test_the_copy_spec_keeps_the_declaration_and_leaves_the_namespace_to_the_copy() -> None:
    spec = _spec("SELECT id FROM a", comment="c", properties={"tier": "gold"}, default_namespace=["sales"])
    copy = copy_spec(B, spec, COPIES)
    assert copy.sql_for("spark") == "SELECT id FROM sales__pr1.a"
    assert (copy.comment, copy.properties, copy.default_namespace) == ("c", {"tier": "gold"}, None)


def test_sql_that_is_not_one_query_is_refused() -> None:
    with pytest.raises(RewriteError):
        rewrite("SELECT 1; DROP TABLE t", "spark", B, _spec("SELECT 1"), COPIES)
