"""The pure ViewSpec <-> Iceberg metadata mapping (no server)."""

from __future__ import annotations

from typing import Any

import pytest

from reconciler.adapters.iceberg import codec as fmt
from reconciler.adapters.iceberg.adapter import IcebergRestAdapter, catalog_properties
from reconciler.core.errors import DecodeError
from reconciler.core.model import ViewSpec

MARKERS = {"viewsync.managed-by": "t", "viewsync.spec-digest": "sha256:abc"}


def spec(**over: Any) -> ViewSpec:
    data: dict[str, Any] = {
        "comment": "Customer totals",
        "columns": [{"name": "id", "type": "bigint", "comment": "key"},
                    {"name": "total", "type": "decimal(18,2)"}],
        "representations": [{"dialect": "spark", "sql": "SELECT 1"}, {"dialect": "trino", "sql": "SELECT 1"}],
        "default_namespace": ["sales"],
        "owner": "data-team",
        "properties": {"tier": "gold"},
    }
    data.update(over)
    return ViewSpec.model_validate(data)


def metadata_for(s: ViewSpec, props: dict[str, str] | None = None, version_id: int = 1) -> dict[str, Any]:
    """View metadata as an Iceberg server would return it for `s`."""
    return {
        "view-uuid": "u-1", "format-version": 1, "location": "file:///wh/v",
        "schemas": [fmt.schema_json(s.columns, 0)],
        "current-version-id": version_id,
        "versions": [fmt.version_json(s, version_id, 0, {"engine-name": "x"}, 1)],
        "version-log": [{"timestamp-ms": 1, "version-id": version_id}],
        "properties": fmt.spec_properties(s) | MARKERS if props is None else props,
    }


def test_round_trip_keeps_every_field() -> None:
    s = fmt.storable(spec(default_catalog="lake", security="invoker"))
    read = fmt.read_view(metadata_for(s))
    assert read.spec.digest() == s.digest()
    assert read.managed_by == "t" and read.spec_digest == "sha256:abc"
    assert read.spec.properties == {"tier": "gold"}  # comment/owner/security/markers are not user props


def test_nested_types_get_unique_field_ids_and_widen() -> None:
    s = spec(columns=[{"name": "a", "type": "tinyint"},
                      {"name": "b", "type": "array<struct<x:varchar(5),y:map<string,smallint>>>"},
                      {"name": "c", "type": "char(2)"}])
    stored = fmt.storable(s)
    assert [c.type for c in stored.columns] == ["int", "array<struct<x:string,y:map<string,int>>>", "string"]
    schema = fmt.schema_json(stored.columns, 0)
    ids: list[int] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            ids.extend(node[k] for k in ("id", "element-id", "key-id", "value-id") if k in node)
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(schema["fields"])
    assert len(ids) == len(set(ids)) and [f["id"] for f in schema["fields"]] == [1, 2, 3]
    assert fmt.read_view(metadata_for(stored)).spec.columns == stored.columns


def test_engine_properties_are_not_user_properties() -> None:
    s = fmt.storable(spec())
    props = fmt.spec_properties(s) | {"spark.query-column-names": "id,total", "engine_version": "Spark 3.5",
                                      fmt.DROP_DIALECT_ALLOWED: "true"}
    assert fmt.read_view(metadata_for(s, props)).spec.properties == {"tier": "gold"}


def test_foreign_view_without_our_properties_reads_as_its_engines_run_it() -> None:
    """Without viewsync's `security`, a view with a trino representation is what Trino makes of it
    (TrinoRestCatalog.getView): definer as `trino.run-as-owner` when set, else invoker. A view
    only Spark reads stays a definer view, as before."""
    s = fmt.storable(spec(comment=None, owner=None, properties={}))
    read = fmt.read_view(metadata_for(s, props={}))
    assert read.spec.security == "invoker" and read.spec.comment is None and read.managed_by is None
    definer = fmt.read_view(metadata_for(s, props={fmt.TRINO_RUN_AS_OWNER: "alice"})).spec
    assert (definer.security, definer.owner, definer.properties) == ("definer", "alice", {})
    spark_only = fmt.storable(spec(comment=None, owner=None, properties={},
                                   representations=[{"dialect": "spark", "sql": "SELECT 1"}]))
    assert fmt.read_view(metadata_for(spark_only, props={})).spec.security == "definer"


def test_a_definer_view_with_an_owner_runs_as_that_owner_in_trino_too() -> None:
    props = fmt.spec_properties(fmt.storable(spec(owner="alice")))
    assert props[fmt.TRINO_RUN_AS_OWNER] == "alice"
    assert fmt.TRINO_RUN_AS_OWNER not in fmt.spec_properties(fmt.storable(spec(owner="alice", security="invoker")))


