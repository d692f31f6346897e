"""The context pool on a real Chromium: contexts made ahead are the ones handed out, fresh, pinned and confined."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Browser
from playwright.async_api import Error as PlaywrightError

from evaluator.browser.context_pool import ContextPool
from evaluator.browser.frozen_web import START_TIME
from evaluator.browser.serve import serve_directory
from tests.support import with_browser

pytestmark = pytest.mark.browser

PAGE = """<!doctype html><html><head><meta name="viewport" content="width=device-width"><title>pool</title></head>
<body><script>
window.seen = {now: Date.now(), random: [Math.random(), Math.random()], width: innerWidth,
               touch: navigator.maxTouchPoints, stored: localStorage.getItem('run'), cookie: document.cookie};
localStorage.setItem('run', 'earlier'); document.cookie = 'run=earlier';
</script></body></html>"""
QUIET_S = 0.5
"""How long a test waits to see that no context is being made (making one takes about 0.25 s here)."""


def _pool_test(scenario: Any) -> Any:
    root = Path(tempfile.mkdtemp())
    (root / "index.html").write_text(PAGE, encoding="utf-8")

    async def run(browser: Browser) -> Any:
        with serve_directory(root, []) as origin:
            return await scenario(browser, origin)

    return with_browser(run)


async def _seen(pool: ContextPool, origin: str, *, mobile: bool, blocked: list[str] | None = None) -> dict[str, Any]:
    context, page = await pool.open(origin, [] if blocked is None else blocked, mobile=mobile)
    await page.goto(f"{origin}/index.html", wait_until="load")
    seen: dict[str, Any] = await page.evaluate("window.seen")
    await context.close()
    return seen


def test_a_pool_ahead_hands_out_the_contexts_it_made_before_the_run() -> None:
    async def scenario(browser: Browser, origin: str) -> None:
        pool = ContextPool(browser, ahead=True)
        await pool.ready()
        made = list(browser.contexts)
        assert len(made) == 2 and all(len(c.pages) == 1 for c in made)
        desktop = await pool.open(origin, [], mobile=False)
        mobile = await pool.open(origin, [], mobile=True)
        assert {desktop.context, mobile.context} == set(made)
        assert len(browser.contexts) == 2  # nothing was made on demand
        await pool.close()

    _pool_test(scenario)


def test_the_next_pair_is_made_at_prepare_not_when_the_run_closes_its_contexts_and_shares_nothing_with_it() -> None:
    async def scenario(browser: Browser, origin: str) -> None:
        pool = ContextPool(browser, ahead=True)
        await pool.ready()
        first = await pool.open(origin, [], mobile=False)
        await first.page.goto(f"{origin}/index.html", wait_until="load")
        mobile_seen = await _seen(pool, origin, mobile=True)
        assert mobile_seen["stored"] is None
        await first.context.close()
        await asyncio.sleep(QUIET_S)
        assert browser.contexts == []  # the app may still be running: nothing is made until it has stopped
        pool.prepare()
        await pool.ready()
        assert len(browser.contexts) == 2
        seen = await _seen(pool, origin, mobile=False)
        assert seen["stored"] is None and seen["cookie"] == ""
        await pool.close()

    _pool_test(scenario)


def test_contexts_made_ahead_are_made_as_those_made_on_demand_pinned_and_confined() -> None:
    async def scenario(browser: Browser, origin: str) -> list[dict[str, Any]]:
        seen = []
        for ahead in (True, False):
            pool = ContextPool(browser, ahead=ahead)
            await pool.ready()
            for mobile in (False, True):
                blocked: list[str] = []
                context, page = await pool.open(origin, blocked, mobile=mobile)
                await page.goto(f"{origin}/index.html", wait_until="load")
                await page.evaluate("fetch('http://cdn.example-analytics.io/pixel.gif').catch(() => {})")
                await page.wait_for_timeout(200)
                seen.append({**await page.evaluate("window.seen"), "blocked": blocked})
                await context.close()
            await pool.close()
        return seen

    ahead_desktop, ahead_mobile, demand_desktop, demand_mobile = _pool_test(scenario)
    assert ahead_desktop == demand_desktop and ahead_mobile == demand_mobile
    assert ahead_desktop["now"] == (START_TIME.timestamp() + 1) * 1000  # the clock is held where it is pinned
    assert ahead_desktop["random"] == ahead_mobile["random"]  # seeded
    assert (ahead_desktop["width"], ahead_desktop["touch"]) == (1280, 0)
    assert ahead_mobile["width"] == 390 and ahead_mobile["touch"] > 0
    assert ahead_desktop["blocked"] == ["http://cdn.example-analytics.io/pixel.gif"]


def test_a_pool_without_ahead_makes_nothing_until_asked() -> None:
    async def scenario(browser: Browser, origin: str) -> None:
        pool = ContextPool(browser)
        await asyncio.sleep(QUIET_S)
        assert browser.contexts == []
        await _seen(pool, origin, mobile=False)
        pool.prepare()
        await asyncio.sleep(QUIET_S)
        assert browser.contexts == []

    _pool_test(scenario)


def test_close_closes_the_contexts_not_handed_out() -> None:
    async def scenario(browser: Browser, origin: str) -> None:
        pool = ContextPool(browser, ahead=True)
        await pool.ready()
        await pool.close()
        assert browser.contexts == []
        taken = await pool.open(origin, [], mobile=False)  # still usable, on demand only
        await taken.context.close()
        pool.prepare()
        await asyncio.sleep(QUIET_S)
        assert browser.contexts == []

    _pool_test(scenario)


def test_a_page_that_crashed_while_waiting_is_replaced_not_handed_to_the_run() -> None:
    async def scenario(browser: Browser, origin: str) -> None:
        pool = ContextPool(browser, ahead=True)
        await pool.ready()
        waiting = next(c for c in browser.contexts if c.pages[0].viewport_size == {"width": 1280, "height": 800})
        crashed = asyncio.get_running_loop().create_future()
        waiting.pages[0].once("crash", lambda _: crashed.set_result(None))
        cdp = await waiting.new_cdp_session(waiting.pages[0])
        crash = asyncio.ensure_future(cdp.send("Page.crash"))  # never answered: the renderer is gone
        await asyncio.wait_for(crashed, 10)
        crash.cancel()
        seen = await _seen(pool, origin, mobile=False)
        assert seen["width"] == 1280
        assert waiting not in browser.contexts
        await pool.close()

    _pool_test(scenario)


def test_a_pool_on_a_browser_that_went_away_fails_at_once() -> None:
    async def scenario(browser: Browser, origin: str) -> None:
        pool = ContextPool(browser, ahead=True)
        await pool.ready()
        await browser.close()
        with pytest.raises(PlaywrightError):
            await asyncio.wait_for(pool.open(origin, [], mobile=False), 10)
        pool.prepare()  # nothing to make on a browser that is gone
        await pool.ready()
        await asyncio.wait_for(pool.close(), 10)

    _pool_test(scenario)
