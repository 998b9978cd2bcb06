"""The plan as a value: what `viewsync plan` decided, typed, and its JSON form.

A `Plan` is what `plan --out` saves, `show` renders and `apply PLAN` carries
out. Its JSON form (`to_json`, described by `schemas/plan.schema.json`,
`format_version` 1) round-trips exactly through `from_json`:

- `digest`: `Plan.digest()`, over what apply carries out and for whom (actions,
  declarations, schema owners, access); `apply PLAN` refuses a file that no longer
  matches it;
- `declarations`: the digest of the declarations planned, the git commit they
  were read at, and the `scope` (the options the plan was made with, re-used
  to check a saved plan for staleness);
- `summary`: counts per action kind, and views found unchanged;
- `actions`: create / update / drop / adopt in the order apply runs them, each
  with field-level changes, the canonical spec after it (`desired`) and before
  it (`before`), and the live fingerprint it was planned against;
- `errors`: reasons the plan cannot be applied, each with a `PlanErrorCode`;
- `unmanaged`: live views without our marker (or another project's), listed only;
- `undeclared`: views of this project no longer declared, kept (no `--prune`);
- `drift`: read-only catalogs whose views differ from their declarations;
- `warnings`; `yaml_changes` (only with `plan --base`); `access` (the access policy
  checked, and for whom, when plan checked one); `lineage` (the graph of the changed views,
  what they read and who reads them, drawn in the Markdown plan).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal, get_args

from reconciler.core.gitinfo import GitInfo
from reconciler.core.model import ViewId, ViewSpec, digest_of
from reconciler.plan.change_kind import ChangeKind

ActionKind = Literal["create", "update", "drop", "adopt"]
ACTION_KINDS: tuple[ActionKind, ...] = get_args(ActionKind)
YamlChangeKind = Literal["added", "changed", "removed"]
FORMAT_VERSION = 1


class PlanErrorCode(StrEnum):
    """Why a declared view (or the whole plan) cannot be applied."""

    # found by the planner
    SCHEMA_MISSING = "schema_missing"  # the declared view's schema does not exist
    READ_ONLY_CATALOG = "read_only_catalog"  # a read-only catalog differs from its declaration
    NAME_IS_TABLE = "name_is_table"  # a table holds the declared name
    NOT_A_VIEW = "not_a_view"  # an object viewsync must not touch holds the name
    UNMANAGED_DECLARED = "unmanaged_declared"  # an unmanaged view holds the name, adoption is off
    OWNED_BY_OTHER = "owned_by_other"  # another project's view holds the name
    MASS_DROP = "mass_drop"  # more drops than policy.max_drop_fraction allows
    DEPENDENCY_CYCLE = "dependency_cycle"  # views read each other in a cycle
    NOT_A_QUERY = "not_a_query"  # a view's SQL is not exactly one SELECT / WITH / VALUES query
    NOT_PERMITTED = "not_permitted"  # the access policy denies the change (reconciler.access)
    # found by the Spark verifier (reconciler.verify, plan --spark)
    SPARK_VERIFICATION = "spark_verification"  # Spark cannot analyse the view, or its columns disagree
    BREAKING_CHANGE = "breaking_change"  # the change breaks views that read it (without --allow-breaking)
    TEST_FAILED = "test_failed"  # a test of a changed view (or of a view reading one) fails (reconciler.viewtests)
    # two representations of a view return different rows for one test (reconciler.viewtests.proof)
    REPRESENTATIONS_DISAGREE = "representations_disagree"
    # found by an adapter's check(): the catalog cannot store the declaration
    DIALECT_NOT_STORABLE = "dialect_not_storable"
    COLUMNS_REQUIRED = "columns_required"
    NOT_STORABLE = "not_storable"
    VALUE_TOO_LONG = "value_too_long"
    FORMAT_CHANGE = "format_change"
    SECURITY_NOT_STORABLE = "security_not_storable"
    UNREADABLE_VIEW = "unreadable_view"
    RESERVED_PROPERTY = "reserved_property"
    NAME_NOT_STORABLE = "name_not_storable"
    OWNER_REQUIRED = "owner_required"  # a Trino definer view with no owner and no trino_owner default
    # found in the `generated:` markers of representations (reconciler.plan.generation)
    STALE_GENERATED = "stale_generated"  # its source SQL changed after `viewsync generate` wrote it
    EDITED_GENERATED = "edited_generated"  # its SQL is no longer what `viewsync generate` wrote


def _view_json(view: ViewId | None) -> dict[str, str] | None:
    return view.to_json() if view is not None else None


def _view_of(data: dict[str, Any] | None) -> ViewId | None:
    return ViewId(data["catalog"], data["schema"], data["name"]) if data else None


@dataclass(frozen=True)
class Change:
    """One field that differs: `field` is `comment`, `columns`, `representations.<dialect>[.sql]`,
    `properties.<key>`...; `before`/`after` are canonical values (None: absent)."""

    field: str
    before: Any
    after: Any

    def to_json(self) -> dict[str, Any]:
        return {"field": self.field, "before": self.before, "after": self.after}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Change:
        return cls(d["field"], d["before"], d["after"])


@dataclass
class Action:
    """One change apply will make. `desired` is the spec after it (None for a drop),
    `before` the live spec (None for a create); `live_fingerprint` is what the live
    view looked like when planned (None for a create): apply refuses if it moved.
    `kind`: an update's (or adoption's) category and edits, from the SQL's syntax trees."""

    action: ActionKind
    view: ViewId
    strategy: str
    changes: list[Change] = field(default_factory=list)
    live_fingerprint: str | None = None
    desired: ViewSpec | None = None
    before: ViewSpec | None = None
    kind: ChangeKind | None = None

    def to_json(self) -> dict[str, Any]:
        out = {
            "action": self.action, "view": self.view.to_json(), "strategy": self.strategy,
            "changes": [c.to_json() for c in self.changes], "live_fingerprint": self.live_fingerprint,
            "desired": self.desired.canonical() if self.desired is not None else None,
            "before": self.before.canonical() if self.before is not None else None,
        }
        if self.kind is not None:
            out["kind"] = self.kind.to_json()
        return out

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Action:
        if d["action"] not in ACTION_KINDS:
            raise ValueError(f"unknown action {d['action']!r}")
        view = _view_of(d["view"])
        assert view is not None
        return cls(action=d["action"], view=view, strategy=d["strategy"],
                   changes=[Change.from_json(c) for c in d["changes"]],
                   live_fingerprint=d.get("live_fingerprint"),
                   desired=ViewSpec.model_validate(d["desired"]) if d.get("desired") is not None else None,
                   before=ViewSpec.model_validate(d["before"]) if d.get("before") is not None else None,
                   kind=ChangeKind.from_json(d["kind"]) if d.get("kind") is not None else None)


