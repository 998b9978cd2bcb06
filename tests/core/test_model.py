"""Canonical form and digest: stable, order-insensitive where order means nothing."""

from __future__ import annotations

from reconciler.core.model import Column, Representation, ViewId, ViewSpec
from tests.helpers.specs import spec


def _spec(**kw: object) -> ViewSpec:
    base: dict[str, object] = {"columns": [Column(name="x", type="INTEGER")], "properties": {"a": "1", "b": "2"}}
    return spec("SELECT 1 AS x", dialects=("spark", "trino"), **{**base, **kw})


def test_digest_ignores_representation_and_property_order_and_sql_padding() -> None:
    a = _spec()
    b = _spec(representations=[Representation(dialect="trino", sql="\n SELECT 1 AS x \n"),
                               Representation(dialect="spark", sql="SELECT 1 AS x")],
              properties={"b": "2", "a": "1"})
    assert a.digest() == b.digest()
    assert a.columns[0].type == "int"


def test_digest_changes_with_meaningful_fields() -> None:
    base = _spec().digest()
    assert _spec(columns=[Column(name="y", type="int")]).digest() != base
    assert _spec(security="invoker").digest() != base
    assert _spec(properties={"a": "1"}).digest() != base
    assert _spec(representations=[Representation(dialect="spark", sql="SELECT 2 AS x")]).digest() != base


def test_resolved_defaults_namespace_to_schema() -> None:
    spec = _spec().resolved(ViewId("c", "a.b", "v"))
    assert spec.default_namespace == ["a", "b"]
    assert ViewId.parse("c.a.b.v") == ViewId("c", "a.b", "v")


def test_cached_digest_does_not_survive_a_copy_with_updates() -> None:
    spec = _spec()
    digest = spec.digest()
    assert spec.model_copy(update={"comment": "changed"}).digest() != digest
    assert spec.resolved(ViewId("c", "s", "v")).digest() != digest


def test_specs_are_built_in_canonical_order() -> None:
    """Order-free parts are normalised at construction, so the serialised digest is canonical."""
    spec = _spec(representations=[Representation(dialect="trino", sql="SELECT 1 AS x\n"),
                                  Representation(dialect="spark", sql="  SELECT 1 AS x")],
                 properties={"b": "2", "a": "1"})
    assert spec.dialects() == ["spark", "trino"] and list(spec.properties) == ["a", "b"]
    assert {r.sql for r in spec.representations} == {"SELECT 1 AS x"}
    assert spec.digest() == _spec().digest()
