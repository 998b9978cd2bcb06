"""May this principal do this? Pure functions over an AccessPolicy.

Each action needs USE_CATALOG on its catalog and USE_SCHEMA on its schema, plus
CREATE_VIEW on the schema (create), ALTER_VIEW on the view (update, adopt) or
DROP_VIEW on the view (drop); a create or update also needs SELECT_VIEW on each
declared view its SQL reads. OWNER of an object implies every privilege on it
and below it, and USE_CATALOG / USE_SCHEMA on the objects that contain it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from reconciler.access.model import AccessPolicy, Privilege, Securable, norm
from reconciler.core.model import ViewId

_NAME_EMAIL = re.compile(r"^\s*(?P<name>[^<>]*?)\s*<(?P<email>[^<>\s]+)>\s*$")


@dataclass(frozen=True)
class Identity:
    """Who acts: one or more names (an e-mail address, a GitHub login) and how to call them."""

    label: str  # e.g. "actor bob", "commit author bob@example.com (1a2b3c4)"
    names: frozenset[str]

    @classmethod
    def of(cls, label: str, *names: str) -> Identity:
        found: set[str] = set()
        for name in names:
            m = _NAME_EMAIL.match(name)
            found.add(norm(m.group("email")) if m else norm(name))
        return cls(label, frozenset(n for n in found if n))


@dataclass(frozen=True)
class Denial:
    who: Identity
    privilege: Privilege
    on: str  # "view lake.sales.orders", "project analytics-views"

    @property
    def message(self) -> str:
        return f"{self.who.label} lacks {self.privilege} on {self.on}"


def principals(policy: AccessPolicy, who: Identity) -> frozenset[str]:
    """The identity's names plus every group that contains them, directly or through other groups."""
    found = set(who.names)
    changed = True
    while changed:
        changed = False
        for group in policy.groups.values():
            key = norm(group.name)
            if key not in found and any(norm(m) in found for m in group.members):
                found.add(key)
                changed = True
    return frozenset(found)


def is_project_owner(policy: AccessPolicy, who: Identity) -> bool:
    mine = principals(policy, who)
    return any(norm(o) in mine for o in policy.owners)


def holds(policy: AccessPolicy, who: Identity, privilege: Privilege, obj: Securable) -> bool:
    mine = principals(policy, who)
    if any(norm(o) in mine for o in policy.owners):
        return True
    for grant in policy.grants:
        if not any(norm(p) in mine for p in grant.to):
            continue
        owner = Privilege.OWNER in grant.privileges
        if grant.on.covers(obj) and (owner or privilege in grant.privileges):
            return True
        # Owning something inside a catalog or schema lets you reach it.
        if owner and privilege in (Privilege.USE_CATALOG, Privilege.USE_SCHEMA) and grant.on.within(obj):
            return True
    return False


def required(action: str, view: ViewId, reads: Iterable[ViewId] = ()) -> list[tuple[Privilege, Securable]]:
    """The privileges an action on `view` needs, in the order they are reported."""
    catalog = Securable.catalog_of(view.catalog)
    schema = Securable.schema_of(view.catalog, view.schema)
    target = Securable.view_of(view.catalog, view.schema, view.name)
    needs: list[tuple[Privilege, Securable]] = [(Privilege.USE_CATALOG, catalog), (Privilege.USE_SCHEMA, schema)]
    if action == "create":
        needs.append((Privilege.CREATE_VIEW, schema))
    elif action in ("update", "adopt"):
        needs.append((Privilege.ALTER_VIEW, target))
    elif action == "drop":
        needs.append((Privilege.DROP_VIEW, target))
    else:
        raise ValueError(f"unknown action {action!r}")
    if action != "drop":
        for other in sorted(set(reads)):
            if other == view:
                continue
            if other.catalog != view.catalog:
                needs.append((Privilege.USE_CATALOG, Securable.catalog_of(other.catalog)))
            if (other.catalog, other.schema) != (view.catalog, view.schema):
                needs.append((Privilege.USE_SCHEMA, Securable.schema_of(other.catalog, other.schema)))
            needs.append((Privilege.SELECT_VIEW, Securable.view_of(other.catalog, other.schema, other.name)))
    unique: list[tuple[Privilege, Securable]] = []
    for need in needs:
        if need not in unique:
            unique.append(need)
    return unique


def denials(policy: AccessPolicy | None, who: Identity, action: str, view: ViewId,
            reads: Iterable[ViewId] = ()) -> list[Denial]:
    """What `who` lacks for the action; no policy means everyone may do everything."""
    if policy is None:
        return []
    return [Denial(who, priv, str(obj)) for priv, obj in required(action, view, reads)
            if not holds(policy, who, priv, obj)]


def policy_change_denial(policy: AccessPolicy | None, who: Identity, project: str) -> Denial | None:
    """Changing the policy needs OWNER of the whole project (under the policy in force)."""
    if policy is None or is_project_owner(policy, who):
        return None
    return Denial(who, Privilege.OWNER, f"project {project}")
