"""Evidence collection for one artifact: Static Perception, then Agent-Driven Interaction.

The app is served by an :class:`~evaluator.sandbox.AppHost` (loopback by default, or a sandbox)
from the bundle's own source snapshot, and the browser may reach nothing else. The bundle is
written as the run goes and committed by its manifest at the end.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable
from importlib import metadata
from pathlib import Path
from typing import Any

from playwright.async_api import Browser
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import TimeoutError as PlaywrightTimeoutError

from evaluator.chat import ModelAccess
from evaluator.console import PageLog
from evaluator.context_pool import ContextPool
from evaluator.crash import CrashWatch
from evaluator.environment import web_environment
from evaluator.errors import BudgetExhaustedError, InfrastructureError, ModelRequestError
from evaluator.evidence import EvidenceWriter
from evaluator.freeze import FreezeController
from evaluator.hang import browser_answers, probe_hang
from evaluator.injection import Finding, redact
from evaluator.interaction import Interaction
from evaluator.keys import COLLECTOR_VERSION
from evaluator.models import (
    AgentConfig,
    AppFailure,
    Artifact,
    BuildReport,
    EvidenceManifest,
    HangProbe,
    IncompleteEvidence,
    Query,
    Stack,
    ToolVersions,
)
from evaluator.observation import AgentSummary
from evaluator.perception import perceive
from evaluator.policies import policies
from evaluator.progress import RunProgress
from evaluator.sandbox import BUILD_OUTPUT, LOOPBACK, AppHost
from evaluator.screencast import ScreenRecorder, ffmpeg_version
from evaluator.soundtrack import AudioCapture, AudioRecorder, AudioSource, mux_audio


def _package_version(name: str) -> str:
    """Installed version of distribution ``name``, or ``unknown``."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "unknown"

