"""The data model: what a view is, independent of any catalog or engine.

`ViewSpec` is what a declaration says and what an adapter reads back; its
canonical form (and digest) is what plan compares and what the ownership
marker stamps on every view we manage.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator

from reconciler import types as vtypes

MARKER_PREFIX = "viewsync."
MANAGED_BY = "viewsync.managed-by"
SPEC_DIGEST = "viewsync.spec-digest"

_DIALECT_RE = re.compile(r"^[a-z][a-z0-9_-]*$")


@dataclass(frozen=True, order=True)
class ViewId:
    """catalog.schema.name; `schema` may be dotted for nested namespaces."""

    catalog: str
    schema: str
    name: str

    def __str__(self) -> str:
        return f"{self.catalog}.{self.schema}.{self.name}"

    def to_json(self) -> dict[str, str]:
        return {"catalog": self.catalog, "schema": self.schema, "name": self.name}

    @classmethod
    def parse(cls, text: str) -> ViewId:
        parts = text.split(".")
        if len(parts) < 3 or not all(parts):
            raise ValueError(f"expected catalog.schema.view, got {text!r}")
        return cls(parts[0], ".".join(parts[1:-1]), parts[-1])

    @property
    def namespace(self) -> list[str]:
        return self.schema.split(".")

    def key(self) -> tuple[str, str, str]:
        """Sort key: compares in C, where the dataclass ordering runs Python per comparison."""
        return (self.catalog, self.schema, self.name)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Column(_Strict):
    name: str = Field(min_length=1)
    type: str
    comment: str | None = None

    @field_validator("type")
    @classmethod
    def _canonical_type(cls, value: str) -> str:
        return vtypes.canonical(value)


class Representation(_Strict):
    dialect: str
    sql: str = Field(min_length=1)

    @field_validator("dialect")
    @classmethod
    def _dialect(cls, value: str) -> str:
        if not _DIALECT_RE.match(value):
            raise ValueError(f"invalid dialect name {value!r} (lowercase letters, digits, '_' or '-')")
        return value

    @field_validator("sql")
    @classmethod
    def _sql(cls, value: str) -> str:
        # Surrounding whitespace carries no meaning (YAML block scalars add a newline).
        value = value.strip()
        if not value:
            raise ValueError("sql must not be empty")
        return value


class ViewSpec(_Strict):
    comment: str | None = None
    columns: list[Column] = Field(default_factory=list)
    representations: list[Representation] = Field(min_length=1)
    default_catalog: str | None = None
    default_namespace: list[str] | None = None
    security: Literal["definer", "invoker"] = "definer"
    owner: str | None = None
    properties: dict[str, str] = Field(default_factory=dict)
    _digest: str | None = PrivateAttr(default=None)  # the spec is frozen, so its digest never changes

    @model_validator(mode="before")
    @classmethod
    def _normal_order(cls, data: Any) -> Any:
        """Representations by dialect and properties by key: their order carries no meaning,
        so every spec is built in one order and its serialised form is canonical."""
        if isinstance(data, dict):
            data = dict(data)
            reps = data.get("representations")
            if isinstance(reps, list) and all(isinstance(r, (dict, Representation)) for r in reps):
                data["representations"] = sorted(
                    reps, key=lambda r: str(r.dialect if isinstance(r, Representation) else r.get("dialect")))
            props = data.get("properties")
            if isinstance(props, dict):
                data["properties"] = dict(sorted(props.items()))
        return data

    @model_validator(mode="after")
    def _unique(self) -> ViewSpec:
        seen: set[str] = set()
        for i, rep in enumerate(self.representations):
            if rep.dialect in seen:
                raise ValueError(f"representations[{i}].dialect: duplicate dialect {rep.dialect!r}")
            seen.add(rep.dialect)
        names: set[str] = set()
        for i, col in enumerate(self.columns):
            if col.name.lower() in names:
                raise ValueError(f"columns[{i}].name: duplicate column {col.name!r}")
            names.add(col.name.lower())
        for key in self.properties:
            if key.startswith(MARKER_PREFIX):
                raise ValueError(f"properties.{key}: the 'viewsync.' prefix is reserved")
        return self

    def dialects(self) -> list[str]:
        return [r.dialect for r in self.representations]

    def sql_for(self, dialect: str) -> str | None:
        for rep in self.representations:
            if rep.dialect == dialect:
                return rep.sql
        return None

    def canonical(self) -> dict[str, Any]:
        """Order-insensitive where order carries no meaning, trimmed SQL."""
        return {
            "comment": self.comment,
            "columns": [
                {"name": c.name, "type": c.type, "comment": c.comment} for c in self.columns
            ],
            "representations": sorted(
                ({"dialect": r.dialect, "sql": r.sql.strip()} for r in self.representations),
                key=lambda r: r["dialect"],
            ),
            "default_catalog": self.default_catalog,
            "default_namespace": self.default_namespace,
            "security": self.security,
            "owner": self.owner,
            "properties": dict(sorted(self.properties.items())),
        }

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> ViewSpec:
        copy = super().model_copy(update=update, deep=deep)
        copy._digest = None  # a copy with updates is a different spec
        return copy

    def digest(self) -> str:
        # Read the private slot directly: pydantic's attribute hook costs more than the lookup.
        private = self.__pydantic_private__
        cached = private.get("_digest") if private is not None else None
        if cached is None:
            # Built in canonical order (see _normal_order), so the serialised form is canonical.
            cached = "sha256:" + hashlib.sha256(self.__pydantic_serializer__.to_json(self)).hexdigest()
            if private is not None:
                private["_digest"] = cached
        return cached

    def resolved(self, view: ViewId) -> ViewSpec:
        """The spec with defaults made explicit (default namespace = own schema)."""
        if self.default_namespace is not None:
            return self
        return self.model_copy(update={"default_namespace": view.namespace})


# One encoder for every digest: json.dumps with options builds a new encoder per call.
_CANONICAL_JSON = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def digest_of(canonical: dict[str, Any]) -> str:
    return "sha256:" + hashlib.sha256(_CANONICAL_JSON.encode(canonical).encode()).hexdigest()


M = TypeVar("M", bound=BaseModel)


def trusted(cls: type[M], data: dict[str, Any]) -> M:
    """Build a model from data that was validated before it was stored (our own
    rows), skipping validation and defaults: `data` must hold every field.
    Twice as fast as model_construct, which matters at 10,000+ views per plan."""
    obj = cls.__new__(cls)
    object.__setattr__(obj, "__dict__", data)
    object.__setattr__(obj, "__pydantic_fields_set__", set(data))
    object.__setattr__(obj, "__pydantic_extra__", None)
    object.__setattr__(obj, "__pydantic_private__", {"_digest": None} if cls is ViewSpec else None)
    return obj


def spec_from_canonical(data: dict[str, Any]) -> ViewSpec:
    return ViewSpec.model_validate(data)


class AdapterHandle:
    """Base of the adapter-private state a LiveView carries from fetch to update/drop
    (a table object, a version id...). Each adapter subclasses it; nobody else reads it."""


class LiveView(BaseModel):
    """A view as an adapter read it back from its catalog."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    id: ViewId
    spec: ViewSpec
    format: str  # managed, iceberg, spark, trino, hive, flink, glue-multi-dialect, postgres...
    managed_by: str | None = None
    spec_digest: str | None = None  # the marker digest stored with the view
    native_version: str | None = None
    fingerprint: str = ""  # changes whenever anything about the live view changes
    writable: bool = True  # False for things we must never touch (e.g. Trino materialized views)
    handle: AdapterHandle | None = Field(default=None, exclude=True)  # adapter-private, see AdapterHandle

    def model_post_init(self, __context: Any) -> None:
        if not self.fingerprint:
            self.fingerprint = digest_of(
                {"spec": self.spec.canonical(), "managed_by": self.managed_by,
                 "spec_digest": self.spec_digest, "native_version": self.native_version}
            )
