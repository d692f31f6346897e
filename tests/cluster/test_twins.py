"""Mutation twins (cluster/calibration/twins.py): each operator breaks exactly what it names, in a real Chromium.

One small page has every behaviour the operators break. For each operator the original is shown to work
and the twin not to, by driving both with Playwright the same way; the twin's first screen is checked
unchanged where the operator promises it. Every scenario runs in one Chromium, each page in a context of its own.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

import pytest
from playwright.async_api import Browser, Page, async_playwright

from cluster.calibration.twins import AESTHETIC_OPERATORS, FUNCTIONAL_OPERATORS, Operator, make_twin
from evaluator.browser.launch import launch_browser
from evaluator.evidence.probes import keyboard_driven

T = TypeVar("T")

PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Twin fixture</title>
<script src="https://cdn.tailwindcss.com"></script>
<link rel="stylesheet" href="https://fonts.googleapis.com/css2?family=Inter">
<style>
  body { font-family: Inter, sans-serif; background: #10223a; color: #f4f7fb; margin: 2rem; }
  h1 { color: #ffd166; }
</style>
</head>
<body>
  <h1 style="letter-spacing: 2px">Shelf</h1>
  <form id="add"><input id="field" placeholder="New item"><button id="submit" type="submit">Add</button></form>
  <ul id="items"></ul>
  <label><input type="checkbox" id="flag"> flag</label> <span id="flags">0</span>
  <button id="inc" type="button">Count</button> <span id="count">0</span>
  <button id="inline" type="button" onclick="document.getElementById('count').textContent = 'inline'">Inline</button>
  <p>Keys: <span id="keys">0</span></p>
  <script>
    const items = document.getElementById('items');
    function addItem(text) {
      const li = document.createElement('li');
      li.textContent = text + ' ';
      const del = document.createElement('button');
      del.type = 'button'; del.className = 'del'; del.textContent = '×';
      del.setAttribute('aria-label', 'Delete ' + text);
      del.addEventListener('click', () => li.remove());
      li.appendChild(del);
      items.appendChild(li);
    }
    addItem('Rice');
    document.getElementById('add').addEventListener('submit', (e) => {
      e.preventDefault();
      const field = document.getElementById('field');
      if (field.value) { addItem(field.value); field.value = ''; }
    });
    document.getElementById('flag').addEventListener('change', (e) => {
      document.getElementById('flags').textContent = e.target.checked ? '1' : '0';
    });
    document.getElementById('inc').addEventListener('click', () => {
      const c = document.getElementById('count'); c.textContent = String(Number(c.textContent) + 1);
      c.style.fontWeight = 'bold';  // frameworks write styles as properties, not attributes
    });
    document.addEventListener('keydown', (e) => {
      const k = document.getElementById('keys');
      if (e.target === document.body) k.textContent = String(Number(k.textContent) + 1);
    });
  </script>
</body>
</html>
"""
ANSWER = f"Here is the app.\n\n```html\n{PAGE}```\n\nEnjoy!\n"


async def _probe(page: Page) -> dict[str, Any]:
    """Exercise every behaviour once; report what each did."""
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    out: dict[str, Any] = {"items_at_load": await page.locator("#items li").count()}
    await page.fill("#field", "Beans")
    await page.press("#field", "Enter")
    out["after_enter"] = await page.locator("#items li").count()
    await page.fill("#field", "Lentils")
    await page.click("#submit")
    out["after_submit"] = await page.locator("#items li").count()
    await page.click("#flag")
    out["checked"] = await page.is_checked("#flag")
    out["flags"] = await page.text_content("#flags")
    await page.click("#inc")
    out["count"] = await page.text_content("#count")
    out["bold"] = await page.evaluate("document.getElementById('count').style.fontWeight")
    before = await page.locator("#items li").count()
    await page.locator("#items li .del").first.click()
    out["deleted"] = before - await page.locator("#items li").count()
    await page.locator("body").click(position={"x": 5, "y": 5})
    await page.keyboard.press("ArrowRight")
    await page.keyboard.press("Space")
    out["keys"] = await page.text_content("#keys")
    await page.fill("#field", "typed")
    out["typed"] = await page.input_value("#field")
    out["errors"] = errors
    return out


async def _load(browser: Browser, html: str, width: int = 1280) -> Page:
    context = await browser.new_context(viewport={"width": width, "height": 800})
    page = await context.new_page()
    # no network here: the page's CDN requests are refused, as an unknown host would be in the sandbox
    await page.route("http*://**/*", lambda route: route.abort())
    await page.set_content(html, wait_until="load")
    return page


def _code(answer: str) -> str:
    return answer.split("```html\n", 1)[1].split("```", 1)[0]


