"""One wall-time deadline per call, shared by every client that talks to a catalog.

Socket timeouts bound each read, so a server trickling one byte a second is never cut
off. A client call runs inside `deadline(seconds)`; the client's transport then gives
each socket operation only the time left (`left_until`, `remaining`). Standard library
only: the Thrift transport of HMS uses it directly, and `deadline.http` wires it into
urllib3 (requests, botocore) for the Iceberg REST and Glue clients.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from contextvars import ContextVar

# The monotonic deadline of the call this thread (context) is making, if bounded.
_DEADLINE: ContextVar[float | None] = ContextVar("viewsync_deadline", default=None)


@contextlib.contextmanager
def deadline(seconds: float, *, renew: bool = False) -> Iterator[None]:
    """Calls made inside end within `seconds` from now.

    Args:
        seconds: the wall time allowed.
        renew: replace an enclosing deadline (one metastore call inside another gets its
            own timeout) instead of keeping it (an HTTP request's retries share one).
    """
    if _DEADLINE.get() is not None and not renew:
        yield
        return
    token = _DEADLINE.set(time.monotonic() + seconds)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def current() -> float | None:
    """Returns: the monotonic time the current call must end by; None when unbounded."""
    return _DEADLINE.get()


def remaining() -> float | None:
    """Returns: seconds left of the current deadline (<= 0 once passed); None when unbounded."""
    end = _DEADLINE.get()
    return None if end is None else end - time.monotonic()


def left_until(end: float) -> float:
    """Seconds left until `end` (a monotonic time).

    Raises:
        TimeoutError: `end` has passed.
    """
    left = end - time.monotonic()
    if left <= 0:
        raise TimeoutError("the request took longer than its timeout")
    return left


def expired() -> bool:
    """Returns: whether the current deadline has passed (a failure then is a timeout)."""
    left = remaining()
    return left is not None and left <= 0
