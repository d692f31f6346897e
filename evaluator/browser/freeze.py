"""The environment freeze: while the agent deliberates, the page does not move.

Playwright's clock stops ``Date``, timers and ``requestAnimationFrame``; CDP's
``Animation.setPlaybackRate`` stops CSS animations and transitions. CDP virtual time is avoided on
purpose: it pauses but does not resume to real time.
"""

from __future__ import annotations

import math

from playwright.async_api import CDPSession, Page
from playwright.async_api import Error as PlaywrightError

from evaluator.browser.isolated import world
from evaluator.errors import ForgedMeasurementError

_PAUSE_MARGINS_MS = (25, 250, 2000)


class FreezeController:
    """Freezes and thaws one page. Idempotent in both directions."""

    def __init__(self, page: Page, cdp: CDPSession) -> None:
        self._page = page
        self._cdp = cdp
        self._frozen = False

    @property
    def frozen(self) -> bool:
        """Whether the page is frozen now."""
        return self._frozen

    async def start(self) -> None:
        """Enable the CDP domain the freeze needs; call once after the page exists."""
        await self._cdp.send("Animation.enable")

    async def freeze(self) -> None:
        """Stop the page's clock, timers, animation frames and CSS animations."""
        if self._frozen:
            return
        # pause_at needs a time ahead of the page clock, which keeps running during the round trip:
        # aim a little ahead and widen the margin if the clock overtook the target.
        for margin_ms in _PAUSE_MARGINS_MS:
            now_ms = await world(self._page).in_page("() => Date.now()")
            if isinstance(now_ms, bool) or not isinstance(now_ms, int | float) or not math.isfinite(now_ms):
                raise ForgedMeasurementError(f"the page's Date.now() gave {str(now_ms)[:80]!r}, not its clock's time: "
                                             "the page replaced it, and cannot be frozen")
            try:
                await self._page.clock.pause_at((now_ms + margin_ms) / 1000)
                break
            except PlaywrightError as exc:
                if "to the past" not in str(exc) or margin_ms == _PAUSE_MARGINS_MS[-1]:
                    raise
        await self._cdp.send("Animation.setPlaybackRate", {"playbackRate": 0})
        self._frozen = True

    async def thaw(self) -> None:
        """Let the page run again at real speed (its clock lags real time by the time it was frozen)."""
        if not self._frozen:
            return
        await self._cdp.send("Animation.setPlaybackRate", {"playbackRate": 1})
        await self._page.clock.resume()
        self._frozen = False
