"""When an input's effect is over: decided from the page's signals rather than from a fixed pause.

After an action the loop must wait for the app's reaction before it looks again. A fixed pause waits as long
for a still page as for a busy one. Here the wait ends once nothing more is due: the layout is stable over two
polls, no request the input started is in flight, and neither a finite animation nor a page timer (Playwright's
clock holds them all, animation frames included) ends or fires before the window after the input closes. A page
that keeps scheduling timers (a game loop) is therefore given the whole window, as before; a still page is looked
at as soon as it has painted. ``timeout_s`` bounds every wait.

The signals are read from the page with one read-only script, in the page's own world (Playwright's clock is
there), compiled by CDP rather than through the page's ``eval``: nothing new is exposed to the page's own scripts.
"""

from __future__ import annotations

import asyncio
import math
import time
from dataclasses import dataclass
from typing import Any

from playwright.async_api import Page, Request

from evaluator.browser.isolated import world
from evaluator.evidence.probes import SettleResult, page_script

# One poll costs a few milliseconds of the page's main thread (its layout fingerprint reads innerText): polled this
# often, a still page is looked at some 60 ms after the action, against the fixed pacing's 270 ms or more.
_POLL_S = 0.02
_STABLE_POLLS = 2


class RequestsInFlight:
    """The page's requests that have started and not yet finished or failed, with when each started."""

    def __init__(self, page: Page) -> None:
        self._started: dict[Request, float] = {}
        self.count = 0
        """Requests started so far."""
        page.on("request", self._start)
        page.on("requestfinished", self._end)
        page.on("requestfailed", self._end)

    def _start(self, request: Request) -> None:
        self._started[request] = time.time()
        self.count += 1

    def _end(self, request: Request) -> None:
        self._started.pop(request, None)

    def since(self, mark: float) -> int:
        """How many requests started at or after ``mark`` (``time.time()``) are still in flight."""
        return sum(1 for started in self._started.values() if started >= mark)

    async def finished(self, deadline: float) -> None:
        """Return once no request is in flight, or at ``deadline`` (``time.monotonic()``)."""
        while self._started and time.monotonic() < deadline:
            await asyncio.sleep(0.01)


_SETTLE_STATE = f"() => ({page_script('settle_state')})({page_script('layout_signature')})"


@dataclass(frozen=True)
class _PageState:
    layout: str
    timer_s: float | None
    """Seconds until the page's next timer; None: none pending; negative: the clock could not be asked."""
    animation_s: float | None
    """Seconds until the first running finite animation or transition ends; None: none runs."""


async def _page_state(page: Page) -> _PageState | None:
    try:
        raw: Any = await world(page).in_page(_SETTLE_STATE)
    except Exception:  # noqa: BLE001 - a navigation in progress destroys the context; poll again
        return None
    if not isinstance(raw, dict):
        return None
    # The page's own script can replace what the signals are read from: whatever is not a number is unknown.
    return _PageState(str(raw.get("layout", "")), _seconds(raw.get("timerMs"), unknown=-1.0),
                      _seconds(raw.get("animationMs"), unknown=None))


def _seconds(milliseconds: Any, *, unknown: float | None) -> float | None:
    if milliseconds is None:
        return None
    if isinstance(milliseconds, bool) or not isinstance(milliseconds, int | float) or not math.isfinite(milliseconds):
        return unknown
    return float(milliseconds) / 1000


async def settle_after_input(page: Page, *, since: float, window_end: float, timeout_s: float,
                             requests: RequestsInFlight) -> SettleResult:
    """Wait until the app's reaction to the action begun at ``since`` is over (times are ``time.time()``).

    Settled: over two polls the layout unchanged and the document complete, no request started since ``since`` in
    flight, and no finite animation ending nor page timer due before ``window_end`` (two polls once nothing is due:
    a response or a timer's callback just handled may not have painted yet). Where the page's clock cannot be
    asked, the wait lasts until ``window_end``, as a fixed pause would.
    """
    start = time.monotonic()
    last, same = "", 0
    while time.monotonic() - start < timeout_s:
        state = await _page_state(page)
        quiet = (state is not None and state.layout == last and state.layout.startswith("complete")
                 and _nothing_due(state, since, window_end, requests))
        same = same + 1 if quiet else 0
        last = state.layout if state is not None else ""
        if same >= _STABLE_POLLS:
            return SettleResult(True, time.monotonic() - start)
        await asyncio.sleep(_POLL_S)
    return SettleResult(False, time.monotonic() - start)


def _nothing_due(state: _PageState, since: float, window_end: float, requests: RequestsInFlight) -> bool:
    if requests.since(since):
        return False
    left = window_end - time.time()
    if state.animation_s is not None and state.animation_s <= left:
        return False
    if state.timer_s is None:
        return True
    if state.timer_s < 0:
        return left <= 0
    return state.timer_s > left