async def collect_evidence(
    *, browser: Browser, artifact: Artifact, query: Query, agent: AgentConfig, bundle_dir: Path, evidence_key: str,
    host: AppHost = LOOPBACK, models: ModelAccess | None = None, contexts: ContextPool | None = None,
    progress: RunProgress | None = None,
) -> EvidenceManifest:
    """Collect and commit the evidence bundle of ``artifact`` under ``bundle_dir``.

    ``host`` serves the app where ``browser`` can reach it (the browser runs beside it in a sandbox).
    ``contexts`` is a pool on ``browser`` that made the run's contexts ahead (a worker's), and makes the
    next run's once this run's app has stopped; without, they are made when needed.
    An app that crashes or wedges its tab during Static Perception still yields a bundle: it records
    ``static/failure.json`` and no interaction.
    An app whose page stops answering during the interaction (an action times out, and the hang probe finds
    its main thread busy beside a healthy browser) yields a bundle committed as incomplete: the app's hang.
    ``progress`` gets the app's origin and a way to commit the bundle as it stands (for the worker, when the
    app hangs or kills the run before the end).
    """
    if contexts is None:
        contexts = ContextPool(browser)
    elif contexts.browser is not browser:
        raise ValueError("collect_evidence: the context pool belongs to another browser; pass the pool made on it")
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
    recorder: ScreenRecorder | None = None
    interaction: Interaction | None = None
    failure: dict[str, str] | None = None
    hung: HangProbe | None = None
    sound = _Soundtrack(host.audio, writer.path("interaction/.audio.wav"))
    requests: list[dict[str, str]] = []
    build: BuildReport | None = None

    def commit_incomplete(cause: AppFailure, detail: str, probe: HangProbe | None) -> EvidenceManifest:
        """The evidence up to the app's hang or crash, committed and marked incomplete (no video)."""
        trace = list(interaction.trace) if interaction is not None else []
        perceived = phase["name"] == "interaction"
        if not perceived and not writer.path("static/failure.json").exists():
            writer.write_json("static/failure.json", {"phase": phase["name"], "error": detail})
        shots = sorted((bundle_dir / "interaction" / "steps").glob("*.jpg"))
        last = (shots[-1].relative_to(bundle_dir).as_posix() if shots else
                "static/desktop-viewport.png" if (bundle_dir / "static" / "desktop-viewport.png").is_file() else None)
        writer.write_json("interaction/trace.json", [s.model_dump(mode="json") for s in trace])
        writer.write_json("interaction/frames.json", recorder.timeline() if recorder is not None else [])
        writer.write_json("interaction/result.json", {
            "ended_by": cause.value, "error": detail, "coverage": None, "steps": len(trace),
            "video_duration_s": 0.0, "frames": recorder.frame_count if recorder is not None else 0,
            "wall_duration_s": 0.0, "console_entries_dropped": log.dropped,
            "audio": {"track": False, "note": f"no video: the app's {cause.value} cut the run short"}})
        writer.write_json("agent_summary.json", interaction.fallback_summary(detail) if interaction is not None
                          else _no_summary(detail))
        incomplete = IncompleteEvidence(failure=cause, phase=phase["name"], detail=detail[:2000], steps=len(trace),
                                        last_screenshot=last, probe=probe)
        return _finish(writer, artifact, agent, browser, host, evidence_key, timings, log, blocked, server_log,
                       requests, build, started, video_time=lambda wall: None, incomplete=incomplete,
                       shown=interaction.injection if interaction is not None else ())

    if progress is not None:
        progress.commit_incomplete = commit_incomplete
    async with host.serve(bundle_dir / "source", server_log, requests) as origin:
        if progress is not None:
            progress.origin = origin
        url = f"{origin}/{artifact.entrypoint}"
        if artifact.stack in (Stack.COMPONENT, Stack.PROJECT):
            phase["name"] = "build"
            mark = time.monotonic()
            build, build_log = await host.build(artifact.stack, artifact.entrypoint)
            timings["build"] = time.monotonic() - mark
            writer.write_text(build.log_file, build_log)
            # The build's output is what a developer's terminal would show: the judge's dev-server output.
            server_log.extend(build_log.splitlines())
            url = f"{origin}/{BUILD_OUTPUT}"
        if build is not None and not build.ok:
            failure = {"phase": "build", "error": f"the {artifact.stack} build failed (exit code "
                                                   f"{build.exit_code}{', timed out' if build.timed_out else ''}); "
                                                   f"see {build.log_file}"}
        else:
            try:
                desktop, page = await perceive(contexts, origin=origin, url=url, writer=writer, log=log,
                                               blocked=blocked, phase=phase, timings=timings,
                                               confine=host.mirror is None)
            except PlaywrightError as exc:
                if not await browser_answers(browser):
                    raise InfrastructureError(f"the browser died during Static Perception: {exc}") from exc
                # The app crashed or wedged its own tab before it could be seen: a result about the app
                # (the judge scores it as a render failure), not a reason to retry.
                failure = {"phase": phase["name"], "error": f"{type(exc).__name__}: {str(exc)[:500]}"}
        if failure is None:
            phase["name"] = "interaction"
            mark = time.monotonic()
            try:
                try:
                    cdp = await desktop.new_cdp_session(page)
                    freezer = FreezeController(page, cdp)
                    recorder = ScreenRecorder(cdp, writer.directory("interaction/.frames"), caps=writer.caps)
                    await sound.start()  # first: no part of the video may precede the audio
                    await recorder.start()
                    interaction = Interaction(
                        page=page, app_url=url, writer=writer, recorder=recorder, freezer=freezer, log=log,
                        policy=policies.create(agent.policy, config=agent, models=models, query=query), config=agent,
                    )
                    await freezer.start()
                    async with CrashWatch(page) as watch:
                        result = await watch.run(interaction.run())
                    summary, coverage, ended_by = result.summary, result.coverage.model_dump(), result.ended_by
                except Exception as exc:  # noqa: BLE001 - a page that crashes mid-run is evidence about the app
                    if isinstance(exc, (InfrastructureError, BudgetExhaustedError, ModelRequestError)):
                        raise  # the machinery or the agent's model failed, not the app
                    if not await browser_answers(browser):
                        raise InfrastructureError(f"the browser died during the interaction: {exc}") from exc
                    error = f"{type(exc).__name__}: {str(exc)[:500]}"
                    coverage, ended_by = None, "page_failure"
                    if isinstance(exc, PlaywrightTimeoutError):
                        # An action that timed out on a page whose main thread no longer answers is the
                        # app's hang, whichever timer noticed first (this one, or the run's limit).
                        probe = await probe_hang(browser, origin=origin)
                        hung = probe if probe.app_hung else None
                    summary = interaction.fallback_summary(error) if interaction is not None else _no_summary(error)
                if recorder is not None:
                    try:
                        await asyncio.wait_for(recorder.stop(), 10)
                    except TimeoutError:
                        pass  # a dead tab may never answer; the frames received so far are the video
                timings["interaction"] = time.monotonic() - mark
            finally:
                await sound.stop()
                try:
                    await asyncio.wait_for(desktop.close(), 10)
                except (TimeoutError, PlaywrightError):
                    pass  # a crashed tab's context; the browser itself is checked by the caller
    # The app has stopped (its processes too, in a sandbox): the browser is free for the next run's contexts.
    contexts.prepare()
    if hung is not None:
        return commit_incomplete(AppFailure.HANG, f"an action timed out ({error}) and {hung.detail}", hung)

    if failure is not None:
        writer.write_json("static/failure.json", failure)
        writer.write_json("interaction/result.json", {
            "ended_by": "build_failure" if failure["phase"] == "build" else "perception_failure",
            "error": failure["error"], "coverage": None, "steps": 0,
            "video_duration_s": 0.0, "frames": 0, "wall_duration_s": 0.0, "console_entries_dropped": log.dropped,
        })
        writer.write_json("interaction/trace.json", [])
        writer.write_json("agent_summary.json", _no_summary(f"the app failed during Static Perception: "
                                                            f"{failure['error']}"))
        return _finish(writer, artifact, agent, browser, host, evidence_key, timings, log, blocked, server_log,
                       requests, build, started, video_time=lambda wall: None)
    mark = time.monotonic()
    video_s, audio = 0.0, {"track": False, "note": "no video"}
    if recorder is not None and recorder.frame_count:
        video_s = recorder.encode(writer.path("interaction/video.mp4"))
        audio = sound.mux_into(writer.path("interaction/video.mp4"), video_started_at=recorder.started_at)
    elif error is None:
        error = "the screencast delivered no frame: the page never painted during the interaction"
    if recorder is not None:
        recorder.discard_frames()
    timings["encode"] = time.monotonic() - mark
    writer.write_json("interaction/trace.json", [s.model_dump(mode="json") for s in interaction.trace]
                      if interaction is not None else [])
    writer.write_json("interaction/frames.json", recorder.timeline() if recorder is not None else [])
    writer.write_json("interaction/result.json", {
        "ended_by": ended_by, "error": error, "coverage": coverage,
        "steps": len(interaction.trace) if interaction is not None else 0,
        "video_duration_s": round(video_s, 3), "frames": recorder.frame_count if recorder is not None else 0,
        "wall_duration_s": round(recorder.stopped_at - recorder.started_at, 3) if recorder is not None else 0.0,
        "console_entries_dropped": log.dropped, "audio": audio,
    })
    writer.write_json("agent_summary.json", summary)

    def video_time(wall: float) -> float | None:
        if recorder is None or not video_s or wall < recorder.started_at:
            return None
        return round(recorder.video_time(wall), 3)

    shown = interaction.injection if interaction is not None else []
    return _finish(writer, artifact, agent, browser, host, evidence_key, timings, log, blocked, server_log, requests,
                   build, started, video_time=video_time, shown=shown)


