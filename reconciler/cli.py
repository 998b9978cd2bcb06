"""The `viewsync` command line. Exit codes: 0 ok / no changes, 1 error, 2 changes (drift)."""

from __future__ import annotations

import json
import os
import re
import sys
import traceback
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
import yaml

from reconciler import drift as drift_mod
from reconciler import gitsrc, render
from reconciler.access import hooks as access_hooks
from reconciler.access.security import notes as security_notes
from reconciler.apply import apply_plan, repair_before_plan
from reconciler.declarations import Declarations
from reconciler.errors import UserError, ValidationFailed
from reconciler.model import ViewId, ViewSpec
from reconciler.plan import Plan, PlanOptions
from reconciler.secrets import redact
from reconciler.state import GitInfo, StateStore
from reconciler.workspace import Workspace

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="viewsync: SQL views under review, versioned and reconciled across catalogs.")

Format = Annotated[str, typer.Option("--format", "-f", help="text | markdown | json")]


@dataclass
class Globals:
    repo: Path
    config: Path | None
    parallelism: int
    verbose: bool
    color: bool


def _g(ctx: typer.Context) -> Globals:
    g: Globals = ctx.obj
    return g


def out(text: str) -> None:
    sys.stdout.write(redact(text))
    sys.stdout.flush()


def err(text: str) -> None:
    sys.stderr.write(redact(text) + ("" if text.endswith("\n") else "\n"))


def fail(message: str) -> NoReturn:
    err(f"Error: {message}")
    raise typer.Exit(1)


@app.callback()
def main_options(
    ctx: typer.Context,
    repo: Annotated[Path, typer.Option(help="Repository root (holds viewsync.yaml and views/).")] = Path("."),
    config: Annotated[Path | None, typer.Option(help="Config file (default: <repo>/viewsync.yaml).")] = None,
    parallelism: Annotated[int, typer.Option(help="Concurrent catalog fetches.")] = 8,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="More detail on errors.")] = False,
    no_color: Annotated[bool, typer.Option("--no-color", help="No ANSI colours.")] = False,
) -> None:
    color = not no_color and sys.stdout.isatty() and "NO_COLOR" not in os.environ
    ctx.obj = Globals(repo.resolve(), config.resolve() if config else None, parallelism, verbose, color)


def _progress(done: int, total: int) -> None:
    sys.stderr.write(f"\rReading catalogs: {done}/{total} schema(s)" + ("\r\x1b[K" if done == total else ""))
    sys.stderr.flush()


def _open(g: Globals) -> Workspace:
    ws = Workspace.open(g.repo, g.config, g.parallelism)
    if sys.stderr.isatty():  # progress on a terminal, nothing in CI logs
        ws.progress = _progress
    return ws


def _declarations(ws: Workspace, ref: str | None) -> Declarations:
    if ref:
        return ws.declarations(gitsrc.files_at(ws.root, ref))
    return ws.declarations()


def _options(ws: Workspace, catalog: list[str] | None, select: list[str] | None, prune: bool | None = None,
             adopt: bool | None = None, allow_mass_drop: bool = False) -> PlanOptions:
    pol = ws.config.policy
    for name in catalog or []:
        if name not in ws.config.catalogs:
            raise UserError(f"--catalog {name}: unknown catalog (defined: {', '.join(sorted(ws.config.catalogs))})")
    return PlanOptions(
        project=ws.config.project,
        prune=pol.prune if prune is None else prune or pol.prune,
        adopt=pol.adopt if adopt is None else adopt or pol.adopt,
        max_drop_fraction=pol.max_drop_fraction,
        allow_mass_drop=allow_mass_drop,
        select=tuple(select or ()),
        catalogs=tuple(catalog or ()),
    )


def _git_json(info: GitInfo) -> dict[str, str | None] | None:
    if not info.commit:
        return None
    return {"commit": info.commit, "ref": info.ref, "author": info.author}


def _check_format(fmt: str) -> None:
    if fmt not in ("text", "markdown", "json"):
        raise UserError(f"--format {fmt!r}: expected text, markdown or json")


# ----------------------------------------------------------------- commands
@app.command()
def validate(ctx: typer.Context, ref: Annotated[str | None, typer.Option(help="Git ref to read.")] = None) -> None:
    """Check config and declarations offline: YAML, JSON Schema, semantics, SQL (one query, no cycles)."""
    from reconciler import validity

    ws = _open(_g(ctx))
    decl = _declarations(ws, ref)
    problems, warnings = validity.check(decl)
    policy = access_hooks.policy_at(ws.root, ws.config.path, ref)
    if policy is not None and ref is None:
        stale, missing = access_hooks.codeowners_problem(ws.root, ws.config.path, decl.files)
        if stale is not None:
            problems.append(stale)
        if missing:
            warnings.append(missing)
    for w in warnings:
        err(f"Warning: {w}")
    if problems:
        raise ValidationFailed(problems)
    out(f"Valid: {len(decl.views)} view(s) in {len(decl.files)} file(s), "
        f"{len(ws.config.catalogs)} catalog(s).\n")


