"""The environment freeze, in real Chromium: page state and screen frames stand still while frozen."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
from playwright.async_api import Browser, Page

from evaluator.agents.observation import Action, ActionKind, Observation
from evaluator.browser.context_pool import DESKTOP
from evaluator.browser.freeze import FreezeController
from evaluator.browser.serve import serve_directory
from evaluator.evidence.bundle import EvidenceWriter
from evaluator.evidence.console import PageLog
from evaluator.evidence.interaction import Interaction
from evaluator.evidence.probes import wait_for_render
from evaluator.evidence.screencast import ScreenRecorder
from evaluator.models import AgentConfig
from tests.support import APPS, with_browser

pytestmark = pytest.mark.browser

PROBE = """() => ({ticks: window.probe.ticks, frames: window.probe.frames, bumps: window.probe.bumps,
                   now: Date.now(), anim: document.getAnimations()[0].currentTime})"""


async def _open(browser: Browser, origin: str) -> tuple[Page, Any]:
    context = await browser.new_context(viewport=DESKTOP)
    await context.clock.install()
    page = await context.new_page()
    await page.goto(f"{origin}/freeze-clock.html")
    await wait_for_render(page, timeout_s=1.0)
    return page, await context.new_cdp_session(page)


def _gray(path: Path) -> np.ndarray:
    image = cv2.imread(str(path), cv2.IMREAD_GRAYSCALE)
    assert image is not None
    return image


def test_freeze_stops_clock_timers_animation_frames_and_css_then_resumes(tmp_path: Path) -> None:
    async def scenario(browser: Browser) -> dict[str, Any]:
        with serve_directory(APPS, []) as origin:
            page, cdp = await _open(browser, origin)
            freezer = FreezeController(page, cdp)
            await freezer.start()
            recorder = ScreenRecorder(cdp, tmp_path / "frames", live=False)
            await recorder.start()
            warm = await page.evaluate(PROBE)
            warm_at = time.time()
            await asyncio.sleep(1.0)
            running = await page.evaluate(PROBE)
            running_at = time.time()
            await freezer.freeze()
            frozen_at = time.time()
            before = await page.evaluate(PROBE)
            await asyncio.sleep(2.0)
            after = await page.evaluate(PROBE)
            # The window ends when the thaw is asked for: its first command already restarts the CSS
            # animation, a round trip before the call returns.
            thawed_at = time.time()
            await freezer.thaw()
            await asyncio.sleep(1.5)
            resumed = await page.evaluate(PROBE)
            resumed_at = time.time()
            await recorder.stop()
            return {"warm": warm, "running": running, "before": before, "after": after, "resumed": resumed,
                    "recorder": recorder, "warm_at": warm_at, "running_at": running_at, "frozen_at": frozen_at,
                    "thawed_at": thawed_at, "resumed_at": resumed_at}

    r = with_browser(scenario)
    before, after, resumed = r["before"], r["after"], r["resumed"]
    # The page's own state did not move during 2 s of freeze.
    assert after == before
    # ... and runs at speed afterwards: its clock and CSS in real milliseconds, its timers (a 50 ms interval) and
    # animation frames at the rates the same page kept before the freeze. Under CI load headless Chromium draws
    # from 60 frames a second down to 15 and an interval fires late, so fixed rates were a test of the machine, not
    # of the thaw; beside the suite on two cores the rates after the thaw were measured at 0.46-1.0 of those
    # before. A thaw that left timers or frames stopped or throttled keeps none or a small fraction.
    elapsed = r["resumed_at"] - r["thawed_at"]
    for counter in ("ticks", "frames"):
        rate_before = (r["running"][counter] - r["warm"][counter]) / (r["running_at"] - r["warm_at"])
        assert rate_before > 5, f"the page kept almost no {counter} before the freeze"
        assert resumed[counter] - after[counter] >= 0.3 * rate_before * elapsed, counter
    assert 0.75 * elapsed * 1000 <= resumed["now"] - after["now"] <= 1.25 * elapsed * 1000 + 100
    assert resumed["anim"] - after["anim"] >= 0.7 * elapsed * 1000

    # The screen frames agree: none differs from another inside the frozen window, and they do change after. The
    # window opens a second after the freeze: a picture the page drew before it can still reach the screen later
    # under load (a CI rehearsal had one swapped more than 0.3 s after the freeze returned); a page left running
    # changes the screen through the whole window.
    recorder: ScreenRecorder = r["recorder"]
    timeline = recorder.timeline()
    start = recorder.video_time(r["frozen_at"]) + 1.0
    end = recorder.video_time(r["thawed_at"])
    shown = [f for f in timeline if float(f["video_time_s"]) <= start][-1]
    inside = [f for f in timeline if start < float(f["video_time_s"]) < end]
    reference = _gray(tmp_path / "frames" / str(shown["file"]))
    for frame in inside:
        assert np.abs(_gray(tmp_path / "frames" / str(frame["file"])).astype(int) - reference).max() <= 8
    later = [f for f in timeline if float(f["video_time_s"]) > end + 0.2]
    assert later, "the screencast sent no frame after the thaw: the page did not resume"
    assert any(np.abs(_gray(tmp_path / "frames" / str(f["file"])).astype(int) - reference).max() > 8 for f in later)


def test_page_stays_frozen_through_a_slow_deliberation_in_the_interaction_loop(tmp_path: Path) -> None:
    """A policy that thinks for 2 s per step: the page must not advance while it thinks."""
    samples: list[tuple[dict[str, Any], dict[str, Any]]] = []

    async def scenario(browser: Browser) -> dict[str, Any]:
        with serve_directory(APPS, []) as origin:
            page, cdp = await _open(browser, origin)
            freezer = FreezeController(page, cdp)
            await freezer.start()

            async def slow_policy(observation: Observation) -> Action:
                if observation.step >= 2:
                    return Action(kind=ActionKind.FINISH, reason="enough")
                first = await page.evaluate(PROBE)
                await asyncio.sleep(2.0)
                samples.append((first, await page.evaluate(PROBE)))
                bump = next(e.index for e in observation.elements if e.selector == "#bump")
                return Action(kind=ActionKind.CLICK, element=bump)

            writer = EvidenceWriter(tmp_path / "bundle")
            recorder = ScreenRecorder(cdp, tmp_path / "frames", live=False)
            await recorder.start()
            interaction = Interaction(page=page, app_url=f"{origin}/freeze-clock.html", writer=writer,
                                      recorder=recorder, freezer=freezer, log=PageLog(), policy=slow_policy,
                                      config=AgentConfig(max_steps=5, coverage_gate=False))
            outcome = await interaction.run()
            await recorder.stop()
            return {"trace": outcome.trace, "final": await page.evaluate(PROBE)}

    r = with_browser(scenario)
    assert len(samples) == 2
    for first, second in samples:
        assert first == second
    assert [round(s.deliberation_s) for s in r["trace"]] == [2, 2]
    assert r["final"]["bumps"] == 2  # the actions themselves ran, on a thawed page
