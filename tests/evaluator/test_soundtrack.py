"""The page's sound on the video's clock: PulseAudio null sink, monitor capture, mux, levels."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import tempfile
import time
import wave
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pytest
from playwright.async_api import async_playwright

from evaluator.browser.launch import LAUNCH_ARGS, chromium_executable
from evaluator.errors import ConfigError, InfrastructureError
from evaluator.evidence.soundtrack import (
    IGNORE_DEFAULT_ARGS,
    SAMPLE_RATE,
    SILENCE_DBFS,
    AudioCapture,
    AudioLevel,
    AudioRecorder,
    AudioSink,
    audio_levels,
    media_duration,
    mux_audio,
)
from tests.support import APPS

# timing: the tone must land on the video clock at the click; beside a sandbox test it missed.
pytestmark = pytest.mark.timing

needs_ffmpeg = pytest.mark.skipif(shutil.which("ffmpeg") is None, reason="ffmpeg is not installed")
needs_pulseaudio = pytest.mark.skipif(
    shutil.which("pulseaudio") is None or shutil.which("parec") is None,
    reason="PulseAudio is not installed (Debian's 'pulseaudio' package)",
)

LOUD_DBFS = -30.0
QUIET_DBFS = -60.0


def _silent_video(path: Path, duration: float) -> Path:
    subprocess.run(
        ["ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-f", "lavfi", "-i", "color=c=white:s=320x240:r=10",
         "-t", f"{duration:.3f}", "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", str(path)],
        check=True,
    )
    return path


def _tone_wav(path: Path, *, length_s: float, tone_from: float, tone_to: float) -> Path:
    t = np.arange(round(length_s * SAMPLE_RATE)) / SAMPLE_RATE
    mono = np.where((t >= tone_from) & (t < tone_to), 0.25 * np.sin(2 * np.pi * 440 * t), 0.0)
    frames = np.repeat((mono * 32767).astype("<i2"), 2)
    with wave.open(str(path), "wb") as out:
        out.setnchannels(2)
        out.setsampwidth(2)
        out.setframerate(SAMPLE_RATE)
        out.writeframes(frames.tobytes())
    return path


def _onset(levels: list[AudioLevel], threshold: float = -40.0) -> float:
    return next(level.time_s for level in levels if level.dbfs > threshold)


def _loud_span(levels: list[AudioLevel], window_s: float, threshold: float = -40.0) -> float:
    return sum(window_s for level in levels if level.dbfs > threshold)


@pytest.fixture
def short_dir() -> Iterator[Path]:
    # pytest's tmp_path can exceed the 107 bytes a unix socket path may have.
    with tempfile.TemporaryDirectory(prefix="evalgrid-pa-") as name:
        yield Path(name)


@needs_ffmpeg
@pytest.mark.parametrize("offset_s", [-0.4, 0.0, 0.3])
def test_mux_shifts_audio_by_offset_and_keeps_video_length(tmp_path: Path, offset_s: float) -> None:
    video = _silent_video(tmp_path / "video.mp4", 2.5)
    wav = _tone_wav(tmp_path / "audio.wav", length_s=1.8, tone_from=1.0, tone_to=1.5)
    out = tmp_path / "muxed.mp4"
    mux_audio(video, wav, offset_s=offset_s, out=out)
    assert abs(media_duration(out) - media_duration(video)) < 0.01
    levels = audio_levels(out, window_s=0.01)
    assert abs(len(levels) * 0.01 - 2.5) < 0.05, "the audio track is padded or cut to the video's length"
    assert abs(_onset(levels) - (1.0 + offset_s)) <= 0.015
    assert abs(_loud_span(levels, 0.01) - 0.5) <= 0.03
    assert levels[-1].dbfs == SILENCE_DBFS


@needs_ffmpeg
def test_audio_levels_is_empty_without_an_audio_track(tmp_path: Path) -> None:
    assert audio_levels(_silent_video(tmp_path / "video.mp4", 1.0)) == []


def test_audio_levels_rejects_a_non_positive_window(tmp_path: Path) -> None:
    with pytest.raises(ConfigError):
        audio_levels(tmp_path / "x.mp4", window_s=0)


def test_missing_pulseaudio_says_what_to_install(short_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("evaluator.evidence.soundtrack.shutil.which", lambda name: None)
    with pytest.raises(InfrastructureError, match="install Debian's 'pulseaudio'"):
        AudioSink(short_dir).start()


def test_a_runtime_dir_too_long_for_a_socket_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="too long"):
        AudioSink(tmp_path / ("x" * 120))


class _Take(NamedTuple):
    video_start: float
    video_end: float
    click_before: float
    click_after: float
    capture: AudioCapture
    probe: dict[str, Any]


async def _record_click(sink: AudioSink, wav: Path) -> _Take:
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=chromium_executable(playwright), headless=True, args=list(LAUNCH_ARGS),
            env={**os.environ, **sink.env}, ignore_default_args=list(IGNORE_DEFAULT_ARGS),
        )
        try:
            page = await browser.new_page()
            await page.goto((APPS / "tone-on-click.html").as_uri())
            recorder = AudioRecorder(sink, wav)
            video_start = time.monotonic()
            await asyncio.to_thread(recorder.start)
            box = await page.locator("#play").bounding_box()
            assert box is not None
            await asyncio.sleep(1.0)
            # mouse.click, not locator.click: no actionability checks between T and the click,
            # which took 50-140 ms and would blur the measurement.
            click_before = time.monotonic()
            await page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
            click_after = time.monotonic()
            await asyncio.sleep(2.0)
            capture = recorder.stop()
            video_end = time.monotonic()
            probe = await page.evaluate("window.probe")
        finally:
            await browser.close()
    return _Take(video_start, video_end, click_before, click_after, capture, probe)


@pytest.mark.browser
@needs_pulseaudio
@needs_ffmpeg
def test_tone_starts_on_the_video_clock_at_the_click(tmp_path: Path, short_dir: Path) -> None:
    with AudioSink(short_dir) as sink:
        take = asyncio.run(_record_click(sink, tmp_path / "audio.wav"))
    capture = take.capture
    assert capture.duration_s > 2.5 and abs(capture.lag_s) < 0.1, capture
    duration = take.video_end - take.video_start
    video = _silent_video(tmp_path / "video.mp4", duration)
    out = tmp_path / "muxed.mp4"
    mux_audio(video, capture.wav, offset_s=capture.started_at - take.video_start, out=out)

    click = take.click_before - take.video_start
    levels = audio_levels(out)
    # The soundtrack is cut to the video's own length, which ends on a frame (10 fps here), not to the take's
    # wall-clock length: a take of 3.750 s made a 3.8 s video, and against 3.750 the last window fell outside.
    assert levels and abs(levels[-1].time_s + 0.1 - media_duration(video)) < 0.15
    before = [lv for lv in levels if lv.time_s + 0.1 <= click - 0.05]
    during = [lv for lv in levels if click + 0.3 <= lv.time_s and lv.time_s + 0.1 <= click + 1.4]
    assert before and all(lv.dbfs < QUIET_DBFS for lv in before), before
    # Most of the tone, not all of it: a renderer starved of CPU misses its audio deadlines and the sink plays
    # silence (digital zero) meanwhile. CI saw 100 ms windows of -120 dBFS inside the tone beside a sandbox test;
    # those gaps are what the browser played, and the soundtrack records them faithfully.
    loud = [lv for lv in during if lv.dbfs > LOUD_DBFS]
    assert during and len(loud) >= 0.6 * len(during), during

    fine = audio_levels(out, window_s=0.005)
    onset = _onset(fine)
    error = onset - click
    wall_to_video = capture.started_at_wall - capture.started_at + take.video_start
    handler = take.probe["clickedAt"] / 1000 - wall_to_video
    print(  # shown with -s: the numbers the report quotes
        f"\nonset {onset:.3f}s, click {click:.3f}s (click() took {take.click_after - take.click_before:.3f}s), "
        f"error {error * 1000:+.0f} ms; handler ran at {handler:.3f}s; "
        f"baseLatency {take.probe['baseLatency']}, outputLatency {take.probe['outputLatency']}; "
        f"audio started {(capture.started_at - take.video_start) * 1000:+.1f} ms after the video; "
        f"lag {capture.lag_s * 1000:.1f} ms; tone heard for {_loud_span(fine, 0.005):.3f} s of 1.5"
    )
    # What the soundtrack owns is the sound's place on the video clock: the tone starts when the page's handler
    # started it, give or take the output latency. How long the browser took to deliver the click to the handler
    # is input latency, not the soundtrack's: it was 20-40 ms on an idle machine and up to 120 ms beside three
    # busy processes, which made a tight bound on the click itself fail under CI load.
    assert abs(onset - handler) <= 0.100, f"sound onset {onset:.3f}s vs handler {handler:.3f}s"
    assert -0.05 <= error <= 0.5, f"sound onset {onset:.3f}s vs click {click:.3f}s: {error * 1000:+.0f} ms"
    span = _loud_span(fine, 0.005)
    assert 0.9 <= span <= 1.55, f"the 1.5 s tone was heard for {span:.2f} s: stretched, or mostly lost"
