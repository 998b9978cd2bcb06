"""Every progress display of the command line: catalogs read, actions carried out, Spark's work
in data review. On a terminal a line is rewritten in place; elsewhere (CI logs) plain lines."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from reconciler.core.model import ViewId
    from reconciler.plan.planner import Action
    from reconciler.services.datareview import ReviewProgress

Say = Callable[[str], None]


def catalogs(done: int, total: int) -> None:
    """Schemas read so far (the workspace is given it on a terminal only)."""
    sys.stderr.write(f"\rReading catalogs: {done}/{total} schema(s)" + ("\r\x1b[K" if done == total else ""))
    sys.stderr.flush()


def spark(event: str, first: bool) -> None:
    """A Spark child's start, in place (cleared when ready), and on the machine's first start the
    class-data-sharing archive it writes (the command line listens on a terminal only)."""
    if event == "starting" and first:
        sys.stderr.write("Starting Spark: the first start on this machine is slower, and its JVM writes a "
                         "class-data-sharing archive (about 150 MB) that makes later starts faster.\n")
    elif event == "starting":
        sys.stderr.write("\r\x1b[KStarting Spark...")
    elif event == "ready":
        sys.stderr.write("\r\x1b[K")
    elif event == "archive":
        sys.stderr.write("Spark's JVM is writing the class-data-sharing archive in the background (a few seconds; "
                         "later starts use it).\n")
    sys.stderr.flush()


def actions(say: Say) -> Callable[[Action, str, str | None], None]:
    """Each action's outcome as it happens, one line to `say` (apply: stdout; preview: stderr)."""
    def progress(action: Action, outcome: str, error: str | None) -> None:
        from reconciler.render.plan import SYMBOL
        say(f"{SYMBOL[action.action]} {action.action} {action.view}: {outcome}" + (f" ({error})" if error else ""))
    return progress


@contextmanager
def data_review(say: Say) -> Iterator[ReviewProgress]:
    """Data review: the view, then Spark's stages, in place on a terminal; otherwise a line to
    `say` per view, and Spark's stages at most every 10 s."""
    from reconciler.services.datareview import ReviewProgress
    tty = sys.stderr.isatty()
    state: dict[str, Any] = {"view": "", "last": 0.0}

    def line(text: str, plain: bool) -> None:
        if tty:
            sys.stderr.write("\r\x1b[K" + text)
            sys.stderr.flush()
        elif plain:
            say(text)

    def view(i: int, n: int, vid: ViewId, what: str) -> None:
        state["view"] = f"{what} {i}/{n} {vid}"
        line(state["view"], True)

    def stages(info: dict[str, Any]) -> None:
        due = not tty and time.monotonic() - state["last"] >= 10
        state["last"] = time.monotonic() if due else state["last"]
        line(f"{state['view']}: " + ", ".join(f"stage {s['stage']}: {s['done']}/{s['total']} tasks"
                                               for s in info.get("stages", [])), due)

    try:
        yield ReviewProgress(view=view, stages=stages)
    finally:
        line("", False)  # a terminal's line cleared
