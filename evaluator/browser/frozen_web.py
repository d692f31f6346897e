"""The frozen web environment: what every run's browser context is pinned to.

The same artifact must give the same first screenshot in repeated runs (UXBench's local-first
argument): fonts come from the image, libraries from the sandbox's offline CDN mirror, and the
locale, time zone, clock start and ``Math.random`` are fixed here.

The first impression is taken at a fixed instant of the page's own time: the page loads with its
clock stopped, then timers and animation frames are run for :data:`FIRST_LOOK` by Playwright's
clock and CSS animations are set to the same point, so neither the machine's speed nor the moment
of the screenshot shows in it. The page runs at real speed again after :func:`release`.

Page time never runs ahead of the network: it advances in steps of :data:`_STEP_MS`, each taken only once
the page's requests have arrived. A module loader that schedules its next step with a timer once a script
arrives (an AMD loader) would otherwise see its timers all run while its scripts were still on the way, and
then wait on a stopped clock: the first impression was blank. A page still loading at :data:`FIRST_LOOK` is
looked at once its requests stop (at most :data:`_LONGEST_LOOK` of page time, :data:`_NETWORK_WAIT_S` of waiting).
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

from playwright.async_api import BrowserContext, CDPSession, Page
from playwright.async_api import Error as PlaywrightError

from evaluator.browser.isolated import evaluate
from evaluator.evidence.probes import page_script
from evaluator.evidence.settle import RequestsInFlight
from evaluator.models import MirroredPackage, WebEnvironment

LOCALE = "en-US"
TIMEZONE = "UTC"
START_TIME = datetime(2025, 6, 2, 9, 30, tzinfo=UTC)
"""A Monday morning: calendars, clocks and greetings render the same in every run."""
RANDOM_SEED = 20250602
FIRST_LOOK = timedelta(seconds=1)
"""Page time at the first impression: entrance animations (and Chart.js's default one) have run."""
_STEP_MS = 50
_LONGEST_LOOK = timedelta(seconds=5)
_NETWORK_WAIT_S = 5.0
"""Most wall time the first look waits for requests in flight (a request that never ends must not hold it)."""


async def pin_context(context: BrowserContext) -> None:
    """Pin a fresh context (before any page): the seeded ``Math.random`` and the clock stopped at its start."""
    await context.clock.install(time=START_TIME)
    # (pause_at must lie ahead of the installed clock, which runs until paused: one second on.)
    await context.clock.pause_at(START_TIME + timedelta(seconds=1))
    await context.add_init_script(page_script("determinism").replace("__SEED__", str(RANDOM_SEED)))


async def first_look(page: Page, requests: RequestsInFlight) -> CDPSession:
    """Bring a loaded page, clock stopped, to :data:`FIRST_LOOK` of its own time, or on until its ``requests``
    (tracked since before it was opened) stop; it stays stopped there.

    Returns the CDP session that holds CSS animations still, for :func:`release`.
    """
    cdp = await page.context.new_cdp_session(page)
    await cdp.send("Animation.enable")
    await cdp.send("Animation.setPlaybackRate", {"playbackRate": 0})
    look_ms = int(FIRST_LOOK.total_seconds() * 1000)
    deadline = time.monotonic() + _NETWORK_WAIT_S
    advanced, quiet = 0, False
    try:
        while advanced < look_ms or (not quiet and advanced < _LONGEST_LOOK.total_seconds() * 1000):
            await requests.finished(deadline)
            started = requests.count
            await page.clock.run_for(_STEP_MS)
            advanced += _STEP_MS
            quiet = requests.count == started or time.monotonic() >= deadline
        await requests.finished(deadline)
    except PlaywrightError:
        pass  # a page that threw or went away during its first look is seen as it is then
    # After the timers: an animation or transition they started is set to the same point too.
    await evaluate(page, "(ms) => document.getAnimations().forEach((a) => { try { a.currentTime = ms; } catch {} })",
                   advanced or look_ms)
    return cdp


async def release(page: Page, cdp: CDPSession) -> None:
    """Let the page run at real speed again after :func:`first_look`."""
    await cdp.send("Animation.setPlaybackRate", {"playbackRate": 1})
    await page.clock.resume()
    await cdp.detach()


def web_environment(mirror: list[MirroredPackage]) -> WebEnvironment:
    """The manifest's record of the environment, with the mirror's contents."""
    return WebEnvironment(mirror=mirror, locale=LOCALE, timezone=TIMEZONE, start_time=START_TIME.isoformat(),
                          random_seed=RANDOM_SEED)