@dataclass(frozen=True)
class _Chromium:
    """The module's one Chromium and the event loop it runs on: one launch for every scenario, not one each."""

    browser: Browser
    loop: asyncio.AbstractEventLoop

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return self.loop.run_until_complete(coroutine)


@pytest.fixture(scope="module")
def chromium() -> Iterator[_Chromium]:
    loop = asyncio.new_event_loop()
    playwright = loop.run_until_complete(async_playwright().start())
    try:
        browser = loop.run_until_complete(launch_browser(playwright))
        try:
            yield _Chromium(browser, loop)
        finally:
            loop.run_until_complete(browser.close())
    finally:
        loop.run_until_complete(playwright.stop())
        loop.close()


@dataclass(frozen=True)
class _Functional:
    """The original and each functional twin, loaded once each."""

    probes: dict[str, dict[str, Any]]
    """What the probe saw (for ``scripts_removed``, the list at load and the twin's code: it is not probed)."""
    first_screens: dict[str, bytes]
    """The screenshot taken right after the load, before the probe touched the page, of the original and of each
    twin that promises an unchanged first screen (all but ``scripts_removed``)."""


@pytest.fixture(scope="module")
def results(chromium: _Chromium) -> _Functional:
    async def scenario(browser: Browser) -> _Functional:
        probes: dict[str, dict[str, Any]] = {}
        shots: dict[str, bytes] = {}
        twins = {op: make_twin(ANSWER, op) for op in FUNCTIONAL_OPERATORS}
        assert None not in twins.values(), twins  # every operator applies to the page
        pages = {"original": PAGE} | {op.value: _code(twin or "") for op, twin in twins.items()}
        for name, code in pages.items():
            page = await _load(browser, code)
            if name == Operator.SCRIPTS_REMOVED.value:  # nothing to probe: with no script the form submits natively
                probes[name] = {"items_at_load": await page.locator("#items li").count(), "code": code}
            else:
                shots[name] = await page.screenshot()
                probes[name] = await _probe(page)
            await page.context.close()
        return _Functional(probes, shots)
    return chromium.run(scenario(chromium.browser))


def test_the_original_works(results: _Functional) -> None:
    original = results.probes["original"]
    assert original == {"items_at_load": 1, "after_enter": 2, "after_submit": 3, "checked": True, "flags": "1",
                        "count": "1", "bold": "bold", "deleted": 1, "keys": "2", "typed": "typed", "errors": []}


@pytest.mark.parametrize(("operator", "broken"), [
    (Operator.ENTER_SWALLOWED, {"after_enter": 1, "after_submit": 1}),
    (Operator.CHECKBOX_DEAD, {"checked": False, "flags": "0"}),
    (Operator.CLICK_THROWS, {"count": "0", "bold": "", "deleted": 0}),
    (Operator.RENDER_FROZEN, {"after_enter": 1, "after_submit": 1, "flags": "0", "count": "0", "bold": "",
                              "deleted": 0, "keys": "0"}),
    (Operator.DELETE_NOOP, {"deleted": 0}),
    (Operator.KEYS_SWALLOWED, {"keys": "0"}),
])
def test_each_operator_breaks_what_it_names_and_nothing_else(results: _Functional, operator: Operator,
                                                              broken: dict[str, Any]) -> None:
    original, twin = results.probes["original"], results.probes[operator.value]
    for name, value in original.items():
        if name == "errors":
            continue
        assert twin[name] == broken.get(name, value), f"{operator.value}: {name}"
    if operator is Operator.CLICK_THROWS:
        assert twin["errors"] and all("Cannot read properties of undefined" in e for e in twin["errors"])
    else:
        assert twin["errors"] == []


def test_scripts_removed_keeps_cdn_libraries_and_drops_the_apps_own_code(results: _Functional) -> None:
    twin = results.probes["scripts_removed"]
    assert twin["items_at_load"] == 0  # the page's own script drew the list: the twin shows none
    assert '<script src="https://cdn.tailwindcss.com"></script>' in twin["code"]
    assert "addItem" not in twin["code"] and "onclick" not in twin["code"]
    assert '<form id="add">' in twin["code"] and "<style>" in twin["code"]


def test_functional_twins_leave_the_first_screen_as_it_was(results: _Functional) -> None:
    shots = results.first_screens
    assert set(shots) == {"original"} | {op.value for op in FUNCTIONAL_OPERATORS if op is not Operator.SCRIPTS_REMOVED}
    for name, shot in shots.items():
        assert shot == shots["original"], name


