"""State store (SQLAlchemy; SQLite by default, PostgreSQL in production):
runs, one audit row per attempted action, one version row per applied change,
and the apply lock."""

from __future__ import annotations

import contextlib
import json
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from reconciler.core.errors import UserError
from reconciler.core.gitinfo import GitInfo as GitInfo  # re-exported: runs record it
from reconciler.core.model import ViewId
from reconciler.core.outcome import Outcome as Outcome  # re-exported: the records speak it
from reconciler.core.outcome import RunOutcome as RunOutcome
from reconciler.core.secrets import redact
from reconciler.db.engines import create_engine, ensure_tables, has_tables, insert_returning_ids
from reconciler.state.lockholder import is_dead

metadata = sa.MetaData()

runs = sa.Table(
    "vs_runs", metadata,
    sa.Column("run_id", sa.String(36), primary_key=True),
    sa.Column("project", sa.String(255), nullable=False),
    sa.Column("command", sa.String(32), nullable=False),
    sa.Column("actor", sa.String(255), nullable=False),
    sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("finished_at", sa.DateTime(timezone=True)),
    sa.Column("git_commit", sa.String(64)),
    sa.Column("git_ref", sa.String(255)),
    sa.Column("git_author", sa.String(255)),
    sa.Column("plan_digest", sa.String(80)),
    sa.Column("declarations_digest", sa.String(80)),
    sa.Column("outcome", sa.String(16), nullable=False),  # running | success | failed | refused
    sa.Column("summary", sa.Text),
)

