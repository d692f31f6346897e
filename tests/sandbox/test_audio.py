"""The evidence video carries the page's sound, on the video's clock (Docker sandbox, real PulseAudio)."""

from __future__ import annotations

import asyncio
import json
import math
import statistics
from pathlib import Path

import pytest
from playwright.async_api import async_playwright

from cluster.sandbox.docker_backend import DockerSandbox
from evaluator.evidence.collect import collect_evidence
from evaluator.evidence.soundtrack import SILENCE_DBFS, audio_levels
from evaluator.models import AgentConfig
from tests.support import app_artifact, app_query, require_docker

pytestmark = [pytest.mark.browser, pytest.mark.docker]


@pytest.fixture(scope="module")
def bundles(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """The tone app collected twice on one sandbox: the second run shows the sound survives a reset."""
    require_docker()
    root = tmp_path_factory.mktemp("audio")

    async def scenario() -> None:
        sandbox = DockerSandbox()
        await sandbox.start()
        try:
            async with async_playwright() as playwright:
                browser = await sandbox.browser(playwright)
                for run in ("first", "second"):
                    await collect_evidence(browser=browser, artifact=app_artifact("tone-on-click.html"),
                                           query=app_query("tone-on-click.html"),
                                           # the whole 2.5 s after the click, whatever the page schedules:
                                           # the tone (1.5 s) is in the video
                                           agent=AgentConfig(max_steps=2, action_pause_ms=2500, settle="fixed"),
                                           bundle_dir=root / run, evidence_key=f"evidence-audio-{run}", host=sandbox)
        finally:
            await sandbox.close()

    asyncio.run(scenario())
    return [root / "first", root / "second"]


@pytest.mark.parametrize("run", [0, 1], ids=["fresh-sandbox", "reused-sandbox"])
def test_tone_after_a_click_is_in_the_video_silent_before_and_loud_after(bundles: list[Path], run: int) -> None:
    bundle = bundles[run]
    result = json.loads((bundle / "interaction" / "result.json").read_text())
    assert result["audio"]["track"] is True, result["audio"]
    trace = json.loads((bundle / "interaction" / "trace.json").read_text())
    click = next(step for step in trace if step["target"] and step["target"]["selector"] == "#play")
    levels = audio_levels(bundle / "interaction" / "video.mp4", window_s=0.05)
    assert levels, "the video has no audio track"
    pressed = click["input_at_s"]  # the press itself, on the video's clock
    before = [db for t, db in levels if t + 0.05 <= pressed]
    after = [db for t, db in levels if pressed + 0.2 <= t <= pressed + 1.2]  # the tone lasts 1.5 s
    level = 10 * math.log10(statistics.fmean(10 ** (db / 10) for db in after)) if after else SILENCE_DBFS
    onset = next(t for t, db in levels if db > -40)  # start of the first loud 50 ms window
    print(f"press at {pressed:.3f} s, sound onset window {onset:.3f} s ({(onset - pressed) * 1000:+.0f} ms), "
          f"max before {max(before):.1f} dBFS, after {level:.1f} dBFS ({sum(db > -30 for db in after)}/{len(after)} "
          f"windows loud), audio {result['audio']}")
    assert before and max(before) < -60  # silent before the click
    # Clearly not silent after it: the second after the press as a whole is near the tone's own
    # -15 dBFS. Not every 50 ms of it is: when the sandbox is starved of CPU the page's audio stream
    # underruns and the sink plays silence meanwhile. In 41 runs here 6 had such dropouts, up to
    # 90 ms at a time and 260 ms in all (the long ones in runs slow from the start); in one CI run a
    # 50 ms window of this second was silent, in one run here five of twenty. A 2048-frame Chromium
    # buffer (--audio-buffer-size) made them no rarer (7 of 10 runs) and delayed the sound by ~100 ms,
    # so it is not used.
    assert level > -20, after
    # Aligned: the sound starts one audio path's latency after the press (81-140 ms measured in 10 ms
    # windows over the same 41 runs). A track shifted further either way fails.
    assert pressed - 0.05 <= onset <= pressed + 0.25
