"""The evidence video carries the page's sound, on the video's clock (Docker sandbox, real PulseAudio)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from playwright.async_api import async_playwright

from cluster.docker_sandbox import DockerSandbox
from evaluator.collect import collect_evidence
from evaluator.models import AgentConfig
from evaluator.soundtrack import audio_levels
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
                                           agent=AgentConfig(max_steps=2, action_pause_ms=2500),
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
    onset = next(t for t, db in levels if db > -40)  # start of the first loud 50 ms window
    print(f"press at {pressed:.3f} s, sound onset window {onset:.3f} s ({(onset - pressed) * 1000:+.0f} ms), "
          f"max before {max(before):.1f} dBFS, min after {min(after):.1f} dBFS, audio {result['audio']}")
    assert before and max(before) < -60  # silent before the click
    assert after and min(after) > -30  # clearly not silent after it
    # Aligned: the sound starts within the audio path's latency (~40 ms measured) of the press,
    # give or take one 50 ms window.
    assert pressed - 0.05 <= onset <= pressed + 0.15