def _yaml_changes(ws: Workspace, base: str, head: Declarations) -> list[dict[str, Any]]:
    before = ws.declarations(gitsrc.files_at(ws.root, base))
    from reconciler.plan import diff_specs

    changes: list[dict[str, Any]] = []
    for vid in sorted(set(before.views) | set(head.views)):
        a, b = before.views.get(vid), head.views.get(vid)
        if a is None:
            changes.append({"view": str(vid), "change": "added"})
        elif b is None:
            changes.append({"view": str(vid), "change": "removed"})
        elif a.canonical() != b.canonical():
            changes.append({"view": str(vid), "change": "changed",
                            "fields": [c.field for c in diff_specs(b, a)]})
    return changes


@app.command()
def plan(
    ctx: typer.Context,
    fmt: Format = "text",
    out_file: Annotated[Path | None, typer.Option("--out", help="Save the plan (JSON) for `apply PLAN`.")] = None,
    detailed_exitcode: Annotated[bool, typer.Option("--detailed-exitcode",
                                                    help="Exit 2 when there are changes.")] = False,
    catalog: Annotated[list[str] | None, typer.Option(help="Only this catalog (repeatable).")] = None,
    select: Annotated[list[str] | None, typer.Option(help="Glob over catalog.schema.view (repeatable).")] = None,
    ref: Annotated[str | None, typer.Option(help="Read declarations from this git ref.")] = None,
    base: Annotated[str | None, typer.Option(help="Also list declaration changes since this git ref.")] = None,
    prune: Annotated[bool, typer.Option(help="Drop managed views no longer declared.")] = False,
    adopt: Annotated[bool, typer.Option(help="Adopt declared unmanaged views.")] = False,
    allow_mass_drop: Annotated[bool, typer.Option(help="Allow drops beyond max_drop_fraction.")] = False,
    actor: Annotated[str | None, typer.Option(help="Who the access policy is checked for (default "
                                              "$GITHUB_ACTOR, then the commit author).")] = None,
) -> None:
    """Diff declarations against the live catalogs."""
    _check_format(fmt)
    g = _g(ctx)
    ws = _open(g)
    decl = _declarations(ws, ref)
    info = gitsrc.info(ws.root, ref)
    opts = _options(ws, catalog, select, prune, adopt, allow_mass_drop)
    result, _ = ws.plan(opts, decl, _git_json(info))
    if base:
        result.yaml_changes = _yaml_changes(ws, base, decl)
    access_hooks.check_plan(result, decl.views, ws.root, ws.config.path, actor, ref, base)
    result.warnings += security_notes(result, {n: (c.type, c.options) for n, c in ws.config.catalogs.items()})
    if out_file:
        out_file.write_text(render.as_json(result), encoding="utf-8")
    out(render.render(result, fmt, g.color))
    if result.errors:
        raise typer.Exit(1)
    if detailed_exitcode and result.has_changes:
        raise typer.Exit(2)


def _load_plan_file(path: Path) -> Plan:
    try:
        return Plan.from_json(json.loads(path.read_text(encoding="utf-8")))
    except FileNotFoundError:
        raise UserError(f"{path}: no such plan file") from None
    except (ValueError, KeyError, TypeError) as e:
        raise UserError(f"{path}: not a viewsync plan ({e})") from None


@app.command()
def show(ctx: typer.Context, plan_file: Annotated[Path, typer.Argument(help="A saved plan.")],
         fmt: Format = "text") -> None:
    """Render a saved plan."""
    _check_format(fmt)
    saved = _load_plan_file(plan_file)
    out(render.render(saved, fmt, _g(ctx).color))