def test_aesthetic_twins_damage_the_design_and_keep_the_function(chromium: _Chromium) -> None:
    async def scenario(browser: Browser) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for op in AESTHETIC_OPERATORS:
            code = _code(make_twin(ANSWER, op) or "")
            page = await _load(browser, code, width=390)
            out[op.value] = {
                "style": await page.evaluate("""() => {
                    const b = getComputedStyle(document.body), h = getComputedStyle(document.querySelector('h1'));
                    return {font: b.fontFamily, bg: b.backgroundColor, h1: h.color, bodyColor: b.color,
                            spacing: h.letterSpacing, scroll: document.documentElement.scrollWidth};
                }"""),
                "probe": await _probe(page),
            }
            out[op.value]["code"] = code
            await page.context.close()
        return out
    r = chromium.run(scenario(chromium.browser))
    removed = r["css_removed"]
    assert removed["style"]["bg"] == "rgba(0, 0, 0, 0)" and removed["style"]["font"] != "Inter, sans-serif"
    assert removed["style"]["spacing"] == "normal"  # the style attribute went too
    assert "cdn.tailwindcss.com" not in removed["code"] and "fonts.googleapis.com" not in removed["code"]
    assert r["fixed_width"]["style"]["scroll"] >= 1400
    collapsed = r["contrast_collapsed"]["style"]
    # the heading's text is now its background lifted by 14 per channel: about 1.2:1 instead of 11:1
    assert collapsed["bg"] == "rgb(16, 34, 58)" and collapsed["h1"] == "rgb(30, 48, 72)"
    for op in AESTHETIC_OPERATORS:
        probe = r[op.value]["probe"]
        assert (probe["after_enter"], probe["after_submit"], probe["flags"], probe["count"], probe["deleted"],
                probe["keys"]) == (2, 3, "1", "1", 1, "2"), op.value


def test_components_get_the_shim_first_and_operators_that_cannot_apply_say_so() -> None:
    jsx = ("A counter.\n\n```jsx\nimport { useState } from 'react';\n"
           "export default function App() { return null; }\n```\n")
    twin = make_twin(jsx, Operator.CHECKBOX_DEAD)
    assert twin is not None and twin.startswith("A counter.\n\n```jsx\n// Twin operator checkbox_dead")
    assert twin.endswith("import { useState } from 'react';\nexport default function App() { return null; }\n```\n")
    assert make_twin(jsx, Operator.SCRIPTS_REMOVED) is None  # a component's script is the app itself
    vue = "**App.vue**\n```vue\n<template><p>{{ n }}</p></template>\n<script setup>\nimport { ref } from 'vue'\n" \
          "const n = ref(1)\n</script>\n```\n"
    twin = make_twin(vue, Operator.KEYS_SWALLOWED)
    assert twin is not None and "<script setup>\n// Twin operator keys_swallowed" in twin
    assert make_twin("No code here, sorry.", Operator.CHECKBOX_DEAD) is None


def test_a_twin_does_not_look_keyboard_driven_when_its_original_does_not(chromium: _Chromium) -> None:
    """The shims' own key listeners would make the explorer press keys on the twin only (a biased pair)."""
    quiet = ("```html\n<!DOCTYPE html><html><head><title>Quiet</title></head><body><button id='b'>Go</button>"
             "<script>document.getElementById('b').addEventListener('click', () => {});</script></body></html>\n```\n")

    async def scenario(browser: Browser) -> dict[str, str]:
        out = {}
        for name, answer in [("original", quiet)] + [(op.value, make_twin(quiet, op) or "") for op in Operator
                                                     if op is not Operator.SCRIPTS_REMOVED and not op.patched]:
            context = await browser.new_context()
            page = await context.new_page()
            await page.set_content(answer.split("```html\n", 1)[1].split("```", 1)[0], wait_until="load")
            out[name] = await keyboard_driven(page)
            await context.close()
        return out
    assert set(chromium.run(scenario(chromium.browser)).values()) == {""}


def test_css_removed_edits_the_markup_and_never_a_scripts_text() -> None:
    """A library's code holds style attributes and style elements in its strings (jQuery, Selectize): cutting
    them out of a script broke it (a SyntaxError at load), which is no aesthetic twin."""
    page = ("<!DOCTYPE html><html><head><style>p { color: red }</style></head><body>"
            "<p style=\"margin: 0\">x</p>"
            "<script>const tip = '<div style=\"color: red\">'; const css = '<style>a{}</style>';</script>"
            "<script src=\"https://cdn.tailwindcss.com\"></script></body></html>")
    twin = make_twin(f"```html\n{page}\n```\n", Operator.CSS_REMOVED) or ""
    assert "<p>x</p>" in twin and "p { color: red }" not in twin
    assert "const tip = '<div style=\"color: red\">'; const css = '<style>a{}</style>';" in twin
    assert "cdn.tailwindcss.com" not in twin
