"""Static Perception: the first impression, from passive observation at desktop and mobile sizes."""

from __future__ import annotations

import asyncio
import base64
import time
from typing import Any
from urllib.parse import urlsplit

from playwright.async_api import BrowserContext, CDPSession, Page
from playwright.async_api import Error as PlaywrightError

from evaluator.browser.context_pool import DESKTOP, ContextPool
from evaluator.browser.frozen_web import first_look, release
from evaluator.browser.isolated import evaluate
from evaluator.evidence.accessibility import audit_accessibility
from evaluator.evidence.bundle import BundleFile, EvidenceWriter
from evaluator.evidence.console import PageLog
from evaluator.evidence.facts import LoadTimings, StaticFacts
from evaluator.evidence.probes import page_facts, probe_image, wait_for_render
from evaluator.evidence.settle import RequestsInFlight
from evaluator.models import CapHit

_FULL_PAGE_MAX_HEIGHT = 6000
_NAVIGATION_TIMEOUT_MS = 15_000


async def load(page: Page, url: str) -> tuple[LoadTimings, CDPSession]:
    """Navigate, bring the page to its first look (:func:`~evaluator.browser.frozen_web.first_look`) and wait until
    it is really rendered; returns load timings and the session that holds it still."""
    started = time.monotonic()
    error = None
    requests = RequestsInFlight(page)
    try:
        await page.goto(url, wait_until="load", timeout=_NAVIGATION_TIMEOUT_MS)
    except Exception as exc:  # noqa: BLE001 - a page that never finishes loading is evidence, not a crash
        error = f"{type(exc).__name__}: {str(exc)[:300]}"
    loaded = time.monotonic() - started
    still = await first_look(page, requests)
    settle = await wait_for_render(page)
    return LoadTimings(load_s=round(loaded, 3), settle_s=round(settle.seconds, 3), layout_stable=settle.stable,
                       navigation_error=error, **await _navigation_timing(page)), still


async def _navigation_timing(page: Page) -> dict[str, float]:
    """The navigation's DOMContentLoaded and load times, read in the isolated world: in the page's own,
    Playwright's clock replaces ``performance`` and the entries are gone."""
    try:
        value = await evaluate(page, "() => { const n = performance.getEntriesByType('navigation')[0];"
                                     " return n ? {dom_content_loaded_ms: n.domContentLoadedEventEnd,"
                                     " load_ms: n.loadEventEnd} : {}; }")
    except PlaywrightError:
        return {}  # a page that crashed or navigated away meanwhile has no timing to give
    return value if isinstance(value, dict) else {}


async def capture(page: Page, viewport: str, writer: EvidenceWriter, timings: LoadTimings) -> None:
    """Screenshots (viewport and full page), page facts and an image probe at one viewport size."""
    shot = await screenshot_png(page)
    writer.write_bytes(BundleFile.screenshot(viewport), shot)
    height = await evaluate(page, "() => document.documentElement ? document.documentElement.scrollHeight : 0")
    size = page.viewport_size or DESKTOP
    if height <= size["height"]:
        full = shot  # the whole page is in the viewport: the same picture, not taken twice
    else:
        full = await screenshot_png(page, {"x": 0, "y": 0, "width": size["width"],
                                           "height": min(height, _FULL_PAGE_MAX_HEIGHT), "scale": 1})
    writer.write_bytes(BundleFile.screenshot(viewport, full=True), full)
    record = StaticFacts(facts=await page_facts(page), image=probe_image(shot), timings=timings)
    writer.write_json(BundleFile.page_facts(viewport), record.model_dump(mode="json"))


async def screenshot_png(page: Page, beyond_viewport: dict[str, float] | None = None) -> bytes:
    """A PNG of the viewport, or of the ``beyond_viewport`` clip of the whole page.

    Straight through CDP, for ``optimizeForSpeed``: Chromium's default PNG compression was most of
    Static Perception's capture time (measured: 0.07–0.18 s for a desktop viewport, 0.05–0.07 s
    with it), for files about twice as large.
    """
    params: dict[str, Any] = {"format": "png", "optimizeForSpeed": True}
    if beyond_viewport is not None:
        params |= {"captureBeyondViewport": True, "clip": beyond_viewport}
    session = await page.context.new_cdp_session(page)
    try:
        reply = await session.send("Page.captureScreenshot", params)
    except PlaywrightError as exc:
        # A page that has not painted its first frame yet cannot be captured this way; Playwright's
        # own screenshot waits for that frame.
        if "Unable to capture screenshot" not in str(exc):
            raise
        if beyond_viewport is None:
            return await page.screenshot(type="png")
        return await page.screenshot(type="png", full_page=True, clip={
            "x": 0, "y": 0, "width": beyond_viewport["width"], "height": beyond_viewport["height"]})
    finally:
        await session.detach()
    return base64.b64decode(reply["data"])


