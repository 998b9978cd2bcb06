"""`viewsync import`: YAML declarations for the views a catalog holds.

The YAML is written with a dumper of our own (SQL as literal blocks), so importing
changes nothing in PyYAML's global dumpers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from reconciler.core.errors import UserError
from reconciler.core.model import ViewSpec
from reconciler.source.config import VIEWS_DIR
from reconciler.workspace import Workspace


class _Literal(str):
    """SQL text: written as a `|` block when it spans lines."""


class _Dumper(yaml.SafeDumper):
    pass


def _literal(dumper: yaml.SafeDumper, data: _Literal) -> yaml.Node:
    return dumper.represent_scalar("tag:yaml.org,2002:str", str(data), style="|" if "\n" in data else None)


_Dumper.add_representer(_Literal, _literal)


def view_yaml(name: str, spec: ViewSpec, schema: str) -> dict[str, Any]:
    """One entry of a view file: only what differs from the defaults a declaration gets."""
    body: dict[str, Any] = {"name": name}
    if spec.comment is not None:
        body["comment"] = spec.comment
    if spec.columns:
        body["columns"] = [{k: v for k, v in c.model_dump().items() if v is not None} for c in spec.columns]
    body["representations"] = []
    for r in spec.representations:
        sql = r.sql.strip()
        body["representations"].append({"dialect": r.dialect, "sql": _Literal(sql + ("\n" if "\n" in sql else ""))})
    if spec.default_catalog is not None:
        body["default_catalog"] = spec.default_catalog
    if spec.default_namespace is not None and spec.default_namespace != schema.split("."):
        body["default_namespace"] = spec.default_namespace
    if spec.security != "definer":
        body["security"] = spec.security
    if spec.owner is not None:
        body["owner"] = spec.owner
    if spec.properties:
        body["properties"] = dict(sorted(spec.properties.items()))
    return body


def dump(doc: dict[str, Any]) -> str:
    return yaml.dump(doc, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)


@dataclass
class ImportResult:
    written: list[tuple[Path, int]] = field(default_factory=list)  # (file relative to the repo, views)
    skipped: list[Path] = field(default_factory=list)  # files that exist (no --force)

    @property
    def views(self) -> int:
        return sum(n for _, n in self.written)


def import_catalog(ws: Workspace, catalog: str, schemas: list[str] | None, force: bool) -> ImportResult:
    """Write views/<catalog>/<schema>.yaml for every schema of `catalog` (or those named).

    Args:
        ws: the repository, opened.
        catalog: the configured catalog to read.
        schemas: only these schemas (every schema of the catalog when None or empty).
        force: overwrite view files that exist (else they are skipped).

    Returns:
        The files written (with their view counts) and those skipped.

    Raises:
        UserError: the catalog is not configured, or a named schema does not exist in it.
        ViewsyncError: the catalog cannot be read.
    """
    adapter = ws.adapter(catalog)
    names = schemas or adapter.list_schemas()
    snapshots = ws.fetch([catalog], {(catalog, s) for s in names}, all_schemas=False)
    result = ImportResult()
    for (_, name), snap in sorted(snapshots.items()):
        if not snap.exists:
            raise UserError(f"schema {name!r} does not exist in catalog {catalog!r}")
        views = [v for v in snap.views.values() if v.writable or not adapter.capabilities.writable]
        if not views:
            continue
        path = ws.root / VIEWS_DIR / catalog / f"{name}.yaml"
        if path.exists() and not force:
            result.skipped.append(path.relative_to(ws.root))
            continue
        doc = {"catalog": catalog, "schema": name,
               "views": [view_yaml(v.id.name, v.spec, name) for v in sorted(views, key=lambda v: v.id.name)]}
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dump(doc), encoding="utf-8")
        result.written.append((path.relative_to(ws.root), len(views)))
    return result
