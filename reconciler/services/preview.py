"""`viewsync preview up/down/list/gc`: preview environments, one per pull request.

`up` copies the views a branch creates or changes since its base, plus every declared view
that reads them, into the environment's preview schemas (`preview.schema_pattern`), SQL
rewritten to read the copies (reconciler.preview). The copies are written by the apply
machinery: one audited run of kind `preview` under the apply lock, each copy stamped with
the ownership marker and the preview marks (env, commit, expiry). The namespaces `up`
creates are recorded (reconciler.state.previews), so `down` removes exactly them and the
env's copies; nothing without the env's mark is ever changed or dropped."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from reconciler.core.errors import UserError
from reconciler.core.model import PREVIEW, PREVIEW_COMMIT, PREVIEW_EXPIRES, LiveView, ViewId, ViewSpec
from reconciler.preview.model import Copy, DownResult, EnvSummary, Step, UpResult

if TYPE_CHECKING:
    from reconciler.adapters.base import SchemaSnapshot
    from reconciler.apply.run import ApplyResult
    from reconciler.core.gitinfo import GitInfo
    from reconciler.plan.planner import Action
    from reconciler.source.declarations import Declarations
    from reconciler.state.previews import PreviewEnv, PreviewRegistry
    from reconciler.state.store import StateStore
    from reconciler.workspace import Workspace

OnAction = Callable[["Action", str, "str | None"], None]


@dataclass(frozen=True)
class UpRequest:
    env: str
    base: str | None = None  # git ref; default: the merge base with the branch's upstream
    ttl: str | None = None  # default: preview.ttl; given, it restarts the clock even at the same commit
    actor: str | None = None
    allow_dirty: bool = False
    lock_timeout: float = 0
    spark: bool = False  # verify the preview set with Spark and run its tests (also spark.verify in config)
    skip_tests: bool = False  # with Spark: do not run the preview set's view tests


@dataclass(frozen=True)
class DownRequest:
    env: str
    actor: str | None = None
    lock_timeout: float = 0


def _now() -> datetime:
    from reconciler.state.store import now

    return now()


def resolve_base(ws: Workspace, base: str | None) -> str:
    """The commit the branch is compared with: `base`, or the merge base of HEAD and its upstream.

    Raises:
        UserError: not a git checkout, an unknown ref, or no upstream to default to.
    """
    from reconciler.source import gitsrc

    if base is not None:
        if not base or base.startswith("-"):
            raise UserError(f"unknown git ref {base!r}")
        code, text = gitsrc.run_git(ws.root, "rev-parse", "--verify", "--quiet", f"{base}^{{commit}}")
        if code != 0 or not text.strip():
            raise UserError(f"--base {base}: unknown git ref")
        return text.strip()
    code, text = gitsrc.run_git(ws.root, "merge-base", "HEAD", "@{upstream}")
    if code != 0 or not text.strip():
        raise UserError("no --base given and the branch has no upstream to take the merge base with; "
                        "pass --base REF (e.g. --base origin/main)")
    return text.strip()


def _writable(ws: Workspace, catalog: str) -> bool:
    return ws.adapter(catalog).capabilities.writable


def _check_access(ws: Workspace, base: str, actor: str | None, views: Iterable[ViewId]) -> None:
    """CREATE_VIEW (with USE_CATALOG, USE_SCHEMA) on each view's own schema, under the policy
    of the base (a branch cannot grant itself a preview).

    Raises:
        UserError: the actor lacks a privilege (the first denials named).
    """
    from reconciler.access import gitauthors
    from reconciler.access.evaluate import denials
    from reconciler.access.hooks import policy_at

    policy = policy_at(ws.root, ws.config.path, base)
    if policy is None:
        return
    who = gitauthors.actor(actor, ws.root)
    found = [f"{d.message} (needed to preview {v})" for v in sorted(views) for d in denials(policy, who, "create", v)]
    if found:
        more = f"; and {len(found) - 3} more" if len(found) > 3 else ""
        raise UserError("not permitted: " + "; ".join(found[:3]) + more)


def _read(ws: Workspace, schemas: Iterable[tuple[str, str]]) -> dict[tuple[str, str], SchemaSnapshot]:
    return {(c, s): ws.adapter(c).fetch(s) for c, s in sorted(set(schemas))}


def _ours(live: LiveView, project: str, env: str) -> bool:
    """A copy of this environment: our ownership marker and this env's preview mark."""
    return live.writable and live.managed_by == project and live.marks.get(PREVIEW) == env