@app.command()
def apply(
    ctx: typer.Context,
    plan_file: Annotated[Path | None, typer.Argument(help="Apply exactly this saved plan.")] = None,
    auto_approve: Annotated[bool, typer.Option("--auto-approve", help="Do not ask for confirmation.")] = False,
    prune: Annotated[bool, typer.Option(help="Drop managed views no longer declared.")] = False,
    adopt: Annotated[bool, typer.Option(help="Adopt declared unmanaged views.")] = False,
    allow_mass_drop: Annotated[bool, typer.Option(help="Allow drops beyond max_drop_fraction.")] = False,
    catalog: Annotated[list[str] | None, typer.Option(help="Only this catalog (repeatable).")] = None,
    select: Annotated[list[str] | None, typer.Option(help="Glob over catalog.schema.view.")] = None,
    actor: Annotated[str | None, typer.Option(help="Who applies (default $GITHUB_ACTOR, git user).")] = None,
    allow_dirty: Annotated[bool, typer.Option(help="Apply uncommitted declarations.")] = False,
    lock_timeout: Annotated[float, typer.Option(help="Seconds to wait for the apply lock.")] = 0,
) -> None:
    """Carry out the plan: write views, versions and audit records."""
    g = _g(ctx)
    ws = _open(g)
    dirty = gitsrc.dirty_paths(ws.root)
    if dirty and not allow_dirty:
        raise UserError("uncommitted changes to declarations: " + ", ".join(dirty[:10])
                        + "; commit them or pass --allow-dirty")
    info = gitsrc.info(ws.root)
    who = gitsrc.actor(actor, ws.root)
    decl = ws.declarations()  # bad input stops here, before anything is written
    # Records left by a dead apply are repaired before planning (nothing is created when there are none).
    repair_before_plan(ws, StateStore(ws.config.state_url, create=False), who, lock_timeout,
                       lambda note: out(f"Repaired: {note}\n"))
    if plan_file is not None:
        result = _load_plan_file(plan_file)
        scope = result.scope
        if result.project != ws.config.project:
            raise UserError(f"{plan_file}: plan is for project {result.project!r}, not {ws.config.project!r}")
        opts = _options(ws, scope.get("catalogs"), scope.get("select"), scope.get("prune"), scope.get("adopt"),
                        bool(scope.get("allow_mass_drop")))
        if ws.declarations_digest(decl, opts) != result.declarations_digest:
            raise UserError(f"stale plan: the declarations changed since {plan_file} was made; nothing was "
                            "applied. Run `viewsync plan` again")
    else:
        opts = _options(ws, catalog, select, prune, adopt, allow_mass_drop)
        result, _ = ws.plan(opts, decl, _git_json(info))
    out(render.render(result, "text", g.color))
    if result.errors:
        raise typer.Exit(1)
    access_hooks.check_apply(result, decl.views, ws.root, ws.config.path, actor, who,
                             ws.config.state_url, info)
    if not result.actions:
        out("Nothing to apply.\n")
        return
    if not auto_approve:
        if not sys.stdin.isatty():
            raise UserError("refusing to apply without confirmation: no terminal to ask on; "
                            "pass --auto-approve (e.g. in CI)")
        answer = typer.prompt("Apply these actions? Only 'yes' will be accepted", default="", show_default=False)
        if answer.strip() != "yes":
            out("Apply cancelled.\n")
            raise typer.Exit(1)
    state = StateStore(ws.config.state_url)

    def progress(action: Any, outcome: str, error: str | None) -> None:
        line = f"{render.SYMBOL[action.action]} {action.action} {action.view}: {outcome}"
        out(line + (f" ({error})" if error else "") + "\n")

    res = apply_plan(ws, result, state, who, info, lock_timeout, progress,
                     on_note=lambda note: out(f"Repaired: {note}\n"))
    out(f"Apply {'complete' if res.ok else 'FAILED'}: {len(res.applied)} applied, {len(res.failed)} failed, "
        f"{len(res.skipped)} skipped (run {res.run_id}).\n")
    if not res.ok:
        raise typer.Exit(1)


@app.command()
def drift(
    ctx: typer.Context,
    fmt: Format = "text",
    catalog: Annotated[list[str] | None, typer.Option(help="Only this catalog (repeatable).")] = None,
    select: Annotated[list[str] | None, typer.Option(help="Glob over catalog.schema.view.")] = None,
    out_file: Annotated[Path | None, typer.Option("--out", help="Also write the report here.")] = None,
) -> None:
    """Report where live catalogs differ from declarations; exit 2 on drift."""
    _check_format(fmt)
    ws = _open(_g(ctx))
    decl = ws.declarations()
    opts = _options(ws, catalog, select, prune=True, adopt=False, allow_mass_drop=True)
    result, snapshots = ws.plan(opts, decl)
    state = StateStore(ws.config.state_url, create=False)
    report = drift_mod.classify(result, snapshots, state.last_versions(list(ws.config.catalogs)))
    text = drift_mod.render(report, fmt)
    if out_file:
        out_file.write_text(redact(text), encoding="utf-8")
    out(text)
    if report.errors and not report.items:
        raise typer.Exit(1)
    if report.drifted:
        raise typer.Exit(2)


