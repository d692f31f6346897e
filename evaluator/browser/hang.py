"""The hang probe: when a run hits its time limit, is the app's page busy, or is the machine slow?

Only when the browser answers (``Browser.getVersion`` over the DevTools protocol, and a script in a new
blank page of a new context) but a page of the run does not run ``1`` is the timeout the app's hang.
Anything else (the browser silent, the control page slow, every page answering) stays the machinery's.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable
from typing import TypeVar

from playwright.async_api import Browser, Page
from playwright.async_api import Error as PlaywrightError

from evaluator.browser.isolated import evaluate
from evaluator.models import HangProbe

T = TypeVar("T")

PROBE_TIMEOUT_S = 5.0
"""Per check: generous for a loaded 2-core machine (a blank page answers in ~0.2 s there), short beside a run."""
_CONTROL_SHARE = 3.0
"""The control page's bound, in page checks: starting a renderer beside two pages that spin on a sandbox's one CPU,
on a loaded 2-core machine, took more than 5 s (a CI rehearsal)."""


async def probe_hang(browser: Browser, *, origin: str | None, timeout_s: float = PROBE_TIMEOUT_S) -> HangProbe:
    """Probe ``browser`` and the run's pages (those at ``origin``; every non-blank page when it is unknown).

    The pages are probed first and all at once, then the browser: a page's own wait is not spent on the
    control's. Never raises for what it finds; each check is bounded by ``timeout_s``, the control's by
    ``_CONTROL_SHARE`` times it.
    """
    pages = [page for context in browser.contexts for page in context.pages if _is_run_page(page, origin)]
    answers = await asyncio.gather(*(_answers(page, timeout_s) for page in pages))
    silent = [page for page, ok in zip(pages, answers, strict=True) if not ok]
    notes: list[str] = []
    browser_ok = await _bounded(_browser_version(browser), timeout_s, notes, "the browser (Browser.getVersion)")
    # A new page needs a new renderer process: on a CPU the run's pages hold, it may take longer to start than a
    # page takes to answer. The control is given longer, and a page that did not answer is asked again once the
    # control has answered: a page only slowed down by a starved machine answers then too; a hung one does not.
    control_ok = browser_ok and await _bounded(_blank_page_runs(browser), timeout_s * _CONTROL_SHARE, notes,
                                               "a script in a new blank page")
    if control_ok and silent:
        again = await asyncio.gather(*(_answers(page, timeout_s) for page in silent))
        silent = [page for page, ok in zip(silent, again, strict=True) if not ok]
    busy = [page.url for page in silent]
    answering = [page.url for page in pages if page not in silent]
    if not pages:
        notes.append("the run had no page open at the app's origin")
    elif not busy:
        notes.append(f"every page of the run answered ({len(pages)})")
    else:
        notes.append(f"the main thread of {len(busy)} page(s) did not answer within {timeout_s:g} s")
    return HangProbe(browser_answered=browser_ok, control_answered=control_ok, busy_pages=busy,
                     answering_pages=answering, timeout_s=timeout_s, detail="; ".join(notes))


async def browser_answers(browser: Browser, *, timeout_s: float = PROBE_TIMEOUT_S) -> bool:
    """Whether ``browser`` is connected and answers ``Browser.getVersion`` in time.

    A call into a browser that was just killed can fail before Playwright marks it disconnected: asking
    it is what tells a dead browser from a page's own failure.
    """
    if not browser.is_connected():
        return False
    try:
        await asyncio.wait_for(_browser_version(browser), timeout_s)
    except (TimeoutError, PlaywrightError):
        return False
    return True


def _is_run_page(page: Page, origin: str | None) -> bool:
    if page.is_closed():
        return False
    if origin is not None:
        return page.url.startswith(origin)
    return page.url not in ("", "about:blank")


async def _answers(page: Page, timeout_s: float) -> bool:
    """Whether ``page``'s main thread runs a trivial script in time (a crashed page does not count as busy).

    The script runs in the isolated world: a page that hooks its own ``eval`` neither sees the probe nor answers
    it."""
    try:
        await asyncio.wait_for(evaluate(page, "() => 1"), timeout_s)
    except TimeoutError:
        return False
    except PlaywrightError:
        return True  # closed or crashed, not busy: the crash watch and the worker classify those
    return True


async def _browser_version(browser: Browser) -> None:
    session = await browser.new_browser_cdp_session()
    try:
        await session.send("Browser.getVersion")
    finally:
        await session.detach()


async def _blank_page_runs(browser: Browser) -> None:
    # A new context gets its own renderer process: a page spinning in another cannot hold it up.
    context = await browser.new_context()
    try:
        page = await context.new_page()
        await page.evaluate("1")
    finally:
        await context.close()


async def _bounded(work: Awaitable[T], timeout_s: float, notes: list[str], what: str) -> bool:
    """Whether ``work`` finished in time; what happened goes to ``notes``."""
    started = time.monotonic()
    try:
        await asyncio.wait_for(work, timeout_s)
    except TimeoutError:
        notes.append(f"{what}: no answer within {timeout_s:g} s")
        return False
    except PlaywrightError as exc:
        notes.append(f"{what}: failed ({(str(exc).splitlines() or [''])[0][:200]})")
        return False
    notes.append(f"{what}: answered in {time.monotonic() - started:.2f} s")
    return True