def _steps(result: ApplyResult) -> list[Step]:
    steps = [Step(a.action, a.view, "applied") for a in result.applied]
    steps += [Step(a.action, a.view, "failed", e) for a, e in result.failed]
    steps += [Step(a.action, a.view, "refused", e) for a, e in result.refused]
    steps += [Step(a.action, a.view, "skipped") for a in result.skipped]
    return steps


def _run(ws: Workspace, state: StateStore, actions: list[Action], decl_digest: str, git: GitInfo, who: str,
         lock_timeout: float, marks: dict[str, str], on_action: OnAction | None,
         on_note: Callable[[str], None] | None) -> ApplyResult:
    """The writes as one audited apply run of kind `preview`, under the apply lock."""
    from reconciler.apply.run import apply_plan
    from reconciler.plan.planner import Plan

    plan = Plan(project=ws.config.project, declarations_digest=decl_digest, git=git, actions=actions)
    return apply_plan(ws, plan, state, who, git, lock_timeout, on_action, events=None, on_note=on_note,
                      kind="preview", marks=marks)


class _EnvLock:
    """One `preview` command per environment at a time (the writes also take the apply lock)."""

    def __init__(self, state: StateStore, project: str, env: str, who: str, timeout: float) -> None:
        from reconciler.state.lockholder import holder_string
        from reconciler.state.store import new_run_id

        self.state, self.name, self.run_id = state, f"preview:{project}:{env}", new_run_id()
        self.holder, self.timeout = holder_string(who, "preview"), timeout

    def __enter__(self) -> None:
        self.state.acquire_lock(self.name, self.holder, self.run_id, wait_s=self.timeout)

    def __exit__(self, *exc: object) -> None:
        self.state.release_lock(self.name, self.run_id)


def _registry(state: StateStore) -> PreviewRegistry:
    from reconciler.state.previews import PreviewRegistry

    return PreviewRegistry(state.engine)


def plan_copies(ws: Workspace, env: str, base: str, head: dict[ViewId, ViewSpec],
                base_views: dict[ViewId, ViewSpec], notes: list[str]) -> tuple[list[Copy], dict[ViewId, ViewSpec]]:
    """The environment's copies and their specs (pure but for the catalogs' capabilities).

    Raises:
        UserError: a bad setting, a preview schema name too long, SQL that cannot be rewritten.
    """
    from reconciler.preview import copies as copies_mod
    from reconciler.preview import select

    settings = ws.config.preview
    target = settings.catalog
    if target is not None and target not in ws.config.catalogs:
        defined = ", ".join(sorted(ws.config.catalogs))
        raise UserError(f"preview.catalog {target!r}: unknown catalog (defined: {defined})")
    if target is not None and not _writable(ws, target):
        raise UserError(f"preview.catalog {target!r}: {ws.adapter(target).READ_ONLY_MESSAGE}")
    roots = select.changed(base_views, head)
    for catalog in sorted({v.catalog for v in roots if not _writable(ws, v.catalog)}):
        kind = ws.config.catalogs[catalog].type
        notes.append(f"catalog {catalog!r} ({kind}) is read-only: its changed views get no preview copy")
    members = select.preview_set(head, roots, lambda v: _writable(ws, v.catalog))
    ids = copies_mod.copy_ids([m.view for m in members], env, settings.schema_pattern, target)
    specs = {ids[m.view]: copies_mod.copy_spec(m.view, head[m.view], ids) for m in members}
    return [Copy(m.view, ids[m.view], m.reason) for m in members], specs


