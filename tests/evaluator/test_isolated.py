"""Evalgrid's scripts run where the page cannot reach them (evaluator/browser/isolated.py), in real Chromium: a page
that hooks its own ``eval`` neither sees them nor changes what they return, listeners are read through CDP, a new
document gets a new world, and a crashed page fails a call at once."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from playwright.async_api import Browser
from playwright.async_api import Error as PlaywrightError

from evaluator.browser.isolated import evaluate, world
from evaluator.evidence.probes import interactive_elements, keyboard_driven, state_signature
from tests.support import with_browser

pytestmark = pytest.mark.browser

HOOKED = """<p id=p>plain</p><div id=tile>Tile</div><script>
  window.seen = 0;
  const realEval = window.eval;
  window.eval = function (source) { window.seen += 1; const v = realEval(source);
    return typeof v === 'function' ? () => 'forged' : v; };
  document.getElementById('tile').addEventListener('click', () => {});
  window.addEventListener('keydown', () => {}, true);
</script>"""


def test_a_page_that_hooks_eval_neither_sees_nor_rewrites_what_evalgrid_runs() -> None:
    async def scenario(browser: Browser) -> dict[str, Any]:
        page = await browser.new_page()
        await page.set_content(HOOKED)
        out = {"text": await evaluate(page, "(id) => document.getElementById(id).textContent", "p"),
               "signature": await state_signature(page),
               "tiles": [e.label for e in await interactive_elements(page)],
               "keys": await keyboard_driven(page)}
        out["seen"] = await world(page).in_page("() => window.seen")
        await page.set_content("<p id=p>second</p><script>document.addEventListener('keydown', () => {});</script>")
        out["after"] = await evaluate(page, "(id) => document.getElementById(id).textContent", "p")
        out["keys_after"] = await keyboard_driven(page)
        return out

    out = with_browser(scenario)
    assert out["text"] == "plain" and out["signature"] != "forged"
    assert out["seen"] == 0  # nothing of evalgrid's went through the page's eval
    assert out["tiles"] == ["Tile"]  # a div known only by its click listener, read through CDP
    assert out["keys"] == ""  # a key listener that captures on the window is a filter, not a keyboard-driven page
    assert out["after"] == "second" and out["keys_after"] == "listener"  # a new document, a new world


def test_a_call_into_a_crashed_page_fails_at_once() -> None:
    async def scenario(browser: Browser) -> str:
        page = await browser.new_page()
        await page.set_content("<p>x</p>")
        await evaluate(page, "() => 1")
        cdp = await page.context.new_cdp_session(page)
        crashed = asyncio.Event()
        page.on("crash", lambda _: crashed.set())
        try:
            await asyncio.wait_for(cdp.send("Page.crash"), 0.5)
        except (TimeoutError, PlaywrightError):
            pass  # a renderer that crashed never answers
        await asyncio.wait_for(crashed.wait(), 10)
        try:
            await asyncio.wait_for(evaluate(page, "() => 1"), 5)
        except PlaywrightError as exc:
            return str(exc)
        return "answered"

    assert with_browser(scenario).startswith("Target crashed")
