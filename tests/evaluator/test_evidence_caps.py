"""The evidence caps, each a cap note in the manifest: the screencast's frame rate and byte budget (a fake
CDP session stands in for Chromium: the cap is the recorder's arithmetic on frames and their times), and the
bundle's size at commit."""

from __future__ import annotations

import asyncio
import base64
import time
from pathlib import Path
from typing import Any

import pytest

from evaluator.evidence import bundle as evidence
from evaluator.evidence import perception, screencast
from evaluator.evidence.bundle import EvidenceWriter
from evaluator.evidence.screencast import MAX_FPS, ScreenRecorder
from evaluator.models import AgentConfig, ToolVersions


class _FakeCdp:
    """Records what the recorder sends; the frames are delivered by the test."""

    def __init__(self) -> None:
        self.sent: list[str] = []
        self.handler: Any = None

    def on(self, event: str, handler: Any) -> None:
        self.handler = handler

    async def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self.sent.append(method)
        return {}


def _record(frames: list[tuple[float, bytes]], tmp_path: Path) -> tuple[ScreenRecorder, list[Any]]:
    async def scenario() -> tuple[ScreenRecorder, list[Any]]:
        cdp = _FakeCdp()
        caps: list[Any] = []
        recorder = ScreenRecorder(cdp, tmp_path / "frames", caps=caps, live=False)  # type: ignore[arg-type]
        await recorder.start()
        for stamp, data in frames:
            cdp.handler({"data": base64.b64encode(data).decode(), "metadata": {"timestamp": stamp}, "sessionId": 1})
        await recorder.stop()
        assert cdp.sent.count("Page.screencastFrameAck") == len(frames)  # every frame acked, kept or not
        return recorder, caps

    return asyncio.run(scenario())


def test_frames_faster_than_the_cap_are_not_kept_but_the_end_of_each_burst_is(tmp_path: Path) -> None:
    start = time.time() + 1  # the screencast's timestamps are wall-clock seconds
    burst = [(start + i / 60, f"frame {i}".encode()) for i in range(60)]  # one second at 60 frames/s
    later = [(start + 3.0, b"after the burst")]
    recorder, caps = _record(burst + later, tmp_path)
    kept = recorder.timeline()
    assert MAX_FPS - 2 <= len(kept) - 1 <= MAX_FPS + 1  # ~25 of the 60, plus the frame after the burst
    times = [frame["video_time_s"] for frame in kept]
    assert all(b - a >= 1 / MAX_FPS - 1e-6 for a, b in zip(times, times[1:], strict=False))
    # The burst's last frame was the screen until the next change: it is in the video, one interval late at most.
    last_of_burst = (tmp_path / "frames" / str(kept[-2]["file"])).read_bytes()
    assert last_of_burst == b"frame 59"
    assert [cap.what for cap in caps] == ["screencast_fps"]
    assert str(60 - (len(kept) - 1)) in caps[0].detail


def test_past_the_byte_budget_one_frame_a_second_is_kept_and_past_the_cap_none(tmp_path: Path, monkeypatch:
                                                                                pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(screencast, "FRAME_BUDGET_BYTES", 1000)
    monkeypatch.setattr(screencast, "FRAME_CAP_BYTES", 3000)
    frames = [(time.time() + 1 + i * 0.1, bytes([i]) * 200) for i in range(100)]  # 10 frames/s for 10 s, 200 bytes each
    recorder, caps = _record(frames, tmp_path)
    kept = recorder.timeline()
    total = sum((tmp_path / "frames" / str(f["file"])).stat().st_size for f in kept)
    assert total <= 3000 + 200  # the cap, plus the last frame written when recording stopped
    times = [float(f["video_time_s"]) for f in kept]
    budget_spent = next(i for i in range(len(kept)) if sum(200 for _ in range(i + 1)) > 1000)
    gaps = [b - a for a, b in zip(times[budget_spent:-1], times[budget_spent + 1:-1], strict=False)]
    assert gaps and all(gap >= 0.99 for gap in gaps)  # one a second once the budget is spent
    assert {cap.what for cap in caps} == {"screencast_bytes"}
    assert (tmp_path / "frames" / str(kept[-1]["file"])).read_bytes() == bytes([99]) * 200  # the screen at the end


def test_a_bundle_over_its_limit_drops_its_largest_files_and_says_so(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(evidence, "BUNDLE_LIMIT_BYTES", 10_000)
    writer = EvidenceWriter(tmp_path / "bundle")
    writer.write_bytes("interaction/video.mp4", b"v" * 8000)
    writer.write_text("static/dom.html", "d" * 5000)
    writer.write_text("console.json", "[]")
    tools = ToolVersions(evalgrid="t", collector="t", browser="t", playwright="t", ffmpeg="t", sandbox="t")
    manifest = writer.commit(evidence_key="evidence-x", artifact_key="artifact-x", agent=AgentConfig(), tools=tools,
                             timings={})
    assert [f.path for f in manifest.files] == ["console.json", "static/dom.html"]
    assert sum(f.size for f in manifest.files) <= 10_000
    assert [(cap.what, cap.detail) for cap in manifest.caps] == [
        ("bundle_size", "interaction/video.mp4 (8000 bytes) was dropped")]
    assert not (tmp_path / "bundle" / "interaction" / "video.mp4").exists()


def test_a_snapshot_is_capped_in_bytes_not_characters(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 33, finding 7: four-byte characters once made a snapshot four times its "8 M" cap on disk."""
    monkeypatch.setattr(perception, "SNAPSHOT_LIMIT_BYTES", 1000)
    writer = EvidenceWriter(tmp_path / "bundle")
    perception._write_capped(writer, "static/dom.html", "<p>" + "\U0001f600" * 600 + "</p>", "dom_snapshot")
    written = (tmp_path / "bundle" / "static" / "dom.html").read_bytes()
    assert 996 <= len(written) <= 1000  # never a character cut in half
    assert written.decode("utf-8").startswith("<p>\U0001f600")
    assert [(cap.what, cap.limit) for cap in writer.caps] == [("dom_snapshot", "1000 bytes")]