def _decide(ws: Workspace, env: str, copies: list[Copy], specs: dict[ViewId, ViewSpec],
            snaps: dict[tuple[str, str], SchemaSnapshot], marks: dict[str, str]) -> list[Action]:
    """Creates and updates of the copies (dependency order), then drops of the env's copies
    no longer wanted (reverse order).

    Raises:
        UserError: a copy's name is taken by anything that is not this env's copy, or a
            catalog cannot store a copy (every problem, one line each). Nothing is written.
    """
    from reconciler.adapters.base import SchemaSnapshot
    from reconciler.plan.planner import Action, Change, PlanOptions, decide_view, order_actions

    project = ws.config.project
    opts = PlanOptions(project=project)
    problems: list[str] = []
    writes: list[Action] = []
    for c in copies:
        adapter = ws.adapter(c.copy.catalog)
        snap = snaps[(c.copy.catalog, c.copy.schema)]
        if not snap.exists:  # the namespace is created before the writes
            snap = SchemaSnapshot(c.copy.catalog, c.copy.schema)
        live = snap.find(c.copy.name, adapter.capabilities.fold_names)
        if live is not None and not _ours(live, project, env):
            problems.append(f"{c.copy}: the name is taken by a view that is not a copy of preview env {env!r}; "
                            "it is never touched")
            continue
        if live is None and snap.has_table(c.copy.name, adapter.capabilities.fold_names):
            problems.append(f"{c.copy}: the name is taken by a table; it is never touched")
            continue
        decision = decide_view(c.copy, specs[c.copy], snap, adapter, opts)
        problems += [e.message for e in decision.errors]
        if decision.action is not None:
            writes.append(decision.action)
        elif not decision.errors and live is not None and any(live.marks.get(k) != v for k, v in marks.items()):
            changes = [Change(f"properties.{k}", live.marks.get(k), v) for k, v in sorted(marks.items())
                       if live.marks.get(k) != v]
            want = adapter.storable(c.copy, specs[c.copy], live)
            writes.append(Action("update", c.copy, adapter.capabilities.strategy, changes, live.fingerprint,
                                 want, live.spec))
    if problems:
        raise UserError(f"preview env {env!r} cannot be brought up, nothing was written:\n  " + "\n  ".join(problems))
    wanted = {c.copy for c in copies}
    drops = [_drop(ws, live) for snap in snaps.values() for live in snap.views.values()
             if live.id not in wanted and _ours(live, project, env)]
    ordered, _ = order_actions(writes, specs)
    drop_order, _ = order_actions(drops, {a.view: a.before for a in drops if a.before is not None})
    return ordered + list(reversed(drop_order))


def _drop(ws: Workspace, live: LiveView) -> Action:
    from reconciler.plan.planner import Action, Change

    return Action("drop", live.id, ws.adapter(live.id.catalog).capabilities.strategy,
                  [Change(f"representations.{r.dialect}", r.sql, None) for r in live.spec.representations],
                  live.fingerprint, None, live.spec)