@dataclass(frozen=True)
class Location:
    """Where in a view file the declaration an error is about sits (1-based)."""

    file: str
    line: int
    column: int
    field: str  # the field path in the file, e.g. views[2].representations[0].sql

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"

    def to_json(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "column": self.column, "field": self.field}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Location:
        return cls(str(d["file"]), int(d["line"]), int(d["column"]), str(d["field"]))


@dataclass(frozen=True)
class PlanError:
    code: PlanErrorCode
    message: str
    view: ViewId | None = None
    # the field of the view's declaration at fault, for locating it (representations, 0, sql)
    path: tuple[str | int, ...] = field(default=(), compare=False)
    location: Location | None = None  # set once declarations are known (reconciler.plan.validity.locate)

    def to_json(self) -> dict[str, Any]:
        out = {"view": _view_json(self.view), "code": self.code.value, "message": self.message}
        if self.location is not None:
            out["location"] = self.location.to_json()
        return out

    def __str__(self) -> str:
        """`[code] file:line:col: message` (the location when the error comes from a declaration)."""
        where = f"{self.location}: " if self.location is not None else ""
        return f"[{self.code}] {where}{self.message}"

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> PlanError:
        loc = d.get("location")
        return cls(PlanErrorCode(d["code"]), d["message"], _view_of(d.get("view")),
                   location=Location.from_json(loc) if loc is not None else None)


