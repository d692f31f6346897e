"""The screen video encoded while it is recorded: the same video as encoding afterwards, and a safe fallback.

Real ffmpeg and real JPEG frames; the DevTools session is a stand-in that delivers the frames (the recorder's
handling of a real screencast is covered by the collector's tests, which now get their video this way).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
import signal
import time
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from evaluator.evidence import live_encode
from evaluator.evidence.live_encode import LiveEncoder
from evaluator.evidence.screencast import VIDEO_FPS, ScreenRecorder

_COLOURS = [(0, 0, 255), (0, 255, 0), (255, 0, 0), (0, 255, 255), (255, 0, 255)]


def _jpeg(bgr: tuple[int, int, int], size: tuple[int, int] = (1280, 800)) -> bytes:
    image = np.zeros((size[1], size[0], 3), np.uint8)
    image[:] = bgr
    ok, data = cv2.imencode(".jpg", image)
    assert ok
    return bytes(data)


def _frames_of(video: Path) -> list[np.ndarray]:
    capture = cv2.VideoCapture(str(video))
    assert capture.get(cv2.CAP_PROP_FPS) == VIDEO_FPS
    frames: list[np.ndarray] = []
    while True:
        ok, frame = capture.read()
        if not ok:
            return frames
        frames.append(frame)


def _colour_index(frame: np.ndarray) -> int:
    centre = frame[frame.shape[0] // 2, frame.shape[1] // 2].astype(int)
    return int(np.argmin([np.abs(centre - np.array(c)).sum() for c in _COLOURS]))


class _Cdp:
    def __init__(self) -> None:
        self.handler: Any = None

    def on(self, event: str, handler: Any) -> None:
        self.handler = handler

    async def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return {}


async def _record(tmp: Path, schedule: list[tuple[float, int]], *, length_s: float, live: bool,
                  before_finish: Any = None) -> tuple[Path, float, ScreenRecorder]:
    """Frames of colour ``i`` at ``t`` seconds after the start, delivered in real time, then the video."""
    cdp = _Cdp()
    recorder = ScreenRecorder(cdp, tmp / "frames", live=live)  # type: ignore[arg-type]
    await recorder.start()
    for at, colour in schedule:
        await asyncio.sleep(max(0.0, recorder.started_at + at - time.time()))
        cdp.handler({"data": base64.b64encode(_jpeg(_COLOURS[colour])).decode(),
                     "metadata": {"timestamp": recorder.started_at + at}, "sessionId": 1})
    await asyncio.sleep(max(0.0, recorder.started_at + length_s - time.time()))
    await recorder.stop()
    if before_finish is not None:
        before_finish(recorder)
    out = tmp / "video.mp4"
    duration = await recorder.finish(out)
    return out, duration, recorder


_SCHEDULE = [(0.02, 0), (0.35, 1), (0.62, 2), (1.31, 3), (1.87, 4)]  # none on a slot boundary


def test_live_video_shows_each_frame_from_its_slot_on_and_lasts_the_recording(tmp_path: Path) -> None:
    video, duration, _ = asyncio.run(_record(tmp_path, _SCHEDULE, length_s=2.5, live=True))
    assert not (tmp_path / "frames" / "live.mp4").exists(), "the live video is moved into place"
    frames = _frames_of(video)
    assert abs(len(frames) - duration * VIDEO_FPS) <= 1 and duration >= 2.5
    shown = [_colour_index(f) for f in frames]
    for slot, colour in enumerate(shown):
        # the frame on the screen at the slot's start: never one that came later
        due = [c for at, c in _SCHEDULE if at <= slot / VIDEO_FPS + 1e-9]
        assert colour == (due[-1] if due else 0), (slot, shown)


def test_live_and_afterwards_encodes_agree_slot_for_slot(tmp_path: Path) -> None:
    live, live_s, _ = asyncio.run(_record(tmp_path / "live", _SCHEDULE, length_s=2.5, live=True))
    batch, batch_s, _ = asyncio.run(_record(tmp_path / "batch", _SCHEDULE, length_s=2.5, live=False))
    a, b = [_colour_index(f) for f in _frames_of(live)], [_colour_index(f) for f in _frames_of(batch)]
    # each lasts its own recording (which a loaded machine may stop a little late): compared where both run
    assert abs(len(a) - live_s * VIDEO_FPS) <= 1 and abs(len(b) - batch_s * VIDEO_FPS) <= 1
    # the afterwards encode rounds a frame to the nearest slot, the live one to the next: they may differ by a slot
    # at each change, and nowhere else
    differing = [i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y]
    assert len(differing) <= len(_SCHEDULE), (a, b)
    assert all(any(abs(i - at * VIDEO_FPS) <= 1 for at, _ in _SCHEDULE) for i in differing), (a, b)


def test_a_failed_live_encoder_falls_back_to_encoding_the_kept_frames(tmp_path: Path) -> None:
    video, duration, _ = asyncio.run(_record(tmp_path, _SCHEDULE, length_s=2.0, live=True,
                                             before_finish=lambda r: r.abandon_video()))
    shown = [_colour_index(f) for f in _frames_of(video)]
    assert shown[0] == 0 and shown[-1] == 4 and abs(len(shown) - duration * VIDEO_FPS) <= 1


def test_frames_of_another_size_are_fitted_into_the_same_video(tmp_path: Path) -> None:
    async def scenario() -> tuple[bool, Path]:
        out = tmp_path / "sizes.mp4"
        encoder = LiveEncoder(fps=VIDEO_FPS, output_args=["-vf", "scale=1280:800", "-c:v", "libx264",
                                                          "-pix_fmt", "yuv420p", str(out)], log=tmp_path / "log")
        await encoder.start()
        encoder.add(0.0, _jpeg(_COLOURS[0]))
        encoder.add(0.5, _jpeg(_COLOURS[1], size=(390, 844)))  # a resize to a phone's viewport mid-run
        encoder.add(1.0, _jpeg(_COLOURS[2]))
        return await encoder.finish(1.5), out

    made, out = asyncio.run(scenario())
    frames = _frames_of(out)
    assert made and len(frames) == 15 and {f.shape for f in frames} == {(800, 1280, 3)}
    assert [_colour_index(f) for f in frames[::5]] == [0, 1, 2]


def test_an_encoder_given_no_frame_fails_and_says_so_instead_of_waiting(tmp_path: Path) -> None:
    async def scenario() -> tuple[bool, str | None]:
        encoder = LiveEncoder(fps=VIDEO_FPS, output_args=[str(tmp_path / "none.mp4")], log=tmp_path / "log")
        await encoder.start()
        made = await asyncio.wait_for(encoder.finish(1.0), 30)
        return made, encoder.failed

    made, why = asyncio.run(scenario())
    assert not made and why is not None and "ffmpeg exited" in why


def test_a_stalled_encoder_is_stopped_at_its_timeout_and_cancelling_a_finish_stops_ffmpeg(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """ffmpeg is stopped (SIGSTOP) to stand for an encoder that never drains: ``finish`` must return within its
    timeout, and a cancelled ``finish`` must not leave the process behind. Reaches into the encoder's process,
    which no public call exposes."""
    monkeypatch.setattr(live_encode, "_FINISH_TIMEOUT_S", 1.0)

    async def stalled(cancel: bool) -> tuple[bool | None, float, int | None]:
        encoder = LiveEncoder(fps=VIDEO_FPS, output_args=["-c:v", "libx264", str(tmp_path / f"{cancel}.mp4")],
                              log=tmp_path / "log")
        await encoder.start()
        assert encoder._process is not None
        encoder.add(0.0, _jpeg(_COLOURS[0]) * 40)  # enough bytes to fill the pipe while ffmpeg is stopped
        os.kill(encoder._process.pid, signal.SIGSTOP)
        started = time.monotonic()
        task = asyncio.ensure_future(encoder.finish(30.0))
        made: bool | None = None
        if cancel:
            await asyncio.sleep(0.3)
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        else:
            made = await task
        elapsed = time.monotonic() - started
        with contextlib.suppress(ProcessLookupError):  # already killed and reaped: what is wanted
            os.kill(encoder._process.pid, signal.SIGCONT)
        return made, elapsed, await asyncio.wait_for(encoder._process.wait(), 10)

    made, elapsed, code = asyncio.run(stalled(cancel=False))
    assert made is False and elapsed < 5 and code is not None
    _, elapsed, code = asyncio.run(stalled(cancel=True))
    assert elapsed < 5 and code is not None
