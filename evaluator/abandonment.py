"""Giving up on a task that may never finish: a run past its limit, a preview whose page stopped answering."""

from __future__ import annotations

import asyncio
from typing import Any


async def abandon(task: asyncio.Future[Any], *, unwind_s: float) -> None:
    """Cancel ``task`` and give it ``unwind_s`` to unwind, no more: a call into a wedged page or a dead browser may
    never return. Whenever it does end, its exception is marked seen (it ended with what it ran on)."""
    task.cancel()
    await asyncio.wait({task}, timeout=unwind_s)
    task.add_done_callback(_retrieve)


def _retrieve(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()
