"""`viewsync revert` against a real Hive Metastore and a real Iceberg REST server: a recorded
version written back into the YAML (comments and layout kept) so that the plan shows exactly
the reverting change; `--apply` as an audited run of kind `revert` that drift reports until
Git declares it; the access policy's ALTER_VIEW; a revert that breaks a dependent refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from reconciler.core.model import ViewSpec
from tests.adapters.iceberg.conftest import iceberg_server, namespace  # noqa: F401 - fixtures
from tests.adapters.metastore.hms.conftest import database, hms_client, metastore  # noqa: F401 - fixtures
from tests.helpers.access import git
from tests.helpers.cli import CliResult, run_cli

pytestmark = pytest.mark.slow  # starts a JVM, Spark or a slow backend (pytest -m 'not slow' skips it)

PLATFORM = "platform@example.com"
# bob may read the views but not alter them
POLICY = """\
owners: [platform@example.com]
grants:
  - {to: [bob@example.com], privileges: [USE_CATALOG, USE_SCHEMA, SELECT_VIEW], catalog: c}
"""

# Version 1 of the view file, as people write it: comments, a blank line, a block SQL.
V1 = """\
# yaml-language-server: $schema=../../schemas/view-file.schema.json
catalog: c
schema: {schema}
views:
  - name: base  # what the reports read
    comment: first
    columns:
      - {{name: id, type: bigint}}
      - {{name: label, type: string}}
    representations:
      - dialect: spark
        sql: |
          -- one row, version one
          SELECT CAST(1 AS BIGINT) AS id, 'one' AS label

  # reads base: a revert must not break it
  - name: reader
    columns: [{{name: id, type: bigint}}, {{name: label, type: string}}]
    representations:
      - dialect: spark
        sql: SELECT id, label FROM {schema}.base
