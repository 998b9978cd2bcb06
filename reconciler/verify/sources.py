"""Source-table schemas kept in Git: sources/<catalog>/<schema>.yaml.

For offline CI and for catalogs Spark cannot see, these files give the verifier
the columns of the tables views read (same column grammar as views).
`viewsync import --sources` writes them from a live catalog.

A table may also say where its data is (`location` and `format`): a managed catalog's
views are then data-reviewed over those files (reconciler/datareview/files.py). A local
location is a path inside the repository: a pull request's sources file must not make data
review read other files of the machine it runs on into its report.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from reconciler.core import coltypes
from reconciler.core.errors import Problem, ValidationFailed
from reconciler.core.model import Column
from reconciler.source import yamlsrc
from reconciler.source.config import fast_schema, schema, schema_problems

SOURCES_DIR = "sources"
SCHEMA_FILE = "sources-file.schema.json"

TableKey = tuple[str, str, str]  # (catalog, schema, table), lower-cased
URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")  # s3a://, abfss://, hdfs://...


@dataclass(frozen=True)
class TableData:
    """Where a table's data is: `location` as written (a URI, or a path relative to the
    repository's root), Spark's `format` and reader `options`; `at` is file:line:col of the
    location, for messages about it."""

    location: str
    format: str
    options: dict[str, str]
    at: str

    @property
    def is_local(self) -> bool:
        return not URI.match(self.location)


@dataclass
class Sources:
    tables: dict[TableKey, list[Column]] = field(default_factory=dict)
    origin: dict[TableKey, str] = field(default_factory=dict)
    data: dict[TableKey, TableData] = field(default_factory=dict)

    def get(self, catalog: str, schema_name: str, table: str) -> list[Column] | None:
        return self.tables.get((catalog.lower(), schema_name.lower(), table.lower()))


def read(root: Path) -> Sources:
    base = root / SOURCES_DIR
    if not base.is_dir():
        return Sources()
    files = [(p.relative_to(root).as_posix(), p.read_text(encoding="utf-8"))
             for p in sorted(base.rglob("*")) if p.suffix in (".yaml", ".yml") and p.is_file()]
    return load(files)


def load(files: list[tuple[str, str]]) -> Sources:
    out = Sources()
    problems: list[Problem] = []
    for rel, text in files:
        problems.extend(_load_file(rel, text, out))
    if problems:
        raise ValidationFailed(problems)
    return out


def _load_file(rel: str, text: str, out: Sources) -> list[Problem]:
    try:
        data = yamlsrc.load(text)
    except yamlsrc.YamlSyntaxError as err:
        return [Problem(rel, err.line, err.column, err.field, err.message)]
    if data is None:
        return [Problem(rel, 1, 1, "", "empty file (expected catalog, schema and tables)")]
    if not fast_schema(SCHEMA_FILE).is_valid(data):
        return schema_problems(schema(SCHEMA_FILE), data, yamlsrc.compose(text), rel)
    node: Any = None

    def at(path: tuple[str | int, ...], message: str) -> Problem:
        nonlocal node
        if node is None:
            node = yamlsrc.compose(text)
        return Problem(rel, *yamlsrc.locate(node, path), yamlsrc.path_text(path), message)

    problems: list[Problem] = []
    parts = rel.split("/")
    expected = (parts[1], parts[2].rsplit(".", 1)[0]) if len(parts) == 3 else None
    if expected is None:
        problems.append(Problem(rel, 1, 1, "", f"source files live at {SOURCES_DIR}/<catalog>/<schema>.yaml"))
    elif (data["catalog"], data["schema"]) != expected:
        problems.append(at(("catalog",), f"{data['catalog']}.{data['schema']} does not match the file path "
                                        f"(expected {expected[0]}.{expected[1]})"))
    for i, table in enumerate(data["tables"]):
        key = (data["catalog"].lower(), data["schema"].lower(), table["name"].lower())
        if key in out.tables:
            problems.append(at(("tables", i, "name"), f"table {table['name']!r} is already listed in "
                                                     f"{out.origin[key]}"))
            continue
        columns: list[Column] = []
        for j, col in enumerate(table["columns"]):
            try:
                columns.append(Column(name=col["name"], type=coltypes.canonical(col["type"]),
                                      comment=col.get("comment")))
            except (coltypes.ColumnTypeError, ValueError) as err:
                problems.append(at(("tables", i, "columns", j, "type"), str(err).splitlines()[0]))
        out.tables[key] = columns
        out.origin[key] = f"{rel} (tables[{i}])"
        problems.extend(_data(table, i, key, rel, at, out))
    return problems


def _data(table: dict[str, Any], i: int, key: TableKey, rel: str,
          at: Callable[[tuple[str | int, ...], str], Problem], out: Sources) -> list[Problem]:
    """The table's `location` and `format`, checked (both or neither; a local path stays in
    the repository), into `out.data`."""
    location, fmt = table.get("location"), table.get("format")
    if location is None and fmt is None:
        if "options" in table:
            return [at(("tables", i, "options"), "options are for reading `location`, which is not set")]
        return []
    if location is None or fmt is None:
        have, need = ("location", "format") if fmt is None else ("format", "location")
        what = "parquet, csv, json, orc, delta or iceberg" if need == "format" else "where the data is"
        return [at(("tables", i, have), f"{have} needs {need} ({what})")]
    why = _local_problem(location)
    if why:
        return [at(("tables", i, "location"), why)]
    options = {str(k): str(v).lower() if isinstance(v, bool) else str(v)
               for k, v in (table.get("options") or {}).items()}
    problem = at(("tables", i, "location"), "")
    out.data[key] = TableData(location, fmt, options, f"{problem.file}:{problem.line}:{problem.column}")
    return []


def _local_problem(location: str) -> str | None:
    """Why a location is refused, or None: a local one is a relative path that stays in the repository."""
    if location != location.strip():
        return f"location {location!r} begins or ends with white space"
    if location.lower().startswith("file:"):
        return (f"location {location!r}: a local location is a path relative to the repository's root "
                "(data review reads no file outside the repository)")
    if URI.match(location):
        return None
    path = PurePosixPath(location.replace("\\", "/"))
    if path.is_absolute() or re.match(r"^[A-Za-z]:", location):
        return (f"location {location!r} is an absolute path: a local location is a path relative to the "
                "repository's root (data review reads no file outside the repository)")
    if ".." in path.parts:
        return f"location {location!r} leaves the repository ('..'): a local location stays inside it"
    return None


def document(catalog: str, schema_name: str, tables: dict[str, list[Column]]) -> dict[str, Any]:
    """The YAML document `import --sources` writes for one schema."""
    return {"catalog": catalog, "schema": schema_name, "tables": [
        {"name": name, "columns": [{k: v for k, v in c.model_dump().items() if v is not None} for c in cols]}
        for name, cols in sorted(tables.items())]}