INJECTION_FINDINGS = "injection.json"
"""The bundle's passages addressed to the evaluator: in what the agent was shown, the source, the first rendered
DOM and the console. Present only when there are some; the run is then flagged ``prompt_injection``."""
_SCANNED_CHARS = 2_000_000
"""How much of each text is scanned (a megabyte-scale DOM is the page's own loss of detail, not a hiding place:
the judge reads far less of it)."""


def _injection_in(root: Path, log: PageLog) -> list[Finding]:
    """Passages addressed to the evaluator in the bundle's texts, whichever judge reads them."""
    texts = [(path.relative_to(root).as_posix(), path.read_text(encoding="utf-8", errors="replace"))
             for path in sorted((root / "source").rglob("*")) if path.is_file() and path.suffix in _TEXT_SUFFIXES]
    if (root / "static" / "dom.html").is_file():
        texts.append(("static/dom.html", (root / "static" / "dom.html").read_text(encoding="utf-8", errors="replace")))
    texts.append(("console.json", "\n".join(str(e["text"]) for e in log.entries)))
    seen: set[str] = set()
    findings = []
    for source, text in texts:
        for finding in redact(text[:_SCANNED_CHARS], source)[1]:
            if finding.excerpt not in seen:
                seen.add(finding.excerpt)
                findings.append(finding)
    return findings


_TEXT_SUFFIXES = frozenset({".html", ".htm", ".js", ".jsx", ".ts", ".tsx", ".mjs", ".vue", ".svelte", ".css", ".json",
                            ".md", ".txt", ".svg"})


