"""Settling on signals, in real Chromium: the wait after an input ends when nothing more is due, not after a pause.

Each case is a page with one kind of pending work after a click (a timer, a request, a transition, a game loop), and
what it asserts could fail either way: a wait that ended too early misses the app's reaction, one that never
ends early makes a still page wait the whole window. The windows are wide (seconds) so that a loaded machine
cannot make a short wait look long.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Browser, Page, Route

from evaluator.browser.serve import serve_directory
from evaluator.evidence.settle import RequestsInFlight, settle_after_input
from tests.support import with_browser

pytestmark = pytest.mark.browser

WINDOW_S = 2.0

PAGES = {
    "still.html": "<button onclick=\"this.textContent='done'\">go</button>",
    "timer.html": "<button onclick=\"setTimeout(() => { this.textContent = 'late' }, 600)\">go</button>",
    "beyond.html": "<button onclick=\"setTimeout(() => { this.textContent = 'late' }, 5000)\">go</button>",
    "fetch.html": ("<button onclick=\"fetch('slow.json').then(r => r.json()).then(j => { this.textContent = j.v })\">"
                   "go</button>"),
    "fade.html": ("<style>#p { opacity: 0; transition: opacity 700ms linear } #p.on { opacity: 1 }</style>"
                  "<button onclick=\"document.getElementById('p').className = 'on'\">go</button><p id=p>panel</p>"),
    "loop.html": ("<canvas id=c width=50 height=50></canvas><button>go</button><script>"
                  "let n = 0; (function f() { n++; requestAnimationFrame(f); })();</script>"),
}


async def _slow(route: Route) -> None:
    await asyncio.sleep(0.8)
    await route.fulfill(status=200, content_type="application/json", body='{"v": "fetched"}')


async def _click_and_settle(browser: Browser, origin: str, name: str, *, clock: bool = True) -> dict[str, Any]:
    context = await browser.new_context()
    if clock:
        await context.clock.install()
    page: Page = await context.new_page()
    await page.route("**/slow.json", _slow)
    requests = RequestsInFlight(page)
    await page.goto(f"{origin}/{name}")
    await page.wait_for_load_state("load")
    since = time.time()
    await page.click("button")
    result = await settle_after_input(page, since=since, window_end=time.time() + WINDOW_S, timeout_s=WINDOW_S + 1.5,
                                      requests=requests)
    text = await page.inner_text("button")
    opacity = await page.evaluate("getComputedStyle(document.getElementById('p') || document.body).opacity")
    await context.close()
    return {"seconds": result.seconds, "stable": result.stable, "text": text, "opacity": float(opacity)}


def _scenarios(tmp_path: Path) -> dict[str, dict[str, Any]]:
    for name, body in PAGES.items():
        (tmp_path / name).write_text(f"<!doctype html><html><body>{body}</body></html>", encoding="utf-8")

    async def scenario(browser: Browser) -> dict[str, dict[str, Any]]:
        with serve_directory(tmp_path, []) as origin:
            results = {name: await _click_and_settle(browser, origin, name) for name in PAGES}
            results["still-without-clock"] = await _click_and_settle(browser, origin, "still.html", clock=False)
            return results

    return with_browser(scenario)


@pytest.fixture(scope="module")
def settled(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    return _scenarios(tmp_path_factory.mktemp("settle"))


def test_a_still_page_is_observed_once_painted_not_after_the_window(settled: dict[str, dict[str, Any]]) -> None:
    still = settled["still.html"]
    assert still["stable"] and still["text"] == "done"
    assert still["seconds"] < WINDOW_S / 2


def test_a_timer_due_within_the_window_is_waited_for(settled: dict[str, dict[str, Any]]) -> None:
    timer = settled["timer.html"]
    assert timer["text"] == "late", "the wait ended before the app's 600 ms reaction"
    assert timer["seconds"] < WINDOW_S, "a timer that fired must not hold the wait to the end of the window"


def test_a_timer_beyond_the_window_is_not_waited_for(settled: dict[str, dict[str, Any]]) -> None:
    beyond = settled["beyond.html"]
    assert beyond["text"] == "go"
    assert beyond["seconds"] < WINDOW_S / 2


def test_a_request_the_input_started_is_waited_for(settled: dict[str, dict[str, Any]]) -> None:
    fetched = settled["fetch.html"]
    assert fetched["text"] == "fetched", "the wait ended while the click's request was in flight"


def test_a_transition_ending_within_the_window_is_waited_for(settled: dict[str, dict[str, Any]]) -> None:
    assert settled["fade.html"]["opacity"] == 1.0


def test_a_page_that_keeps_scheduling_frames_gets_the_whole_window(settled: dict[str, dict[str, Any]]) -> None:
    assert settled["loop.html"]["seconds"] >= WINDOW_S - 0.1


def test_without_the_page_clock_the_whole_window_is_waited(settled: dict[str, dict[str, Any]]) -> None:
    assert settled["still-without-clock"]["seconds"] >= WINDOW_S - 0.1


def test_a_page_that_breaks_the_signals_costs_it_the_window_not_the_run(tmp_path: Path) -> None:
    """A page that replaces what the signals are read from (the clock's methods, getAnimations, Math) is waited
    for until its window ends, as a fixed pause would, and the wait neither raises nor runs past its timeout."""
    (tmp_path / "hostile.html").write_text(
        "<!doctype html><body><button>go</button><script>"
        "document.getAnimations = () => { throw new Error('no'); };"
        "const c = globalThis.__pwClock && globalThis.__pwClock.controller;"
        "if (c) { c._firstTimer = () => ({callAt: 'soon'}); }"
        "Math.max = () => 'never'; Math.min = () => NaN;"
        "</script></body>", encoding="utf-8")

    async def scenario(browser: Browser) -> dict[str, Any]:
        with serve_directory(tmp_path, []) as origin:
            return await _click_and_settle(browser, origin, "hostile.html")

    result = with_browser(scenario)
    assert result["stable"]
    assert WINDOW_S - 0.1 <= result["seconds"] < WINDOW_S + 1.0


def test_a_keys_scroll_lands_at_once_so_the_page_stays_where_it_is_put_back() -> None:
    """Space on a long page scrolls it. The explorer puts the page back where it was before it measures the key's
    effect; with the browser's smooth scrolling, a scroll still animating then (a loaded machine stretches the
    animation past the settle) carried on after the page was put back, and a key the app ignored measured as a
    change. Put back 30 ms after the key, the page must stay put."""

    async def scenario(browser: Browser) -> list[tuple[int, int]]:
        page = await browser.new_page(viewport={"width": 1280, "height": 800})
        await page.set_content("<p>Use the arrow keys.</p><div style='height: 5000px'></div>")
        positions = []
        for _ in range(3):
            await page.keyboard.press("Space")
            await asyncio.sleep(0.03)
            scrolled = await page.evaluate("scrollY")
            await page.evaluate("window.scrollTo({top: 0, behavior: 'instant'})")
            await asyncio.sleep(0.5)
            positions.append((scrolled, await page.evaluate("scrollY")))
        return positions

    positions = with_browser(scenario)
    assert all(scrolled > 0 for scrolled, _ in positions), positions
    assert all(after == 0 for _, after in positions), positions
