"""Who holds the apply lock, written into `vs_locks.holder` as
`actor@host:pid/start` (plus ` (role)`), so the next apply can prove a holder
dead: on this host, its pid is gone, or now belongs to a process started at
another time (pid reuse). The string keeps stores made by earlier releases
readable (their `actor@host:pid` holders simply carry no start time) and needs
no schema change. A holder on another host can never be proven dead from here."""

from __future__ import annotations

import os
import re
import socket
from dataclasses import dataclass

# Parsed from the right: the actor is free text, a host name has no '@', ':' or '/'.
_HOLDER = re.compile(r"@(?P<host>[^@:/\s]+):(?P<pid>\d+)(?:/(?P<start>\d+))?(?: \([^()]*\))?$")


@dataclass(frozen=True)
class Holder:
    host: str
    pid: int
    start: int | None  # process start time in clock ticks since boot (/proc/<pid>/stat field 22)


def holder_string(actor: str, role: str = "") -> str:
    """The `holder` of a lock taken by this process."""
    start = process_start(os.getpid())
    # vs_locks.holder is VARCHAR(255): the actor is recorded in full in the run anyway.
    text = f"{actor[:160]}@{socket.gethostname()}:{os.getpid()}" + (f"/{start}" if start is not None else "")
    return text + (f" ({role})" if role else "")


def parse(holder: str) -> Holder | None:
    """Host, pid and start time of a holder string; None if it carries none (hand-made)."""
    m = _HOLDER.search(holder)
    if m is None:
        return None
    return Holder(m["host"], int(m["pid"]), int(m["start"]) if m["start"] else None)


def process_start(pid: int) -> int | None:
    """Start time of a running process (Linux /proc); None where unknown or not running."""
    stat = _stat(pid)
    return stat[1] if stat is not None and stat[0] not in _GONE else None


_GONE = ("Z", "X")  # zombie or dead: the process holds nothing any more


def _stat(pid: int) -> tuple[str, int] | None:
    """State and start time from /proc/<pid>/stat; None where unreadable (no /proc, pid
    gone, or hidden by hidepid): an unreadable stat proves nothing."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            stat = f.read()
    except OSError:
        return None
    fields = stat[stat.rfind(")") + 2:].split()  # the name in (...) may hold spaces; fields[0] is field 3
    return (fields[0], int(fields[19])) if len(fields) >= 20 and fields[19].isdigit() else None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


def is_dead(holder: str) -> Holder | None:
    """The holder if it is provably dead (a process of this host that no longer runs), else None."""
    who = parse(holder)
    # os.kill(pid, 0) would terminate the process on Windows: prove nothing there.
    if who is None or who.host != socket.gethostname() or os.name != "posix" or who.pid <= 0:
        return None
    if not _alive(who.pid):
        return who
    stat = _stat(who.pid)
    if stat is None:
        return None
    state, start = stat
    if state in _GONE or (who.start is not None and start != who.start):  # exited, or the pid was reused
        return who
    return None