def test_unreadable_view_says_why() -> None:
    meta = metadata_for(fmt.storable(spec()))
    meta["schemas"][0]["fields"][0]["type"] = "variant"
    with pytest.raises(DecodeError, match="column 'id'"):
        fmt.read_view(meta)


def test_placeholder_keeps_valid_sql_and_markers_and_never_raises() -> None:
    meta = metadata_for(fmt.storable(spec()))
    meta["versions"][0]["representations"].append({"type": "sql", "sql": "SELECT 2", "dialect": "Bad Name"})
    read = fmt.placeholder(meta)
    assert read.spec.dialects() == ["spark", "trino"] and read.spec.columns == []
    assert (read.managed_by, read.spec_digest, read.current_version_id) == ("t", "sha256:abc", 1)
    # nothing usable at all: still a valid ViewSpec, so the name stays taken
    for broken in ({}, {"current-version-id": "x", "versions": "nope", "properties": []}):
        got = fmt.placeholder(broken)
        assert got.spec.dialects() == ["unknown"] and got.managed_by is None and got.current_version_id == -1


def test_commit_for_sql_change_adds_a_version_with_max_plus_one() -> None:
    live = fmt.storable(spec())
    base = metadata_for(live, version_id=7)
    desired = fmt.storable(spec(representations=[{"dialect": "spark", "sql": "SELECT 2"},
                                                 {"dialect": "trino", "sql": "SELECT 2"}]))
    body = fmt.commit_request(base, live, desired, MARKERS, {"engine-name": "viewsync"})
    assert body["requirements"] == [{"type": "assert-view-uuid", "uuid": "u-1"}]
    actions = [u["action"] for u in body["updates"]]
    # same columns: the existing schema is reused, no add-schema
    assert actions == ["add-view-version", "set-current-view-version"]
    version = body["updates"][0]["view-version"]
    assert version["version-id"] == 8 and version["schema-id"] == 0
    assert body["updates"][1]["view-version-id"] == -1
    assert fmt.DROP_DIALECT_ALLOWED not in str(body)


def test_commit_for_new_columns_adds_schema() -> None:
    live = fmt.storable(spec())
    desired = fmt.storable(spec(columns=[{"name": "id", "type": "bigint"}]))
    body = fmt.commit_request(metadata_for(live), live, desired, MARKERS, {})
    add = next(u for u in body["updates"] if u["action"] == "add-schema")
    assert add["schema"]["schema-id"] == 1
    version = next(u for u in body["updates"] if u["action"] == "add-view-version")["view-version"]
    assert version["schema-id"] == 1


def test_dropping_a_dialect_allows_it_explicitly() -> None:
    live = fmt.storable(spec())
    desired = fmt.storable(spec(representations=[{"dialect": "spark", "sql": "SELECT 1"}]))
    body = fmt.commit_request(metadata_for(live), live, desired, MARKERS, {})
    sets = next(u for u in body["updates"] if u["action"] == "set-properties")["updates"]
    assert sets[fmt.DROP_DIALECT_ALLOWED] == "true"


def test_property_change_is_no_new_version_and_keeps_foreign_keys() -> None:
    planned = fmt.storable(spec())
    props = fmt.spec_properties(planned) | MARKERS | {"added-by-someone": "1", "spark.x": "y"}
    base = metadata_for(planned, props)
    desired = fmt.storable(spec(properties={"tier": "silver"}, owner=None))
    body = fmt.commit_request(base, planned, desired, MARKERS | {"viewsync.spec-digest": "sha256:new"}, {})
    assert body["updates"] == [
        {"action": "set-properties", "updates": {"tier": "silver", "viewsync.spec-digest": "sha256:new"}},
        {"action": "remove-properties", "removals": ["owner", "trino.run-as-owner"]},
    ]


def test_nothing_to_do_gives_no_updates() -> None:
    s = fmt.storable(spec())
    assert fmt.commit_request(metadata_for(s), s, s, MARKERS, {})["updates"] == []


def test_conflicts_only_when_someone_else_changed_what_we_change() -> None:
    planned = fmt.storable(spec())
    ours = fmt.storable(spec(properties={"tier": "silver"}))
    theirs_other_key = fmt.storable(spec(properties={"tier": "gold", "x": "1"}))
    theirs_same_key = fmt.storable(spec(properties={"tier": "bronze"}))
    theirs_sql = fmt.storable(spec(representations=[{"dialect": "spark", "sql": "SELECT 9"}]))
    assert fmt.conflicts(planned, theirs_other_key, ours) == []
    assert fmt.conflicts(planned, theirs_same_key, ours) == ["property 'tier'"]
    assert fmt.conflicts(planned, theirs_sql, ours) == []  # we do not touch the definition
    our_sql = fmt.storable(spec(representations=[{"dialect": "spark", "sql": "SELECT 2"}]))
    assert fmt.conflicts(planned, theirs_sql, our_sql) == ["definition (columns/SQL/default namespace)"]