async def snapshot_document(page: Page, writer: EvidenceWriter) -> None:
    """DOM and accessibility snapshots of the page as first rendered (each cut at :data:`SNAPSHOT_LIMIT_BYTES`)."""
    _write_capped(writer, BundleFile.DOM, await page.content(), "dom_snapshot")
    try:
        aria = await page.locator("body").aria_snapshot(timeout=5000)
    except Exception as exc:  # noqa: BLE001 - an empty or crashed document has no tree; say so
        aria = f"# accessibility snapshot unavailable: {type(exc).__name__}"
    _write_capped(writer, BundleFile.ACCESSIBILITY_TREE, aria, "accessibility_snapshot")


SNAPSHOT_LIMIT_BYTES = 8 * 1024 * 1024
"""A snapshot's most bytes (UTF-8): a page of millions of nodes must not fill the bundle with its markup."""


def _write_capped(writer: EvidenceWriter, rel: str, text: str, what: str) -> None:
    # Counted in bytes, as on disk: in characters, four-byte ones made a 32 MiB snapshot of an "8 M" cap.
    data = text.encode("utf-8", "replace")
    if len(data) > SNAPSHOT_LIMIT_BYTES:
        writer.caps.append(CapHit(what=what, limit=f"{SNAPSHOT_LIMIT_BYTES} bytes",
                                  detail=f"{rel} cut from {len(data)} bytes"))
        data = data[:SNAPSHOT_LIMIT_BYTES].decode("utf-8", "ignore").encode("utf-8")
    writer.write_bytes(rel, data)


async def perceive(
    contexts: ContextPool, *, url: str, writer: EvidenceWriter, log: PageLog, blocked: list[str],
    phase: dict[str, str], timings: dict[str, float], confine: bool = True,
) -> tuple[BrowserContext, Page]:
    """Static Perception of the app at ``url`` at mobile and desktop size, both at once (from ``contexts``).

    The desktop impression includes an axe-core audit (in an isolated world, so the app's own
    JavaScript never sees it).

    Returns the desktop context and page, still open and running again at real speed, with Playwright's
    clock installed before the page loaded: the interaction continues on the page the first impression
    was taken of.
    ``confine``: see :meth:`~evaluator.browser.context_pool.ContextPool.open`.
    """
    phase["name"] = "load"
    origin = "{0.scheme}://{0.netloc}".format(urlsplit(url))  # the app's: every request elsewhere is refused

    async def mobile() -> None:
        started = time.monotonic()
        context, page = await contexts.open(origin, blocked, mobile=True, confine=confine)
        try:
            log.attach(page, lambda: "mobile")
            timings_mobile, still = await load(page, url)
            await capture(page, "mobile", writer, timings_mobile)
            await still.detach()
        finally:
            await context.close()
        timings["static_mobile"] = time.monotonic() - started

    async def desktop() -> tuple[BrowserContext, Page]:
        started = time.monotonic()
        context, page = await contexts.open(origin, blocked, mobile=False, confine=confine)
        try:
            log.attach(page, lambda: phase["name"])
            timings_desktop, still = await load(page, url)
            await capture(page, "desktop", writer, timings_desktop)
            await snapshot_document(page, writer)
            audit_started = time.monotonic()
            writer.write_json(BundleFile.ACCESSIBILITY, await audit_accessibility(page, timeout_s=20))
            timings["accessibility"] = time.monotonic() - audit_started
            await release(page, still)
        except BaseException:
            await context.close()
            raise
        timings["static_desktop"] = time.monotonic() - started
        return context, page

    desktop_task = asyncio.ensure_future(desktop())
    try:
        await mobile()
    except BaseException:
        desktop_task.cancel()  # a timeout or failure must not leave the desktop context running
        try:
            context, _ = await desktop_task
        except BaseException:  # noqa: BLE001 - cancelled or failed: desktop() closed its own context
            pass
        else:
            await context.close()
        raise
    return await desktop_task
