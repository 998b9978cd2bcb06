"""Issue 14: column types nested far deeper than the Python stack parse, render and
round-trip through every target; past MAX_DEPTH (and for catalog JSON too deep to read)
they are one clear error, never a RecursionError."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from reconciler.adapters.metastore.formats import codec
from reconciler.adapters.metastore.formats import spark as spark_fmt
from reconciler.adapters.metastore.formats.common import FormatError
from reconciler.adapters.metastore.formats.table import TableDesc
from reconciler.core import coltypes as t
from reconciler.core.model import Column, Representation, ViewSpec
from tests.adapters.iceberg.conftest import iceberg_server, namespace  # noqa: F401 - fixtures

# The real backends' session fixtures, as the contract suite takes them (one server per session).
from tests.adapters.metastore.glue.conftest import glue_url, moto_url, raw_glue  # noqa: F401 - fixtures
from tests.adapters.metastore.hms.conftest import database, hms_client, metastore  # noqa: F401 - fixtures
from tests.helpers.cli import run_cli
from tests.helpers.hostile import GOOD, assert_rejected, write

pytestmark = pytest.mark.slow  # starts a JVM, Spark or a slow backend (pytest -m 'not slow' skips it)

RENDER: dict[str, Callable[[t.Type], Any]] = {
    "iceberg": t.to_iceberg, "hive": t.to_hive, "trino": t.to_trino, "spark": t.to_spark, "flink": t.to_flink}
PARSE: dict[str, Callable[[Any], t.Type]] = {
    "iceberg": t.from_iceberg, "hive": t.from_hive, "trino": t.from_trino, "spark": t.from_spark,
    "flink": t.from_flink}


def nested_array(depth: int) -> str:
    return "array<" * depth + "int" + ">" * depth


def nested_mix(depth: int) -> str:
    """struct / map / array in turn, with a decimal and a quoted field name at the bottom."""
    opens = ["struct<`a b`:", "map<string,", "array<"]
    return "".join(opens[i % 3] for i in range(depth)) + "decimal(10,2)" + ">" * depth


def same_json(a: Any, b: Any) -> bool:
    """== for JSON values, without recursion (CPython's == on deep dicts recurses)."""
    pairs = [(a, b)]
    while pairs:
        x, y = pairs.pop()
        if isinstance(x, dict) and isinstance(y, dict):
            if x.keys() != y.keys():
                return False
            pairs.extend((x[k], y[k]) for k in x)
        elif isinstance(x, list) and isinstance(y, list):
            if len(x) != len(y):
                return False
            pairs.extend(zip(x, y, strict=True))
        elif type(x) is not type(y) or x != y:
            return False
    return True


@pytest.fixture(autouse=True)
def default_recursion_limit() -> None:
    assert sys.getrecursionlimit() <= 1000  # Python's default: the deep cases must not need more


@pytest.mark.parametrize("depth", [1200, 5000])
@pytest.mark.parametrize("make", [nested_array, nested_mix], ids=["array", "mix"])
def test_deep_type_round_trips_through_every_target(make: Callable[[int], str], depth: int) -> None:
    text = make(depth)
    ty = t.parse(text)
    assert t.render(ty) == t.canonical(text) == text
    for target in t.TARGETS:
        rendered = RENDER[target](ty)
        back = PARSE[target](rendered)
        assert t.render(back) == t.render(t.coerce(ty, target)), target  # strings: == on deep trees recurses
        assert same_json(RENDER[target](back), rendered), target
        assert t.parse_from(rendered, target) == t.coerce_str(text, target)
    assert t.render(t.from_spark_ddl(t.to_spark_ddl(ty))) == t.render(t.coerce(ty, "spark"))


def test_iceberg_ids_stay_preorder_when_deep() -> None:
    j = t.to_iceberg(t.parse("map<int," * 1500 + "int" + ">" * 1500), [0])
    ids = []
    for _ in range(1500):
        ids += [j["key-id"], j["value-id"]]
        j = j["value"]
    assert ids == list(range(1, 3001))


def test_beyond_the_bound_is_one_clear_error() -> None:
    deep = t.MAX_DEPTH + 1
    for target, text in [("hive", nested_array(deep)), ("trino", "array(" * deep + "integer" + ")" * deep),
                         ("flink", "ARRAY<" * deep + "INT" + ">" * deep)]:
        with pytest.raises(t.ColumnTypeError, match=f"nested deeper than {t.MAX_DEPTH} levels"):
            PARSE[target](text)
    ice: Any = "int"
    spark: Any = "integer"
    for _ in range(deep):
        ice = {"type": "list", "element-id": 1, "element": ice, "element-required": False}
        spark = {"type": "array", "elementType": spark, "containsNull": True}
    with pytest.raises(t.ColumnTypeError, match="nested deeper than"):
        t.from_iceberg(ice)
    with pytest.raises(t.ColumnTypeError, match="nested deeper than"):
        t.from_spark(spark)


def test_exactly_at_the_bound_parses() -> None:
    assert t.render(t.parse(nested_array(t.MAX_DEPTH))) == nested_array(t.MAX_DEPTH)


# ------------------------------------------------------------------ the CLI
def deep_view(depth: int) -> str:
    return GOOD.replace("    representations:", f"    columns:\n      - {{name: x, type: "
                        f"'{nested_array(depth)}'}}\n    representations:")


def test_validate_and_plan_a_view_with_a_deep_column_type(sample_repo: Path) -> None:
    write(sample_repo, "views/local/sales.yaml", deep_view(1200))
    (sample_repo / "views" / "local" / "analytics.yaml").unlink()  # its views (and tests) read the sales views
    for command in (["validate"], ["plan"]):
        res = run_cli(sample_repo, *command)
        assert res.code == 0, (command, res.text[-2000:])
        assert "Traceback" not in res.text and "unexpected" not in res.text


def test_a_type_beyond_the_bound_is_one_located_line(sample_repo: Path) -> None:
    write(sample_repo, "views/local/sales.yaml", deep_view(t.MAX_DEPTH + 1))
    assert_rejected(sample_repo, "views/local/sales.yaml:", "nested deeper than", (["validate"], ["plan"]))


# ------------------------------------------------------- catalog-side JSON
def spark_table(schema_json: str) -> TableDesc:
    return TableDesc(database="sales", name="v", view_original_text="SELECT 1 AS x",
                     view_expanded_text="SELECT 1 AS x",
                     parameters={"spark.sql.sources.schema": schema_json, "view.query.out.numCols": "1"})


@pytest.mark.parametrize("depth", [2000, 100_000])
def test_deep_spark_schema_json_from_a_catalog_is_a_decode_error(depth: int) -> None:
    inner = '{"type":"array","elementType":' * depth + '"integer"' + ',"containsNull":true}' * depth
    raw = '{"type":"struct","fields":[{"name":"x","type":' + inner + ',"nullable":true,"metadata":{}}]}'
    with pytest.raises(FormatError, match="nested too deeply"):
        spark_fmt.SPARK.decode(spark_table(raw))


def test_spark_schema_json_within_json_depth_still_reads() -> None:
    ty = t.parse(nested_array(400))
    raw = json.dumps({"type": "struct", "fields": [{"name": "x", "type": t.to_spark(ty), "nullable": True,
                                                     "metadata": {}}]})
    spec = spark_fmt.SPARK.decode(spark_table(raw))
    assert spec.columns[0].type == nested_array(400)


def test_deep_types_compare_and_hash() -> None:
    a, b, c = t.parse(nested_mix(3000)), t.parse(nested_mix(3000)), t.parse(nested_mix(3000).replace("a b", "a c"))
    assert a == b and a != c and hash(a) == hash(b) and len({a, b, c}) == 2


# ------------------------------------------------- writing to a catalog (plan)
DEEP = 1200  # past CPython's recursive JSON encoder and pyiceberg's models, well within MAX_DEPTH


def deep_spec(dialect: str) -> ViewSpec:
    return ViewSpec(columns=[Column(name="id", type="int"), Column(name="deep", type=nested_mix(DEEP))],
                    representations=[Representation(dialect=dialect, sql="SELECT 1 AS id, NULL AS deep")],
                    security="invoker")


@pytest.mark.parametrize("fmt", ["spark"])
def test_a_type_too_deep_for_the_formats_json_is_one_plan_error(fmt: str) -> None:
    errors = codec.check_view(fmt, deep_spec(codec.DIALECT_OF[fmt]), "catalog 'c': view s.v")
    assert errors == [("not_storable", f"catalog 'c': view s.v: column 'deep': type nested too deeply to "
                                       f"store in the {fmt} format")]
    with pytest.raises(FormatError, match="column 'deep': type nested too deeply"):
        codec.write_view(fmt, "s", "v", deep_spec(codec.DIALECT_OF[fmt]), {})


def backend(request: pytest.FixtureRequest, *names: str) -> list[Any]:
    """The backends' fixtures imported above, by name (parameters would shadow the imports)."""
    return [request.getfixturevalue(name) for name in names]


def deep_repo(tmp_path: Path, catalog: dict[str, Any], schema: str, dialect: str = "spark") -> Path:
    """A repository declaring one view, `deep`, with a DEEP-level column type in catalog `cat`."""
    repo = tmp_path / "repo"
    (repo / "views" / "cat").mkdir(parents=True)
    (repo / "viewsync.yaml").write_text(yaml.safe_dump({
        "version": 1, "project": "t", "state": f"sqlite:///{tmp_path}/state.db", "catalogs": {"cat": catalog}}))
    (repo / "views" / "cat" / f"{schema}.yaml").write_text(yaml.safe_dump({
        "catalog": "cat", "schema": schema,
        "views": [{"name": "deep", "columns": [{"name": "id", "type": "int"},
                                               {"name": "deep", "type": nested_mix(DEEP)}],
                   "representations": [{"dialect": dialect, "sql": "SELECT 1 AS id, NULL AS deep"}]}]}))
    return repo


def assert_plan_refused(repo: Path, store: str) -> None:
    """plan: exit 1 with one located plan error; apply: exit 1 (it must write nothing)."""
    as_json = run_cli(repo, "plan", "--format", "json")
    assert as_json.code == 1, as_json.text[-2000:]
    errors = json.loads(as_json.out)["errors"]
    assert [(e["code"], e["view"]["name"]) for e in errors] == [("not_storable", "deep")], errors
    assert f"column 'deep': type nested too deeply to store in {store}" in errors[0]["message"]
    text = run_cli(repo, "plan")
    assert text.code == 1 and "nested too deeply" in text.text
    applied = run_cli(repo, "apply", "--auto-approve")
    assert applied.code == 1, applied.text[-2000:]
    for res in (as_json, text, applied):
        assert "Traceback" not in res.text and "unexpected" not in res.text and "RecursionError" not in res.text


def test_hms_spark_format_refuses_a_too_deep_type_at_plan(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    hms, db, client = backend(request, "metastore", "database", "hms_client")
    repo = deep_repo(tmp_path, {"type": "hms", "uri": hms.uri, "engine_format": "spark"}, db)
    assert_plan_refused(repo, "the spark format")
    assert client.get_all_tables(db) == []


def test_iceberg_refuses_a_too_deep_type_at_plan(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    server, ns = backend(request, "iceberg_server", "namespace")
    repo = deep_repo(tmp_path, {"type": "iceberg-rest", "uri": server.uri}, ns)
    assert_plan_refused(repo, "an Iceberg view")
    assert server.client_catalog().list_views(ns) == []


def test_glue_spark_format_refuses_a_too_deep_type_at_plan(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    url, glue = backend(request, "glue_url", "raw_glue")
    glue.create_database(DatabaseInput={"Name": "analytics"})
    repo = deep_repo(tmp_path, {"type": "glue", "region": "us-east-1", "catalog_id": "123456789012",
                                "endpoint_url": url, "engine_format": "spark"}, "analytics")
    assert_plan_refused(repo, "the spark format")
    assert glue.get_tables(DatabaseName="analytics")["TableList"] == []


# ------------------------------------------- where the catalog can hold it, it works
def assert_round_trips(repo: Path) -> None:
    for command, code in ((["plan", "--detailed-exitcode"], 2), (["apply", "--auto-approve"], 0),
                          (["plan", "--detailed-exitcode"], 0)):
        res = run_cli(repo, *command)
        assert res.code == code, (command, res.text[-2000:])


def test_glue_multi_dialect_stores_a_deep_type(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """Glue keeps the Hive type string (no JSON of it): plan, apply, plan again is empty."""
    url, glue = backend(request, "glue_url", "raw_glue")
    glue.create_database(DatabaseInput={"Name": "analytics"})
    repo = deep_repo(tmp_path, {"type": "glue", "region": "us-east-1", "catalog_id": "123456789012",
                                "endpoint_url": url, "engine_format": "multi-dialect"}, "analytics")
    assert_round_trips(repo)
    cols = glue.get_table(DatabaseName="analytics", Name="deep")["Table"]["StorageDescriptor"]["Columns"]
    assert t.canonical(cols[1]["Type"]) == t.canonical(t.coerce_str(nested_mix(DEEP), "hive"))


def test_hms_flink_format_stores_a_deep_type(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """The Flink format keeps types as strings in table parameters: it works at any depth."""
    hms, db = backend(request, "metastore", "database")
    repo = deep_repo(tmp_path, {"type": "hms", "uri": hms.uri, "engine_format": "flink"}, db, "flink")
    assert_round_trips(repo)
