"""`viewsync events` and `viewsync events deliver`: the outbox of events, listed and delivered."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from reconciler.events.dispatch import DeliveryReport
    from reconciler.workspace import Workspace


def listing(ws: Workspace, pending: bool = False, since: str | None = None,
            run: str | None = None) -> list[dict[str, Any]]:
    """The events in the outbox, with each sink's delivery state.

    Args:
        ws: the repository, opened.
        pending: only events some sink has not received.
        since: an ISO time or a duration back from now (7d, 12h); None: all.
        run: a run id, or its prefix.

    Returns:
        One row per event and sink, oldest first.

    Raises:
        UserError: `since` is neither a time nor a duration.
        ViewsyncError: the state store cannot be opened.
    """
    from reconciler.events import outbox
    from reconciler.state import history

    engine = ws.state().engine
    outbox.ensure(engine)  # a store no apply has announced to yet lists no events instead of failing
    return outbox.listing(engine, pending, history.parse_since(since), run)


def deliver(ws: Workspace, log: Callable[[str], None]) -> DeliveryReport:
    """Deliver every pending event to the configured sinks now, with retries and backoff.

    Args:
        ws: the repository, opened.
        log: a line per delivery that fails.

    Returns:
        How many deliveries were made, rejected, and are still pending.

    Raises:
        ViewsyncError: the state store cannot be opened, or a sink is misconfigured.
    """
    from reconciler.events.commands import open_emitter

    return open_emitter(ws.config, ws.root, ws.state().engine, log=log).drain()
