"""One resolution of table references (core.deps.candidates): the dependency order, the preview
rewrite and the data review's dependents (`diff --dependents`) resolve a name alike, nested
namespaces and default catalogs included (issue 39, item 3)."""

from __future__ import annotations

import pytest

from reconciler.core import deps
from reconciler.core.model import ViewId, ViewSpec
from reconciler.preview.rewrite import rewrite
from reconciler.services.datareview import _read_declared


def spec(sql: str, **extra: object) -> ViewSpec:
    return ViewSpec.model_validate({"representations": [{"dialect": "spark", "sql": sql}], **extra})


READER = ViewId("lake", "sales.eu", "report")  # a view in a nested namespace
TARGET = ViewId("lake", "sales.eu", "orders_v")
ELSEWHERE = ViewId("lake", "sales", "orders_v")  # the same name one level up: never meant


@pytest.mark.parametrize(("sql", "extra"), [
    ("SELECT * FROM orders_v", {}),  # unqualified: the view's own (nested) namespace
    ("SELECT * FROM orders_v", {"default_namespace": ["sales", "eu"]}),
    ("SELECT o.id FROM orders_v o JOIN orders_v p ON o.id = p.id", {}),
])
def test_the_planner_and_the_reviews_dependents_resolve_a_nested_namespace_alike(sql: str, extra: dict) -> None:
    s = spec(sql, **extra)
    by_key = deps.index([TARGET, ELSEWHERE])
    assert deps.dependencies(READER, s, by_key) == {TARGET}
    rewritten = _read_declared(sql, READER, s, {TARGET: "vs_declared_1", ELSEWHERE: "vs_wrong_2"})
    assert "vs_declared_1" in rewritten and "vs_wrong_2" not in rewritten, rewritten


def test_the_preview_rewrite_uses_the_same_resolution() -> None:
    s = spec("SELECT * FROM orders_v")
    out = rewrite("SELECT * FROM orders_v", "spark", READER, s,
                  {TARGET: ViewId("lake", "sales.eu__pr1", "orders_v")})
    assert "pr1" in out, out


@pytest.mark.parametrize(("parts", "extra", "key"), [
    (("orders_v",), {}, ("lake", "sales.eu", "orders_v")),
    (("sales", "orders_v"), {}, ("lake", "sales", "orders_v")),
    (("lake", "sales", "orders_v"), {}, ("lake", "sales", "orders_v")),  # a configured catalog first
    (("sales", "eu", "orders_v"), {}, ("lake", "sales.eu", "orders_v")),  # no such catalog: a nested namespace
    (("orders_v",), {"default_catalog": "nowhere"}, ("lake", "sales.eu", "orders_v")),  # not configured
])
def test_a_view_test_reads_the_object_the_planner_would(parts: tuple[str, ...], extra: dict,
                                                        key: tuple[str, str, str]) -> None:
    """View tests (viewtests.build.resolve) take the first of the same candidates, among the
    configured catalogs."""
    from reconciler.viewtests.build import resolve

    s = spec("SELECT 1 AS x", **extra)
    assert resolve(parts, READER, s, frozenset({"lake"})) == key
    assert deps.candidates(parts, READER, s, {"lake"})[0] == key
