"""Keyframes of the interaction video for judges: the moments the screen changed, with their times.

A judge model cannot watch a video; it is shown stills. Frames are chosen by scene change: each
frame is compared (grey, downscaled) with the last frame kept, and a frame that differs enough
starts a new scene. The first and last frames are always kept; when there are more scenes than the
judge may see, the largest changes win. Times are the video's clock, which is the action trace's
clock, so a judge can cite "12.4 s" and the report seeks there.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

_PROBE_SIZE = (64, 40)
_SCENE_THRESHOLD = 6.0
"""Mean absolute grey-level difference (0-255) at probe size that counts as a new scene."""


@dataclass(frozen=True)
class Keyframe:
    """One still of the video."""

    time_s: float
    """Time in the video."""
    jpeg: bytes
    """The frame, JPEG-encoded (at most 1280 px wide)."""
    change: float
    """How much it differs from the previous keyframe (0-255)."""


def keyframes(video: Path, *, limit: int = 8, sample_every_s: float = 0.25) -> list[Keyframe]:
    """Up to ``limit`` keyframes of ``video`` in time order; ``[]`` when it cannot be read."""
    capture = cv2.VideoCapture(str(video))
    if not capture.isOpened():
        return []
    try:
        fps = capture.get(cv2.CAP_PROP_FPS) or 25.0
        step = max(1, round(fps * sample_every_s))
        chosen: list[tuple[float, np.ndarray, float]] = []
        last_probe: np.ndarray | None = None
        last_frame: tuple[float, np.ndarray] | None = None
        index = 0
        while True:
            ok, frame = capture.read()
            if not ok:
                break
            if index % step == 0:
                time_s = index / fps
                probe = cv2.resize(cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY), _PROBE_SIZE,
                                   interpolation=cv2.INTER_AREA).astype(np.float32)
                change = 255.0 if last_probe is None else float(np.abs(probe - last_probe).mean())
                if last_probe is None or change >= _SCENE_THRESHOLD:
                    chosen.append((time_s, frame, change))
                    last_probe = probe
                last_frame = (time_s, frame)
            index += 1
    finally:
        capture.release()
    if last_frame is not None and (not chosen or chosen[-1][0] != last_frame[0]):
        chosen.append((last_frame[0], last_frame[1], 0.0))
    if len(chosen) > limit:
        first, last, middle = chosen[0], chosen[-1], chosen[1:-1]
        keep = sorted(middle, key=lambda c: c[2], reverse=True)[: max(0, limit - 2)]
        chosen = [first, *sorted(keep, key=lambda c: c[0]), last][:limit]
    return [Keyframe(round(t, 2), _jpeg(frame), round(change, 2)) for t, frame, change in chosen]


def _jpeg(frame: np.ndarray) -> bytes:
    height, width = frame.shape[:2]
    if width > 1280:
        frame = cv2.resize(frame, (1280, round(height * 1280 / width)), interpolation=cv2.INTER_AREA)
    ok, data = cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, 80])
    return data.tobytes() if ok else b""
