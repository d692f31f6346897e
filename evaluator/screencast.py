"""Continuous screen video from the DevTools screencast, encoded to a constant-rate MP4.

Chromium sends a frame only when the screen changes, so each frame's timestamp is kept and the
previous frame is held until the next one: the video's clock then matches the action trace's.
"""

from __future__ import annotations

import asyncio
import base64
import functools
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

from playwright.async_api import CDPSession

from evaluator.errors import EncoderUnavailableError

VIDEO_SIZE = (1280, 800)


class ScreenRecorder:
    """Records screencast frames of one page to ``frames_dir`` with their wall-clock timestamps."""

    def __init__(self, cdp: CDPSession, frames_dir: Path, *, quality: int = 60) -> None:
        self._cdp = cdp
        self._dir = frames_dir
        self._quality = quality
        self._frames: list[tuple[float, str]] = []
        self._acks: set[asyncio.Task[Any]] = set()
        self.started_at = 0.0
        self.stopped_at = 0.0

    @property
    def frame_count(self) -> int:
        """Frames received so far."""
        return len(self._frames)

    def video_time(self, wall: float) -> float:
        """Position in the video of the wall-clock instant ``wall``."""
        return max(0.0, wall - self.started_at)

    async def start(self) -> None:
        """Begin recording."""
        self._dir.mkdir(parents=True, exist_ok=True)
        self._cdp.on("Page.screencastFrame", self._on_frame)
        self.started_at = time.time()
        await self._cdp.send(
            "Page.startScreencast",
            {"format": "jpeg", "quality": self._quality, "maxWidth": VIDEO_SIZE[0], "maxHeight": VIDEO_SIZE[1]},
        )

    async def stop(self) -> None:
        """Stop recording; safe to call on a page that has already closed."""
        self.stopped_at = time.time()
        try:
            await self._cdp.send("Page.stopScreencast")
        except Exception:  # noqa: BLE001 - the page may be gone (crash, closed); the frames are what count
            pass
        if self._acks:
            await asyncio.gather(*self._acks, return_exceptions=True)

    def _on_frame(self, event: dict[str, Any]) -> None:
        if self.stopped_at:
            return  # a frame in flight when recording stopped; the page may already be closed
        name = f"{len(self._frames):06d}.jpg"
        (self._dir / name).write_bytes(base64.b64decode(event["data"]))
        stamp = float(event.get("metadata", {}).get("timestamp") or time.time())
        self._frames.append((stamp, name))
        task = asyncio.ensure_future(self._cdp.send("Page.screencastFrameAck", {"sessionId": event["sessionId"]}))
        self._acks.add(task)
        task.add_done_callback(self._ack_done)

    def _ack_done(self, task: asyncio.Task[Any]) -> None:
        self._acks.discard(task)
        if not task.cancelled():
            task.exception()  # an ack to a page that closed meanwhile is expected; mark it retrieved

    def timeline(self) -> list[dict[str, float | str]]:
        """Frames with their video times, for the evidence bundle."""
        return [{"file": name, "video_time_s": round(self.video_time(t), 3)} for t, name in self._frames]

    def encode(self, out: Path, *, fps: int = 10) -> float:
        """Encode the frames to H.264 MP4 at ``fps``; returns the video's duration in seconds."""
        ffmpeg = shutil.which("ffmpeg")
        if ffmpeg is None:
            raise EncoderUnavailableError("ffmpeg is not installed: install Debian's 'ffmpeg' (make setup does)")
        if not self._frames:
            raise EncoderUnavailableError("the screencast delivered no frame; the page never painted")
        duration = max(self.stopped_at - self.started_at, 1.0 / fps)
        listing = self._dir / "frames.ffconcat"
        lines = ["ffconcat version 1.0"]
        times = [self.video_time(t) for t, _ in self._frames]
        times[0] = 0.0
        for i, (_, name) in enumerate(self._frames):
            end = times[i + 1] if i + 1 < len(times) else duration
            lines += [f"file {name}", f"duration {max(end - times[i], 0.001):.3f}"]
        lines.append(f"file {self._frames[-1][1]}")
        listing.write_text("\n".join(lines) + "\n")
        width, height = VIDEO_SIZE
        scale = f"scale={width}:{height}:force_original_aspect_ratio=decrease,pad={width}:{height}:-1:-1:color=black"
        cmd = [
            ffmpeg, "-nostdin", "-loglevel", "error", "-y", "-f", "concat", "-safe", "0", "-i", listing.name,
            "-vf", f"{scale},fps={fps}", "-t", f"{duration:.3f}", "-c:v", "libx264", "-preset", "ultrafast",
            "-crf", "30", "-pix_fmt", "yuv420p", "-movflags", "+faststart", str(out.resolve()),
        ]
        proc = subprocess.run(cmd, cwd=self._dir, capture_output=True, text=True, timeout=300, check=False)
        if proc.returncode != 0:
            raise EncoderUnavailableError(f"ffmpeg failed to encode the screen video: {proc.stderr.strip()[-500:]}")
        return duration

    def discard_frames(self) -> None:
        """Delete the raw frames once the video is encoded."""
        shutil.rmtree(self._dir, ignore_errors=True)


@functools.cache
def ffmpeg_version() -> str:
    """First line of ``ffmpeg -version``, or ``missing``."""
    ffmpeg = shutil.which("ffmpeg")
    if ffmpeg is None:
        return "missing"
    out = subprocess.run([ffmpeg, "-version"], capture_output=True, text=True, check=False).stdout
    return out.splitlines()[0] if out else "unknown"