@dataclass(frozen=True)
class Unmanaged:
    """A live view plan saw and will never touch; `managed_by` names another project."""

    view: ViewId
    format: str
    managed_by: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {**self.view.to_json(), "format": self.format, "managed_by": self.managed_by}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Unmanaged:
        return cls(ViewId(d["catalog"], d["schema"], d["name"]), d["format"], d.get("managed_by"))


@dataclass(frozen=True)
class Mismatch:
    """A view of a read-only catalog that differs from its declaration (also a plan error)."""

    view: ViewId
    changes: tuple[Change, ...]

    def to_json(self) -> dict[str, Any]:
        return {"view": self.view.to_json(), "changes": [c.to_json() for c in self.changes]}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Mismatch:
        view = _view_of(d["view"])
        assert view is not None
        return cls(view, tuple(Change.from_json(c) for c in d["changes"]))


@dataclass(frozen=True)
class YamlChange:
    """A declaration added, changed or removed between two git refs (`plan --base`)."""

    view: ViewId
    change: YamlChangeKind
    fields: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"view": str(self.view), "change": self.change}
        if self.change == "changed":
            out["fields"] = list(self.fields)
        return out

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> YamlChange:
        if d["change"] not in get_args(YamlChangeKind):
            raise ValueError(f"unknown declaration change {d['change']!r}")
        return cls(ViewId.parse(d["view"]), d["change"], tuple(d.get("fields") or ()))


@dataclass(frozen=True)
class PlanScope:
    """The options a plan was made with (`PlanOptions` minus what the config holds):
    applying a saved plan re-plans with exactly these to check it is still fresh."""

    catalogs: tuple[str, ...] = ()  # only these catalogs (empty: all)
    select: tuple[str, ...] = ()  # glob patterns over "catalog.schema.view" (empty: all)
    prune: bool = False
    adopt: bool = False
    allow_mass_drop: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"catalogs": list(self.catalogs), "select": list(self.select), "prune": self.prune,
                "adopt": self.adopt, "allow_mass_drop": self.allow_mass_drop}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> PlanScope:
        return cls(catalogs=tuple(d.get("catalogs") or ()), select=tuple(d.get("select") or ()),
                   prune=bool(d.get("prune")), adopt=bool(d.get("adopt")),
                   allow_mass_drop=bool(d.get("allow_mass_drop")))


@dataclass(frozen=True)
class SchemaOwnerChange:
    """A declared schema owner to write (reconciler.apply.schema_owners)."""

    catalog: str
    schema: str
    before: str | None
    after: str

    def to_json(self) -> dict[str, Any]:
        return {"catalog": self.catalog, "schema": self.schema, "before": self.before, "after": self.after}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> SchemaOwnerChange:
        return cls(d["catalog"], d["schema"], d.get("before"), d["after"])


