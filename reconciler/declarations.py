"""Declarations: views/<catalog>/<schema>.yaml files -> {ViewId: ViewSpec}.

Two validation layers, as editors see them: the JSON Schema, then pydantic and
the semantic checks (file path, known catalog, duplicates). Every problem is
reported with file:line:col and the field path; nothing is half-loaded.
The fast path parses with libyaml and only composes nodes (for positions)
when a file has a problem.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pydantic

from reconciler import types as vtypes
from reconciler import yamlsrc
from reconciler.config import Config, fast_schema, schema, schema_problems
from reconciler.errors import Problem, ValidationFailed
from reconciler.model import ViewId, ViewSpec, digest_of

VIEWS_DIR = "views"


@dataclass
class Declarations:
    views: dict[ViewId, ViewSpec] = field(default_factory=dict)
    origin: dict[ViewId, str] = field(default_factory=dict)  # "file:line"
    files: list[str] = field(default_factory=list)
    schema_owners: dict[tuple[str, str], str] = field(default_factory=dict)  # a view file's top-level owner

    def digest(self, selected: Iterable[ViewId] | None = None) -> str:
        ids = sorted(self.views if selected is None else selected, key=ViewId.key)
        return digest_of({str(v): self.views[v].digest() for v in ids})


def read_tree(root: Path) -> list[tuple[str, str]]:
    """(relative path, text) of every view file under root/views."""
    base = root / VIEWS_DIR
    if not base.is_dir():
        return []
    out = []
    for path in sorted(base.rglob("*")):
        if path.suffix in (".yaml", ".yml") and path.is_file():
            out.append((path.relative_to(root).as_posix(), path.read_text(encoding="utf-8")))
    return out


def load(files: Iterable[tuple[str, str]], config: Config) -> Declarations:
    decl = Declarations()
    problems: list[Problem] = []
    for rel, text in files:
        decl.files.append(rel)
        problems.extend(_load_file(rel, text, config, decl))
    if problems:
        raise ValidationFailed(problems)
    return decl


def _expected(rel: str) -> tuple[str, str] | None:
    parts = rel.split("/")
    if len(parts) != 3 or parts[0] != VIEWS_DIR:
        return None
    return parts[1], parts[2].rsplit(".", 1)[0]


def _load_file(rel: str, text: str, config: Config, decl: Declarations) -> list[Problem]:
    try:
        data = yamlsrc.load(text)
    except yamlsrc.YamlSyntaxError as err:
        return [Problem(rel, err.line, err.column, err.field, err.message)]
    node: Any = None

    def at(path: tuple[str | int, ...], message: str) -> Problem:
        """A problem located at `path` (nodes are composed only when needed)."""
        nonlocal node
        if node is None:
            node = yamlsrc.compose(text)
        line, col = yamlsrc.locate(node, path)
        return Problem(rel, line, col, yamlsrc.path_text(path), message)

    if data is None:
        return [Problem(rel, 1, 1, "", "empty file (expected catalog, schema and views)")]
    if not fast_schema("view-file.schema.json").is_valid(data):
        node = yamlsrc.compose(text)
        return schema_problems(schema("view-file.schema.json"), data, node, rel)

    problems: list[Problem] = []
    catalog, schema_name = data["catalog"], data["schema"]
    expected = _expected(rel)
    if expected is None:
        problems.append(Problem(rel, 1, 1, "", f"view files live at {VIEWS_DIR}/<catalog>/<schema>.yaml"))
    else:
        if catalog != expected[0]:
            problems.append(at(("catalog",), f"{catalog!r} does not match the file path (expected {expected[0]!r})"))
        if schema_name != expected[1]:
            problems.append(at(("schema",), f"{schema_name!r} does not match the file path (expected {expected[1]!r})"))
    if catalog not in config.catalogs:
        problems.append(at(("catalog",), f"unknown catalog {catalog!r} (viewsync.yaml defines: "
                                f"{', '.join(sorted(config.catalogs)) or 'none'})"))

    if data.get("owner") is not None:
        decl.schema_owners[(catalog, schema_name)] = data["owner"]
    seen: dict[str, int] = {}
    for i, raw in enumerate(data["views"]):
        name = raw["name"]
        vid = ViewId(catalog, schema_name, name)
        if name in seen:
            problems.append(at(("views", i, "name"), f"duplicate view {name!r} (also views[{seen[name]}])"))
            continue
        seen[name] = i
        if vid in decl.views:
            problems.append(at(("views", i, "name"), f"view {vid} is already declared in {decl.origin[vid]}"))
            continue
        spec_problems = _spec_problems(raw, i, at)
        if spec_problems:
            problems.extend(spec_problems)
            continue
        body = {k: v for k, v in raw.items() if k != "name"}
        if body.get("default_namespace") is None:  # the documented default: the view's own schema
            body["default_namespace"] = vid.namespace
        try:
            spec = ViewSpec.model_validate(body)
        except pydantic.ValidationError as err:
            for e in err.errors():
                problems.append(at(("views", i, *e["loc"]), e["msg"]))
            continue
        decl.views[vid] = spec
        decl.origin[vid] = f"{rel} (views[{i}])"
    return problems


def _spec_problems(
    raw: dict[str, Any], i: int, at: Callable[[tuple[str | int, ...], str], Problem]
) -> list[Problem]:
    """Semantic checks whose errors need a precise position."""
    problems: list[Problem] = []
    dialects: dict[str, int] = {}
    for j, rep in enumerate(raw["representations"]):
        if rep["dialect"] in dialects:
            path = ("views", i, "representations", j, "dialect")
            problems.append(at(path, f"duplicate dialect {rep['dialect']!r}"))
        dialects[rep["dialect"]] = j
    columns: set[str] = set()
    for j, col in enumerate(raw.get("columns") or []):
        try:
            vtypes.canonical(col["type"])
        except vtypes.TypeError_ as err:
            path = ("views", i, "columns", j, "type")
            problems.append(at(path, str(err)))
        if col["name"].lower() in columns:
            path = ("views", i, "columns", j, "name")
            problems.append(at(path, f"duplicate column {col['name']!r}"))
        columns.add(col["name"].lower())
    return problems
