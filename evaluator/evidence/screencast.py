"""Continuous screen video from the DevTools screencast, encoded to a constant-rate MP4.

Chromium sends a frame only when the screen changes, so each frame's timestamp is kept and the
previous frame is held until the next one: the video's clock then matches the action trace's.
The video is encoded while it is recorded (:mod:`evaluator.evidence.live_encode`); the frames are
also kept on disk, and encoded afterwards when live encoding failed.

An app decides how much its screen changes, so the recording is bounded whatever it does: at most
:data:`MAX_FPS` frames a second are kept, the kept frames' bytes are budgeted (past the budget, one a
second; past the hard cap, none but the last), and the encoder's bitrate is capped. Each limit the run
reaches is a cap note in the evidence manifest.
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
from evaluator.evidence.live_encode import LiveEncoder
from evaluator.models import CapHit

VIDEO_SIZE = (1280, 800)
VIDEO_FPS = 10
"""The video's frame rate (the kept frames are finer; the video holds each until its slot)."""
MAX_FPS = 25
"""Frames kept per second of the page's time at most (a noisy canvas sends about 60)."""
FRAME_BUDGET_BYTES = 160 * 1024 * 1024
"""Past this many bytes of kept frames, one frame a second is kept."""
FRAME_CAP_BYTES = 224 * 1024 * 1024
"""Past this, no frame is kept but the last (written when recording stops)."""
MAX_BITRATE = "2500k"
"""The encoder's bitrate cap (``-maxrate``; ``-bufsize`` twice it): a noisy page's video stays a few MB a minute."""


class ScreenRecorder:
    """Records screencast frames of one page to ``frames_dir`` with their wall-clock timestamps.

    ``caps`` receives a note for each limit the recording reaches (the bundle's writer's list). ``live``
    encodes the video while recording (off: only after, by :meth:`encode`).
    """

    def __init__(self, cdp: CDPSession, frames_dir: Path, *, quality: int = 60,
                 caps: list[CapHit] | None = None, live: bool = True) -> None:
        self._cdp = cdp
        self._dir = frames_dir
        self._quality = quality
        self._frames: list[tuple[float, str]] = []
        self._acks: set[asyncio.Task[Any]] = set()
        self._caps = caps if caps is not None else []
        self._bytes = 0
        self._dropped = {"fps": 0, "budget": 0, "cap": 0}
        self._held: tuple[float, bytes, str] | None = None
        """The latest frame not kept (too soon, or over budget): kept when recording stops if nothing followed."""
        self._live = LiveEncoder(fps=VIDEO_FPS, output_args=_output_args((frames_dir / "live.mp4").resolve()),
                                 log=frames_dir / "live.log") if live else None
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
        if self._live is not None:
            await self._live.start()
        self.started_at = time.time()
        if self._live is not None:
            self._live.begin(self.started_at)
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
        if self._held is not None:
            self._keep(*self._held[:2])  # the screen as it last was, at its own time
            self._held = None
        for why, count in self._dropped.items():
            if count:
                self._caps.append(_FRAME_CAPS[why](count))

    def _on_frame(self, event: dict[str, Any]) -> None:
        if self.stopped_at:
            return  # a frame in flight when recording stopped; the page may already be closed
        data = base64.b64decode(event["data"])
        stamp = float(event.get("metadata", {}).get("timestamp") or time.time())
        interval = 1.0 if self._bytes > FRAME_BUDGET_BYTES else 1.0 / MAX_FPS
        last = self._frames[-1][0] if self._frames else None
        if self._held is not None and (last is None or stamp - last >= interval):
            # The held frame's slot has come: it was the screen until this one, so it is kept (at most one
            # interval late) and the end of every burst of changes is in the video.
            held_stamp, held_data, held_why = self._held
            self._held = None
            if self._bytes + len(held_data) <= FRAME_CAP_BYTES:
                self._keep(held_stamp if last is None else max(held_stamp, last + interval), held_data)
                last = self._frames[-1][0]
            else:
                self._dropped[held_why] += 1
        why = ("cap" if self._bytes + len(data) > FRAME_CAP_BYTES else
               None if last is None or stamp - last >= interval else
               "budget" if interval == 1.0 else "fps")
        if why is None:
            self._keep(stamp, data)
        else:
            if self._held is not None:  # superseded before its slot came
                self._dropped[self._held[2]] += 1
            self._held = (stamp, data, why)
        task = asyncio.ensure_future(self._cdp.send("Page.screencastFrameAck", {"sessionId": event["sessionId"]}))
        self._acks.add(task)
        task.add_done_callback(self._ack_done)

    def _keep(self, stamp: float, data: bytes) -> None:
        name = f"{len(self._frames):06d}.jpg"
        (self._dir / name).write_bytes(data)
        if self._live is not None:
            self._live.add(self.video_time(stamp) if self._frames else 0.0, data)
        self._bytes += len(data)
        self._frames.append((stamp, name))

    def _ack_done(self, task: asyncio.Task[Any]) -> None:
        self._acks.discard(task)
        if not task.cancelled():
            task.exception()  # an ack to a page that closed meanwhile is expected; mark it retrieved

    def timeline(self) -> list[dict[str, float | str]]:
        """Frames with their video times, for the evidence bundle."""
        return [{"file": name, "video_time_s": round(self.video_time(t), 3)} for t, name in self._frames]

    @property
    def duration(self) -> float:
        """The video's length: the recording's, at least one frame."""
        return max(self.stopped_at - self.started_at, 1.0 / VIDEO_FPS)

    async def finish(self, out: Path) -> float:
        """The video at ``out``, from the live encoder or, where it failed, encoded now; its duration in seconds."""
        if not self._frames:
            raise EncoderUnavailableError("the screencast delivered no frame; the page never painted")
        if self._live is not None and await self._live.finish(self.duration):
            (self._dir / "live.mp4").replace(out)
            self._note_bitrate(out)
            return self.duration
        return await asyncio.to_thread(self.encode, out)

    def encode(self, out: Path) -> float:
        """Encode the kept frames to H.264 MP4 at :data:`VIDEO_FPS`; returns the video's duration in seconds."""
        ffmpeg = shutil.which("ffmpeg")
        if ffmpeg is None:
            raise EncoderUnavailableError("ffmpeg is not installed: install Debian's 'ffmpeg' (make setup does)")
        if not self._frames:
            raise EncoderUnavailableError("the screencast delivered no frame; the page never painted")
        duration = self.duration
        listing = self._dir / "frames.ffconcat"
        lines = ["ffconcat version 1.0"]
        times = [self.video_time(t) for t, _ in self._frames]
        times[0] = 0.0
        for i, (_, name) in enumerate(self._frames):
            end = times[i + 1] if i + 1 < len(times) else duration
            lines += [f"file {name}", f"duration {max(end - times[i], 0.001):.3f}"]
        lines.append(f"file {self._frames[-1][1]}")
        listing.write_text("\n".join(lines) + "\n")
        cmd = [ffmpeg, "-nostdin", "-loglevel", "error", "-y", "-f", "concat", "-safe", "0", "-i", listing.name,
               "-t", f"{duration:.3f}", *_output_args(out.resolve(), fps_filter=True)]
        proc = subprocess.run(cmd, cwd=self._dir, capture_output=True, text=True, timeout=300, check=False)
        if proc.returncode != 0:
            raise EncoderUnavailableError(f"ffmpeg failed to encode the screen video: {proc.stderr.strip()[-500:]}")
        self._note_bitrate(out)
        return duration

    def _note_bitrate(self, out: Path) -> None:
        kbps = out.stat().st_size * 8 / 1000 / self.duration
        if kbps > 0.8 * int(MAX_BITRATE[:-1]):
            self._caps.append(CapHit(what="video_bitrate", limit=f"{MAX_BITRATE}bit/s",
                                     detail=f"the video ran at {kbps:.0f} kbit/s: the encoder's cap lowered its "
                                            "quality where the screen changed most"))

    def abandon_video(self) -> None:
        """No video will be made (the run was cut short): a live encoder still running stops; the frames stay."""
        if self._live is not None:
            self._live.abandon()

    def discard_frames(self) -> None:
        """Delete the raw frames once the video is encoded (or will not be)."""
        self.abandon_video()
        shutil.rmtree(self._dir, ignore_errors=True)