@dataclass
class Plan:
    project: str
    declarations_digest: str
    git: GitInfo | None = None
    scope: PlanScope = field(default_factory=PlanScope)
    actions: list[Action] = field(default_factory=list)
    errors: list[PlanError] = field(default_factory=list)
    unmanaged: list[Unmanaged] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    unchanged: int = 0
    undeclared: list[ViewId] = field(default_factory=list)  # ours, no longer declared, kept
    drift: list[Mismatch] = field(default_factory=list)  # read-only catalogs: expectation mismatches
    yaml_changes: list[YamlChange] | None = None  # filled by `plan --base`
    access: dict[str, Any] | None = None  # which access policy was checked, for whom (reconciler.access)
    schema_owners: list[SchemaOwnerChange] = field(default_factory=list)  # declared schema owners to write
    verification: dict[str, Any] | None = None  # plan --spark: reconciler.verify.result.Verification JSON
    tests: dict[str, Any] | None = None  # plan --spark: reconciler.viewtests.result.TestRun JSON
    lineage: dict[str, Any] | None = None  # the changes' lineage graph: reconciler.render.lineage_graph JSON
    engines: list[dict[str, Any]] | None = None  # plan --spark: per view, each engine's proof (viewtests.proof)

    @property
    def has_changes(self) -> bool:
        return bool(self.actions or self.schema_owners)

    def summary(self) -> dict[str, int]:
        counts: dict[str, int] = dict.fromkeys(ACTION_KINDS, 0)
        for a in self.actions:
            counts[a.action] += 1
        return {**counts, "unchanged": self.unchanged}

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "format_version": FORMAT_VERSION,
            "project": self.project,
            "digest": self.digest(),
            "declarations": {"digest": self.declarations_digest,
                             "git": self.git.to_json() if self.git is not None else None,
                             "scope": self.scope.to_json()},
            "summary": self.summary(),
            "actions": [a.to_json() for a in self.actions],
            "errors": [e.to_json() for e in self.errors],
            "unmanaged": [u.to_json() for u in self.unmanaged],
            "undeclared": [v.to_json() for v in self.undeclared],
            "drift": [m.to_json() for m in self.drift],
            "warnings": list(self.warnings),
            "schema_owners": [c.to_json() for c in self.schema_owners],
        }
        if self.yaml_changes is not None:
            out["yaml_changes"] = [c.to_json() for c in self.yaml_changes]
        if self.access is not None:
            out["access"] = self.access
        if self.verification is not None:
            out["verification"] = self.verification
        if self.tests is not None:
            out["tests"] = self.tests
        if self.lineage is not None:
            out["lineage"] = self.lineage
        if self.engines is not None:
            out["engines"] = self.engines
        return out

    def digest(self) -> str:
        """What apply carries out and for whom: the actions, the declarations, the schema
        owners and the access section (the authors apply re-checks). A saved plan stores it;
        one whose digest no longer matches was edited and is refused."""
        body: dict[str, Any] = {"actions": [a.to_json() for a in self.actions],
                                "declarations": self.declarations_digest}
        if self.schema_owners:
            body["schema_owners"] = [c.to_json() for c in self.schema_owners]
        if self.access is not None:
            body["access"] = self.access
        return digest_of(body)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Plan:
        """A saved plan; raises ValueError, KeyError or TypeError when `d` is not one."""
        if d.get("format_version") != FORMAT_VERSION:
            raise ValueError(f"unsupported plan format_version {d.get('format_version')!r}")
        decl = d["declarations"]
        changes = d.get("yaml_changes")
        return cls(
            project=d["project"], declarations_digest=decl["digest"], git=GitInfo.from_json(decl.get("git")),
            scope=PlanScope.from_json(decl.get("scope") or {}),
            actions=[Action.from_json(a) for a in d["actions"]],
            errors=[PlanError.from_json(e) for e in d["errors"]],
            unmanaged=[Unmanaged.from_json(u) for u in d["unmanaged"]],
            warnings=list(d.get("warnings", [])),
            unchanged=int(d["summary"].get("unchanged", 0)),
            undeclared=[ViewId(v["catalog"], v["schema"], v["name"]) for v in d.get("undeclared", [])],
            drift=[Mismatch.from_json(m) for m in d.get("drift", [])],
            yaml_changes=[YamlChange.from_json(c) for c in changes] if changes is not None else None,
            access=d.get("access"),
            schema_owners=[SchemaOwnerChange.from_json(c) for c in d.get("schema_owners") or []],
            verification=d.get("verification"),
            tests=d.get("tests"),
            lineage=d.get("lineage"),
            engines=d.get("engines"),
        )
