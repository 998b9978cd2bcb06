"""The data model: what a view is, independent of any catalog or engine.

`ViewSpec` is what a declaration says and what an adapter reads back; its
canonical form (and digest) is what plan compares and what the ownership
marker stamps on every view we manage.

Spec digest, canonical form version 1 (`SPEC_DIGEST_VERSION`). The stamp
`viewsync.spec-digest` is persisted in catalogs, so its bytes are ours, not a
serializer's: they must never change for an unchanged view.

- The canonical form is a JSON object with these keys, in this order:
  `comment`, `columns`, `representations`, `default_catalog`,
  `default_namespace`, `security`, `owner`, `properties`.
  `columns` keeps the declared order, each `{"name", "type", "comment"}`
  (type in canonical grammar); `representations` are sorted by dialect, each
  `{"dialect", "sql"}` with the SQL trimmed; `properties` keys are sorted by
  code point. Absent values are `null`.
- A field added to `ViewSpec`, `Column` or `Representation` after version 1
  is written after the version-1 keys only when its value differs from its
  default: adding a defaulted field changes no digest.
- Bytes: UTF-8, no whitespace (separators `,` and `:`), non-ASCII written as
  is; `"`, `\\` and control characters escaped as JSON requires (`\\n`,
  `\\t`..., others `\\u00xx`).
- Stamp: `sha256:` + lowercase hex SHA-256 of those bytes. A later version N
  would stamp `v<N>:sha256:...`; `stamp_matches` checks a stamp in the
  version it was written with, so old stamps stay valid.

Version 1 is byte-identical to what releases before it stamped (pydantic's
serialised form); tests/fixtures/stamped_by_release pins that.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from json.encoder import encode_basestring as _q  # C-level JSON string escaping
from typing import Any, ClassVar, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator

from reconciler.core import coltypes

MARKER_PREFIX = "viewsync."
MANAGED_BY = "viewsync.managed-by"
SPEC_DIGEST = "viewsync.spec-digest"
# The same project name under a key the Hive Metastore's table filter accepts (its filter
# grammar rejects dots): a database with none of our views then costs one call to skip.
MANAGED_BY_FILTERABLE = "viewsync_managed_by"
# A preview copy's marks (reconciler.preview): its environment, the commit it was made from
# and when it expires. Stamped beside the ownership marker; read back as LiveView.marks.
PREVIEW = "viewsync.preview"
PREVIEW_COMMIT = "viewsync.preview.commit"
PREVIEW_EXPIRES = "viewsync.preview.expires"
PREVIEW_MARKS = (PREVIEW, PREVIEW_COMMIT, PREVIEW_EXPIRES)


def marks_of(params: Mapping[str, str]) -> dict[str, str]:
    """The preview marks among a stored view's properties (empty for every other view)."""
    return {k: str(params[k]) for k in PREVIEW_MARKS if params.get(k)}

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
    # The fields of canonical form version 1; any other field is written only when not default.
    _canonical_v1: ClassVar[tuple[str, ...]] = ()

    def _later_fields(self) -> dict[str, Any]:
        """Fields added after version 1 that hold a non-default value, in declaration order."""
        later = _later_defaults(type(self))
        if not later:
            return {}
        data = self.__dict__
        return {name: _plain(data[name]) for name, default in later if name in data and data[name] != default}


_LATER: dict[type[BaseModel], tuple[tuple[str, Any], ...]] = {}


def _later_defaults(cls: type[_Strict]) -> tuple[tuple[str, Any], ...]:
    later = _LATER.get(cls)
    if later is None:
        later = tuple((name, info.get_default(call_default_factory=True))
                      for name, info in cls.model_fields.items() if name not in cls._canonical_v1)
        _LATER[cls] = later
    return later


def _plain(value: Any) -> Any:
    """A value of a later field in canonical form: models by their own rules, mappings by key."""
    if isinstance(value, (Column, Representation)):
        return value.canonical()
    if isinstance(value, BaseModel):
        return {k: _plain(v) for k, v in value.__dict__.items()}
    if isinstance(value, Mapping):
        return {str(k): _plain(value[k]) for k in sorted(value)}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


class Column(_Strict):
    _canonical_v1: ClassVar[tuple[str, ...]] = ("name", "type", "comment")
    name: str = Field(min_length=1)
    type: str
    comment: str | None = None

    def canonical(self) -> dict[str, Any]:
        out = {"name": self.name, "type": self.type, "comment": self.comment}
        return out | self._later_fields() if _later_defaults(type(self)) else out

    @field_validator("type")
    @classmethod
    def _canonical_type(cls, value: str) -> str:
        return coltypes.canonical(value)


