"""What moto does not model: paging and optimistic concurrency (botocore Stubber)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.stub import ANY, Stubber

from reconciler.adapters.base import AdapterError, ConflictError, WriteContext
from reconciler.adapters.metastore.glue import GlueAdapter
from reconciler.core.model import Column, Representation, ViewId, ViewSpec
from tests.helpers.glue_support import Writer

ACCOUNT = "123456789012"
PAGE = 100  # Glue's default get_tables page size


@pytest.fixture
def stubbed() -> Iterator[tuple[GlueAdapter, Stubber]]:
    client = boto3.client("glue", region_name="us-east-1", aws_access_key_id="testing",
                          aws_secret_access_key="testing")
    adapter = GlueAdapter("glue", {"region": "us-east-1", "catalog_id": ACCOUNT,
                                   "view_format": "multi-dialect"})
    adapter.use_client(client)
    with Stubber(client) as stub:
        yield adapter, stub
        stub.assert_no_pending_responses()


def _view_table(name: str, version: str, sql: str = "SELECT 1 AS x") -> dict[str, Any]:
    return {
        "Name": name, "DatabaseName": "db", "TableType": "VIRTUAL_VIEW", "VersionId": version,
        "StorageDescriptor": {"Columns": [{"Name": "x", "Type": "int"}]},
        "Parameters": {"viewsync.managed-by": "t", "viewsync.spec-digest": "sha256:x"},
        "ViewDefinition": {"Representations": [{"Dialect": "ATHENA", "ViewOriginalText": sql}]},
    }


def _table(name: str) -> dict[str, Any]:
    return {"Name": name, "DatabaseName": "db", "TableType": "EXTERNAL_TABLE", "VersionId": "1",
            "StorageDescriptor": {"Columns": [{"Name": "id", "Type": "bigint"}]}}


def _get_tables(token: str | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"CatalogId": ACCOUNT, "DatabaseName": "db", "IncludeStatusDetails": True}
    if token:
        params["NextToken"] = token
    return params


def test_fetch_pages_through_get_tables(stubbed: tuple[GlueAdapter, Stubber]) -> None:
    adapter, stub = stubbed
    tables = [_table(f"t{i:03d}") for i in range(PAGE + 30)]
    tables += [_view_table(f"v{i:03d}", "1") for i in range(70)]
    pages = [tables[0:PAGE], tables[PAGE:2 * PAGE], tables[2 * PAGE:]]
    stub.add_response("get_tables", {"TableList": pages[0], "NextToken": "p2"}, _get_tables())
    stub.add_response("get_tables", {"TableList": pages[1], "NextToken": "p3"}, _get_tables("p2"))
    stub.add_response("get_tables", {"TableList": pages[2]}, _get_tables("p3"))
    snap = adapter.fetch("db")
    assert len(snap.tables) == PAGE + 30
    assert len(snap.views) == 70
    assert "v069" in snap.views and "t129" in snap.tables
    assert adapter.calls == 3  # one round trip per page


def test_list_schemas_pages_through_get_databases(stubbed: tuple[GlueAdapter, Stubber]) -> None:
    adapter, stub = stubbed
    stub.add_response("get_databases", {"DatabaseList": [{"Name": "b"}], "NextToken": "n"},
                      {"CatalogId": ACCOUNT})
    stub.add_response("get_databases", {"DatabaseList": [{"Name": "a"}]},
                      {"CatalogId": ACCOUNT, "NextToken": "n"})
    assert adapter.list_schemas() == ["a", "b"]


def test_update_passes_version_id_conflict_raises(stubbed: tuple[GlueAdapter, Stubber]) -> None:
    adapter, stub = stubbed
    stub.add_response("get_tables", {"TableList": [_view_table("v", "7")]}, _get_tables())
    live = adapter.fetch("db").views["v"]
    assert live.native_version == "7"
    # the fingerprint the plan records changes with Glue's VersionId
    stub.add_response("get_tables", {"TableList": [_view_table("v", "8")]}, _get_tables())
    assert adapter.fetch("db").views["v"].fingerprint != live.fingerprint

    desired = ViewSpec(columns=[Column(name="x", type="int")],
                       representations=[Representation(dialect="trino", sql="SELECT 2 AS x")])
    stub.add_client_error(
        "update_table", service_error_code="ConcurrentModificationException",
        service_message="Update table failed due to concurrent modifications.", http_status_code=400,
        expected_params={"CatalogId": ACCOUNT, "DatabaseName": "db", "TableInput": ANY, "VersionId": "7",
                         "ViewUpdateAction": "REPLACE", "Force": True})
    view = ViewId("glue", "db", "v")
    with pytest.raises(ConflictError, match="concurrent"):
        adapter.update(live, adapter.storable(view, desired), Writer().marker(adapter, view, desired),
                       WriteContext())


def test_client_errors_become_adapter_errors(stubbed: tuple[GlueAdapter, Stubber]) -> None:
    adapter, stub = stubbed
    stub.add_client_error("get_tables", service_error_code="AccessDeniedException",
                          service_message="User is not authorized", http_status_code=403,
                          expected_params=_get_tables())
    with pytest.raises(AdapterError, match="AccessDeniedException: User is not authorized") as info:
        adapter.fetch("db")
    assert info.value.__cause__ is None and info.value.__suppress_context__


def test_history_pages(stubbed: tuple[GlueAdapter, Stubber]) -> None:
    adapter, stub = stubbed
    base = {"CatalogId": ACCOUNT, "DatabaseName": "db", "TableName": "v"}
    stub.add_response("get_table_versions", {"TableVersions": [
        {"Table": _view_table("v", "3"), "VersionId": "3"}], "NextToken": "n"}, base)
    stub.add_response("get_table_versions", {"TableVersions": [
        {"Table": _view_table("v", "1"), "VersionId": "1"},
        {"Table": _view_table("v", "2"), "VersionId": "2"}]},
        {**base, "NextToken": "n"})
    assert [v.version for v in adapter.native_history(ViewId("glue", "db", "v"))] == ["1", "2", "3"]


def test_no_credentials_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    adapter = GlueAdapter("glue", {"region": "us-east-1", "endpoint_url": "http://127.0.0.1:9"})
    with pytest.raises(AdapterError, match="no usable AWS credentials"):
        adapter.fetch("db")


def test_secrets_never_described(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDSECRET")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "s3cr3t")
    adapter = GlueAdapter("glue", {"region": "eu-west-1", "catalog_id": ACCOUNT,
                                   "endpoint_url": "https://user:pw@glue.example:8443/x"})
    text = adapter.describe()
    assert "s3cr3t" not in text and "AKIDSECRET" not in text and "pw" not in text
    assert "eu-west-1" in text and "glue.example:8443" in text
    with Stubber(adapter.client) as stub:
        stub.add_client_error("get_databases", service_error_code="UnrecognizedClientException",
                              service_message="The security token included in the request is invalid.")
        with pytest.raises(AdapterError) as info:
            adapter.list_schemas()
    assert "s3cr3t" not in str(info.value) and "AKIDSECRET" not in str(info.value)
    with pytest.raises(AdapterError, match="view_format"):
        GlueAdapter("glue", {"view_format": "iceberg"})
    with pytest.raises(AdapterError, match="unknown option"):
        GlueAdapter("glue", {"aws_secret_access_key": "s3cr3t"})


def test_validated_athena_view_reads_the_submitted_text(stubbed: tuple[GlueAdapter, Stubber]) -> None:
    """Real Glue: a validated ATHENA representation has no original text in GetTable; the submitted
    SQL is in Status.Details.ViewValidations (asked for with IncludeStatusDetails)."""
    adapter, stub = stubbed
    table = _view_table("v", "3")
    table["ViewDefinition"]["Representations"] = [{"Dialect": "ATHENA", "DialectVersion": "3", "IsStale": False}]
    table["Status"] = {"State": "SUCCESS", "Details": {"ViewValidations": [
        {"Dialect": "ATHENA", "DialectVersion": "3", "ViewValidationText": "SELECT 1 AS x", "State": "SUCCESS"}]}}
    stub.add_response("get_tables", {"TableList": [table]}, _get_tables())
    live = adapter.fetch("db").views["v"]
    assert live.spec.sql_for("trino") == "SELECT 1 AS x"
    assert live.writable


def test_materialized_and_unreadable_views_are_never_writable(stubbed: tuple[GlueAdapter, Stubber]) -> None:
    adapter, stub = stubbed
    mv = _view_table("mv", "1")
    mv["IsMaterializedView"] = True
    broken = {"Name": "broken", "DatabaseName": "db", "TableType": "VIRTUAL_VIEW", "VersionId": "1",
              "ViewOriginalText": "/* Presto View: not-base64! */", "Parameters": {"presto_view": "true",
                                                                                 "comment": "Presto View"}}
    stub.add_response("get_tables", {"TableList": [mv, broken]}, _get_tables())
    snap = adapter.fetch("db")
    assert not snap.views["mv"].writable and snap.views["mv"].format == "glue-materialized-view"
    assert not snap.views["broken"].writable
    assert any("broken" in w for w in snap.warnings)
