"""End to end through the `viewsync` console script against a real Iceberg REST catalog
that requires a bearer token (given as ${ICEBERG_TOKEN} in viewsync.yaml)."""

from __future__ import annotations

import hashlib
import re
import subprocess
from pathlib import Path

import pytest
import requests
import yaml

from reconciler.adapters import open_adapter
from reconciler.core.model import ViewId
from tests.helpers.cli import CliResult, run_cli
from tests.helpers.iceberg import IcebergServer

pytestmark = pytest.mark.slow  # starts a JVM, Spark or a slow backend (pytest -m 'not slow' skips it)


def _views_doc(ns: str, sql_suffix: str = "") -> dict[str, object]:
    return {
        "catalog": "lake",
        "schema": ns,
        "views": [
            {"name": "customer_summary", "comment": "Aggregated customer data",
             "columns": [{"name": "customer_id", "type": "bigint", "comment": "Customer identifier"},
                         {"name": "total_amount", "type": "decimal(18,2)"},
                         {"name": "segment", "type": "varchar(16)"}],
             "representations": [
                 {"dialect": "spark", "sql": "SELECT customer_id, SUM(amount) AS total_amount, segment\n"
                                             f"FROM sales.orders GROUP BY customer_id, segment{sql_suffix}\n"},
                 {"dialect": "trino", "sql": "SELECT customer_id, SUM(amount) AS total_amount, segment "
                                             f"FROM sales.orders GROUP BY customer_id, segment{sql_suffix}"}],
             "default_namespace": ["sales"], "owner": "data-team", "properties": {"tier": "gold"}},
            {"name": "top_customers",
             "columns": [{"name": "customer_id", "type": "bigint"}, {"name": "total_amount",
                                                                    "type": "decimal(18,2)"}],
             "representations": [{"dialect": "spark", "sql": "SELECT customer_id, total_amount "
                                  f"FROM {ns}.customer_summary ORDER BY total_amount DESC LIMIT 10"}],
             "security": "invoker"},
        ],
    }


def _viewsync(repo: Path, token: str, *args: str) -> CliResult:
    return run_cli(repo, *args, env={"ICEBERG_TOKEN": token, "NO_COLOR": "1"}, process=True)


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=CI", "-c", "user.email=ci@example.com", *args], cwd=repo,
                          check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def repo(tmp_path: Path, iceberg_auth_server: IcebergServer, request: pytest.FixtureRequest) -> Path:
    """A git repo with viewsync.yaml and views/lake/<ns>.yaml; <ns> exists in the catalog."""
    srv = iceberg_auth_server
    ns = "cli_" + hashlib.sha1(request.node.nodeid.encode()).hexdigest()[:8]
    root = tmp_path / "repo"
    (root / "views" / "lake").mkdir(parents=True)
    (root / "viewsync.yaml").write_text(yaml.safe_dump({
        "version": 1, "project": "t", "state": f"sqlite:///{tmp_path}/state.db",
        "catalogs": {"lake": {"type": "iceberg-rest", "uri": srv.uri, "token": "${ICEBERG_TOKEN}"}},
    }, sort_keys=False))
    (root / "views" / "lake" / f"{ns}.yaml").write_text(yaml.safe_dump(_views_doc(ns), sort_keys=False))
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", ".")
    _git(root, "commit", "-q", "-m", "views")
    r = requests.post(f"{srv.uri}/v1/{srv.prefix}/namespaces", json={"namespace": [ns]}, timeout=5,
                      headers={"Authorization": f"Bearer {srv.token}"})
    assert r.status_code == 200, r.text
    return root


def _ns(repo: Path) -> str:
    return next((repo / "views" / "lake").glob("*.yaml")).stem


