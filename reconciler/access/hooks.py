"""The I/O edge plan, apply and validate call: read the policy (from the working
tree, or in a PR plan from the base ref), find who acts, run the pure check."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from reconciler.access import codeowners, gitauthors, guard
from reconciler.access.evaluate import Identity
from reconciler.access.load import ACCESS_FILE, from_texts, load
from reconciler.access.model import AccessPolicy
from reconciler.core.errors import Problem
from reconciler.core.gitinfo import GitInfo
from reconciler.core.model import ViewId, ViewSpec
from reconciler.plan.planner import Plan
from reconciler.source.config import CONFIG_NAME


def _config_rel(root: Path, config_path: Path) -> str:
    try:
        return config_path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return CONFIG_NAME


def policy_at(root: Path, config_path: Path, ref: str | None) -> AccessPolicy | None:
    """The policy in the working tree, or as it was at `ref`."""
    if ref is None:
        return load(root, config_path)
    cfg = _config_rel(root, config_path)
    access = str(Path(cfg).parent / ACCESS_FILE) if "/" in cfg else ACCESS_FILE
    return from_texts(f"{cfg}@{ref}", gitauthors.text_at(root, ref, cfg),
                      f"{access}@{ref}", gitauthors.text_at(root, ref, access))


def policy_files(root: Path, config_path: Path, existing: bool = True) -> list[str]:
    """viewsync.yaml and access.yaml (with existing=False: even if access.yaml was deleted)."""
    cfg = _config_rel(root, config_path)
    access = str(Path(cfg).parent / ACCESS_FILE) if "/" in cfg else ACCESS_FILE
    return [cfg] + ([access] if not existing or (config_path.parent / ACCESS_FILE).exists() else [])


def check_plan(plan: Plan, views: Mapping[ViewId, ViewSpec], root: Path, config_path: Path,
               actor: str | None, ref: str | None, base: str | None) -> None:
    """Add `not_permitted` errors and the `access` section to a fresh plan.

    In a PR plan (`base`) the policy in force is the base's, so a pull request cannot grant
    itself what it needs; the commit authors of each changed view file are checked too, and a
    change to the policy needs project OWNER for the actor and for whoever changed it."""
    who = gitauthors.actor(actor, root, ref)
    if base is None:
        policy = policy_at(root, config_path, ref)
        guard.record(plan, policy, guard.Who(who), guard.check(plan, views, policy, guard.Who(who)))
        return
    policy = policy_at(root, config_path, base)
    head_policy = policy_at(root, config_path, ref)
    changed = (policy.digest if policy else None) != (head_policy.digest if head_policy else None)
    files = ["views", *policy_files(root, config_path, existing=False)]
    by_file = gitauthors.authors_by_file(root, base, ref, files)
    policy_authors: list[Identity] = []
    if changed:
        for f in policy_files(root, config_path, existing=False):
            policy_authors += [a for a in by_file.get(f, []) if a not in policy_authors]
    people = guard.Who(who, {f: a for f, a in by_file.items() if f.startswith("views/")},
                       tuple(policy_authors), changed)
    guard.record(plan, policy, people, guard.check(plan, views, policy, people))


def check_apply(plan: Plan, views: Mapping[ViewId, ViewSpec], root: Path, config_path: Path,
                actor: str | None, audit_actor: str, state_url: str, git: GitInfo, kind: str = "apply") -> None:
    """Apply re-checks with the policy in force now, for the applying actor and the commit
    authors the plan was checked for; a refusal is audited (as a run of command `kind`) and raised."""
    policy = load(root, config_path)
    who = guard.Who(gitauthors.actor(actor, root), guard.authors_of(plan.access))
    found = guard.check(plan, views, policy, who)
    if found:
        from reconciler.state.store import StateStore  # only a refusal writes to the store

        state = StateStore(state_url)
        try:
            raise guard.refuse(state, plan, audit_actor, git, found, kind)
        finally:
            state.close()


def codeowners_text(root: Path, config_path: Path, files: list[str]) -> str | None:
    policy = load(root, config_path)
    if policy is None:
        return None
    return codeowners.render(policy, files, policy_files(root, config_path), gitauthors.prefix(root))


def codeowners_problem(root: Path, config_path: Path, files: list[str]) -> tuple[Problem | None, str | None]:
    """(an error if .github/CODEOWNERS is out of date, a warning if it is missing)."""
    want = codeowners_text(root, config_path, files)
    if want is None:
        return None, None
    path = gitauthors.git_top(root) / codeowners.CODEOWNERS_PATH
    rel = codeowners.CODEOWNERS_PATH
    if not path.exists():
        return None, f"{rel} does not exist; run `viewsync codeowners` so GitHub review enforces the access policy"
    if path.read_text(encoding="utf-8") != want:
        return Problem(rel, 1, 1, "", "out of date with the access policy; run `viewsync codeowners` and "
                       "commit the result"), None
    return None, None
