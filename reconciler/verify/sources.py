"""Source-table schemas kept in Git: sources/<catalog>/<schema>.yaml.

For offline CI and for catalogs Spark cannot see, these files give the verifier
the columns of the tables views read (same column grammar as views).
`viewsync import --sources` writes them from a live catalog.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reconciler.core import coltypes
from reconciler.core.errors import Problem, ValidationFailed
from reconciler.core.model import Column
from reconciler.source import yamlsrc
from reconciler.source.config import fast_schema, schema, schema_problems

SOURCES_DIR = "sources"
SCHEMA_FILE = "sources-file.schema.json"

TableKey = tuple[str, str, str]  # (catalog, schema, table), lower-cased


@dataclass
class Sources:
    tables: dict[TableKey, list[Column]] = field(default_factory=dict)
    origin: dict[TableKey, str] = field(default_factory=dict)

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
    return problems


def document(catalog: str, schema_name: str, tables: dict[str, list[Column]]) -> dict[str, Any]:
    """The YAML document `import --sources` writes for one schema."""
    return {"catalog": catalog, "schema": schema_name, "tables": [
        {"name": name, "columns": [{k: v for k, v in c.model_dump().items() if v is not None} for c in cols]}
        for name, cols in sorted(tables.items())]}
