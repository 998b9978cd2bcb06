"""The one column-type grammar: every target renders and parses back."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reconciler import types as t

names = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True)
prims = st.one_of(
    st.sampled_from([t.Prim(n) for n in t.PRIMITIVES]),
    st.builds(lambda p, s: t.Prim("decimal", (p, min(s, p))), st.integers(1, 38), st.integers(0, 38)),
    st.builds(lambda n: t.Prim("varchar", (n,)), st.integers(1, 65535)),
    st.builds(lambda n: t.Prim("char", (n,)), st.integers(1, 255)),
)


def _struct(children: st.SearchStrategy[t.Type]) -> st.SearchStrategy[t.Type]:
    return st.lists(st.tuples(names, children), min_size=1, max_size=4, unique_by=lambda f: f[0]).map(
        lambda fs: t.Struct(tuple(t.Field(n, c) for n, c in fs)))


types = st.recursive(prims, lambda children: st.one_of(
    st.builds(t.Array, children), st.builds(t.Map, prims, children), _struct(children)), max_leaves=8)

RENDER = {"iceberg": t.to_iceberg, "hive": t.to_hive, "trino": t.to_trino, "spark": t.to_spark, "flink": t.to_flink}
PARSE = {"iceberg": t.from_iceberg, "hive": t.from_hive, "trino": t.from_trino, "spark": t.from_spark,
         "flink": t.from_flink}


@settings(max_examples=300, deadline=None)
@given(types)
def test_canonical_round_trip(ty: t.Type) -> None:
    assert t.parse(t.render(ty)) == ty


@pytest.mark.parametrize("target", t.TARGETS)
@settings(max_examples=200, deadline=None)
@given(ty=types)
def test_target_round_trip(target: str, ty: t.Type) -> None:
    """render -> parse gives what the target keeps (exact where the target can hold the type)."""
    rendered = RENDER[target](ty)
    assert PARSE[target](rendered) == t.coerce(ty, target)
    assert RENDER[target](PARSE[target](rendered)) == rendered


@pytest.mark.parametrize(("target", "native", "canonical"), [
    ("trino", "integer", "int"), ("trino", "varchar", "string"), ("trino", "varchar(12)", "varchar(12)"),
    ("trino", "timestamp(3) with time zone", "timestamp_ltz"), ("trino", "row(a bigint, \"B c\" double)",
                                                                 "struct<a:bigint,`B c`:double>"),
    ("trino", "array(map(varchar, real))", "array<map<string,float>>"),
    ("flink", "VARCHAR(2147483647)", "string"), ("flink", "DECIMAL(18, 2)", "decimal(18,2)"),
    ("flink", "BIGINT NOT NULL", "bigint"), ("flink", "TIMESTAMP(3) WITH LOCAL TIME ZONE", "timestamp_ltz"),
    ("flink", "ROW<`a` INT, `b` STRING>", "struct<a:int,b:string>"),
    ("spark", "long", "bigint"), ("spark", "timestamp", "timestamp_ltz"), ("spark", "timestamp_ntz", "timestamp"),
    ("iceberg", "long", "bigint"), ("iceberg", "timestamptz", "timestamp_ltz"), ("iceberg", "decimal(9, 3)",
                                                                                 "decimal(9,3)"),
    ("hive", "struct<a:int,b:array<string>>", "struct<a:int,b:array<string>>"),
])
def test_engine_type_strings(target: str, native: str, canonical: str) -> None:
    assert t.parse_from(native, target) == canonical


@pytest.mark.parametrize("bad", ["integr", "decimal(40,2)", "varchar", "array<int", "map<int>", "struct<>",
                                 "int(3)", ""])
def test_invalid_types_are_rejected(bad: str) -> None:
    with pytest.raises(t.TypeError_):
        t.canonical(bad)


def test_aliases_canonicalise() -> None:
    assert t.canonical("INTEGER") == "int"
    assert t.canonical("Array<Long>") == "array<bigint>"
    assert t.canonical("decimal") == "decimal(10,0)"
