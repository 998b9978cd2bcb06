"""`validate --spark` / `plan --spark` against real PySpark (scratch in-memory catalog), offline
sources: every Spark error located at the offending character of the YAML, column checks,
inference and --write-columns."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jsonschema
import pytest
import yaml

from tests.helpers.cli import run_cli
from tests.helpers.paths import ROOT

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("spark_verifier")]

CONFIG = """version: 1
project: verify-test
state: sqlite:///.viewsync/state.db
catalogs:
  local: {type: managed, url: "sqlite:///.viewsync/catalog.db"}
"""

SOURCES = """catalog: local
schema: sales
tables:
  - name: orders
    columns:
      - {name: order_id, type: bigint}
      - {name: customer_id, type: bigint}
      - {name: amount, type: "decimal(18,2)"}
      - {name: name, type: string}
      - {name: tags, type: "array<string>"}
"""

CHECKS = """catalog: local
schema: checks
views:
  - name: missing_table
    representations:
      - dialect: spark
        sql: SELECT order_id FROM sales.nope
  - name: misspelt
    representations:
      - dialect: spark
        sql: |
          SELECT order_id,
                 custmer_id
          FROM sales.orders
  - name: type_mismatch
    representations:
      - dialect: spark
        sql: SELECT order_id, tags + 1 AS t FROM sales.orders
  - name: syntax
    representations:
      - dialect: spark
        sql: "SELECT order_id,, amount FROM sales.orders"
  - name: ambiguous
    representations:
      - dialect: spark
        sql: >-
          SELECT order_id FROM sales.orders a JOIN sales.orders b ON a.customer_id = b.customer_id
  - name: unknown_function
    representations:
      - dialect: spark
        sql: SELECT no_such_fn(order_id) AS x FROM sales.orders
  - name: unaliased
    columns:
      - {name: id, type: bigint}
      - {name: uname, type: string}
    representations:
      - dialect: spark
        sql: SELECT order_id AS id, upper(name) FROM sales.orders
  - name: reads_failed
    representations:
      - dialect: spark
        sql: SELECT * FROM checks.misspelt
"""


def make_repo(tmp_path: Path, views: dict[str, str], sources: dict[str, str] | None = None) -> Path:
    repo = tmp_path / "repo"
    (repo / "views" / "local").mkdir(parents=True)
    (repo / "viewsync.yaml").write_text(CONFIG)
    for schema, text in views.items():
        (repo / "views" / "local" / f"{schema}.yaml").write_text(text)
    for schema, text in (sources or {"sales": SOURCES}).items():
        (repo / "sources" / "local").mkdir(parents=True, exist_ok=True)
        (repo / "sources" / "local" / f"{schema}.yaml").write_text(text)
    return repo


def position(text: str, needle: str, occurrence: int = 1) -> str:
    """line:col (1-based) of the n-th occurrence of `needle` in `text`."""
    at = -1
    for _ in range(occurrence):
        at = text.index(needle, at + 1)
    line = text.count("\n", 0, at) + 1
    return f"{line}:{at - (text.rfind(chr(10), 0, at) + 1) + 1}"


def error_line(output: str, view: str) -> str:
    lines = [ln for ln in output.splitlines() if f"local.checks.{view}:" in ln]
    assert lines, f"no error for {view} in:\n{output}"
    return lines[0]


def test_each_spark_error_is_located_at_the_offending_character(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"checks": CHECKS})
    res = run_cli(repo, "validate", "--spark")
    assert res.code == 1, res.text
    f = "views/local/checks.yaml"
    expected = {
        "missing_table": (position(CHECKS, "nope"), "TABLE_OR_VIEW_NOT_FOUND", "sales.nope"),
        "misspelt": (position(CHECKS, "custmer_id"), "UNRESOLVED_COLUMN.WITH_SUGGESTION", "`customer_id`"),
        "type_mismatch": (position(CHECKS, "tags + 1"), "DATATYPE_MISMATCH", "ARRAY<STRING>"),
        "syntax": (position(CHECKS, ",, amount") .rsplit(":", 1)[0] + ":"
                   + str(int(position(CHECKS, ",, amount").rsplit(":", 1)[1]) + 1), "PARSE_SYNTAX_ERROR", "','"),
        "ambiguous": (position(CHECKS, "order_id FROM sales.orders a"), "AMBIGUOUS_REFERENCE", "ambiguous"),
        "unknown_function": (position(CHECKS, "no_such_fn"), "UNRESOLVED_ROUTINE", "no_such_fn"),
        "unaliased": (position(CHECKS, "upper(name)"), "CREATE_PERMANENT_VIEW_WITHOUT_ALIAS", "upper(name)"),
    }
    for view, (where, code, detail) in expected.items():
        line = error_line(res.err, view)
        assert f"{f}:{where}: views[" in line and ".sql: " in line, line
        assert code in line and detail in line, line
    # A view over a failed view is not checked, not a second error.
    assert "local.checks.reads_failed:" not in res.err
    assert "not checked: local.checks.reads_failed (reads local.checks.misspelt, which has errors)" in res.out


def test_columns_checked_and_inferred_then_written_back(tmp_path: Path) -> None:
    views = """# yaml-language-server: $schema=../../schemas/view-file.schema.json
