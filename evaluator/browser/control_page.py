"""The control page: a trivial known-good app run on a fresh sandbox, to tell a killed sandbox's cause.

When an attempt's browser dies under an app, the worker replaces the sandbox and runs this page on the new
one before trying the app again. Only if the control passes and the app then kills the fresh sandbox again is
the failure the app's crash; a control that fails means the machinery is broken (an infrastructure error).
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import NamedTuple

from playwright.async_api import Browser
from playwright.async_api import Error as PlaywrightError

from evaluator.browser.app_host import AppHost
from evaluator.errors import InfrastructureError

CONTROL_TIMEOUT_S = 30.0
"""Serving, loading and checking the control page (a sandbox's first page load included)."""

_CONTROL_HTML = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>evalgrid control page</title></head>
<body><h1 id="control">control</h1><script>document.getElementById('control').dataset.ran = 'yes';</script>
</body></html>
"""


class ControlCheck(NamedTuple):
    """Whether the control page loaded, ran its script and was screenshotted, and what went wrong if not."""

    passed: bool
    detail: str


async def run_control_page(browser: Browser, host: AppHost, *, timeout_s: float = CONTROL_TIMEOUT_S) -> ControlCheck:
    """Serve the control page on ``host``, load it in a new context of ``browser`` and check it ran.

    Never raises for a failed check (that is its answer); bounded by ``timeout_s``.
    """
    try:
        await asyncio.wait_for(_check(browser, host), timeout_s)
    except TimeoutError:
        return ControlCheck(False, f"the control page did not load within {timeout_s:g} s")
    except (PlaywrightError, InfrastructureError, OSError) as exc:
        return ControlCheck(False, f"the control page failed: {type(exc).__name__}: {str(exc)[:300]}")
    return ControlCheck(True, "the control page loaded, ran its script and was screenshotted")


async def _check(browser: Browser, host: AppHost) -> None:
    with tempfile.TemporaryDirectory(prefix="evalgrid-control-") as root:
        (Path(root) / "index.html").write_text(_CONTROL_HTML, encoding="utf-8")
        async with host.serve(Path(root), []) as origin:
            context = await browser.new_context()
            try:
                page = await context.new_page()
                await page.goto(f"{origin}/index.html", wait_until="load")
                ran = await page.evaluate("document.getElementById('control').dataset.ran")
                if ran != "yes":
                    raise InfrastructureError(f"the control page's script did not run (marker {ran!r})")
                await page.screenshot()
            finally:
                await context.close()
