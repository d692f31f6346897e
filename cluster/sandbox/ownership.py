"""Who owns a sandbox: the process that created it, named so a dead owner can be told from a live one.

A sandbox outlives its owner when the owner is killed (SIGKILL, out of memory); garbage
collection removes the sandboxes of owners that are gone. An owner is named by host, pid
namespace, pid and the process's start time: the namespace tells a process in another container
(same hostname, other pids) apart, the start time a live owner from a later process that reused
its pid.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path


def owner_id(pid: int | None = None) -> str:
    """``host:pidns:pid:start`` of ``pid`` (default: this process)."""
    pid = os.getpid() if pid is None else pid
    return f"{host_prefix()}{pid}:{start_time(pid)}"


def host_prefix() -> str:
    """The ``host:pidns:`` part shared by every owner on this host and pid namespace."""
    return f"{socket.gethostname()}:{os.stat('/proc/self/ns/pid').st_ino}:"


def start_time(pid: int) -> str:
    """Field 22 of /proc/PID/stat (clock ticks since boot), or "" when the process does not exist."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    return stat[stat.rindex(")") + 2:].split()[19]


def owner_alive(owner: str) -> bool:
    """Whether the process an :func:`owner_id` names (on this host and pid namespace) still runs."""
    parts = owner.rsplit(":", 2)
    if len(parts) != 3 or not parts[1].isdigit():
        return False
    return start_time(int(parts[1])) == parts[2]
