"""Schema owners: a view file's top-level `owner` is its schema's owner, written where
the catalog keeps one (HMS database owner, Iceberg namespace property `owner`).

Only declared owners are compared, so schemas nobody declares an owner for cost no catalog
call. `diff` is pure; `read`/`write` are the adapter edge; `apply` records an audit row per
change, as actions of the apply's run (under its lock, before the run is finished).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from reconciler.adapters.base import AdapterError, CatalogAdapter
from reconciler.core.gitinfo import GitInfo
from reconciler.core.model import ViewId
from reconciler.core.outcome import Outcome
from reconciler.core.secrets import redact
from reconciler.plan.model import SchemaOwnerChange

if TYPE_CHECKING:  # planning owners opens no state store (nor imports SQLAlchemy)
    from reconciler.state.store import StateStore

AUDIT_ACTION = "schema_owner"


def diff(declared: Mapping[tuple[str, str], str],
         live: Mapping[tuple[str, str], str | None]) -> list[SchemaOwnerChange]:
    """Changes that make each declared schema owner true (schemas not in `live` are skipped:
    missing schemas are reported by the view plan)."""
    return [SchemaOwnerChange(c, s, live[(c, s)], owner) for (c, s), owner in sorted(declared.items())
            if (c, s) in live and live[(c, s)] != owner]


def plan_changes(declared: Mapping[tuple[str, str], str], adapter_of: Callable[[str], CatalogAdapter],
                 catalogs: set[str]) -> tuple[list[SchemaOwnerChange], list[str]]:
    """(changes, warnings): read the live owner of every schema with a declared owner."""
    live: dict[tuple[str, str], str | None] = {}
    warnings: list[str] = []
    for (catalog, schema), owner in sorted(declared.items()):
        if catalog not in catalogs:
            continue
        adapter = adapter_of(catalog)
        if not adapter.KEEPS_SCHEMA_OWNER:
            warnings.append(f"schema {catalog}.{schema}: catalog {catalog!r} ({adapter.kind}) keeps no schema owner; "
                            f"the declared owner {owner!r} is not written")
            continue
        try:
            live[(catalog, schema)] = adapter.read_schema_owner(schema)
        except LookupError:  # schema missing: the view plan says so
            continue
    return diff(declared, live), warnings


def apply(changes: list[SchemaOwnerChange], adapter_of: Callable[[str], CatalogAdapter], state: StateStore,
          run_id: str, first_seq: int, actor: str, git: GitInfo) -> list[str]:
    """Write each owner (re-read first: a changed owner is not overwritten); returns the errors."""
    from reconciler.state.store import Finish, PendingAction

    errors: list[str] = []
    for seq, ch in enumerate(changes, start=first_seq):
        schema_row = ViewId(ch.catalog, ch.schema, "")  # audit rows name a view; a schema's has no name
        (audit_id,) = state.audit_starts([PendingAction(
            run_id, seq, actor, AUDIT_ACTION, schema_row, {"owner": ch.before}, {"owner": ch.after}, None, None,
            [{"field": "owner", "before": ch.before, "after": ch.after}], git)])
        adapter = adapter_of(ch.catalog)
        try:
            now = adapter.read_schema_owner(ch.schema)
            if now != ch.before:
                raise AdapterError(f"schema {ch.catalog}.{ch.schema}: owner changed in the catalog since the plan "
                                   f"was made ({ch.before!r} -> {now!r}); run `viewsync plan` again")
            adapter.write_schema_owner(ch.schema, ch.after)
        except (AdapterError, LookupError) as err:
            message = redact(str(err))
            state.finish_actions([Finish(audit_id, Outcome.FAILED, message)])
            errors.append(message)
            continue
        state.finish_actions([Finish(audit_id, Outcome.APPLIED)])
    return errors
