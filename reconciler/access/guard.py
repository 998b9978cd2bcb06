"""The access check as plan and apply run it.

`check` is pure: a plan, the declared specs, the policy and who acts in, the
denials out. `record` writes them into the plan (`not_permitted` errors and the
`access` section). `refuse` is apply's edge: refused actions get audit rows.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from reconciler.access.evaluate import Denial, Identity, denials, holds, policy_change_denial
from reconciler.access.model import AccessPolicy, Privilege, Securable
from reconciler.core import sql as vsql
from reconciler.core.errors import UserError
from reconciler.core.gitinfo import GitInfo
from reconciler.core.model import ViewId, ViewSpec
from reconciler.core.outcome import Outcome, RunOutcome
from reconciler.plan.model import SchemaOwnerChange
from reconciler.plan.planner import Action, Plan, PlanError, PlanErrorCode, dependencies

if TYPE_CHECKING:  # a plan checks access without opening (or importing) the state store
    from reconciler.state.store import StateStore

NOT_PERMITTED = PlanErrorCode.NOT_PERMITTED
NO_POLICY = "no access policy: everyone may change every view"


class NotPermitted(UserError):
    pass


@dataclass(frozen=True)
class Who:
    """Everyone the plan is checked for: the actor, and in a PR plan the commit authors."""

    actor: Identity
    authors: Mapping[str, list[Identity]] = field(default_factory=dict)  # view file -> authors
    policy_authors: tuple[Identity, ...] = ()  # authors of commits that changed the policy
    policy_changed: bool = False


def view_files(view: ViewId) -> tuple[str, str]:
    base = f"views/{view.catalog}/{view.schema}"
    return base + ".yaml", base + ".yml"


def reads(view: ViewId, spec: ViewSpec, by_name: Mapping[str, list[ViewId]]) -> set[ViewId]:
    """Declared views that `spec`'s SQL reads. Only views named like a referenced table are
    offered to the resolver, so this costs per reference, not per declared view."""
    names = {parts[-1].lower() for rep in spec.representations
             for parts in vsql.referenced_tables(rep.sql, rep.dialect) if parts}
    candidates = [v for n in names for v in by_name.get(n, ())]
    return dependencies(view, spec, candidates) if candidates else set()


Subject = Action | SchemaOwnerChange | None  # what a denial blocks (None: the policy change)


def check(plan: Plan, views: Mapping[ViewId, ViewSpec], policy: AccessPolicy | None,
          who: Who) -> list[tuple[Subject, Denial]]:
    """Every missing privilege, for the actor and (per view file) the commit authors."""
    if policy is None:
        return []
    found: list[tuple[Subject, Denial]] = []
    if who.policy_changed:
        for person in (who.actor, *who.policy_authors):
            d = policy_change_denial(policy, person, plan.project)
            if d is not None and all(d != x for _, x in found):
                found.append((None, d))
    by_name: dict[str, list[ViewId]] = {}
    for vid in views:
        by_name.setdefault(vid.name.lower(), []).append(vid)
    for action in plan.actions:
        spec = action.desired
        read = reads(action.view, spec, by_name) if spec is not None else set()
        people = [who.actor]
        for f in view_files(action.view):
            people += [a for a in who.authors.get(f, []) if a not in people]
        for person in people:
            found += [(action, d) for d in denials(policy, person, action.action, action.view, read)]
    for change in plan.schema_owners:  # setting a schema's owner needs OWNER of the schema
        people = [who.actor]
        for f in view_files(ViewId(change.catalog, change.schema, "")):
            people += [a for a in who.authors.get(f, []) if a not in people]
        found += [(change, d) for person in people for d in schema_owner_denials(policy, person, change)]
    return found


def schema_owner_denials(policy: AccessPolicy, who: Identity, change: SchemaOwnerChange) -> list[Denial]:
    schema = Securable.schema_of(change.catalog, change.schema)
    return [] if holds(policy, who, Privilege.OWNER, schema) else [Denial(who, Privilege.OWNER, str(schema))]


def summary(policy: AccessPolicy | None, who: Who) -> dict[str, Any]:
    """The plan's `access` section: which policy, checked for whom (apply re-checks the same people)."""
    if policy is None:
        return {"policy": None, "note": NO_POLICY}
    authors = {f: [{"label": a.label, "names": sorted(a.names)} for a in people]
               for f, people in sorted(who.authors.items()) if people}
    return {"policy": policy.source, "policy_digest": policy.digest,
            "actor": {"label": who.actor.label, "names": sorted(who.actor.names)},
            "authors": authors, "policy_changed": who.policy_changed}


def _needed_for(subject: Subject) -> str:
    if isinstance(subject, Action):
        return f"needed to {subject.action} {subject.view}"
    if isinstance(subject, SchemaOwnerChange):
        return f"needed to set the owner of schema {subject.catalog}.{subject.schema}"
    return "needed to change the access policy"


def record(plan: Plan, policy: AccessPolicy | None, who: Who, found: list[tuple[Subject, Denial]]) -> None:
    plan.access = summary(policy, who)
    for subject, d in found:
        plan.errors.append(PlanError(NOT_PERMITTED, f"not permitted: {d.message} ({_needed_for(subject)})",
                                     subject.view if isinstance(subject, Action) else None))


def authors_of(saved: Mapping[str, Any] | None) -> dict[str, list[Identity]]:
    """The commit authors a saved plan was checked for."""
    out: dict[str, list[Identity]] = {}
    for f, people in ((saved or {}).get("authors") or {}).items():
        out[f] = [Identity(p["label"], frozenset(p["names"])) for p in people]
    return out


def refuse(state: StateStore, plan: Plan, actor: str, git: GitInfo,
           found: list[tuple[Subject, Denial]], kind: str = "apply") -> NotPermitted:
    """Record a refused apply: a run of command `kind` with outcome 'refused' and one audit row
    per action ('refused' with the reasons, or 'skipped'). Returns the error to raise."""
    from reconciler.state.store import PendingAction  # opened only to record a refusal

    # Never marked running: a running apply is one that holds the lock (reconciler.apply.repair).
    run_id = state.start_run(plan.project, kind, actor, git, plan.digest(), plan.declarations_digest,
                             outcome=RunOutcome.REFUSED)
    reasons: dict[int, list[str]] = {}
    general = [d.message for a, d in found if a is None]
    for subject, d in found:
        if isinstance(subject, Action):
            reasons.setdefault(id(subject), []).append(d.message)
    rows = []
    for seq, action in enumerate(plan.actions):
        pending = PendingAction(run_id, seq, actor, action.action, action.view,
                                action.before.canonical() if action.before is not None else None,
                                action.desired.canonical() if action.desired is not None else None,
                                None, None, [c.to_json() for c in action.changes], git)
        mine = reasons.get(id(action), []) + general
        rows.append((pending, Outcome.REFUSED, "not permitted: " + "; ".join(mine)) if mine
                    else (pending, Outcome.SKIPPED, "not attempted: the apply was refused"))
    state.record_unattempted(rows)
    messages = [d.message for _, d in found]
    state.finish_run(run_id, RunOutcome.REFUSED, {"reason": NOT_PERMITTED, "details": messages})
    return NotPermitted("not permitted, nothing was applied:\n  " + "\n  ".join(dict.fromkeys(messages))
                        + f"\n(refusal recorded as run {run_id})")
