"""The sweep's spending cap: every paid model call reserves its worst-case cost first.

A call is admitted only if what was spent, plus what calls under way may still spend, plus this
call's worst case (its prompt at the input price and ``max_tokens`` at the output price) stays
within the cap. After the call the reservation is replaced by what it really cost. So the cap
holds even with many calls in flight, and the sweep stops issuing calls at the cap instead of
after it. Calls answered from the response cache cost nothing and need no reservation.
"""

from __future__ import annotations

import asyncio
from typing import Protocol


class Budget(Protocol):
    """Where paid calls reserve and settle their cost (in-process, or shared by a sweep's workers)."""

    async def reserve(self, usd: float) -> bool:
        """Reserve ``usd`` for one call; ``False`` when that would pass the cap (nothing is reserved then)."""
        ...

    async def settle(self, reserved: float, spent: float) -> None:
        """Replace a reservation by what the call really cost (``0.0`` when it failed before being paid)."""
        ...


class SpendingCap:
    """A cap in US dollars for the workers of one process (the Ray scheduler shares one through an actor)."""

    def __init__(self, cap_usd: float, *, spent_usd: float = 0.0) -> None:
        self.cap_usd = cap_usd
        self.spent_usd = spent_usd
        self.reserved_usd = 0.0
        self.refused = 0
        self._lock = asyncio.Lock()

    async def reserve(self, usd: float) -> bool:
        """Reserve ``usd`` if it fits under the cap."""
        async with self._lock:
            if self.spent_usd + self.reserved_usd + usd > self.cap_usd + 1e-12:
                self.refused += 1
                return False
            self.reserved_usd += usd
            return True

    async def settle(self, reserved: float, spent: float) -> None:
        """Turn a reservation into spending."""
        async with self._lock:
            self.reserved_usd = max(0.0, self.reserved_usd - reserved)
            self.spent_usd += spent
