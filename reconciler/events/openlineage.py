"""A viewsync post-event as an OpenLineage RunEvent, built with the
openlineage-python client's generated classes (which check the spec's field
rules as they are built).

Each applied view is one run of the job `<project>/<view>`: a COMPLETE event
(FAIL when the action failed) whose output dataset is the view, with a schema
facet from its declared columns, a columnLineage facet from its SQL and a
`sql` job facet; its inputs are the tables and views the SQL reads. A drop
is a COMPLETE event whose output carries the DROP lifecycle change.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit

PRODUCER = "https://github.com/viewsync/viewsync"


def catalog_namespace(name: str, kind: str, options: Mapping[str, Any]) -> str:
    """The OpenLineage namespace of a catalog, following the spec's naming where one
    exists (hive://host:port, postgres://host:port, arn:aws:glue:...); never credentials."""
    def host_of(url: str, scheme: str) -> str | None:
        try:
            parts = urlsplit(url)
        except ValueError:
            return None
        host = parts.hostname or ""
        if not host:
            return None
        return f"{scheme}://{host}" + (f":{parts.port}" if parts.port else "")

    if kind == "hms":
        got = host_of(str(options.get("uri", "")), "hive")
    elif kind == "glue":
        region = options.get("region") or "us-east-1"
        account = options.get("catalog_id") or "default"
        got = f"arn:aws:glue:{region}:{account}"
    elif kind == "iceberg-rest":
        uri = str(options.get("uri", ""))
        parts = urlsplit(uri)
        got = urlunsplit((parts.scheme, parts.hostname or "", parts.path, "", "")) if parts.hostname else None
        if got and parts.port:
            got = urlunsplit((parts.scheme, f"{parts.hostname}:{parts.port}", parts.path, "", ""))
    elif kind == "jdbc":
        url = str(options.get("url", ""))
        scheme = url.split(":", 1)[0].split("+", 1)[0]
        scheme = {"postgresql": "postgres", "mariadb": "mysql"}.get(scheme, scheme)
        got = None if scheme == "sqlite" else host_of(url, scheme)
    else:
        got = None
    return got or f"viewsync://{name}"


def _dataset_name(table: str, view_catalog: str, namespaces: Mapping[str, str]) -> tuple[str, str]:
    parts = table.split(".")
    if len(parts) >= 3 and parts[0] in namespaces:
        return namespaces[parts[0]], ".".join(parts[1:])
    return namespaces.get(view_catalog, f"viewsync://{view_catalog}"), table


def run_event(event: Mapping[str, Any], namespaces: Mapping[str, str], job_namespace: str) -> Any | None:
    from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
    from openlineage.client.facet_v2 import (
        column_lineage_dataset,
        error_message_run,
        job_type_job,
        lifecycle_state_change_dataset,
        schema_dataset,
        sql_job,
    )

    kind = str(event["type"])
    if kind == "tests.finished":
        return _tests_event(event, namespaces, job_namespace)
    if kind == "checks.finished":
        return checks_event(event, namespaces, job_namespace)
    if not kind.startswith("view.") or kind.endswith(".pre") or kind == "view.diffed":
        return None
    data = event["data"]
    view = data["view"]
    catalog = view["catalog"]
    out_ns = namespaces.get(catalog, f"viewsync://{catalog}")
    out_name = f"{view['schema']}.{view['name']}"
    lineage = data.get("lineage") or {}
    after = data.get("after") or {}
    failed = kind == "view.apply_failed"

    out_facets: dict[str, Any] = {}
    if data.get("action") == "drop":
        out_facets["lifecycleStateChange"] = lifecycle_state_change_dataset.LifecycleStateChangeDatasetFacet(
            lifecycleStateChange=lifecycle_state_change_dataset.LifecycleStateChange.DROP, producer=PRODUCER)
    if after.get("columns"):
        out_facets["schema"] = schema_dataset.SchemaDatasetFacet(fields=[
            schema_dataset.SchemaDatasetFacetFields(name=c["name"], type=c.get("type"), description=c.get("comment"),
                                                    ordinal_position=i + 1)
            for i, c in enumerate(after["columns"])], producer=PRODUCER)

    def field_ref(table: str, column: str, ttype: str, subtype: str) -> Any:
        ns, name = _dataset_name(table, catalog, namespaces)
        return column_lineage_dataset.InputField(namespace=ns, name=name, field=column, transformations=[
            column_lineage_dataset.Transformation(type=ttype, subtype=subtype)])

    if lineage.get("columns") or lineage.get("indirect"):
        out_facets["columnLineage"] = column_lineage_dataset.ColumnLineageDatasetFacet(
            fields={name: column_lineage_dataset.Fields(inputFields=[
                field_ref(i["table"], i["column"], "DIRECT", i["transformation"]) for i in inputs])
                for name, inputs in lineage.get("columns", {}).items() if inputs},
            dataset=[field_ref(i["table"], i["column"], "INDIRECT", i["subtype"]) for i in lineage.get("indirect", [])],
            producer=PRODUCER)
    inputs = []
    for table in lineage.get("tables", []):
        ns, name = _dataset_name(table, catalog, namespaces)
        inputs.append(InputDataset(namespace=ns, name=name))

    job_facets: dict[str, Any] = {
        "jobType": job_type_job.JobTypeJobFacet(processingType="BATCH", integration="VIEWSYNC", jobType="VIEW",
                                                producer=PRODUCER)}
    if lineage.get("sql"):
        job_facets["sql"] = sql_job.SQLJobFacet(query=lineage["sql"], dialect=lineage.get("dialect"),
                                                producer=PRODUCER)
    run_facets: dict[str, Any] = {}
    if failed:
        run_facets["errorMessage"] = error_message_run.ErrorMessageRunFacet(
            message=str(data.get("error") or "failed"), programmingLanguage="PYTHON", producer=PRODUCER)
    return RunEvent(
        eventType=RunState.FAIL if failed else RunState.COMPLETE,
        eventTime=str(event["time"]),
        run=Run(runId=str(event["id"]), facets=run_facets),
        job=Job(namespace=job_namespace, name=f"{catalog}.{out_name}", facets=job_facets),
        inputs=inputs,
        outputs=[OutputDataset(namespace=out_ns, name=out_name, facets=out_facets)],
        producer=PRODUCER,
    )


def checks_event(event: Mapping[str, Any], namespaces: Mapping[str, str], job_namespace: str) -> Any:
    """A `checks.finished` event as a COMPLETE run of the job `<view>.checks` whose input is the
    view, with the dataQualityAssertions facet (one assertion per check) and the
    dataQualityMetrics facet (row count, null counts of the not_null columns)."""
    from openlineage.client.event_v2 import InputDataset, Job, Run, RunEvent, RunState
    from openlineage.client.facet_v2 import (
        data_quality_assertions_dataset,
        data_quality_metrics_input_dataset,
        job_type_job,
    )

    data = event["data"]
    view = data["view"]
    catalog = view["catalog"]
    name = f"{view['schema']}.{view['name']}"
    assertions = [data_quality_assertions_dataset.Assertion(
        assertion=str(c["kind"]), success=c["status"] == "pass", column=_check_column(c), severity=c["severity"],
        name=f"checks[{c['index']}]", actual=None if c.get("failing") is None else str(c["failing"]))
        for c in data.get("checks", []) if c["status"] != "error"]
    metrics = data_quality_metrics_input_dataset.DataQualityMetricsInputDatasetFacet(
        rowCount=data.get("rows"), columnMetrics={
            col: data_quality_metrics_input_dataset.ColumnMetrics(nullCount=n)
            for col, n in (data.get("null_counts") or {}).items()}, producer=PRODUCER)
    asserted = data_quality_assertions_dataset.DataQualityAssertionsDatasetFacet(assertions=assertions,
                                                                                 producer=PRODUCER)
    facets: dict[str, Any] = {"dataQualityAssertions": asserted, "dataQualityMetrics": metrics}
    job_facets: dict[str, Any] = {"jobType": job_type_job.JobTypeJobFacet(
        processingType="BATCH", integration="VIEWSYNC", jobType="CHECK", producer=PRODUCER)}
    return RunEvent(
        eventType=RunState.COMPLETE, eventTime=str(event["time"]), run=Run(runId=str(event["id"])),
        job=Job(namespace=job_namespace, name=f"{catalog}.{name}.checks", facets=job_facets),
        inputs=[InputDataset(namespace=namespaces.get(catalog, f"viewsync://{catalog}"), name=name,
                             inputFacets=facets)],
        outputs=[], producer=PRODUCER)


def _check_column(check: Mapping[str, Any]) -> str | None:
    args = check.get("args")
    if isinstance(args, list) and len(args) == 1:
        return str(args[0])
    if isinstance(args, dict) and args.get("column"):
        return str(args["column"])
    return None

def _tests_event(event: Mapping[str, Any], namespaces: Mapping[str, str], job_namespace: str) -> Any:
    """A run of view tests: each tested view an input dataset whose `dataQualityAssertions`
    facet holds one assertion per test (its name, and whether it passed)."""
    from openlineage.client.event_v2 import InputDataset, Job, Run, RunEvent, RunState
    from openlineage.client.facet_v2 import data_quality_assertions_dataset as dq
    from openlineage.client.facet_v2 import job_type_job

    inputs = []
    for v in event["data"].get("views", []):
        view = v["view"]
        assertions = [dq.Assertion(assertion=t["name"], success=t["status"] == "passed",
                                   description=t.get("message") or None) for t in v.get("tests", [])]
        inputs.append(InputDataset(
            namespace=namespaces.get(view["catalog"], f"viewsync://{view['catalog']}"),
            name=f"{view['schema']}.{view['name']}",
            inputFacets={"dataQualityAssertions": dq.DataQualityAssertionsDatasetFacet(assertions=assertions,
                                                                                       producer=PRODUCER)}))
    ok = event["data"].get("summary", {}).get("tests", 0) == event["data"].get("summary", {}).get("passed", 0)
    return RunEvent(
        eventType=RunState.COMPLETE if ok else RunState.FAIL,
        eventTime=str(event["time"]),
        run=Run(runId=str(event["id"])),
        job=Job(namespace=job_namespace, name="viewsync.tests", facets={
            "jobType": job_type_job.JobTypeJobFacet(processingType="BATCH", integration="VIEWSYNC", jobType="TEST",
                                                    producer=PRODUCER)}),
        inputs=inputs, outputs=[], producer=PRODUCER)