def _parse_view(text: str) -> ViewId:
    try:
        return ViewId.parse(text)
    except ValueError as e:
        raise UserError(str(e)) from None


@app.command()
def history(ctx: typer.Context, view: Annotated[str, typer.Argument(help="catalog.schema.view")],
            fmt: Format = "text") -> None:
    """Versions of a view: ours (with commit, actor, time) and the catalog's native ones."""
    _check_format(fmt)
    ws = _open(_g(ctx))
    vid = _parse_view(view)
    state = StateStore(ws.config.state_url, create=False)
    rows = state.versions_of(vid)
    native = ws.adapter(vid.catalog).native_history(vid) if vid.catalog in ws.config.catalogs else []
    if fmt == "json":
        out(json.dumps({"view": vid.to_json(), "versions": [
            {"version": r["version"], "at": r["at"].isoformat(), "actor": r["actor"], "action": r["action"],
             "git_commit": r["git_commit"], "digest": r["digest"], "run_id": r["run_id"],
             "changes": [c["field"] for c in json.loads(r["changes"] or "[]")]} for r in rows],
            "native_versions": [{"version": n.version, "timestamp_ms": n.timestamp_ms, "summary": n.summary,
                                 "dialects": list(n.dialects)} for n in native]}, indent=2) + "\n")
        return
    lines = [f"History of {vid}:"]
    if not rows:
        lines.append("  (no versions recorded by viewsync)")
    for r in rows:
        fields = ", ".join(c["field"] for c in json.loads(r["changes"] or "[]")) or "-"
        commit = (r["git_commit"] or "-")[:12]
        lines.append(f"  v{r['version']:<3} {r['at']:%Y-%m-%d %H:%M:%S}  {r['action']:<6} {r['actor']:<16} "
                     f"{commit:<12} {fields}")
    if native:
        lines.append(f"Native versions in catalog {vid.catalog!r}:")
        for n in native:
            when = datetime.fromtimestamp(n.timestamp_ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S") \
                if n.timestamp_ms else "-"
            summary = ", ".join(f"{k}={v}" for k, v in sorted(n.summary.items()))
            lines.append(f"  {n.version:<6} {when}  [{', '.join(n.dialects)}] {summary}")
    out("\n".join(lines) + "\n")


def _since(text: str | None) -> datetime | None:
    if not text:
        return None
    m = re.fullmatch(r"(\d+)([smhdw])", text.strip())
    if m:
        unit = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}[m.group(2)]
        return datetime.now(UTC) - timedelta(**{unit: int(m.group(1))})
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        raise UserError(f"--since {text!r}: expected an ISO date/time or a duration like 7d, 12h") from None
    return value if value.tzinfo else value.replace(tzinfo=UTC)


@app.command()
def audit(
    ctx: typer.Context,
    view: Annotated[str | None, typer.Option(help="catalog.schema.view")] = None,
    since: Annotated[str | None, typer.Option(help="ISO time or duration (7d, 12h).")] = None,
    run: Annotated[str | None, typer.Option(help="Run id (prefix).")] = None,
    fmt: Format = "text",
) -> None:
    """The audit trail: one row per attempted action."""
    _check_format(fmt)
    ws = _open(_g(ctx))
    state = StateStore(ws.config.state_url, create=False)
    rows = state.audit_rows(_parse_view(view) if view else None, _since(since), run)
    if fmt == "json":
        for r in rows:
            r["at"] = r["at"].isoformat()
            for key in ("before_spec", "after_spec", "changes"):
                r[key] = json.loads(r[key]) if r[key] else None
        out(json.dumps(rows, indent=2, default=str) + "\n")
        return
    if not rows:
        out("No audit records.\n")
        return
    for r in rows:
        view_id = f"{r['catalog']}.{r['schema_name']}.{r['view_name']}"
        commit = (r["git_commit"] or "-")[:12]
        line = (f"{r['at']:%Y-%m-%d %H:%M:%S}  {r['run_id'][:8]}  {r['actor']:<16} {r['action']:<6} "
                f"{view_id:<40} {r['outcome']:<8} {commit}")
        if r["error"]:
            line += f"  error: {r['error']}"
        out(line + "\n")


class _Literal(str):
    pass


def _literal_representer(dumper: yaml.SafeDumper, data: _Literal) -> yaml.Node:
    return dumper.represent_scalar("tag:yaml.org,2002:str", str(data), style="|" if "\n" in data else None)


yaml.SafeDumper.add_representer(_Literal, _literal_representer)


