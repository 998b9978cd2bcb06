"""The one column-type grammar: every target renders and parses back."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reconciler.core import coltypes as t

names = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True)
prims = st.one_of(
    st.sampled_from([t.Prim(n) for n in t.PRIMITIVES]),
    st.builds(lambda p, s: t.Prim("decimal", (p, min(s, p))), st.integers(1, 38), st.integers(0, 38)),
    st.builds(lambda n: t.Prim("varchar", (n,)), st.integers(1, 65535)),
    st.builds(lambda n: t.Prim("char", (n,)), st.integers(1, 255)),
    st.builds(lambda n, p: t.Prim(n, () if p == 6 else (p,)), st.sampled_from(t.TIMED), st.integers(0, 9)),
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
    ("trino", "timestamp(3) with time zone", "timestamp_ltz(3)"), ("trino", "row(a bigint, \"B c\" double)",
                                                                 "struct<a:bigint,`B c`:double>"),
    ("trino", "array(map(varchar, real))", "array<map<string,float>>"),
    ("flink", "VARCHAR(2147483647)", "string"), ("flink", "DECIMAL(18, 2)", "decimal(18,2)"),
    ("flink", "BIGINT NOT NULL", "bigint"), ("flink", "TIMESTAMP(3) WITH LOCAL TIME ZONE", "timestamp_ltz(3)"),
    ("flink", "ROW<`a` INT, `b` STRING>", "struct<a:int,b:string>"),
    ("spark", "long", "bigint"), ("spark", "timestamp", "timestamp_ltz"), ("spark", "timestamp_ntz", "timestamp"),
    ("iceberg", "long", "bigint"), ("iceberg", "timestamptz", "timestamp_ltz"), ("iceberg", "decimal(9, 3)",
                                                                                 "decimal(9,3)"),
    ("hive", "struct<a:int,b:array<string>>", "struct<a:int,b:array<string>>"),
    # Trino types a rewrite must keep (Trino's stale-view check compares them)
    ("trino", "json", "json"), ("trino", "uuid", "uuid"), ("trino", "time(3)", "time(3)"),
    ("trino", "timestamp(9)", "timestamp(9)"), ("trino", "timestamp(6)", "timestamp"), ("trino", "time", "time(3)"),
    ("trino", "timestamp", "timestamp(3)"), ("trino", "array(row(id uuid, at timestamp(9) with time zone))",
                                             "array<struct<id:uuid,at:timestamp_ltz(9)>>"),
    ("flink", "TIMESTAMP(3)", "timestamp(3)"), ("flink", "TIME", "time(0)"), ("flink", "TIMESTAMP_LTZ(3)",
                                                                             "timestamp_ltz(3)"),
    ("iceberg", "uuid", "uuid"), ("iceberg", "time", "time"),
    # Spark keeps nested char/varchar as a catalog string in the field metadata
    ("spark", "struct<city:string,zip:varchar(10)>", "struct<city:string,zip:varchar(10)>"),
    ("spark", "array<struct<timestamp:timestamp,b:timestamp_ntz>>",
     "array<struct<timestamp:timestamp_ltz,b:timestamp>>"),
    ("spark", "map<string,char(3)>", "map<string,char(3)>"),
])
def test_engine_type_strings(target: str, native: str, canonical: str) -> None:
    assert t.parse_from(native, target) == canonical


@pytest.mark.parametrize("bad", ["integr", "decimal(40,2)", "varchar", "array<int", "map<int>", "struct<>",
                                 "int(3)", "", "timestamp(13)", "time(1,2)", "json(1)"])
def test_invalid_types_are_rejected(bad: str) -> None:
    with pytest.raises(t.ColumnTypeError):
        t.canonical(bad)


def test_aliases_canonicalise() -> None:
    assert t.canonical("INTEGER") == "int"
    assert t.canonical("Array<Long>") == "array<bigint>"
    assert t.canonical("decimal") == "decimal(10,0)"
    assert t.canonical("timestamp(6)") == "timestamp" and t.canonical("TIME(9)") == "time(9)"


@pytest.mark.parametrize(("target", "native"), [("trino", "time(3) with time zone"), ("trino", "ipaddress"),
                                                ("trino", "interval day to second"), ("flink", "TIME WITH TIME ZONE")])
def test_types_without_a_canonical_form_are_refused(target: str, native: str) -> None:
    """A view with such a column is read-only: rewriting it would change its type."""
    with pytest.raises(t.ColumnTypeError):
        t.parse_from(native, target)


def test_a_misspelt_type_gets_a_suggestion() -> None:
    """Issue 43: `bigitn` said only "unknown type"."""
    with pytest.raises(t.ColumnTypeError, match=r"unknown type 'bigitn': did you mean 'bigint'\?"):
        t.canonical("bigitn")
    with pytest.raises(t.ColumnTypeError, match=r"did you mean 'timestamp'\?"):
        t.canonical("array<timestmp>")
    with pytest.raises(t.ColumnTypeError) as far:
        t.canonical("flux")
    assert "did you mean" not in str(far.value)


def test_an_unclosed_type_says_what_is_missing() -> None:
    """Issue 43: `decimal(18,2` said "expected ','" while the missing character is ')'."""
    for text, missing in (("decimal(18,2", ")"), ("varchar(10", ")"), ("array<int", ">"), ("struct<a:int", ">")):
        with pytest.raises(t.ColumnTypeError, match=rf"missing '\{missing}' at the end"):
            t.canonical(text)