def up(ws: Workspace, request: UpRequest, on_action: OnAction | None = None,
       on_note: Callable[[str], None] | None = None) -> UpResult:
    """Bring preview environment `request.env` to the branch's state: create or update the
    copies of the preview set, drop the env's copies no longer in it, create (and record)
    the namespaces they need, drop the env's namespaces no longer needed when empty.

    Args:
        ws: the repository, opened.
        request: the environment, base, TTL, actor and lock wait.
        on_action: each write's outcome as it happens.
        on_note: lines about the apply lock and repaired records.

    Returns:
        What was done: the copies (source -> copy), each write's outcome, the namespaces
        created and dropped, notes (read-only catalogs), the expiry and the run id.

    Raises:
        UserError: a bad env name or TTL, uncommitted declarations, a bad base, a refusal of
            the access policy, a copy name taken by something else, the lock held.
        ValidationFailed: the declarations (at HEAD or at the base) are bad.
        ViewsyncError: a catalog or the state store fails.
    """
    from reconciler.preview import names
    from reconciler.services.apply import check_clean
    from reconciler.source import gitsrc
    from reconciler.state.previews import PreviewEnv

    env = names.check_env(request.env)
    settings = ws.config.preview
    ttl = names.parse_ttl(request.ttl if request.ttl is not None else settings.ttl)
    names.check_pattern(settings.schema_pattern)
    check_clean(ws, request.allow_dirty)
    git = gitsrc.info(ws.root)
    if git.commit is None:
        raise UserError("preview needs a git repository with at least one commit (copies carry the commit)")
    base = resolve_base(ws, request.base)
    head = ws.declarations()
    base_decl = ws.declarations(gitsrc.files_at(ws.root, base))
    notes: list[str] = []
    copies, specs = plan_copies(ws, env, base, head.views, base_decl.views, notes)
    _check_access(ws, base, request.actor, [c.source for c in copies])
    if (request.spark or ws.config.spark.verify) and copies:
        verify_set(ws, env, head, {c.source for c in copies}, request.skip_tests)
    who = gitsrc.actor(request.actor, ws.root)
    project = ws.config.project
    state = ws.state()
    registry = _registry(state)
    with _EnvLock(state, project, env, who, request.lock_timeout):
        now = _now()
        rec = registry.get(project, env)
        same = rec is not None and rec.commit == git.commit and request.ttl is None
        expires = rec.expires_at if same and rec is not None else now + ttl
        result = UpResult(env, git.commit, base, expires, copies, notes=notes)
        marks = {PREVIEW: env, PREVIEW_COMMIT: git.commit, PREVIEW_EXPIRES: expires.isoformat(timespec="seconds")}
        wanted_schemas = {(c.copy.catalog, c.copy.schema) for c in copies}
        known = set(rec.schemas) if rec else set()
        snaps = _read(ws, wanted_schemas | known | {(v.catalog, v.schema) for v in (rec.views if rec else [])})
        actions = _decide(ws, env, copies, specs, snaps, marks)
        for catalog, schema in sorted(wanted_schemas):
            if (catalog, schema) in known or snaps[(catalog, schema)].exists:
                continue
            # The intent first, as apply's pending rows: a process killed right after the create
            # leaves a record, so `down` (which drops only empty namespaces) still removes it.
            registry.add_schema(project, env, catalog, schema)
            if ws.adapter(catalog).create_schema(schema, {PREVIEW: env}):
                known.add((catalog, schema))
                result.schemas_created.append((catalog, schema))
            else:  # someone else created it since it was read: not ours to drop
                registry.remove_schema(project, env, catalog, schema)
        run = None
        if actions:
            run = _run(ws, state, actions, head.digest([c.source for c in copies]), git, who,
                       request.lock_timeout, marks, on_action, on_note)
            result.run_id, result.steps = run.run_id, _steps(run)
        dropped = {s.view for s in result.steps if s.action == "drop" and s.outcome == "applied"}
        for catalog, schema in sorted(known - wanted_schemas):
            if ws.adapter(catalog).drop_schema(schema):
                known.discard((catalog, schema))
                result.schemas_dropped.append((catalog, schema))
        views = {c.copy for c in copies}
        if run is not None and not run.ok:  # keep what may still be there, for `down`
            views |= {v for v in (rec.views if rec else [])} - dropped
        registry.save(PreviewEnv(project, env, git.commit, base, who, rec.created_at if rec and rec.commit else now,
                                 now, expires, sorted(views), sorted(known)))
    return result


def verify_set(ws: Workspace, env: str, head: Declarations, sources: set[ViewId], skip_tests: bool) -> None:
    """Spark's analysis of the views the env copies (as the branch declares them, over the live
    tables) and their view tests, before anything is written.

    Raises:
        UserError: Spark finds an error or a test fails (every one, one line each).
        ViewsyncError: a catalog cannot be read or Spark cannot start.
    """
    from reconciler.services import viewtests
    from reconciler.verify import planning
    from reconciler.verify import sources as vsources
    from reconciler.verify.analyze import Analysis, World

    snapshots = ws.fetch(sorted(ws.config.catalogs), {(v.catalog, v.schema) for v in head.views})
    world = World(head.views, head.origin, planning.file_texts(ws.root, head, None), ws.config.catalogs,
                  vsources.read(ws.root), planning.live_views(snapshots), planning.table_schemas_from(ws.adapter))
    result = Analysis(world, planning.settings_of(ws.config)).run(sources)
    problems = [f.message for f in result.errors()]
    if not skip_tests:
        run = viewtests.run(ws, head, viewtests.selected(head, views=sources), None)
        problems += [f"test {r.name!r} of {r.view} failed at {r.where}: {r.message}" for r in run.failures()]
    if problems:
        raise UserError(f"preview env {env!r}: the preview set does not pass Spark, nothing was written:\n  "
                        + "\n  ".join(problems))


