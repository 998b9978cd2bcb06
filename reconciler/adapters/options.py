"""Catalog options: one pydantic model per catalog kind (`CatalogAdapter.Options`) is
the single description of what a `catalogs:` entry of viewsync.yaml may hold.

From the models come the catalog section of `schemas/config.schema.json`
(editor completion and the located errors of config loading) and the catalog
option table of README.md; `scripts/regen_options.py` rewrites both and
`tests/source/test_config_schema.py` fails when either is out of date. A renamed option
keeps its old name as a field with `deprecated=...` and `replaced_by(...)`:
config loading accepts it and prints a warning line.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

REPLACED_BY = "x-replaced-by"  # schema keyword naming the option that replaces a deprecated one


class CatalogOptions(BaseModel):
    """Base of the option models: unknown options are errors."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    @classmethod
    def names(cls) -> frozenset[str]:
        """The option names as written in viewsync.yaml (aliases where a name is not an identifier)."""
        return frozenset(f.alias or name for name, f in cls.model_fields.items())


def replaced_by(option: str) -> dict[str, Any]:
    """`json_schema_extra` of a deprecated option."""
    return {REPLACED_BY: option}


def _plain(prop: dict[str, Any]) -> dict[str, Any]:
    """A property schema without pydantic's titles and its `anyOf [X, null]` for optionals."""
    out = {k: v for k, v in prop.items() if k != "title"}
    branches = out.pop("anyOf", None)
    if branches is not None:
        real = [b for b in branches if b != {"type": "null"}]
        out = {**(real[0] if len(real) == 1 else {"anyOf": real}), **out}
    if out.get("default", 0) is None:
        del out["default"]
    return out


def option_schema(kind: str, model: type[CatalogOptions]) -> dict[str, Any]:
    """The JSON Schema of one kind's catalog entry (its `type` plus the model's options)."""
    doc = model.model_json_schema(by_alias=True)
    props = {"type": {"const": kind}}
    props.update({name: _plain(p) for name, p in doc.get("properties", {}).items()})
    return {"type": "object", "additionalProperties": False, "required": ["type", *doc.get("required", [])],
            "properties": props}


def catalog_schema(models: dict[str, type[CatalogOptions]]) -> dict[str, Any]:
    """`$defs.catalog` of config.schema.json: the kinds, and per kind its options."""
    return {
        "type": "object",
        "required": ["type"],
        "properties": {"type": {"enum": list(models)}},
        "allOf": [{"if": {"properties": {"type": {"const": kind}}}, "then": option_schema(kind, model)}
                  for kind, model in models.items()],
    }


def deprecated_options(config_schema: dict[str, Any], kind: str) -> dict[str, str]:
    """{old name: new name} of the deprecated options of a kind, read from the schema
    (so loading a config never imports the adapters)."""
    for branch in config_schema.get("$defs", {}).get("catalog", {}).get("allOf", []):
        if branch["if"]["properties"]["type"]["const"] == kind:
            return {name: str(p[REPLACED_BY]) for name, p in branch["then"]["properties"].items()
                    if p.get("deprecated") and REPLACED_BY in p}
    return {}


def _cell(name: str, prop: dict[str, Any]) -> str:
    text = f"`{name}`"
    if "enum" in prop:
        text += ": " + " \\| ".join(f"`{v}`" for v in prop["enum"])
        if "default" in prop:
            text += f" (default `{prop['default']}`)"
    description = prop.get("description")
    if description:
        text += (", " if "enum" in prop else ": ") + description
    return text


def readme_table(models: dict[str, type[CatalogOptions]]) -> str:
    """The README's catalog option table (deprecated options left out)."""
    rows = ["| type | options |", "|---|---|"]
    for kind, model in models.items():
        props = option_schema(kind, model)["properties"]
        cells = [_cell(name, p) for name, p in props.items() if name != "type" and not p.get("deprecated")]
        note = (model.__doc__ or "").strip().splitlines()[0] if model.__doc__ else ""
        rows.append(f"| `{kind}` | {'; '.join(cells)}{' (' + note + ')' if note else ''} |")
    return "\n".join(rows) + "\n"