def _output_args(out: Path, *, fps_filter: bool = False) -> list[str]:
    """ffmpeg's options for the evidence video: the frame fitted to :data:`VIDEO_SIZE`, H.264 under the bitrate
    cap (``fps_filter``: resampled to :data:`VIDEO_FPS`, for input that is not constant-rate already)."""
    width, height = VIDEO_SIZE
    scale = f"scale={width}:{height}:force_original_aspect_ratio=decrease,pad={width}:{height}:-1:-1:color=black"
    return ["-vf", f"{scale},fps={VIDEO_FPS}" if fps_filter else scale, "-c:v", "libx264", "-preset", "ultrafast",
            "-crf", "30", "-maxrate", MAX_BITRATE, "-bufsize", f"{2 * int(MAX_BITRATE[:-1])}k",
            "-pix_fmt", "yuv420p", "-movflags", "+faststart", str(out)]


_FRAME_CAPS = {
    "fps": lambda n: CapHit(what="screencast_fps", limit=f"{MAX_FPS} frames/s",
                            detail=f"{n} frames arriving faster were not kept (the video holds the one before)"),
    "budget": lambda n: CapHit(what="screencast_bytes",
                               limit=f"{FRAME_BUDGET_BYTES // (1024 * 1024)} MiB, then 1 frame/s",
                               detail=f"{n} frames past the budget were not kept"),
    "cap": lambda n: CapHit(what="screencast_bytes", limit=f"{FRAME_CAP_BYTES // (1024 * 1024)} MiB",
                            detail=f"{n} frames past the cap were not kept (the video holds the last kept frame, "
                                   "then the screen as it was when recording stopped)"),
}


@functools.cache
def ffmpeg_version() -> str:
    """First line of ``ffmpeg -version``, or ``missing``."""
    ffmpeg = shutil.which("ffmpeg")
    if ffmpeg is None:
        return "missing"
    out = subprocess.run([ffmpeg, "-version"], capture_output=True, text=True, check=False).stdout
    return out.splitlines()[0] if out else "unknown"

