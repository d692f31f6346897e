"""Finding and launching Chromium: Playwright's bundled build when present, else the system one."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from playwright.async_api import Browser, BrowserContext, Playwright, Request, Route
from playwright.async_api import Error as PlaywrightError

from evaluator.errors import BrowserUnavailableError

_SYSTEM_CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")

# Without these, Chromium phones home at start-up; on a closed network that means a burst of
# refused connections and a slower launch (measured on these machines).
LAUNCH_ARGS = (
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--no-first-run",
    "--disable-quic",
    "--disable-dev-shm-usage",
    "--autoplay-policy=no-user-gesture-required",
    "--force-color-profile=srgb",
    "--font-render-hinting=none",
    # A key's scroll lands at once instead of animating for 0.2 s or more (longer under load): the explorer
    # undoes the browser's scroll before it measures a key's effect, and an animation still running then
    # moved the page after it was put back (a page the app left untouched measured as changed).
    "--disable-smooth-scrolling",
    # navigator.webdriver false: a page must not learn from it that it is evaluated (and behave differently).
    "--disable-blink-features=AutomationControlled",
    # Request interception (confine_to_origin) sees only HTTP: WebSockets, preconnects and WebRTC
    # went straight past it in a test with a canary. A dead proxy for everything but loopback, no
    # name resolution and no non-proxied UDP close those; the Docker sandbox has no network at all.
    "--proxy-server=http://127.0.0.1:9",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1",
    "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
    "--webrtc-ip-handling-policy=disable_non_proxied_udp",
)


def chromium_executable(playwright: Playwright) -> str | None:
    """Path of the browser to launch: ``EVALGRID_CHROMIUM``, Playwright's bundled build, or the system's.

    Returns ``None`` when Playwright's bundled build should be used as is.
    """
    override = os.environ.get("EVALGRID_CHROMIUM")
    if override:
        if not Path(override).exists():
            raise BrowserUnavailableError(f"EVALGRID_CHROMIUM={override} does not exist; fix or unset it")
        return override
    if Path(playwright.chromium.executable_path).exists():
        return None
    for name in _SYSTEM_CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    raise BrowserUnavailableError(
        "no Chromium found: install Debian's 'chromium' package (make setup does), "
        "or set EVALGRID_CHROMIUM to a Chromium binary"
    )


async def launch_browser(playwright: Playwright) -> Browser:
    """Launch headless Chromium with evalgrid's flags."""
    executable = chromium_executable(playwright)
    try:
        return await playwright.chromium.launch(
            executable_path=executable, headless=True, args=list(LAUNCH_ARGS)
        )
    except PlaywrightError as exc:
        raise BrowserUnavailableError(f"Chromium failed to start ({executable or 'bundled'}): {exc}") from exc


async def confine_to_origin(context: BrowserContext, origin: str, blocked: list[str]) -> None:
    """Let the context reach only ``origin``; every other request is aborted and appended to ``blocked``.

    This is request filtering, not a sandbox: the Docker backend adds the network boundary.
    """

    async def gate(route: Route, request: Request) -> None:
        url = request.url
        if url.startswith(origin) or url.startswith(("data:", "blob:", "about:")):
            await route.continue_()
            return
        blocked.append(url)
        await route.abort("blockedbyclient")

    await context.route("**/*", gate)