def _no_summary(why: str) -> AgentSummary:
    """Cookie's summary for an interaction that could not take place."""
    return AgentSummary(actions_performed=[], observations=[why],
                        overall_observation="The page crashed or stopped responding before it could be explored.")


class _Soundtrack:
    """The interaction's sound, when the host can record it; a failure to record costs the track, not the run."""

    def __init__(self, source: AudioSource | None, wav: Path) -> None:
        self._recorder = AudioRecorder(source, wav) if source is not None else None
        self._wav = wav
        self._capture: AudioCapture | None = None
        self.note = "no audio source (the local backend's Chromium is muted)" if source is None else ""

    async def start(self) -> None:
        if self._recorder is None:
            return
        try:
            await asyncio.to_thread(self._recorder.start)
        except InfrastructureError as exc:
            self._recorder, self.note = None, f"audio capture failed to start: {exc}"

    async def stop(self) -> None:
        recorder, self._recorder = self._recorder, None
        if recorder is None:
            return
        try:
            self._capture = await asyncio.to_thread(recorder.stop)
        except InfrastructureError as exc:
            self.note = f"audio capture failed: {exc}"

    def mux_into(self, video: Path, *, video_started_at: float) -> dict[str, Any]:
        """Add the recorded sound to ``video`` (its clock starts at ``video_started_at``, time.time())."""
        capture = self._capture
        if capture is None or capture.duration_s <= 0:
            self._wav.unlink(missing_ok=True)
            return {"track": False, "note": self.note or "no audio was captured"}
        offset = capture.started_at_wall - video_started_at
        muxed = video.with_name(".with-audio.mp4")
        try:
            mux_audio(video, capture.wav, offset_s=offset, out=muxed)
            muxed.replace(video)
        except InfrastructureError as exc:
            return {"track": False, "note": f"muxing the audio failed: {exc}"[:500]}
        finally:
            muxed.unlink(missing_ok=True)
            self._wav.unlink(missing_ok=True)
        return {"track": True, "offset_s": round(offset, 4), "lag_s": round(capture.lag_s, 4),
                "captured_s": round(capture.duration_s, 3)}


def _finish(writer: EvidenceWriter, artifact: Artifact, agent: AgentConfig, browser: Browser, host: AppHost,
            evidence_key: str, timings: dict[str, float], log: PageLog, blocked: list[str], server_log: list[str],
            requests: list[dict[str, str]], build: BuildReport | None, started: float, *,
            video_time: Callable[[float], float | None], incomplete: IncompleteEvidence | None = None,
            shown: Iterable[Finding] = (),
            ) -> EvidenceManifest:
    """Write the console, network and server logs and the passages addressed to the evaluator (``shown``: those
    in what the agent was shown), then commit the bundle with its manifest (``incomplete``: marked as cut short
    by the app).

    ``blocked`` are the external requests the driver refused; ``requests`` the mirror's record of the
    ones that reached it: served from the mirror, missed (a CDN URL it has no file for) or refused.
    """
    writer.write_json("console.json", [{**{k: v for k, v in e.items() if k != "wall"},
                                        "video_time_s": video_time(e["wall"])} for e in log.entries])
    by_kind = {kind: sorted({r["url"] for r in requests if r.get("kind") == kind and "url" in r})
               for kind in ("served", "miss", "blocked")}
    writer.write_json("network.json", {"blocked": sorted(set(blocked) | set(by_kind["blocked"])),
                                       "mirror": {"served": by_kind["served"], "missed": by_kind["miss"]},
                                       "failed": [e for e in log.entries if e["kind"] == "requestfailed"]})
    writer.write_text("server.log", "\n".join(server_log) + "\n")
    findings = [*shown, *_injection_in(writer.root, log)]
    if findings:
        writer.write_json(INJECTION_FINDINGS, [{"source": f.source, "excerpt": f.excerpt} for f in findings])
    timings["total"] = time.monotonic() - started
    return writer.commit(
        evidence_key=evidence_key, artifact_key=artifact.key, agent=agent, timings=timings,
        tools=ToolVersions(
            evalgrid=_package_version("evalgrid"), collector=COLLECTOR_VERSION,
            browser=f"chromium {browser.version}", playwright=_package_version("playwright"),
            ffmpeg=ffmpeg_version(), sandbox=host.label,
        ),
        build=build, web=web_environment(host.mirror or []), incomplete=incomplete,
    )
