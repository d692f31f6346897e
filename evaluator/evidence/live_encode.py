"""Encoding the screen video while it is recorded, so that a run's video is ready when its interaction ends.

The screencast's frames arrive when the screen changes; the video is constant-rate. Each frame is held until the
next one comes, so the encoder is fed, for every slot of ``1/fps`` seconds, the frame that was on the screen at
the slot's start (a frame is never shown before its time). Slots are also filled as time passes, a little behind
the clock so that a frame still in transit is not passed over, so a still page costs neither a burst of writes
later nor an idle encoder now. ffmpeg runs on the host meanwhile, at the lowest CPU priority, instead of after
the run.

The frames are also kept on disk by the recorder: when this encoder fails in any way (ffmpeg missing or dying,
a backlog it cannot drain, a finish that takes too long), the recorder encodes them afterwards.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import shutil
import time
from pathlib import Path

_MAX_BACKLOG_BYTES = 64 * 1024 * 1024
"""Bytes written but not yet read by ffmpeg past which live encoding is given up (the frames stay on disk)."""
_FINISH_TIMEOUT_S = 300.0
_PUMP_EVERY_S = 0.5
_TRANSIT_S = 0.5
"""How far behind the clock slots are filled by time alone: a frame is delivered well within this of its time."""


class LiveEncoder:
    """One ffmpeg process fed JPEG frames through a pipe, one per video slot.

    ``output_args`` are the encoder's output options and file, as the recorder's batch encode uses them;
    ``log`` receives ffmpeg's messages (a file, not a pipe: a pipe nobody reads could stall it).
    """

    def __init__(self, *, fps: int, output_args: list[str], log: Path) -> None:
        self._fps = fps
        self._output_args = output_args
        self._log = log
        self._process: asyncio.subprocess.Process | None = None
        self._pump: asyncio.Task[None] | None = None
        self._previous: bytes | None = None
        self._next_slot = 0
        self.failed: str | None = None
        """Why live encoding was given up (the recorder then encodes its frames afterwards), or None."""

    async def start(self) -> None:
        """Start ffmpeg; when it cannot start, the encoder is marked failed and takes no frame."""
        ffmpeg = shutil.which("ffmpeg")
        if ffmpeg is None:
            self.failed = "ffmpeg is not installed"
            return
        try:
            with self._log.open("wb") as log:
                self._process = await asyncio.create_subprocess_exec(
                    *_lowest_priority(), ffmpeg, "-nostdin", "-loglevel", "error", "-y", "-f", "image2pipe",
                    "-framerate", str(self._fps), "-c:v", "mjpeg", "-i", "pipe:0", *self._output_args,
                    stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.DEVNULL, stderr=log)
        except OSError as exc:
            self.failed = f"ffmpeg could not start: {exc}"

    def begin(self, started_at: float) -> None:
        """The recording's clock starts at wall time ``started_at``: slots are filled as it runs from now on."""
        if self._process is not None and not self.failed:
            self._pump = asyncio.ensure_future(self._fill_as_time_passes(started_at))

    def add(self, video_time: float, jpeg: bytes) -> None:
        """A frame kept at ``video_time`` seconds: the slots before it get the frame it follows."""
        if self._previous is not None:
            self._fill(math.ceil(video_time * self._fps - 1e-9))
        self._previous = jpeg

    async def finish(self, duration_s: float) -> bool:
        """Fill the slots up to ``duration_s`` with the last frame and wait for the video; whether it was made.

        Bounded by a timeout; on any failure, cancellation included, ffmpeg is stopped before this returns.
        """
        self._stop_pump()
        self._fill(max(1, round(duration_s * self._fps)))
        process = self._process
        if process is None or process.stdin is None or self.failed:
            self.abandon()
            return False
        try:
            async with asyncio.timeout(_FINISH_TIMEOUT_S):
                process.stdin.close()
                with contextlib.suppress(ConnectionError):
                    await process.stdin.wait_closed()
                code = await process.wait()
        except BaseException as exc:
            self.abandon("ffmpeg did not finish the video in time" if isinstance(exc, TimeoutError) else
                         "the recording was abandoned")
            if isinstance(exc, TimeoutError):
                await process.wait()
                return False
            raise
        if code != 0:
            message = self._log.read_text(errors="replace").strip()[-300:] if self._log.exists() else ""
            self.failed = f"ffmpeg exited with {code}: {message}"
        return code == 0

    def abandon(self, why: str = "the recording was abandoned") -> None:
        """Stop ffmpeg now (a run cut short, or an encoder that fell behind); idempotent."""
        self.failed = self.failed or why
        self._stop_pump()
        if self._process is not None and self._process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self._process.kill()

    def _stop_pump(self) -> None:
        if self._pump is not None:
            self._pump.cancel()
            self._pump = None

    async def _fill_as_time_passes(self, started_at: float) -> None:
        process = self._process
        assert process is not None and process.stdin is not None
        while not self.failed:
            await asyncio.sleep(_PUMP_EVERY_S)
            self._fill(math.floor((time.time() - started_at - _TRANSIT_S) * self._fps))
            with contextlib.suppress(ConnectionError):
                await process.stdin.drain()

    def _fill(self, until_slot: int) -> None:
        """Write the previous frame into every slot before ``until_slot``."""
        process = self._process
        if self.failed or process is None or process.stdin is None or self._previous is None:
            return
        while self._next_slot < until_slot:
            if process.returncode is not None or process.stdin.is_closing():
                self.abandon(f"ffmpeg stopped early (exit {process.returncode})")
                return
            if process.stdin.transport.get_write_buffer_size() > _MAX_BACKLOG_BYTES:
                self.abandon("ffmpeg fell behind the screencast")
                return
            process.stdin.write(self._previous)
            self._next_slot += 1


def _lowest_priority() -> list[str]:
    """The prefix that runs the encoder at the lowest CPU priority, where the host has ``nice``: it then uses
    only the time the run's browser and driver leave idle (which is what makes encoding alongside them cheaper
    than encoding after), and catches up when the interaction ends."""
    nice = shutil.which("nice")
    return [nice, "-n", "19"] if nice else []
