"""`preview up|down|list|gc`: preview environments, a branch's changed views as queryable copies."""

from __future__ import annotations

from typing import Annotated

import typer

from reconciler.cli import progress
from reconciler.cli.app import Format, app, exit_if, session
from reconciler.core.output import OutputFormat

preview_app = typer.Typer(no_args_is_help=True, rich_markup_mode=None,
                          help="Preview environments: a branch's changed views (and their readers) as copies "
                               "in preview schemas, queryable before merge.")
app.add_typer(preview_app, name="preview")
Env = Annotated[str, typer.Option("--env", help="Environment name: 1-32 lowercase letters, digits, '_' (e.g. pr42).")]
Actor = Annotated[str | None, typer.Option(help="Who acts (default $GITHUB_ACTOR, then the git user).")]
LockWait = Annotated[float, typer.Option(help="Seconds to wait for the locks.")]


@preview_app.command("up")
def preview_up(
    ctx: typer.Context,
    env: Env,
    base: Annotated[str | None, typer.Option(help="Compare with this git ref (default: the merge base "
                                             "with the branch's upstream).")] = None,
    ttl: Annotated[str | None, typer.Option(help="Time to live, e.g. 7d (default preview.ttl); restarts "
                                            "the clock.")] = None,
    fmt: Format = OutputFormat.TEXT,
    actor: Actor = None,
    allow_dirty: Annotated[bool, typer.Option(help="Preview uncommitted declarations.")] = False,
    lock_timeout: LockWait = 0,
    spark: Annotated[bool, typer.Option("--spark", help="Verify the preview set with Spark and run its view "
                                        "tests first (also spark.verify in config).")] = False,
    skip_tests: Annotated[bool, typer.Option("--skip-tests", help="With --spark: do not run the view tests.")] = False,
) -> None:
    """Create or update the env's copies of the views changed since the base, and of their readers."""
    from reconciler.services import preview as preview_service
    s = session(ctx)
    request = preview_service.UpRequest(env, base, ttl, actor, allow_dirty, lock_timeout, spark, skip_tests)
    res = preview_service.up(s.open(), request, progress.actions(s.err), s.err)
    s.out(s.render("preview up", fmt, res))
    exit_if(not res.ok)


@preview_app.command("down")
def preview_down(ctx: typer.Context, env: Env, fmt: Format = OutputFormat.TEXT, actor: Actor = None,
                 lock_timeout: LockWait = 0) -> None:
    """Drop the env's copies and the namespaces it created."""
    from reconciler.services import preview as preview_service
    s = session(ctx)
    res = preview_service.down(s.open(), preview_service.DownRequest(env, actor, lock_timeout),
                               progress.actions(s.err), s.err)
    s.out(s.render("preview down", fmt, res))
    exit_if(not res.ok)


@preview_app.command("list")
def preview_list(ctx: typer.Context, fmt: Format = OutputFormat.TEXT) -> None:
    """The preview environments: views, age, expiry."""
    from reconciler.services import preview as preview_service
    s = session(ctx)
    s.out(s.render("preview list", fmt, preview_service.list_envs(s.open())))


@preview_app.command("gc")
def preview_gc(ctx: typer.Context, actor: Actor = None) -> None:
    """Remove every expired preview environment (run it on a schedule)."""
    from reconciler.services import preview as preview_service
    s = session(ctx)
    results = preview_service.gc(s.open(), actor, progress.actions(s.err))
    for res in results:
        s.out(s.render("preview down", "text", res))
    s.out(f"Removed {len(results)} expired preview environment(s).\n")
    exit_if(not all(r.ok for r in results))
