"""The OpenLineage JSON Schema as the openlineage-python client ships it.

The client's wheel carries no .json schema files: it ships the spec as classes
generated from it (`openlineage.client.generated`), each naming the schema
definition it was generated from (`_get_schema()`, e.g.
`.../spec/2-0-2/OpenLineage.json#/$defs/RunEvent`). This module turns those
classes back into JSON Schema (required fields, types, enums, nesting) and
validates an event with it; every facet is checked against the definition its
own `_schemaURL` names, as an OpenLineage consumer does."""

from __future__ import annotations

import enum
import importlib
import pkgutil
import types
import typing
from functools import cache
from typing import Any

import attr
import jsonschema


@cache
def registry() -> dict[str, type]:
    """schemaURL -> generated class, over every module the client generated."""
    import openlineage.client.generated as gen

    out: dict[str, type] = {}
    for info in pkgutil.iter_modules(gen.__path__):
        module = importlib.import_module(f"{gen.__name__}.{info.name}")
        for obj in vars(module).values():
            if isinstance(obj, type) and attr.has(obj) and obj.__module__ == module.__name__:
                getter = getattr(obj, "_get_schema", None)
                if getter is not None:
                    out.setdefault(getter(), obj)
    return out


def _json_name(field: Any) -> str:
    return str(field.name)  # the client serialises attribute names as they are (`_producer`, `_schemaURL`)


def _schema_of_type(tp: Any, defs: dict[str, Any]) -> dict[str, Any]:
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        return {"anyOf": [_schema_of_type(a, defs) for a in typing.get_args(tp)]}
    if tp is type(None):
        return {"type": "null"}
    if tp is str:
        return {"type": "string"}
    if tp is bool:
        return {"type": "boolean"}
    if tp is int:
        return {"type": "integer"}
    if tp is float:
        return {"type": "number"}
    if tp is Any:
        return {}
    if origin is list:
        (item,) = typing.get_args(tp)
        return {"type": "array", "items": _schema_of_type(item, defs)}
    if origin is dict:
        _, value = typing.get_args(tp)
        return {"type": "object", "additionalProperties": _schema_of_type(value, defs)}
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return {"enum": [m.value for m in tp]}
    if isinstance(tp, type) and attr.has(tp):
        class_schema(tp, defs)
        return {"$ref": f"#/$defs/{tp.__module__}.{tp.__qualname__}"}
    raise TypeError(f"no JSON Schema mapping for {tp!r}")


def class_schema(cls: type, defs: dict[str, Any]) -> dict[str, Any]:
    key = f"{cls.__module__}.{cls.__qualname__}"
    if key in defs:
        return defs[key]
    defs[key] = {}  # recursion guard (fields of its own type)
    hints = typing.get_type_hints(cls)
    props: dict[str, Any] = {}
    required: list[str] = []
    for f in attr.fields(cls):
        name = _json_name(f)
        props[name] = _schema_of_type(hints[f.name], defs)
        if f.default is attr.NOTHING:
            required.append(name)
    defs[key] = {"type": "object", "properties": props, "required": required}
    return defs[key]


def validate_event(event: dict[str, Any]) -> None:
    """Raise jsonschema.ValidationError unless `event` matches the client's RunEvent schema
    and each facet matches the definition its `_schemaURL` names."""
    from openlineage.client.event_v2 import RunEvent

    defs: dict[str, Any] = {}
    root = class_schema(RunEvent, defs)
    jsonschema.validate(event, {**root, "$defs": defs})
    classes = registry()

    def facets(where: str, value: dict[str, Any] | None) -> None:
        for name, facet in (value or {}).items():
            url = facet.get("_schemaURL")
            cls = classes.get(url)
            if cls is None:
                raise jsonschema.ValidationError(f"{where}.{name}: unknown facet schema {url!r}")
            fdefs: dict[str, Any] = {}
            jsonschema.validate(facet, {**class_schema(cls, fdefs), "$defs": fdefs})

    facets("run.facets", event["run"].get("facets"))
    facets("job.facets", event["job"].get("facets"))
    for side in ("inputs", "outputs"):
        for i, ds in enumerate(event.get(side) or []):
            facets(f"{side}[{i}].facets", ds.get("facets"))