audit = sa.Table(
    "vs_audit", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("run_id", sa.String(36), nullable=False, index=True),
    sa.Column("seq", sa.Integer, nullable=False),
    sa.Column("at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("actor", sa.String(255), nullable=False),
    sa.Column("action", sa.String(16), nullable=False),
    sa.Column("catalog", sa.String(255), nullable=False),
    sa.Column("schema_name", sa.String(255), nullable=False),
    sa.Column("view_name", sa.String(255), nullable=False),
    sa.Column("before_spec", sa.Text),
    sa.Column("after_spec", sa.Text),
    sa.Column("before_digest", sa.String(80)),
    sa.Column("after_digest", sa.String(80)),
    sa.Column("changes", sa.Text),
    sa.Column("outcome", sa.String(16), nullable=False),  # pending | applied | failed | refused | skipped | unknown
    sa.Column("error", sa.Text),
    sa.Column("git_commit", sa.String(64)),
    sa.Column("git_ref", sa.String(255)),
    sa.Column("git_author", sa.String(255)),
)

versions = sa.Table(
    "vs_versions", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("catalog", sa.String(255), nullable=False),
    sa.Column("schema_name", sa.String(255), nullable=False),
    sa.Column("view_name", sa.String(255), nullable=False),
    sa.Column("version", sa.Integer, nullable=False),
    sa.Column("action", sa.String(16), nullable=False),
    sa.Column("spec", sa.Text),
    sa.Column("digest", sa.String(80)),
    sa.Column("changes", sa.Text),
    sa.Column("at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("actor", sa.String(255), nullable=False),
    sa.Column("git_commit", sa.String(64)),
    sa.Column("run_id", sa.String(36), nullable=False),
    sa.UniqueConstraint("catalog", "schema_name", "view_name", "version", name="uk_vs_versions"),
)

locks = sa.Table(
    "vs_locks", metadata,
    sa.Column("name", sa.String(255), primary_key=True),
    sa.Column("holder", sa.String(255), nullable=False),
    sa.Column("run_id", sa.String(36), nullable=False),
    sa.Column("acquired_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
)


# The per-action statements, built once (a statement built per call costs more to compile than to run).
_INSERT_AUDIT = audit.insert()
_FINISH_AUDIT = (audit.update().where(audit.c.id == sa.bindparam("audit_id"))
                 .values(outcome=sa.bindparam("outcome"), error=sa.bindparam("error")))
_LAST_VERSIONS = (
    sa.select(versions.c.catalog, versions.c.schema_name, versions.c.view_name,
              sa.func.max(versions.c.version).label("version"))
    .where(versions.c.catalog == sa.bindparam("catalog"), versions.c.schema_name == sa.bindparam("schema_name"),
           versions.c.view_name.in_(sa.bindparam("names", expanding=True)))
    .group_by(versions.c.catalog, versions.c.schema_name, versions.c.view_name))
_INSERT_VERSION = versions.insert()


def new_run_id() -> str:
    return str(uuid.uuid4())


def now() -> datetime:
    return datetime.now(UTC)


def _aware(value: datetime) -> datetime:
    # SQLite gives naive datetimes back; we only ever store UTC.
    return value if value.tzinfo else value.replace(tzinfo=UTC)


class LockHeld(UserError):
    pass


VIEW_ACTIONS = ("create", "update", "adopt", "drop")  # audit actions that write a version row
LOCKED_COMMANDS = ("apply", "preview", "revert")  # runs that write views, each under the apply lock


@dataclass(frozen=True)
class RecordTexts:
    """An action's desired spec and changes as its audit row and version row store them
    (JSON with sorted keys): encoded once per action for both rows."""

    after: str | None
    changes: str

    @classmethod
    def of(cls, after: dict[str, Any] | None, changes: list[dict[str, Any]]) -> RecordTexts:
        return cls(json.dumps(after, sort_keys=True) if after is not None else None,
                   json.dumps(changes, sort_keys=True))


@dataclass(frozen=True)
class VersionRecord:
    """A version row to write: one per applied change. `texts`: `spec` and `changes`
    encoded already (by the action's audit row); encoded here when None."""

    run_id: str
    view: ViewId
    action: str
    spec: dict[str, Any] | None
    digest: str | None
    changes: list[dict[str, Any]]
    actor: str
    git_commit: str | None
    texts: RecordTexts | None = None

    def encoded(self) -> RecordTexts:
        return self.texts or RecordTexts.of(self.spec, self.changes)


@dataclass(frozen=True)
class PendingAction:
    """An audit row to write before the catalog is touched (outcome 'pending'). `texts`:
    `after` and `changes` encoded already (shared with the version row); encoded here when None."""

    run_id: str
    seq: int
    actor: str
    action: str
    view: ViewId
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    before_digest: str | None
    after_digest: str | None
    changes: list[dict[str, Any]]
    git: GitInfo
    texts: RecordTexts | None = None

    def row(self) -> dict[str, Any]:
        texts = self.texts or RecordTexts.of(self.after, self.changes)
        return {
            "run_id": self.run_id, "seq": self.seq, "at": now(), "actor": self.actor, "action": self.action,
            "catalog": self.view.catalog, "schema_name": self.view.schema, "view_name": self.view.name,
            "before_spec": json.dumps(self.before, sort_keys=True) if self.before is not None else None,
            "after_spec": texts.after,
            "before_digest": self.before_digest, "after_digest": self.after_digest,
            "changes": texts.changes, "outcome": Outcome.PENDING, "error": None,
            "git_commit": self.git.commit, "git_ref": self.git.ref, "git_author": self.git.author}


@dataclass(frozen=True)
class Finish:
    """How a begun action ended, with its version row when it applied a change."""

    audit_id: int
    outcome: Outcome
    error: str | None = None
    version: VersionRecord | None = None


class StateStore:
    def __init__(self, url: str, create: bool = True) -> None:
        """create=False opens the store for reading only: nothing is created (no
        SQLite file, no tables) and an absent store reads as empty."""
        self.url = url
        try:
            self.engine = create_engine(url)
            if create:
                ensure_tables(metadata, self.engine)
                self.ready = True
            else:
                self.ready = has_tables(metadata.tables, self.engine)
        except (SQLAlchemyError, OSError) as err:
            detail = redact(str(getattr(err, "orig", None) or err)).strip().splitlines()
            raise UserError(f"cannot open the state store: {detail[0] if detail else type(err).__name__}") from None
        # One transaction at a time per process on SQLite, should threads share this store:
        # SQLite takes one writer at a time, and a read-then-write transaction racing another
        # in the same process fails at once (apply itself records on one thread).
        self._serial = threading.Lock() if self.engine.dialect.name == "sqlite" else contextlib.nullcontext()

    @contextlib.contextmanager
    def _begin(self) -> Iterator[Connection]:
        with self._serial, self.engine.begin() as conn:
            yield conn

    def close(self) -> None:
        self.engine.dispose()

    # ------------------------------------------------------------------ runs
    def start_run(self, project: str, command: str, actor: str, git: GitInfo,
                  plan_digest: str | None, declarations_digest: str | None, run_id: str | None = None,
                  outcome: RunOutcome = RunOutcome.RUNNING) -> str:
        run_id = run_id or new_run_id()
        with self._begin() as conn:
            conn.execute(runs.insert().values(
                run_id=run_id, project=project, command=command, actor=actor, started_at=now(),
                git_commit=git.commit, git_ref=git.ref, git_author=git.author, plan_digest=plan_digest,
                declarations_digest=declarations_digest, outcome=outcome))
        return run_id

    def finish_run(self, run_id: str, outcome: RunOutcome, summary: dict[str, Any],
                   also: Callable[[Connection], None] | None = None) -> None:
        """`also` writes more in the same transaction (the event outbox)."""
        with self._begin() as conn:
            conn.execute(runs.update().where(runs.c.run_id == run_id).values(
                finished_at=now(), outcome=outcome, summary=json.dumps(summary, sort_keys=True)))
            if also is not None:
                also(conn)

    # ----------------------------------------------------------------- audit
    def audit_starts(self, pending: list[PendingAction],
                     also: Callable[[Connection], None] | None = None) -> list[int]:
        """The pending audit rows of actions about to touch the catalog, in one transaction
        (one statement where the store returns the ids of a multi-row insert), so a crash
        leaves a 'pending' trace: their ids, in order. `also` writes more in the same
        transaction (the event outbox)."""
        rows = [p.row() for p in pending]
        with self._begin() as conn:
            ids = insert_returning_ids(conn, _INSERT_AUDIT, audit.c.id, rows)
            if also is not None:
                also(conn)
        return ids

    def record_unattempted(self, actions: list[tuple[PendingAction, Outcome, str]]) -> None:
        """Audit rows of actions never begun (skipped, or refused before any write), each
        with its outcome and why, in one transaction."""
        if actions:
            with self._begin() as conn:
                conn.execute(_INSERT_AUDIT, [{**p.row(), "outcome": outcome, "error": redact(error)}
                                             for p, outcome, error in actions])

    def finish_actions(self, finishes: list[Finish],
                       also: Callable[[Connection], None] | None = None) -> list[int | None]:
        """The state transaction after the catalog calls: each audit outcome, for an applied
        change its version row, and `also` (the event outbox) commit together, so a kill
        leaves either 'pending' rows (repaired by the next run) or all of them. Each
        statement runs once for all of them. Returns the version numbers written (None
        where no version row), in order. One thread records a run, under the apply lock:
        no other writer takes a version number meanwhile."""
        rows = [{"audit_id": f.audit_id, "outcome": f.outcome, "error": redact(f.error) if f.error else None}
                for f in finishes]
        records = [f.version for f in finishes if f.version is not None]
        with self._begin() as conn:
            conn.execute(_FINISH_AUDIT, rows)
            numbers = iter(self._insert_versions(conn, records))
            if also is not None:
                also(conn)
        return [next(numbers) if f.version is not None else None for f in finishes]

    def audit_rows(self, view: ViewId | None = None, since: datetime | None = None,
                   run_id: str | None = None, limit: int | None = None) -> list[dict[str, Any]]:
        # each row with its run's outcome: a run that died shows `interrupted` (once repaired) or
        # `running` beside rows that may all read `applied`; and its command (apply | preview | revert)
        q = (sa.select(audit, runs.c.outcome.label("run_outcome"), runs.c.command.label("run_command"))
             .select_from(audit.outerjoin(runs, runs.c.run_id == audit.c.run_id)).order_by(audit.c.id))
        if view is not None:
            q = q.where(audit.c.catalog == view.catalog, audit.c.schema_name == view.schema,
                        audit.c.view_name == view.name)
        if since is not None:
            q = q.where(audit.c.at >= since)
        if run_id is not None:
            q = q.where(audit.c.run_id.like(run_id + "%"))
        if limit:
            q = q.limit(limit)
        if not self.ready:
            return []
        with self.engine.connect() as conn:
            return [dict(r._mapping) for r in conn.execute(q)]

    # -------------------------------------------------------------- versions
    def record_version(self, run_id: str, view: ViewId, action: str, spec: dict[str, Any] | None,
                       digest: str | None, changes: list[dict[str, Any]], actor: str,
                       git_commit: str | None) -> int:
        record = VersionRecord(run_id, view, action, spec, digest, changes, actor, git_commit)
        with self._begin() as conn:
            return self._insert_versions(conn, [record])[0]

    @staticmethod
    def _insert_versions(conn: sa.Connection, records: list[VersionRecord]) -> list[int]:
        """Insert each record as the next version of its view: the numbers, in order.
        The last numbers are read in one statement per schema, the rows inserted in one."""
        if not records:
            return []
        by_schema: dict[tuple[str, str], set[str]] = {}
        for v in records:
            by_schema.setdefault((v.view.catalog, v.view.schema), set()).add(v.view.name)
        last: dict[tuple[str, str, str], int] = {}
        for (catalog, schema), names in by_schema.items():
            for row in conn.execute(_LAST_VERSIONS, {"catalog": catalog, "schema_name": schema,
                                                     "names": sorted(names)}):
                last[(row.catalog, row.schema_name, row.view_name)] = int(row.version or 0)
        numbers, rows = [], []
        for v in records:
            key = (v.view.catalog, v.view.schema, v.view.name)
            last[key] = number = last.get(key, 0) + 1  # a view twice in one batch takes two numbers
            numbers.append(number)
            texts = v.encoded()
            rows.append({
                "catalog": v.view.catalog, "schema_name": v.view.schema, "view_name": v.view.name,
                "version": number, "action": v.action, "spec": texts.after,
                "digest": v.digest, "changes": texts.changes, "at": now(),
                "actor": v.actor, "git_commit": v.git_commit, "run_id": v.run_id})
        conn.execute(_INSERT_VERSION, rows)
        return numbers

    # ---------------------------------------------------------------- repair
    def dead_runs(self, project: str, current: str) -> list[dict[str, Any]]:
        """Apply (preview, revert) runs still marked running. Called under the apply lock, which
        every running apply holds: they are dead."""
        q = (sa.select(runs).where(runs.c.project == project, runs.c.command.in_(LOCKED_COMMANDS),
                                   runs.c.outcome == RunOutcome.RUNNING, runs.c.run_id != current)
             .order_by(runs.c.started_at))
        with self.engine.connect() as conn:
            return [dict(r._mapping) for r in conn.execute(q)]

    def unfinished_actions(self, run_id: str) -> list[dict[str, Any]]:
        """Audit rows of a run left pending, and applied rows without their version row."""
        has_version = sa.exists().where(
            versions.c.run_id == audit.c.run_id, versions.c.catalog == audit.c.catalog,
            versions.c.schema_name == audit.c.schema_name, versions.c.view_name == audit.c.view_name)
        view_action = audit.c.action.in_(VIEW_ACTIONS)  # other rows (schema owners) have no version rows
        q = (sa.select(audit).where(audit.c.run_id == run_id, sa.or_(
            audit.c.outcome == Outcome.PENDING, sa.and_(audit.c.outcome == Outcome.APPLIED, view_action,
                                                       ~has_version)))
            .order_by(audit.c.seq))
        with self.engine.connect() as conn:
            return [dict(r._mapping) for r in conn.execute(q)]

    def versions_of(self, view: ViewId) -> list[dict[str, Any]]:
        q = (sa.select(versions).where(versions.c.catalog == view.catalog,
                                       versions.c.schema_name == view.schema,
                                       versions.c.view_name == view.name).order_by(versions.c.version))
        if not self.ready:
            return []
        with self.engine.connect() as conn:
            return [dict(r._mapping) for r in conn.execute(q)]

    def last_versions(self, project_catalogs: list[str]) -> dict[ViewId, dict[str, Any]]:
        """Latest version row of every view we ever wrote in these catalogs, with the command
        of its run (`run_command`: apply, preview, revert)."""
        sub = (sa.select(versions.c.catalog, versions.c.schema_name, versions.c.view_name,
                         sa.func.max(versions.c.version).label("v"))
               .where(versions.c.catalog.in_(project_catalogs))
               .group_by(versions.c.catalog, versions.c.schema_name, versions.c.view_name).subquery())
        q = sa.select(versions, runs.c.command.label("run_command")).join(sub, sa.and_(
            versions.c.catalog == sub.c.catalog, versions.c.schema_name == sub.c.schema_name,
            versions.c.view_name == sub.c.view_name, versions.c.version == sub.c.v)).outerjoin(
            runs, runs.c.run_id == versions.c.run_id)
        if not self.ready:
            return {}
        with self.engine.connect() as conn:
            return {ViewId(r.catalog, r.schema_name, r.view_name): dict(r._mapping) for r in conn.execute(q)}

    # ------------------------------------------------------------------ lock
    def acquire_lock(self, name: str, holder: str, run_id: str, ttl_s: float = 3600,
                     wait_s: float = 0) -> str | None:
        """Take the lock, waiting up to wait_s. A lock whose holder is provably dead (a
        process of this host that no longer runs, see reconciler.state.lockholder) is taken
        over: returns the line saying so, else None. Raises LockHeld otherwise."""
        deadline = time.monotonic() + wait_s
        while True:
            current = now()
            expires = datetime.fromtimestamp(current.timestamp() + ttl_s, UTC)
            try:
                with self._begin() as conn:
                    conn.execute(locks.delete().where(locks.c.name == name, locks.c.expires_at < current))
                    conn.execute(locks.insert().values(
                        name=name, holder=holder, run_id=run_id, acquired_at=current, expires_at=expires))
                return None
            except IntegrityError:
                pass
            held = self.lock_info(name)
            dead = is_dead(held["holder"]) if held else None
            if held and dead:
                if self._take_over(name, held["run_id"], holder, run_id, current, expires):
                    return (f"Took over the apply lock of dead run {held['run_id']} "
                            f"(pid {dead.pid} on {dead.host})")
                continue  # the row changed under us (released, or another taker won): look again
            if time.monotonic() >= deadline:
                who = (f"held by {held['holder']} (run {held['run_id']}, since "
                       f"{_aware(held['acquired_at']).isoformat(timespec='seconds')}, expires "
                       f"{_aware(held['expires_at']).isoformat(timespec='seconds')})") if held else "held"
                run = held["run_id"] if held else "RUN_ID"
                raise LockHeld(f"another apply is running: the lock {name!r} is {who}; wait for it, "
                               f"or if it is dead run `viewsync force-unlock {run}`")
            time.sleep(0.2)

    def _take_over(self, name: str, dead_run: str, holder: str, run_id: str, current: datetime,
                   expires: datetime) -> bool:
        """Replace the dead run's lock with ours in one transaction. The delete matches the
        dead run only, so of two takers one deletes the row and the other deletes nothing."""
        try:
            with self._begin() as conn:
                if conn.execute(locks.delete().where(locks.c.name == name, locks.c.run_id == dead_run)).rowcount != 1:
                    return False
                conn.execute(locks.insert().values(
                    name=name, holder=holder, run_id=run_id, acquired_at=current, expires_at=expires))
            return True
        except IntegrityError:
            return False

    def lock_info(self, name: str) -> dict[str, Any] | None:
        if not self.ready:
            return None
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(locks).where(locks.c.name == name)).first()
        return dict(row._mapping) if row else None

    def release_lock(self, name: str, run_id: str) -> None:
        with self._begin() as conn:
            conn.execute(locks.delete().where(locks.c.name == name, locks.c.run_id == run_id))

    def force_unlock(self, run_id: str) -> int:
        if not self.ready:
            return 0
        with self._begin() as conn:
            return int(conn.execute(locks.delete().where(locks.c.run_id == run_id)).rowcount)