class Representation(_Strict):
    _canonical_v1: ClassVar[tuple[str, ...]] = ("dialect", "sql")
    dialect: str
    sql: str = Field(min_length=1)

    def canonical(self) -> dict[str, Any]:
        out = {"dialect": self.dialect, "sql": self.sql.strip()}
        return out | self._later_fields() if _later_defaults(type(self)) else out

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
    _canonical_v1: ClassVar[tuple[str, ...]] = (
        "comment", "columns", "representations", "default_catalog", "default_namespace", "security", "owner",
        "properties")
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
        so every spec is built in one order (canonical() still sorts: trusted() skips this)."""
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
        """The canonical form, version 1 (see the module docstring): what the digest hashes,
        what plans carry, and what `spec_from_canonical` reads back."""
        out = {
            "comment": self.comment,
            "columns": [c.canonical() for c in self.columns],
            "representations": sorted((r.canonical() for r in self.representations), key=_by_dialect),
            "default_catalog": self.default_catalog,
            "default_namespace": self.default_namespace,
            "security": self.security,
            "owner": self.owner,
            "properties": dict(sorted(self.properties.items())),
        }
        return out | self._later_fields() if _later_defaults(type(self)) else out

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> ViewSpec:
        copy = super().model_copy(update=update, deep=deep)
        copy._digest = None  # a copy with updates is a different spec
        return copy

    def digest(self) -> str:
        # Read the private slot directly: pydantic's attribute hook costs more than the lookup.
        private = self.__pydantic_private__
        cached = private.get("_digest") if private is not None else None
        if cached is None:
            cached = _stamp_v1(self)
            if private is not None:
                private["_digest"] = cached
        return cached

    def resolved(self, view: ViewId) -> ViewSpec:
        """The spec with defaults made explicit (default namespace = own schema)."""
        if self.default_namespace is not None:
            return self
        return self.model_copy(update={"default_namespace": view.namespace})


def _by_dialect(rep: dict[str, Any]) -> str:
    return str(rep["dialect"])


SPEC_DIGEST_VERSION = 1
# Key order is part of canonical form version 1, so this encoder must not sort keys.
_SPEC_JSON = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)


def canonical_bytes(spec: ViewSpec) -> bytes:
    """The bytes a version-1 spec digest hashes: `spec.canonical()` encoded as documented.

    Written out field by field (C-level string escaping, no intermediate dicts): digests
    are on the path of every plan. Equal to `_SPEC_JSON.encode(spec.canonical())` (tested)."""
    d = spec.__dict__
    cols = []
    for col in d["columns"]:
        if type(col) is Column:
            c = col.__dict__
            cols.append(_COLUMN % (_q(c["name"]), _q(c["type"]), _qn(c["comment"])))
        else:  # a subclass may have fields added later
            cols.append(_SPEC_JSON.encode(col.canonical()))
    reps = d["representations"]
    if len(reps) > 1:
        reps = sorted(reps, key=_rep_dialect)
    rep_parts = []
    for rep in reps:
        if type(rep) is Representation:
            r = rep.__dict__
            rep_parts.append(_REPRESENTATION % (_q(r["dialect"]), _q(r["sql"].strip())))
        else:
            rep_parts.append(_SPEC_JSON.encode(rep.canonical()))
    ns = d["default_namespace"]
    text = _SPEC % (
        _qn(d["comment"]), ",".join(cols), ",".join(rep_parts), _qn(d["default_catalog"]),
        "null" if ns is None else "[" + ",".join(map(_q, ns)) + "]", _q(d["security"]), _qn(d["owner"]),
        ",".join([_q(k) + ":" + _q(v) for k, v in sorted(d["properties"].items())]))
    if _later_defaults(type(spec)):
        text += "".join(f",{_q(k)}:{_SPEC_JSON.encode(v)}" for k, v in spec._later_fields().items())
    return (text + "}").encode()


_COLUMN = '{"name":%s,"type":%s,"comment":%s}'
_REPRESENTATION = '{"dialect":%s,"sql":%s}'
_SPEC = ('{"comment":%s,"columns":[%s],"representations":[%s],"default_catalog":%s,"default_namespace":%s,'
         '"security":%s,"owner":%s,"properties":{%s}')


def _qn(value: str | None) -> str:
    return "null" if value is None else _q(value)


def _rep_dialect(rep: Representation) -> str:
    return str(rep.__dict__["dialect"])


def _stamp_v1(spec: ViewSpec) -> str:
    return "sha256:" + hashlib.sha256(canonical_bytes(spec)).hexdigest()


def stamp_version(stamp: str) -> int | None:
    """The canonical-form version a stamp was written with (None: not a stamp we know)."""
    if stamp.startswith("sha256:"):
        return 1
    head, sep, rest = stamp.partition(":")
    if sep and head[:1] == "v" and head[1:].isdigit() and rest.startswith("sha256:"):
        return int(head[1:])
    return None


def stamp_matches(stamp: str, spec: ViewSpec) -> bool:
    """Whether `stamp` is the digest of `spec` in the version the stamp was written with.
    A stamp of a version this release does not know cannot be verified: False."""
    return stamp_version(stamp) == 1 and spec.digest() == stamp


# One encoder for other digests (fingerprints, declaration sets, plans): json.dumps with
# options builds a new encoder per call.
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
    marks: dict[str, str] = Field(default_factory=dict)  # preview marks stamped with the view (marks_of)

    def model_post_init(self, __context: Any) -> None:
        if not self.fingerprint:
            self.fingerprint = digest_of(
                {"spec": self.spec.canonical(), "managed_by": self.managed_by,
                 "spec_digest": self.spec_digest, "native_version": self.native_version}
            )