catalog: local
schema: marts
views:
  # totals per customer; columns come from Spark
  - name: totals
    representations:
      - dialect: spark
        sql: |
          SELECT customer_id, SUM(amount) AS total
          FROM sales.orders GROUP BY customer_id
  - name: narrowed
    comment: declared narrower than Spark's SUM
    columns:
      - {name: customer_id, type: bigint}
      - {name: total, type: "decimal(18,2)"}
    representations:
      - dialect: spark
        sql: SELECT customer_id, total FROM totals
"""
    repo = make_repo(tmp_path, {"marts": views})
    res = run_cli(repo, "validate", "--spark")
    assert res.code == 0, res.text
    assert "columns of local.marts.totals from Spark: customer_id bigint, total decimal(28,2)" in res.out
    assert ("column `total`: Spark returns decimal(28,2), declared decimal(18,2): a narrowing Spark can only "
            "store-assign, which may fail at run time") in res.err
    assert "views/local/marts.yaml:15:7: views[1].columns: local.marts.narrowed: " in res.err, res.err  # located

    plan = run_cli(repo, "plan", "--spark", "--format", "json")
    assert plan.code == 0, plan.text
    doc = json.loads(plan.out)
    create = next(a for a in doc["actions"] if a["view"]["name"] == "totals")
    assert create["desired"]["columns"] == [{"name": "customer_id", "type": "bigint", "comment": None},
                                            {"name": "total", "type": "decimal(28,2)", "comment": None}]
    statuses = {v["view"]["name"]: v for v in doc["verification"]["views"]}
    assert statuses["totals"]["inferred"] and statuses["narrowed"]["status"] == "warning"
    schema = json.loads((ROOT / "schemas" / "plan.schema.json").read_text())
    jsonschema.validate(doc, schema)
    md = run_cli(repo, "plan", "--spark", "--format", "markdown")
    assert "#### Spark verification" in md.out and "`local.marts.totals`: `customer_id bigint`" in md.out, md.out

    wrote = run_cli(repo, "validate", "--spark", "--write-columns")
    assert wrote.code == 0, wrote.text
    text = (repo / "views" / "local" / "marts.yaml").read_text()
    assert text.startswith("# yaml-language-server") and "  # totals per customer; columns come from Spark\n" in text
    assert ("  - name: totals\n    columns:\n      - {name: customer_id, type: bigint}\n"
            '      - {name: total, type: "decimal(28,2)"}\n    representations:\n') in text
    again = run_cli(repo, "validate", "--spark")
    assert again.code == 0 and "from Spark" not in again.out, again.text


def test_the_sample_agrees_with_spark(tmp_path: Path) -> None:
    repo = tmp_path / "sample"
    shutil.copytree(ROOT / "views", repo / "views")
    shutil.copytree(ROOT / "sources", repo / "sources")
    shutil.copy(ROOT / "viewsync.yaml", repo / "viewsync.yaml")
    res = run_cli(repo, "validate", "--spark")
    assert res.code == 0, res.text
    assert "Warning" not in res.err and "0 with warnings, 0 with errors, 0 not checked" in res.out, res.text
    assert yaml.safe_load((repo / "sources" / "local" / "sales.yaml").read_text())["tables"]


def test_missing_pyspark_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from reconciler.spark import client, conf
    from reconciler.verify import session

    monkeypatch.setattr(conf, "pyspark_dir", lambda: None)
    monkeypatch.setattr(session, "PROCESS", client.Pool())
    repo = make_repo(tmp_path, {"checks": CHECKS})
    res = run_cli(repo, "validate", "--spark")
    assert res.code == 1
    # CHECKS reads the missing sales.nope: the offline warning at it comes first, then one error line;
    # viewsync runs from this clone here: the hint is the clone's editable install (issue 43)
    errors = [x for x in res.err.splitlines() if not x.startswith("Warning: ")]
    assert errors == ["Error: Spark verification needs PySpark: install the Spark extra: "
                      f"python3 -m pip install -e '.[spark]' (run in {ROOT})"], res.err


@pytest.mark.parametrize("java_on_path", [False, True], ids=["no-java", "java-on-path"])
@pytest.mark.parametrize("command", ["validate", "plan"])
def test_missing_java_is_one_line(tmp_path: Path, command: str, java_on_path: bool) -> None:
    """JAVA_HOME points nowhere (Spark's launcher then never looks at PATH), run as a shell would:
    one line saying to install Java 17, exit 1, before any JVM is tried."""
    repo = tmp_path / "sample"
    shutil.copytree(ROOT / "views", repo / "views")
    shutil.copytree(ROOT / "sources", repo / "sources")
    shutil.copy(ROOT / "viewsync.yaml", repo / "viewsync.yaml")
    bin_dir = tmp_path / "bin"  # PATH holds git (GitPython needs it) and, if asked, java
    bin_dir.mkdir()
    tools = ["git", "java"] if java_on_path else ["git"]
    for tool in tools:
        found = shutil.which(tool)
        assert found, tool
        (bin_dir / tool).symlink_to(found)
    res = run_cli(repo, command, "--spark", process=True, timeout=120,
                  env={"JAVA_HOME": str(tmp_path / "nowhere"), "PATH": str(bin_dir)})
    assert res.code == 1, res.text
    assert res.out == "" and res.err.count("\n") == 1, res.text
    line = res.err.strip()
    assert line.startswith("Error: Spark verification needs Java") and "install Java 17" in line, line
    assert "Traceback" not in line and "unexpected" not in line.lower() and "JAVA_GATEWAY" not in line, line


def marts(base: str, reader: str | None) -> str:
    text = f"catalog: local\nschema: marts\nviews:\n  - name: base\n    representations:\n" \
           f"      - {{dialect: spark, sql: \"{base}\"}}\n"
    if reader is not None:
        text += f"  - name: reader\n    representations:\n      - {{dialect: spark, sql: \"{reader}\"}}\n"
    return text


def test_a_dependent_that_changes_itself_is_not_blamed_on_its_input(tmp_path: Path) -> None:
    """Issue 27.2: base adds a column at the end while reader narrows its own SQL: reader's new
    output is its own action, not base's breaking change. A break base causes is still reported,
    whether or not reader changes too, and a reader the plan drops reads nothing."""
    base = "SELECT order_id, customer_id, amount FROM sales.orders"
    repo = make_repo(tmp_path, {"marts": marts(base, "SELECT order_id, amount FROM base")})
    applied = run_cli(repo, "apply", "--spark", "--auto-approve")
    assert applied.code == 0, applied.text
    yaml_file = repo / "views" / "local" / "marts.yaml"

    yaml_file.write_text(marts(base.replace(" FROM", ", name FROM"), "SELECT order_id FROM base"))
    res = run_cli(repo, "plan", "--spark", "--format", "json")
    assert res.code == 0, res.text
    doc = json.loads(res.out)
    assert not [e for e in doc["errors"] if e["code"] == "breaking_change"], doc["errors"]
    imp = next(i for i in doc["verification"]["impact"] if i["view"]["name"] == "base")
    assert imp["change"] == "columns_added" and not imp["breaking"], imp
    assert [(d["view"]["name"], d["status"]) for d in imp["dependents"]] == [("reader", "ok")]
    shown = run_cli(repo, "impact", "local.marts.base", "--format", "json")
    assert shown.code == 0, shown.text
    assert [d["status"] for d in json.loads(shown.out)["dependents"]] == ["ok"], shown.out

    retyped = base.replace("amount", "CAST(amount AS string) AS amount")
    for reader in ("SELECT order_id, amount FROM base", "SELECT amount FROM base"):  # as live; changed too
        yaml_file.write_text(marts(retyped, reader))
        res = run_cli(repo, "plan", "--spark", "--format", "json")
        assert res.code == 1, res.text
        errors = [e["message"] for e in json.loads(res.out)["errors"] if e["code"] == "breaking_change"]
        assert len(errors) == 1 and errors[0].startswith("local.marts.base: breaking change (retyped: amount "), errors
        assert "it is read by local.marts.reader (TYPE-CHANGED)" in errors[0], errors

    yaml_file.write_text(marts(retyped, None))
    res = run_cli(repo, "plan", "--spark", "--prune", "--allow-mass-drop", "--format", "json")
    assert res.code == 0, res.text
    imp = next(i for i in json.loads(res.out)["verification"]["impact"] if i["view"]["name"] == "base")
    assert imp["dependents"] == [] and not imp["breaking"], imp


DUPLICATES = """catalog: local
schema: dups
views:
  - name: joined
    representations:
      - dialect: spark
        sql: |
          SELECT a.order_id, b.order_id
          FROM sales.orders a JOIN sales.orders b ON a.customer_id = b.customer_id
  - name: aggregates
    representations:
      - dialect: spark
        sql: SELECT customer_id, count(*) AS n, sum(amount) AS N FROM sales.orders GROUP BY customer_id
  - name: reader
    representations:
      - dialect: spark
        sql: SELECT order_id FROM dups.joined
  - name: nbsp
    representations:
      - dialect: spark
        sql: "SELECT 1 AS `one\\u00a0`"
"""


def test_duplicate_output_columns_are_spark_s_error_located_at_the_column(tmp_path: Path) -> None:
    """Spark refuses to create a view whose output names a column twice (also in other case):
    validate and plan report COLUMN_ALREADY_EXISTS at the second column, nothing is inferred."""
    repo = make_repo(tmp_path, {"dups": DUPLICATES})
    f = "views/local/dups.yaml"
    for args in (("validate", "--spark"), ("plan", "--spark")):
        res = run_cli(repo, *args)
        assert res.code == 1, res.text
        assert "unexpected" not in res.text and "from Spark" not in res.out, res.text
        for view, needle in (("joined", "b.order_id"), ("aggregates", "sum(amount) AS N")):
            line = next(ln for ln in res.text.splitlines() if f"local.dups.{view}:" in ln and "COLUMN_ALREADY" in ln)
            assert f"{f}:{position(DUPLICATES, needle)}: views[" in line and ".sql: " in line, line
        assert "not checked: local.dups.reader (reads local.dups.joined, which has errors)" in res.out, res.out
        # Spark accepts this name; a declaration cannot hold it, so it is not inferred but an error.
        line = next(ln for ln in res.text.splitlines() if "local.dups.nbsp:" in ln)
        assert f"{f}:{position(DUPLICATES, 'nbsp')}: views[3]: " in line, line
        assert "surrounding white space other than spaces" in line and "alias it" in line, line


SPACED = """catalog: local
schema: marts
views:
  - name: counts
    representations:
      - dialect: spark
        sql: SELECT customer_id, count(*) AS `order count ` FROM sales.orders GROUP BY customer_id
  - name: reader
    representations:
      - dialect: spark
        sql: SELECT `order count ` AS ` n` FROM marts.counts
"""


def test_column_names_with_surrounding_spaces_are_written_applied_and_read_back(tmp_path: Path) -> None:
    """Spark accepts `order count ` as an output name: --write-columns declares it (with a warning
    about the spaces), and the managed catalog stores it and plans empty afterwards."""
    repo = make_repo(tmp_path, {"marts": SPACED})
    wrote = run_cli(repo, "validate", "--spark", "--write-columns")
    assert wrote.code == 0, wrote.text
    doc = yaml.safe_load((repo / "views" / "local" / "marts.yaml").read_text())
    assert [v["columns"] for v in doc["views"]] == [
        [{"name": "customer_id", "type": "bigint"}, {"name": "order count ", "type": "bigint"}],
        [{"name": " n", "type": "bigint"}]]
    again = run_cli(repo, "validate", "--spark")
    assert again.code == 0, again.text
    assert ("views/local/marts.yaml:7:16: views[0].columns[1].name: column name 'order count ' begins or ends "
            "with a space") in again.err, again.err
    applied = run_cli(repo, "apply", "--spark", "--auto-approve", "--allow-dirty")
    assert applied.code == 0, applied.text
    plan = run_cli(repo, "plan", "--format", "json")
    assert plan.code == 0 and json.loads(plan.out)["actions"] == [], plan.text


MARKERS = """catalog: local
schema: checks
views:
  - name: colons
    representations:
      - dialect: spark
        sql: "SELECT CAST(parse_json('{\\"a\\": 1}'):a AS INT) AS a, ':x' AS literal, order_id FROM sales.orders"
  - name: marker
    representations:
      - dialect: spark
        sql: "SELECT order_id FROM sales.orders WHERE amount > :floor"
"""


def test_colons_read_as_spark_reads_them_and_a_parameter_marker_is_an_error(tmp_path: Path) -> None:
    """The scratch session parses each statement once, leaving parameter markers to that parse
    (verify/session.py): a variant path and a colon in a literal still read as Spark reads them,
    and a view with a marker still fails as it would where it runs."""
    repo = make_repo(tmp_path, {"checks": MARKERS})
    res = run_cli(repo, "validate", "--spark")
    assert res.code == 1, res.text
    assert "local.checks.colons:" not in res.err, res.err
    line = error_line(res.err, "marker")
    assert "UNBOUND_SQL_PARAMETER" in line and "floor" in line, line


def test_a_view_whose_sql_is_another_statement_is_never_run(tmp_path: Path) -> None:
    """Analysis ran a view's SQL through spark.sql, which runs what it reads: a pull request's view
    file could write files (INSERT OVERWRITE DIRECTORY, replacing what the directory held) or load
    code (ADD JAR) on the machine that verifies it. Only a query reaches Spark's analysis."""
    target = tmp_path / "written"
    target.mkdir()
    (target / "kept.txt").write_text("kept")
    views = f"""catalog: local
schema: checks
views:
  - name: writes_files
    representations:
      - dialect: spark
        sql: INSERT OVERWRITE DIRECTORY '{target}' USING csv SELECT order_id FROM sales.orders
  - name: loads_code
    representations:
      - dialect: spark
        sql: ADD JAR '{tmp_path / "no.jar"}'
  - name: a_query
    representations:
      - dialect: spark
        sql: SELECT order_id FROM sales.orders;
"""
    repo = make_repo(tmp_path, {"checks": views})
    for command in (("validate", "--spark"), ("plan", "--spark")):
        res = run_cli(repo, *command)
        assert res.code == 1, res.text
        assert [p.name for p in target.iterdir()] == ["kept.txt"], command  # nothing written, nothing replaced
        for view, statement in (("writes_files", "InsertIntoDir"), ("loads_code", "AddJarsCommand")):
            spark_said = [ln for ln in res.text.splitlines() if f"local.checks.{view}: [NOT_A_QUERY]" in ln]
            assert spark_said, res.text
            assert f"views/local/checks.yaml:{7 if view == 'writes_files' else 11}:14: " in spark_said[0]
            assert f"Spark reads this SQL as another statement ({statement})" in spark_said[0], spark_said
        assert "columns of local.checks.a_query from Spark: order_id bigint" in res.out, res.text  # analysed
