"""Evidence collection for one artifact: Static Perception, then Agent-Driven Interaction.

The app is served on loopback from the bundle's own source snapshot and the browser may reach
nothing else. The bundle is written as the run goes and committed by its manifest at the end.
"""

from __future__ import annotations

import time
from importlib import metadata
from pathlib import Path
from typing import Any

from playwright.async_api import Browser

from evaluator.console import PageLog
from evaluator.errors import InfrastructureError
from evaluator.evidence import EvidenceWriter
from evaluator.freeze import FreezeController
from evaluator.interaction import Interaction
from evaluator.keys import COLLECTOR_VERSION
from evaluator.models import AgentConfig, Artifact, EvidenceManifest, Query, ToolVersions
from evaluator.perception import perceive
from evaluator.policies import policies
from evaluator.screencast import ScreenRecorder, ffmpeg_version
from evaluator.serve import serve_directory

SANDBOX_LOCAL = "local (loopback only; NOT a sandbox)"


def _package_version(name: str) -> str:
    """Installed version of distribution ``name``, or ``unknown``."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "unknown"


async def collect_evidence(
    *, browser: Browser, artifact: Artifact, query: Query, agent: AgentConfig, bundle_dir: Path, evidence_key: str,
) -> EvidenceManifest:
    """Collect and commit the evidence bundle of ``artifact`` under ``bundle_dir``."""
    writer = EvidenceWriter(bundle_dir)
    writer.write_json("query.json", query)
    writer.write_json("artifact.json", artifact.model_dump(mode="json", exclude={"files"}))
    for rel, content in artifact.files.items():
        writer.write_text(f"source/{rel}", content)
    timings: dict[str, float] = {}
    server_log: list[str] = []
    log = PageLog()
    phase = {"name": "mobile"}
    blocked: list[str] = []
    started = time.monotonic()
    error = None
    with serve_directory(bundle_dir / "source", server_log) as origin:
        url = f"{origin}/{artifact.entrypoint}"
        desktop, page = await perceive(browser, origin=origin, url=url, writer=writer, log=log, blocked=blocked,
                                       phase=phase, timings=timings)
        try:
            phase["name"] = "interaction"
            mark = time.monotonic()
            cdp = await desktop.new_cdp_session(page)
            freezer = FreezeController(page, cdp)
            recorder = ScreenRecorder(cdp, writer.directory("interaction/.frames"))
            await recorder.start()
            interaction = Interaction(
                page=page, app_url=url, writer=writer, recorder=recorder, freezer=freezer, log=log,
                policy=policies.create(agent.policy, config=agent), config=agent,
            )
            try:
                await freezer.start()
                result = await interaction.run()
                summary, coverage, ended_by = result.summary, result.coverage.model_dump(), result.ended_by
            except Exception as exc:  # noqa: BLE001 - a page that crashes mid-run is evidence about the app
                if not browser.is_connected():
                    raise InfrastructureError(f"the browser died during the interaction: {exc}") from exc
                error = f"{type(exc).__name__}: {str(exc)[:500]}"
                summary, coverage, ended_by = interaction.fallback_summary(error), None, "page_failure"
            await recorder.stop()
            timings["interaction"] = time.monotonic() - mark
        finally:
            await desktop.close()

    mark = time.monotonic()
    video_s = recorder.encode(writer.path("interaction/video.mp4"))
    recorder.discard_frames()
    timings["encode"] = time.monotonic() - mark
    writer.write_json("interaction/trace.json", [s.model_dump(mode="json") for s in interaction.trace])
    writer.write_json("interaction/frames.json", recorder.timeline())
    writer.write_json("interaction/result.json", {
        "ended_by": ended_by, "error": error, "coverage": coverage, "steps": len(interaction.trace),
        "video_duration_s": round(video_s, 3), "frames": recorder.frame_count,
        "wall_duration_s": round(recorder.stopped_at - recorder.started_at, 3),
        "console_entries_dropped": log.dropped,
    })
    writer.write_json("agent_summary.json", summary)
    writer.write_json("console.json", [_with_video_time(e, recorder) for e in log.entries])
    writer.write_json("network.json", {"blocked": sorted(set(blocked)),
                                       "failed": [e for e in log.entries if e["kind"] == "requestfailed"]})
    writer.write_text("server.log", "\n".join(server_log) + "\n")
    timings["total"] = time.monotonic() - started
    return writer.commit(
        evidence_key=evidence_key, artifact_key=artifact.key, agent=agent, timings=timings,
        tools=ToolVersions(
            evalgrid=_package_version("evalgrid"), collector=COLLECTOR_VERSION,
            browser=f"chromium {browser.version}", playwright=_package_version("playwright"),
            ffmpeg=ffmpeg_version(), sandbox=SANDBOX_LOCAL,
        ),
    )


def _with_video_time(entry: dict[str, Any], recorder: ScreenRecorder) -> dict[str, Any]:
    out = {k: v for k, v in entry.items() if k != "wall"}
    out["video_time_s"] = round(recorder.video_time(entry["wall"]), 3) if entry["wall"] >= recorder.started_at else None
    return out
