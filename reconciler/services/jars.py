"""`viewsync jars list` and `viewsync jars fetch`: the pinned JVM jars, listed and fetched."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from reconciler.core.errors import UserError

if TYPE_CHECKING:
    from reconciler.jars.maven import Artifact


def pinned() -> list[tuple[Artifact, Path | None]]:
    """The pinned jars (`reconciler/jars/pinned.toml`), for `viewsync jars list`.

    Returns:
        Each jar with its path in the cache, or None when it is not fetched; by use, then name.

    Raises:
        Nothing expected: pinned.toml ships in the package.
    """
    from reconciler.jars import maven

    return [(art, maven.cached(art)) for art in sorted(maven.pinned().values(), key=lambda a: (a.used_by, a.name))]


def fetch(names: list[str], review: bool, done: Callable[[Artifact, Path | None, str | None], None]) -> int:
    """Download the named pinned jars into the cache (those there already are not downloaded
    again), checking each one's SHA-256.

    Args:
        names: pinned names.
        review: also every jar data review can use.
        done: called per jar as it is fetched: (jar, its path, None) or (jar, None, why not).

    Returns:
        How many could not be fetched.

    Raises:
        UserError: no name and no `review`, or a name that is not pinned.
    """
    from reconciler.jars import maven

    wanted = list(names)
    if review:
        wanted += [a.name for a in maven.pinned().values() if a.used_by == "review" and a.name not in wanted]
    if not wanted:
        raise UserError("name the jars to fetch (`viewsync jars list`), or pass --review")
    try:
        arts = [maven.artifact(n) for n in wanted]
    except KeyError as exc:
        raise UserError(str(exc.args[0])) from None
    failed = 0
    for art in arts:
        try:
            path = maven.fetch(art)
        except maven.FetchError as exc:
            failed += 1
            done(art, None, str(exc))
        else:
            done(art, path, None)
    return failed