def test_landed_needs_our_digest_and_our_spec() -> None:
    s = fmt.storable(spec())
    assert fmt.landed(metadata_for(s), s, "sha256:abc")
    assert not fmt.landed(metadata_for(s), s, "sha256:other")
    assert not fmt.landed(metadata_for(s), fmt.storable(spec(comment="x")), "sha256:abc")


def test_fingerprint_follows_metadata_location_and_properties() -> None:
    meta = metadata_for(fmt.storable(spec()))
    a = fmt.fingerprint(meta, "file:///m/00001.json")
    assert a != fmt.fingerprint(meta, "file:///m/00002.json")
    assert a != fmt.fingerprint(meta | {"properties": {"x": "y"}}, "file:///m/00001.json")
    assert a == fmt.fingerprint(dict(meta), "file:///m/00001.json")


def test_connection_options_pass_through_and_secrets_are_scrubbed() -> None:
    options = {"uri": "http://u:pw-123@h:1", "warehouse": "wh", "prefix": "p", "token": "tok-abc",
               "credential": "client:cl-secret", "oauth2-server-uri": "http://auth/t", "scope": "catalog",
               "headers": {"X-Api-Key": "hdr-secret"}, "properties": {"rest-page-size": "5", "s3.secret": "s3s"}}
    props = catalog_properties(options)
    assert props["header.X-Api-Key"] == "hdr-secret" and props["rest-page-size"] == "5"
    assert props["credential"] == "client:cl-secret" and props["oauth2-server-uri"] == "http://auth/t"
    adapter = IcebergRestAdapter("c", options)
    text = "tok-abc client:cl-secret hdr-secret s3s http://u:pw-123@h:1 client%3Acl-secret"
    assert adapter.redact(text) == "*** *** *** *** http://u:***@h:1 ***"
    for secret in ("tok-abc", "cl-secret", "hdr-secret", "s3s", "pw-123"):
        assert secret not in adapter.redact(text)


def test_commit_for_a_version_iceberg_already_has_points_at_its_id() -> None:
    """Iceberg reuses an equal version (same summary, SQL, namespace, schema), so "-1" would
    point nowhere: the commit names the existing version, as Iceberg's Java client does."""
    ours = fmt.storable(spec())
    summ = {"engine-name": "viewsync", "viewsync.git-commit": "c0ffee"}
    theirs = fmt.storable(spec(representations=[{"dialect": "spark", "sql": "SELECT 9"}]))
    base = metadata_for(theirs, version_id=2)
    base["versions"].insert(0, fmt.version_json(ours, 1, 0, summ, 5))
    body = fmt.commit_request(base, theirs, ours, MARKERS, summ)
    assert [u for u in body["updates"] if u["action"] != "set-properties"] == [
        {"action": "set-current-view-version", "view-version-id": 1}]
    # Another summary (a new commit) is another version.
    body = fmt.commit_request(base, theirs, ours, MARKERS, summ | {"viewsync.git-commit": "beef"})
    assert [u["action"] for u in body["updates"]][-2:] == ["add-view-version", "set-current-view-version"]
    assert body["updates"][-1]["view-version-id"] == -1


def test_spark_engine_properties_follow_the_spark_sql() -> None:
    """What Iceberg's Spark integration writes beside a spark representation (SparkCatalog.createView)."""
    s = fmt.storable(spec(representations=[{"dialect": "spark", "sql": "SELECT cid AS id, sum(x) FROM t GROUP BY cid"},
                                           {"dialect": "trino", "sql": "SELECT 1"}]))
    props = fmt.engine_properties(s, "1.2", create=True)
    assert props == {"spark.query-column-names": "id,total", "create_engine_version": "viewsync 1.2",
                     "engine_version": "viewsync 1.2"}
    assert "spark.query-column-names" not in fmt.engine_properties(
        fmt.storable(spec(representations=[{"dialect": "trino", "sql": "SELECT 1"}])), "1.2", create=False)
    # A new version refreshes them; dropping the spark SQL removes the stale column names.
    base = metadata_for(s, fmt.spec_properties(s) | MARKERS | props)
    trino_only = fmt.storable(spec(representations=[{"dialect": "trino", "sql": "SELECT 2"}]))
    body = fmt.commit_request(base, s, trino_only, MARKERS, {}, engine_version="1.3")
    updates = {u["action"]: u for u in body["updates"]}
    assert updates["remove-properties"]["removals"] == ["spark.query-column-names"]
    assert updates["set-properties"]["updates"]["engine_version"] == "viewsync 1.3"
    assert "create_engine_version" not in updates["set-properties"]["updates"]