def spec_to_yaml_view(name: str, spec: ViewSpec, schema: str) -> dict[str, Any]:
    body: dict[str, Any] = {"name": name}
    if spec.comment is not None:
        body["comment"] = spec.comment
    if spec.columns:
        body["columns"] = [{k: v for k, v in c.model_dump().items() if v is not None} for c in spec.columns]
    body["representations"] = [{"dialect": r.dialect, "sql": _Literal(r.sql.strip() + ("\n" if "\n" in r.sql.strip()
                                                                                           else ""))}
                               for r in spec.representations]
    if spec.default_catalog is not None:
        body["default_catalog"] = spec.default_catalog
    if spec.default_namespace is not None and spec.default_namespace != schema.split("."):
        body["default_namespace"] = spec.default_namespace
    if spec.security != "definer":
        body["security"] = spec.security
    if spec.owner is not None:
        body["owner"] = spec.owner
    if spec.properties:
        body["properties"] = dict(sorted(spec.properties.items()))
    return body


@app.command("import")
def import_(
    ctx: typer.Context,
    catalog: Annotated[str, typer.Option(help="Catalog to read.")],
    schema: Annotated[list[str] | None, typer.Option(help="Only this schema (repeatable).")] = None,
    force: Annotated[bool, typer.Option(help="Overwrite existing view files.")] = False,
) -> None:
    """Write YAML declarations for the views that exist in a catalog."""
    ws = _open(_g(ctx))
    adapter = ws.adapter(catalog)
    schemas = schema or adapter.list_schemas()
    snapshots = ws.fetch([catalog], {(catalog, s) for s in schemas}, all_schemas=False)
    written = 0
    for (_, name), snap in sorted(snapshots.items()):
        if not snap.exists:
            raise UserError(f"schema {name!r} does not exist in catalog {catalog!r}")
        views = [v for v in snap.views.values() if v.writable or not adapter.capabilities.writable]
        if not views:
            continue
        path = ws.root / "views" / catalog / f"{name}.yaml"
        if path.exists() and not force:
            err(f"Skipped {path.relative_to(ws.root)}: exists (use --force to overwrite)")
            continue
        doc = {"catalog": catalog, "schema": name, "views": [
            spec_to_yaml_view(v.id.name, v.spec, name) for v in sorted(views, key=lambda v: v.id.name)]}
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=100), encoding="utf-8")
        written += len(views)
        out(f"Wrote {path.relative_to(ws.root)} ({len(views)} view(s))\n")
    out(f"Imported {written} view(s) from catalog {catalog!r}.\n")


@app.command()
def codeowners(ctx: typer.Context) -> None:
    """Write .github/CODEOWNERS from the access policy (view files to their schemas' owners)."""
    from reconciler.access import codeowners as co
    from reconciler.access import gitauthors

    ws = _open(_g(ctx))
    decl = ws.declarations()
    text = access_hooks.codeowners_text(ws.root, ws.config.path, decl.files)
    if text is None:
        raise UserError("no access policy (access: in viewsync.yaml or access.yaml): nothing to derive "
                        "CODEOWNERS from")
    path = gitauthors.git_top(ws.root) / co.CODEOWNERS_PATH
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    out(f"Wrote {co.CODEOWNERS_PATH} ({len(decl.files)} view file(s)).\n")


@app.command("force-unlock")
def force_unlock(ctx: typer.Context, run_id: Annotated[str, typer.Argument(help="Run id holding the lock.")]) -> None:
    """Release an apply lock left behind by a dead run."""
    ws = _open(_g(ctx))
    n = StateStore(ws.config.state_url, create=False).force_unlock(run_id)
    if not n:
        raise UserError(f"no lock is held by run {run_id}")
    out(f"Released the lock held by run {run_id}.\n")


def main() -> None:
    verbose = "-v" in sys.argv or "--verbose" in sys.argv
    try:
        code = app(standalone_mode=False)
        sys.exit(code if isinstance(code, int) else 0)
    except typer.Exit as e:
        sys.exit(e.exit_code)
    except ValidationFailed as e:
        err(f"Error: {len(e.problems)} problem(s) found:\n" + "\n".join(f"  {p}" for p in e.problems))
        sys.exit(1)
    except UserError as e:
        err(f"Error: {e}")
        sys.exit(1)
    except typer.Abort:
        err("Aborted.")
        sys.exit(1)
    except Exception as e:  # click usage errors and the unexpected
        import click

        if isinstance(e, click.exceptions.ClickException):
            e.show()
            sys.exit(1)
        if verbose:
            err(redact(traceback.format_exc()))
        err(f"Error: unexpected {type(e).__name__}: {e} (re-run with -v for details)")
        sys.exit(1)


if __name__ == "__main__":
    main()
