"""The preview registry: which preview environments exist, and exactly which views and
namespaces each one created, so `preview down` removes those and nothing else.

Its own tables in the state store (created by the first `preview up`); read-only callers
(`preview list`) read an absent registry as empty and create nothing."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from reconciler.core.model import ViewId
from reconciler.db.engines import ensure_tables, has_tables

metadata = sa.MetaData()

envs = sa.Table(
    "vs_preview_envs", metadata,
    sa.Column("project", sa.String(255), primary_key=True),
    sa.Column("env", sa.String(64), primary_key=True),
    sa.Column("git_commit", sa.String(64)),
    sa.Column("base", sa.String(64)),
    sa.Column("actor", sa.String(255), nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
)

objects = sa.Table(
    "vs_preview_objects", metadata,
    sa.Column("project", sa.String(255), primary_key=True),
    sa.Column("env", sa.String(64), primary_key=True),
    sa.Column("kind", sa.String(8), primary_key=True),  # view | schema (a namespace the env created)
    sa.Column("catalog", sa.String(255), primary_key=True),
    sa.Column("schema_name", sa.String(255), primary_key=True),
    sa.Column("name", sa.String(255), primary_key=True),  # '' for a schema
)


def _aware(value: datetime) -> datetime:
    return value if value.tzinfo else value.replace(tzinfo=UTC)  # SQLite gives naive UTC back


@dataclass
class PreviewEnv:
    """One preview environment as recorded."""

    project: str
    env: str
    commit: str | None
    base: str | None
    actor: str
    created_at: datetime
    updated_at: datetime
    expires_at: datetime
    views: list[ViewId] = field(default_factory=list)  # the copies it holds
    schemas: list[tuple[str, str]] = field(default_factory=list)  # (catalog, schema) it created

    def expired(self, now: datetime) -> bool:
        return self.expires_at <= now


class PreviewRegistry:
    """The registry on the state store's engine."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def _ready(self, create: bool) -> bool:
        if create:
            ensure_tables(metadata, self.engine)
            return True
        return has_tables(metadata.tables, self.engine)

    def get(self, project: str, env: str) -> PreviewEnv | None:
        """The environment `env` of `project`, or None."""
        found = self.all(project, env)
        return found[0] if found else None

    def all(self, project: str, env: str | None = None) -> list[PreviewEnv]:
        """Every environment of `project` (only `env` when given), by name."""
        if not self._ready(create=False):
            return []
        q = sa.select(envs).where(envs.c.project == project)
        o = sa.select(objects).where(objects.c.project == project)
        if env is not None:
            q, o = q.where(envs.c.env == env), o.where(objects.c.env == env)
        with self.engine.connect() as conn:
            rows = conn.execute(q.order_by(envs.c.env)).all()
            objs = conn.execute(o.order_by(objects.c.catalog, objects.c.schema_name, objects.c.name)).all()
        out = {r.env: PreviewEnv(r.project, r.env, r.git_commit, r.base, r.actor, _aware(r.created_at),
                                 _aware(r.updated_at), _aware(r.expires_at)) for r in rows}
        for ob in objs:
            rec = out.get(ob.env)
            if rec is None:  # namespaces recorded by an `up` that stopped before its env row
                rec = out[ob.env] = PreviewEnv(project, ob.env, None, None, "unknown", datetime.min.replace(
                    tzinfo=UTC), datetime.min.replace(tzinfo=UTC), datetime.min.replace(tzinfo=UTC))
            if ob.kind == "view":
                rec.views.append(ViewId(ob.catalog, ob.schema_name, ob.name))
            else:
                rec.schemas.append((ob.catalog, ob.schema_name))
        return [out[k] for k in sorted(out)]

    def add_schema(self, project: str, env: str, catalog: str, schema: str) -> None:
        """Record a namespace `env` is about to create (before creating it: a kill in between
        leaves a record of a namespace that may not exist, which `down` tolerates)."""
        self._ready(create=True)
        with self.engine.begin() as conn:
            exists = conn.execute(sa.select(objects.c.env).where(
                objects.c.project == project, objects.c.env == env, objects.c.kind == "schema",
                objects.c.catalog == catalog, objects.c.schema_name == schema)).first()
            if exists is None:
                conn.execute(objects.insert().values(project=project, env=env, kind="schema", catalog=catalog,
                                                     schema_name=schema, name=""))

    def remove_schema(self, project: str, env: str, catalog: str, schema: str) -> None:
        """Forget a namespace recorded by `add_schema` that `env` did not create after all."""
        if not self._ready(create=False):
            return
        with self.engine.begin() as conn:
            conn.execute(objects.delete().where(
                objects.c.project == project, objects.c.env == env, objects.c.kind == "schema",
                objects.c.catalog == catalog, objects.c.schema_name == schema))

    def save(self, rec: PreviewEnv) -> None:
        """Write the environment and everything it holds, replacing what was recorded."""
        self._ready(create=True)
        with self.engine.begin() as conn:
            conn.execute(envs.delete().where(envs.c.project == rec.project, envs.c.env == rec.env))
            conn.execute(objects.delete().where(objects.c.project == rec.project, objects.c.env == rec.env))
            conn.execute(envs.insert().values(
                project=rec.project, env=rec.env, git_commit=rec.commit, base=rec.base, actor=rec.actor,
                created_at=rec.created_at, updated_at=rec.updated_at, expires_at=rec.expires_at))
            rows = [{"project": rec.project, "env": rec.env, "kind": "view", "catalog": v.catalog,
                     "schema_name": v.schema, "name": v.name} for v in sorted(set(rec.views))]
            rows += [{"project": rec.project, "env": rec.env, "kind": "schema", "catalog": c,
                      "schema_name": s, "name": ""} for c, s in sorted(set(rec.schemas))]
            if rows:
                conn.execute(objects.insert(), rows)

    def delete(self, project: str, env: str) -> None:
        """Forget the environment (after `down` removed what it held)."""
        if not self._ready(create=False):
            return
        with self.engine.begin() as conn:
            conn.execute(envs.delete().where(envs.c.project == project, envs.c.env == env))
            conn.execute(objects.delete().where(objects.c.project == project, objects.c.env == env))