def test_plan_apply_plan_through_the_cli(repo: Path, iceberg_auth_server: IcebergServer) -> None:
    token = iceberg_auth_server.token
    assert token
    ns = _ns(repo)
    outputs: list[str] = []

    def run(*args: str) -> CliResult:
        res = _viewsync(repo, token, *args)
        outputs.append(res.out + res.err)
        return res

    first = run("plan", "--detailed-exitcode")
    assert first.code == 2, first.out + first.err
    assert f"lake.{ns}.customer_summary" in first.out and "2 to create" in first.out

    applied = run("apply", "--auto-approve")
    assert applied.code == 0, applied.out + applied.err

    again = run("plan", "--detailed-exitcode")
    assert again.code == 0, again.out + again.err

    # the views are real Iceberg views, with our marker and the git commit in the version summary
    adapter = open_adapter("lake", {"type": "iceberg-rest", "uri": iceberg_auth_server.uri, "token": token})
    snap = adapter.fetch(ns)
    assert set(snap.views) == {"customer_summary", "top_customers"}
    assert all(v.managed_by == "t" for v in snap.views.values())

    # a SQL change in Git becomes a new native version stamped with that commit
    (repo / "views" / "lake" / f"{ns}.yaml").write_text(
        yaml.safe_dump(_views_doc(ns, " HAVING SUM(amount) > 0"), sort_keys=False))
    _git(repo, "commit", "-q", "-am", "filter")
    head = _git(repo, "rev-parse", "HEAD")
    changed = run("plan", "--detailed-exitcode")
    assert changed.code == 2 and "representations.spark.sql" in changed.out
    assert run("apply", "--auto-approve").code == 0
    assert run("plan", "--detailed-exitcode").code == 0
    history = adapter.native_history(ViewId("lake", ns, "customer_summary"))
    assert [h.version for h in history] == ["1", "2"]
    assert history[-1].summary["viewsync.git-commit"] == head

    # `viewsync history` shows the catalog's native versions beside our own version rows
    shown = run("history", f"lake.{ns}.customer_summary")
    assert shown.code == 0, shown.err
    ours, native = shown.out.split("Native versions in catalog 'lake':")
    assert re.search(r"v1 .* create", ours) and re.search(rf"v2 .* update .*{head[:12]}", ours)
    assert re.search(r"^\s+1\s", native, re.M) and re.search(rf"^\s+2\s.*spark, trino.*{head}", native, re.M)

    # an out-of-band change by another client is drift
    live = adapter.fetch(ns).views["top_customers"]
    r = requests.post(f"{iceberg_auth_server.uri}/v1/{iceberg_auth_server.prefix}/namespaces/{ns}/views/top_customers",
                      headers={"Authorization": f"Bearer {token}"}, timeout=5, json={
                          "requirements": [{"type": "assert-view-uuid", "uuid": live.handle.metadata["view-uuid"]}],
                          "updates": [{"action": "set-properties", "updates": {"comment": "edited by hand"}}]})
    assert r.status_code == 200, r.text
    drift = run("drift")
    assert drift.code == 2, drift.out + drift.err
    assert "top_customers" in drift.out

    for text in outputs:
        assert token not in text


def test_wrong_token_fails_cleanly_without_leaking(repo: Path) -> None:
    res = _viewsync(repo, "not-the-right-token-777", "plan", "--detailed-exitcode")
    assert res.code == 1, res.out + res.err
    assert "not-the-right-token-777" not in res.out + res.err
    assert "Traceback" not in res.err


def test_column_names_with_surrounding_spaces_round_trip(repo: Path, iceberg_auth_server: IcebergServer) -> None:
    """`order count ` (trailing space, as Spark names it) is an Iceberg schema field as is: apply stores
    it, the plan after is empty, and Spark's query column names keep it."""
    token = iceberg_auth_server.token
    assert token
    ns = _ns(repo)
    sql = "SELECT customer_id, count(*) AS `order count ` FROM sales.orders GROUP BY customer_id"
    (repo / "views" / "lake" / f"{ns}.yaml").write_text(yaml.safe_dump({
        "catalog": "lake", "schema": ns,
        "views": [{"name": "counts",
                   "columns": [{"name": "customer_id", "type": "bigint"}, {"name": "order count ", "type": "bigint"}],
                   "representations": [{"dialect": "spark", "sql": sql}]}]}, sort_keys=False))
    applied = run_cli(repo, "apply", "--auto-approve", "--allow-dirty", env={"ICEBERG_TOKEN": token})
    assert applied.code == 0, applied.text
    again = run_cli(repo, "plan", "--detailed-exitcode", env={"ICEBERG_TOKEN": token})
    assert again.code == 0, again.text
    adapter = open_adapter("lake", {"type": "iceberg-rest", "uri": iceberg_auth_server.uri, "token": token})
    live = adapter.fetch(ns).views["counts"]
    assert [c.name for c in live.spec.columns] == ["customer_id", "order count "]
    assert live.handle.metadata["properties"]["spark.query-column-names"] == "customer_id,order count "