"""


def v2(v1: str) -> str:
    """Version 2: another comment and another SQL, the same columns."""
    return (v1.replace("comment: first", "comment: second")
            .replace("-- one row, version one\n          SELECT CAST(1 AS BIGINT) AS id, 'one' AS label",
                     "-- one row, version two\n          SELECT CAST(2 AS BIGINT) AS id, 'two' AS label"))


@pytest.fixture(params=["hms", "iceberg"])
def backend(request: pytest.FixtureRequest) -> tuple[dict[str, Any], str]:
    """(the catalog's options, a fresh schema in it)."""
    if request.param == "hms":
        return {"type": "hms", "uri": request.getfixturevalue("metastore").uri, "write_format": "spark"}, \
            request.getfixturevalue("database")
    return {"type": "iceberg-rest", "uri": request.getfixturevalue("iceberg_server").uri}, \
        request.getfixturevalue("namespace")


def _repo(tmp_path: Path, backend: tuple[dict[str, Any], str], policy: bool = False) -> tuple[Path, Path, str]:
    """A git repo whose view file went through two applied versions: (repo, view file, V1 text)."""
    options, schema = backend
    repo = tmp_path / "repo"
    (repo / "views" / "c").mkdir(parents=True)
    (repo / "viewsync.yaml").write_text(yaml.safe_dump({
        "version": 1, "project": "t", "state": f"sqlite:///{tmp_path}/state.db", "catalogs": {"c": options}}))
    if policy:
        (repo / "access.yaml").write_text(POLICY)
    file = repo / "views" / "c" / f"{schema}.yaml"
    first = V1.format(schema=schema)
    git(repo, "init", "-q", "-b", "main")
    for text in (first, v2(first)):
        file.write_text(text)
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", "views")
        done = vs(repo, "apply", "--auto-approve", "--actor", PLATFORM)
        assert done.code == 0, done.text
    return repo, file, first


def vs(repo: Path, *args: str) -> CliResult:
    return run_cli(repo, *args, env={"NO_COLOR": "1"})


def _versions(repo: Path, view: str) -> list[dict[str, Any]]:
    got = vs(repo, "history", view, "--format", "json")
    assert got.code == 0, got.text
    rows: list[dict[str, Any]] = json.loads(got.out)["versions"]
    return rows


def test_revert_writes_the_yaml_and_the_plan_shows_exactly_the_reverting_change(
        tmp_path: Path, backend: tuple[dict[str, Any], str], spark_verifier: None) -> None:
    repo, file, first = _repo(tmp_path, backend)
    view = f"c.{backend[1]}.base"
    v1_digest = _versions(repo, view)[0]["digest"]

    done = vs(repo, "revert", view, "--to", "1")
    assert done.code == 0, done.text
    assert f"Wrote v1 of {view} into views/c/{backend[1]}.yaml" in done.out
    assert file.read_text() == first  # comments, blank lines and the rest of the file as they were

    plan = vs(repo, "plan", "--format", "json")
    assert plan.code == 0, plan.text
    actions = json.loads(plan.out)["actions"]
    assert [(a["action"], a["view"]["name"]) for a in actions] == [("update", "base")]
    assert {c["field"] for c in actions[0]["changes"]} == {"comment", "representations.spark.sql"}
    assert ViewSpec.model_validate(actions[0]["desired"]).digest() == v1_digest

    again = vs(repo, "revert", view, "--to", "v1")
    assert again.code == 0 and "already" in again.out, again.text
    assert file.read_text() == first


def test_iceberg_native_version_is_written_back(tmp_path: Path, iceberg_server: Any,  # noqa: F811
                                                namespace: str, spark_verifier: None) -> None:  # noqa: F811
    """Iceberg keeps each version's SQL and schema (not its properties: the comment stays)."""
    repo, file, first = _repo(tmp_path, ({"type": "iceberg-rest", "uri": iceberg_server.uri}, namespace))
    view = f"c.{namespace}.base"
    done = vs(repo, "revert", view, "--to", "native:1")
    assert done.code == 0, done.text
    assert file.read_text() == first.replace("comment: first", "comment: second")

    unknown = vs(repo, "revert", view, "--to", "native:9")
    assert unknown.code == 1 and f"{view} has no native version 9" in unknown.err, unknown.text


def test_unknown_view_or_version_is_named_and_nothing_changes(
        tmp_path: Path, backend: tuple[dict[str, Any], str], spark_verifier: None) -> None:
    repo, file, first = _repo(tmp_path, backend)
    schema = backend[1]
    before = file.read_text()
    for args, message in [
        ((f"c.{schema}.nope", "--to", "1"), f"c.{schema}.nope: not declared, and viewsync recorded nothing"),
        ((f"c.{schema}.base", "--to", "7"), f"c.{schema}.base has no version 7 recorded by viewsync "
                                            "(recorded: v1, v2)"),
        ((f"c.{schema}.base", "--to", "seven"), "--to 'seven': expected a version"),
        ((f"c.{schema}.base", "--to", "native:9"),
         f"c.{schema}.base has no native version 9 in catalog 'c' (native versions: 1, 2)"
         if backend[0]["type"] == "iceberg-rest" else f"catalog 'c' keeps no native versions of c.{schema}.base"),
    ]:
        got = vs(repo, "revert", *args, "--apply", "--auto-approve")
        assert got.code == 1 and message in got.err, got.text
    assert file.read_text() == before
    assert len(_versions(repo, f"c.{schema}.base")) == 2


def test_apply_is_an_audited_revert_run_and_drift_reports_it_until_git_declares_it(
        tmp_path: Path, backend: tuple[dict[str, Any], str], spark_verifier: None) -> None:
    repo, file, first = _repo(tmp_path, backend)
    view = f"c.{backend[1]}.base"
    v1_digest = _versions(repo, view)[0]["digest"]

    done = vs(repo, "revert", view, "--to", "1", "--apply", "--auto-approve", "--actor", PLATFORM)
    assert done.code == 0, done.text
    assert file.read_text() == v2(first)  # the YAML is not touched: Git does not declare v1 yet
    rows = json.loads(vs(repo, "audit", "--view", view, "--format", "json").out)
    assert [(r["run_command"], r["action"], r["outcome"]) for r in rows] == [
        ("apply", "create", "applied"), ("apply", "update", "applied"), ("revert", "update", "applied")]
    versions = _versions(repo, view)
    assert [v["version"] for v in versions] == [1, 2, 3] and versions[2]["digest"] == v1_digest

    mine = ("--select", f"c.{backend[1]}.*")  # the Iceberg server holds other tests' views of project t
    drift = vs(repo, "drift", "--format", "json", *mine)
    assert drift.code == 2, drift.text
    items = json.loads(drift.out)["items"]
    assert [(i["kind"], i["view"]["name"]) for i in items] == [("reverted_out_of_band", "base")]
    assert "viewsync revert --apply" in items[0]["detail"]

    merged = vs(repo, "revert", view, "--to", "1")  # the revert written into the YAML (and merged)
    assert merged.code == 0, merged.text
    assert file.read_text() == first
    clean = vs(repo, "drift", *mine)
    assert clean.code == 0 and "No drift" in clean.out, clean.text


def test_an_actor_without_alter_view_is_refused_and_nothing_is_written(
        tmp_path: Path, backend: tuple[dict[str, Any], str], spark_verifier: None) -> None:
    repo, file, first = _repo(tmp_path, backend, policy=True)
    view = f"c.{backend[1]}.base"
    refused = vs(repo, "revert", view, "--to", "1", "--apply", "--auto-approve", "--actor", "bob@example.com")
    assert refused.code == 1, refused.text
    assert "not permitted" in refused.err and "ALTER_VIEW" in refused.err, refused.text
    assert file.read_text() == v2(first)
    assert len(_versions(repo, view)) == 2  # no version row
    unchanged = vs(repo, "plan", "--detailed-exitcode", "--actor", PLATFORM)
    assert unchanged.code == 0 and "No changes" in unchanged.out, unchanged.text  # the catalog holds v2
    rows = json.loads(vs(repo, "audit", "--view", view, "--format", "json").out)
    assert [(r["run_command"], r["outcome"]) for r in rows][2:] == [("revert", "refused")]  # the refusal, audited


BREAKING = """\
catalog: c
schema: {schema}
views:
  - name: base
    columns:
      - {{name: id, type: bigint}}
    representations:
      - dialect: spark
        sql: SELECT CAST(1 AS BIGINT) AS id
"""


def test_a_revert_that_breaks_a_dependent_is_refused(tmp_path: Path, backend: tuple[dict[str, Any], str],
                                                     spark_verifier: None) -> None:
    """Version 2 adds a column that a view written since reads: going back would break it."""
    options, schema = backend
    repo = tmp_path / "repo"
    (repo / "views" / "c").mkdir(parents=True)
    (repo / "viewsync.yaml").write_text(yaml.safe_dump({
        "version": 1, "project": "t", "state": f"sqlite:///{tmp_path}/state.db", "catalogs": {"c": options}}))
    file = repo / "views" / "c" / f"{schema}.yaml"
    first = BREAKING.format(schema=schema)
    second = (first.replace("AS id\n", "AS id, 2 AS extra\n")
              .replace("      - {name: id, type: bigint}\n", "      - {name: id, type: bigint}\n"
                       "      - {name: extra, type: int}\n")
              + "  - name: reader\n    columns: [{name: extra, type: int}]\n    representations:\n"
              f"      - {{dialect: spark, sql: 'SELECT extra FROM {schema}.base'}}\n")
    git(repo, "init", "-q", "-b", "main")
    for text in (first, second):
        file.write_text(text)
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", "views")
        assert vs(repo, "apply", "--auto-approve").code == 0
    view = f"c.{schema}.base"
    for extra in ((), ("--apply", "--auto-approve")):
        got = vs(repo, "revert", view, "--to", "1", *extra)
        assert got.code == 1, got.text
        assert "breaking_change" in got.out and f"c.{schema}.reader" in got.out, got.text
        assert "Revert refused: nothing was written" in got.err, got.text
    assert file.read_text() == second
    assert len(_versions(repo, view)) == 2
    assert vs(repo, "plan", "--detailed-exitcode").code == 0  # the catalog still holds version 2