def _env_schemas(ws: Workspace, env: str, rec: PreviewEnv | None) -> set[tuple[str, str]]:
    """Where the env's copies may be: what the registry recorded, and, when it recorded
    nothing, every schema of the writable catalogs matching the env's schema pattern."""
    from reconciler.preview import names

    found = set(rec.schemas) | {(v.catalog, v.schema) for v in rec.views} if rec else set()
    if rec is None:
        match = names.schema_matcher(env, ws.config.preview.schema_pattern)
        for catalog in sorted(ws.config.catalogs):
            if _writable(ws, catalog):
                found |= {(catalog, s) for s in ws.adapter(catalog).list_schemas() if match.match(s)}
    return found


def down(ws: Workspace, request: DownRequest, on_action: OnAction | None = None,
         on_note: Callable[[str], None] | None = None) -> DownResult:
    """Remove preview environment `request.env`: drop every view carrying its mark (and our
    ownership marker) in its schemas, then the namespaces it created, when empty.

    Args:
        ws: the repository, opened.
        request: the environment, actor and lock wait.
        on_action: each drop's outcome as it happens.
        on_note: lines about the apply lock and repaired records.

    Returns:
        The drops, the namespaces dropped and those left (not empty), and whether anything
        of the env was found.

    Raises:
        UserError: a bad env name, the lock held.
        ViewsyncError: a catalog or the state store fails.
    """
    from reconciler.preview import names
    from reconciler.source import gitsrc

    env = names.check_env(request.env)
    project = ws.config.project
    who = gitsrc.actor(request.actor, ws.root)
    state = ws.state()
    registry = _registry(state)
    result = DownResult(env)
    with _EnvLock(state, project, env, who, request.lock_timeout):
        rec = registry.get(project, env)
        snaps = _read(ws, _env_schemas(ws, env, rec))
        drops = [_drop(ws, live) for snap in snaps.values() for live in snap.views.values()
                 if _ours(live, project, env)]
        if rec is None and not drops:
            result.found = False
            return result
        from reconciler.plan.planner import order_actions

        ordered, _ = order_actions(drops, {a.view: a.before for a in drops if a.before is not None})
        if ordered:
            run = _run(ws, state, list(reversed(ordered)), "", gitsrc.info(ws.root), who, request.lock_timeout, {},
                       on_action, on_note)
            result.run_id, result.steps = run.run_id, _steps(run)
        if not result.ok:
            return result  # recorded as it was: a re-run converges
        for catalog, schema in sorted(rec.schemas if rec else []):
            if ws.adapter(catalog).drop_schema(schema):
                result.schemas_dropped.append((catalog, schema))
            elif snaps.get((catalog, schema)) is None or snaps[(catalog, schema)].exists:
                result.schemas_kept.append((catalog, schema))
        if result.schemas_kept:
            result.notes.append("left in place, not empty: " + ", ".join(f"{c}.{s}" for c, s in result.schemas_kept))
        registry.delete(project, env)
    return result


def list_envs(ws: Workspace) -> list[EnvSummary]:
    """The project's preview environments as recorded (nothing is created when there are none).

    Returns:
        Each environment with its commit, actor, times, copies and namespaces, by name.

    Raises:
        ViewsyncError: the state store cannot be read.
    """
    state = ws.state(create=False)
    if not state.ready:
        return []
    return [EnvSummary(r.env, r.commit, r.actor, r.created_at, r.updated_at, r.expires_at, tuple(r.views),
                       tuple(r.schemas)) for r in _registry(state).all(ws.config.project)]


def gc(ws: Workspace, actor: str | None = None, on_action: OnAction | None = None,
       now: datetime | None = None) -> list[DownResult]:
    """`down` for every environment whose expiry has passed; the others are not touched.

    Args:
        ws: the repository, opened.
        actor: who runs it (default $GITHUB_ACTOR, then the git user).
        on_action: each drop's outcome as it happens.
        now: the time to compare expiries with (default: now).

    Returns:
        One result per expired environment.

    Raises:
        ViewsyncError: a catalog or the state store fails.
    """
    when = now or _now()
    return [down(ws, DownRequest(e.env, actor), on_action) for e in list_envs(ws) if e.expires_at <= when]
