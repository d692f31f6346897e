"""Browser contexts for a run, made before the run asks for them.

A new context and its first page cost a run's start about 230 ms, most of it Chromium starting the
page's renderer process (measured in the Docker sandbox and on loopback alike). A worker's pool makes
the next run's pair, one desktop and one mobile context, as soon as the current run has stopped its
app: while its video is encoded and it is judged, and while the next one is extracted and served.
The next run then loads its app into pages that exist already.

Every context is fresh (no run has had it before) and made the same way whether made ahead or on
demand: sized, pinned to the frozen web environment, with one blank page. Only the confinement to
the run's origin is added when the run takes it.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import NamedTuple

from playwright.async_api import Browser, BrowserContext, Page, ViewportSize
from playwright.async_api import Error as PlaywrightError

from evaluator.browser.frozen_web import LOCALE, TIMEZONE, pin_context
from evaluator.browser.launch import confine_to_origin
from evaluator.errors import BrowserUnavailableError

DESKTOP: ViewportSize = {"width": 1280, "height": 800}
MOBILE: ViewportSize = {"width": 390, "height": 844}
_CLOSE_S = 10.0


class Tab(NamedTuple):
    """A fresh context and its one page, still blank."""

    context: BrowserContext
    page: Page


class ContextPool:
    """Fresh, pinned browser contexts on one browser.

    With ``ahead`` the pool makes a desktop and a mobile context at once, and again at each
    :meth:`prepare`; create it inside the event loop. Without, it makes each context when
    :meth:`open` asks for it.
    """

    def __init__(self, browser: Browser, *, ahead: bool = False) -> None:
        self.browser = browser
        self._ahead = ahead
        self._ready: dict[bool, asyncio.Task[Tab]] = {}
        self.prepare()

    def prepare(self) -> None:
        """Make the next run's contexts now (a pool made ``ahead``; otherwise nothing).

        Call it only when no app is running beside the browser: a process an app left behind could
        reach the browser's DevTools and tamper with contexts made while it lives.
        """
        if not self._ahead or not self.browser.is_connected():
            return
        for mobile in (False, True):
            if mobile not in self._ready:
                task = asyncio.ensure_future(_make(self.browser, mobile))
                task.add_done_callback(_retrieve)
                self._ready[mobile] = task

    async def open(self, origin: str, blocked: list[str], *, mobile: bool, confine: bool = True) -> Tab:
        """A fresh context sized for desktop or mobile, pinned to the frozen web environment, with a blank page.

        With ``confine`` the driver refuses every request outside the app's ``origin`` (recorded in
        ``blocked``); without, the sandbox's CDN mirror answers or refuses them.
        """
        tab = await self._take(mobile)
        if confine:
            try:
                await confine_to_origin(tab.context, origin, blocked)
            except BaseException:
                await close_context(tab.context)
                raise
        return tab

    async def ready(self, timeout_s: float = 30.0) -> None:
        """Wait until the contexts being made ahead exist.

        Raises :class:`~evaluator.errors.BrowserUnavailableError` when they could not be made in time.
        """
        pending = list(self._ready.values())
        if not pending:
            return
        done, late = await asyncio.wait(pending, timeout=timeout_s)
        if late:
            raise BrowserUnavailableError(f"the browser did not make a context within {timeout_s:.0f} s")
        for task in done:
            if not task.cancelled() and task.exception() is not None:
                raise BrowserUnavailableError(f"the browser could not make a context: {task.exception()}")

    async def close(self) -> None:
        """Stop making contexts ahead and close the ones not handed out."""
        self._ahead = False
        pending = list(self._ready.values())
        self._ready.clear()
        for task in pending:
            task.cancel()
        made = await asyncio.gather(*pending, return_exceptions=True)
        await asyncio.gather(*(close_context(tab.context) for tab in made if isinstance(tab, Tab)))

    async def _take(self, mobile: bool) -> Tab:
        task = self._ready.pop(mobile, None)
        if task is not None:
            try:
                tab = await task
            except PlaywrightError:
                pass  # made ahead on a browser that has since failed: making it again reports why
            else:
                try:
                    await tab.page.evaluate("0")
                    return tab
                except PlaywrightError:
                    await close_context(tab.context)  # its renderer went away while it waited: not the run's doing
                except BaseException:
                    await close_context(tab.context)  # the run was cancelled: the context is nobody's now
                    raise
        return await _make(self.browser, mobile)


async def _make(browser: Browser, mobile: bool) -> Tab:
    context = await browser.new_context(
        viewport=MOBILE if mobile else DESKTOP, is_mobile=mobile, has_touch=mobile, device_scale_factor=1,
        service_workers="block", accept_downloads=False, locale=LOCALE, timezone_id=TIMEZONE,
    )
    try:
        await pin_context(context)
        page = await context.new_page()
    except BaseException:
        await close_context(context)
        raise
    return Tab(context, page)


async def close_context(context: BrowserContext) -> None:
    """Close ``context``, waiting at most 10 s: one whose tab crashed or hung, or whose browser is gone, is left to
    its browser (callers that care check the browser itself)."""
    with contextlib.suppress(PlaywrightError, TimeoutError):
        await asyncio.wait_for(context.close(), _CLOSE_S)


def _retrieve(task: asyncio.Task[Tab]) -> None:
    """Mark a failure to make a context ahead as seen: :meth:`ContextPool.open` makes it again, or the pool closes."""
    if not task.cancelled():
        task.exception()
