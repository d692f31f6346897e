"""Evidence collection for one artifact: Static Perception, then Agent-Driven Interaction.

The app is served by an :class:`~evaluator.browser.app_host.AppHost` (loopback by default, or a sandbox)
from the bundle's own source snapshot, and the browser may reach nothing else. The bundle is
written as the run goes and committed by its manifest at the end.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable
from importlib import metadata
from pathlib import Path

from playwright.async_api import Browser, BrowserContext, Page
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import TimeoutError as PlaywrightTimeoutError

from evaluator.agents.observation import AgentSummary, AudioTrack, Coverage, InteractionResult, StepRecord
from evaluator.agents.policies import policies
from evaluator.answer.generate import KeptPreviewRound
from evaluator.browser.app_host import BUILD_OUTPUT, LOOPBACK, AppHost
from evaluator.browser.context_pool import ContextPool, close_context
from evaluator.browser.crash import CrashWatch
from evaluator.browser.freeze import FreezeController
from evaluator.browser.frozen_web import web_environment
from evaluator.browser.hang import browser_answers, probe_hang
from evaluator.errors import BudgetExhaustedError, InfrastructureError, ModelRequestError
from evaluator.evidence.bundle import PREVIEW_ROUNDS, BundleFile, EvidenceWriter
from evaluator.evidence.console import PageLog
from evaluator.evidence.interaction import Interaction
from evaluator.evidence.perception import perceive
from evaluator.evidence.screencast import ScreenRecorder, ffmpeg_version
from evaluator.evidence.soundtrack import AudioCapture, AudioRecorder, AudioSource, mux_audio
from evaluator.keys import COLLECTOR_VERSION
from evaluator.llm.client import ModelAccess
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
from evaluator.progress import RunProgress
from evaluator.textsafety import Finding, redact


def _package_version(name: str) -> str:
    """Installed version of distribution ``name``, or ``unknown``."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "unknown"


async def collect_evidence(
    *, browser: Browser, artifact: Artifact, query: Query, agent: AgentConfig, bundle_dir: Path, evidence_key: str,
    host: AppHost = LOOPBACK, models: ModelAccess | None = None,
) -> EvidenceManifest:
    """Collect and commit the evidence bundle of ``artifact`` under ``bundle_dir`` (see
    :class:`EvidenceCollection`; a worker, which makes contexts ahead and watches the run's progress, uses it directly).

    ``host`` serves the app where ``browser`` can reach it (the browser runs beside it in a sandbox).
    """
    collection = EvidenceCollection(ContextPool(browser), bundle_dir, artifact=artifact, query=query, agent=agent,
                                    evidence_key=evidence_key, host=host, models=models)
    return await collection.run()


class EvidenceCollection:
    """One bundle's collection, a method per phase: build, Static Perception, the interaction, the commit.

    An app that crashes or wedges its tab during Static Perception still yields a bundle: it records
    ``static/failure.json`` and no interaction.
    An app whose page stops answering during the interaction (an action times out, and the hang probe finds
    its main thread busy beside a healthy browser) yields a bundle committed as incomplete: the app's hang.
    What a phase leaves for the later ones (and for a commit cut short by the app) is kept as attributes.
    """

    def __init__(self, contexts: ContextPool, bundle_dir: Path, *, artifact: Artifact, query: Query,
                 agent: AgentConfig, evidence_key: str, host: AppHost = LOOPBACK, models: ModelAccess | None = None
                 ) -> None:
        """Start the bundle under ``bundle_dir`` with its inputs (the query, the artifact and its source).

        ``contexts`` is a pool that makes the run's browser contexts (a worker's makes them ahead), on the browser
        that ``host`` serves the app to; it makes the next run's once this run's app has stopped. ``models`` is
        what an LLM agent may call.
        """
        self._contexts, self._browser = contexts, contexts.browser
        self._writer = writer = EvidenceWriter(bundle_dir)
        self._artifact, self._query, self._agent = artifact, query, agent
        self._evidence_key, self._host, self._models = evidence_key, host, models
        writer.write_json(BundleFile.QUERY, query)
        writer.write_json(BundleFile.ARTIFACT, artifact.model_dump(mode="json", exclude={"files"}))
        for rel, content in artifact.files.items():
            writer.write_text(f"{BundleFile.SOURCE}/{rel}", content)
        self._timings: dict[str, float] = {}
        self._server_log: list[str] = []
        self._requests: list[dict[str, str]] = []
        """The mirror's record of the requests that reached it."""
        self._blocked: list[str] = []
        """External requests the driver refused."""
        self._log = PageLog()
        self._phase = {"name": "mobile"}
        """A dict, not a string: :func:`perceive` moves it on, and the desktop page's console entries read it live."""
        self._build_report: BuildReport | None = None
        self._failure: dict[str, str] | None = None
        """``static/failure.json``: the build or Static Perception failed, and no interaction takes place."""
        self._sound = _Soundtrack(host.audio, writer.path(BundleFile.AUDIO_SCRATCH))
        self._recorder: ScreenRecorder | None = None
        self._interaction: Interaction | None = None
        self._summary: AgentSummary | None = None
        self._coverage: Coverage | None = None
        self._ended_by = ""
        self._error: str | None = None
        self._hung: HangProbe | None = None
        self._started = time.monotonic()

    def keep_preview_rounds(self, rounds: list[KeptPreviewRound]) -> None:
        """An agentic answer's previews, kept in the bundle as ``generation/rounds.json`` (the artifact's key
        covers them); none: nothing is written."""
        if rounds:
            self._writer.write_json(PREVIEW_ROUNDS, [r.model_dump(mode="json") for r in rounds])

    async def run(self, progress: RunProgress | None = None, *, interact: bool = True) -> EvidenceManifest:
        """Every phase in turn while the app is served, then the commit; the committed bundle's manifest.

        ``progress`` gets the app's origin and a way to commit the bundle as it stands (for the worker, when the
        app hangs or kills the run before the end). Without ``interact``, the bundle ends after Static Perception
        (a preview of the app: ``interaction/result.json`` says ``not_run``).
        """
        try:
            return await self._run(progress, interact=interact)
        finally:
            if self._recorder is not None:
                self._recorder.abandon_video()  # whatever ended the run: no encoder outlives it (idempotent)

    async def _run(self, progress: RunProgress | None, *, interact: bool) -> EvidenceManifest:
        if progress is not None:
            progress.commit_incomplete = self.commit_incomplete
        async with self._host.serve(self._writer.root / BundleFile.SOURCE, self._server_log, self._requests) as origin:
            if progress is not None:
                progress.origin = origin
            url = await self._build_app(origin)
            opened = await self._perceive(url) if self._failure is None else None
            if opened is not None and interact:
                await self._interact(*opened, origin=origin, url=url)
            elif opened is not None:
                await close_context(opened[0])
        # The app has stopped (its processes too, in a sandbox): the browser is free for the next run's contexts.
        self._contexts.prepare()
        if self._hung is not None:
            return self.commit_incomplete(AppFailure.HANG, f"an action timed out ({self._error}) and "
                                                           f"{self._hung.detail}", self._hung)
        if self._failure is not None:
            return self._commit_failure(self._failure)
        if not interact:
            self._write_interaction(InteractionResult(ended_by="not_run", console_entries_dropped=self._log.dropped,
                                                      console_errors_dropped=self._log.errors_dropped),
                                    [], AgentSummary(actions_performed=[], observations=[],
                                                     overall_observation="No interaction was asked for (a preview)."),
                                    timeline=False)
            return self._finish(video_time=lambda wall: None)
        return await self._commit()

    async def _build_app(self, origin: str) -> str:
        """Build a component or project answer, whose output is then what is served; the URL to open."""
        artifact = self._artifact
        if artifact.stack not in (Stack.COMPONENT, Stack.PROJECT):
            return f"{origin}/{artifact.entrypoint}"
        self._phase["name"] = "build"
        mark = time.monotonic()
        build, build_log = await self._host.build(artifact.stack, artifact.entrypoint)
        self._build_report = build
        self._timings["build"] = time.monotonic() - mark
        self._writer.write_text(build.log_file, build_log)
        # The build's output is what a developer's terminal would show: the judge's dev-server output.
        self._server_log.extend(build_log.splitlines())
        if not build.ok:
            timed_out = ", timed out" if build.timed_out else ""
            self._failure = {"phase": "build", "error": f"the {artifact.stack} build failed (exit code "
                                                        f"{build.exit_code}{timed_out}); see {build.log_file}"}
        return f"{origin}/{BUILD_OUTPUT}"

    async def _perceive(self, url: str) -> tuple[BrowserContext, Page] | None:
        """Static Perception; the desktop context and page it leaves open, or None when the app failed it."""
        try:
            return await perceive(self._contexts, url=url, writer=self._writer, log=self._log,
                                  blocked=self._blocked, phase=self._phase, timings=self._timings,
                                  confine=self._host.mirror is None)
        except PlaywrightError as exc:
            if not await browser_answers(self._browser):
                raise InfrastructureError(f"the browser died during Static Perception: {exc}") from exc
            # The app crashed or wedged its own tab before it could be seen: a result about the app
            # (the judge scores it as a render failure), not a reason to retry.
            self._failure = {"phase": self._phase["name"], "error": f"{type(exc).__name__}: {str(exc)[:500]}"}
            return None

    async def _interact(self, desktop: BrowserContext, page: Page, *, origin: str, url: str) -> None:
        """Agent-Driven Interaction on the page Static Perception left open, filmed (and recorded, where the host
        can); the desktop context is closed after it."""
        self._phase["name"] = "interaction"
        mark = time.monotonic()
        try:
            try:
                await self._explore(desktop, page, url)
            except (InfrastructureError, BudgetExhaustedError, ModelRequestError):
                raise  # the machinery or the agent's model failed, not the app
            except Exception as exc:  # noqa: BLE001 - a page that crashes mid-run is evidence about the app
                await self._page_failed(exc, origin)
            if self._recorder is not None:
                try:
                    await asyncio.wait_for(self._recorder.stop(), 10)
                except TimeoutError:
                    pass  # a dead tab may never answer; the frames received so far are the video
            self._timings["interaction"] = time.monotonic() - mark
        finally:
            await self._sound.stop()
            await close_context(desktop)

    async def _explore(self, desktop: BrowserContext, page: Page, url: str) -> None:
        """The agent's policy explores the page, which is frozen while it deliberates and screencast throughout."""
        cdp = await desktop.new_cdp_session(page)
        freezer = FreezeController(page, cdp)
        self._recorder = ScreenRecorder(cdp, self._writer.directory(BundleFile.FRAMES_SCRATCH), caps=self._writer.caps)
        await self._sound.start()  # first: no part of the video may precede the audio
        await self._recorder.start()
        self._interaction = Interaction(
            page=page, app_url=url, writer=self._writer, recorder=self._recorder, freezer=freezer, log=self._log,
            policy=policies.create(self._agent.policy, config=self._agent, models=self._models, query=self._query),
            config=self._agent,
        )
        await freezer.start()
        async with CrashWatch(page) as watch:
            outcome = await watch.run(self._interaction.run())
        self._summary, self._coverage, self._ended_by = outcome.summary, outcome.coverage, outcome.ended_by

    async def _page_failed(self, exc: Exception, origin: str) -> None:
        """Record the page's failure during the interaction (a hang, when its main thread stopped answering)."""
        if not await browser_answers(self._browser):
            raise InfrastructureError(f"the browser died during the interaction: {exc}") from exc
        self._error = f"{type(exc).__name__}: {str(exc)[:500]}"
        self._coverage, self._ended_by = None, "page_failure"
        if isinstance(exc, PlaywrightTimeoutError):
            # An action that timed out on a page whose main thread no longer answers is the
            # app's hang, whichever timer noticed first (this one, or the run's limit).
            probe = await probe_hang(self._browser, origin=origin)
            self._hung = probe if probe.app_hung else None
        self._summary = self._fallback_summary(self._error)

    def _fallback_summary(self, why: str) -> AgentSummary:
        return self._interaction.fallback_summary(why) if self._interaction is not None else _no_summary(why)

    def commit_incomplete(self, cause: AppFailure, detail: str, probe: HangProbe | None) -> EvidenceManifest:
        """The evidence up to the app's hang or crash, committed and marked incomplete (no video)."""
        trace = list(self._interaction.trace) if self._interaction is not None else []
        phase = self._phase["name"]
        if phase != "interaction" and not self._writer.path(BundleFile.STATIC_FAILURE).exists():
            self._writer.write_json(BundleFile.STATIC_FAILURE, {"phase": phase, "error": detail})
        last = self._last_screenshot()
        if self._recorder is not None:
            self._recorder.abandon_video()
        self._write_interaction(InteractionResult(
            ended_by=cause.value, error=detail, steps=len(trace),
            frames=self._recorder.frame_count if self._recorder is not None else 0,
            console_entries_dropped=self._log.dropped,
            console_errors_dropped=self._log.errors_dropped,
            audio=AudioTrack(track=False, note=f"no video: the app's {cause.value} cut the run short"),
        ), trace, self._fallback_summary(detail))
        incomplete = IncompleteEvidence(failure=cause, phase=phase, detail=detail[:2000], steps=len(trace),
                                        last_screenshot=last, probe=probe)
        return self._finish(video_time=lambda wall: None, incomplete=incomplete,
                            shown=self._interaction.injection if self._interaction is not None else ())

    def _last_screenshot(self) -> str | None:
        root = self._writer.root
        shots = sorted((root / BundleFile.STEPS).glob("*.jpg"))
        if shots:
            return shots[-1].relative_to(root).as_posix()
        return BundleFile.screenshot("desktop") if (root / BundleFile.screenshot("desktop")).is_file() else None

    def _commit_failure(self, failure: dict[str, str]) -> EvidenceManifest:
        """The bundle of an app that failed its build or Static Perception: no interaction took place."""
        self._writer.write_json(BundleFile.STATIC_FAILURE, failure)
        self._write_interaction(
            InteractionResult(ended_by="build_failure" if failure["phase"] == "build" else "perception_failure",
                              error=failure["error"], console_entries_dropped=self._log.dropped,
                              console_errors_dropped=self._log.errors_dropped),
            [], _no_summary(f"the app failed during Static Perception: {failure['error']}"), timeline=False)
        return self._finish(video_time=lambda wall: None)

    async def _commit(self) -> EvidenceManifest:
        """Encode the video (with its sound), record how the interaction went and commit the bundle."""
        recorder, interaction = self._recorder, self._interaction
        mark = time.monotonic()
        video_s, audio = 0.0, AudioTrack(track=False, note="no video")
        if recorder is not None and recorder.frame_count:
            video_s = await recorder.finish(self._writer.path(BundleFile.VIDEO))
            audio = self._sound.mux_into(self._writer.path(BundleFile.VIDEO),
                                         video_started_at=recorder.started_at)
        elif self._error is None:
            self._error = "the screencast delivered no frame: the page never painted during the interaction"
        if recorder is not None:
            recorder.discard_frames()
        self._timings["encode"] = time.monotonic() - mark
        trace = interaction.trace if interaction is not None else []
        self._write_interaction(InteractionResult(
            ended_by=self._ended_by, error=self._error, coverage=self._coverage, steps=len(trace),
            video_duration_s=round(video_s, 3), frames=recorder.frame_count if recorder is not None else 0,
            wall_duration_s=round(recorder.stopped_at - recorder.started_at, 3) if recorder is not None else 0.0,
            console_entries_dropped=self._log.dropped,
            console_errors_dropped=self._log.errors_dropped, audio=audio,
        ), trace, self._summary)

        def video_time(wall: float) -> float | None:
            if recorder is None or not video_s or wall < recorder.started_at:
                return None
            return round(recorder.video_time(wall), 3)

        return self._finish(video_time=video_time, shown=interaction.injection if interaction is not None else [])

    def _write_interaction(self, result: InteractionResult, trace: list[StepRecord], summary: AgentSummary | None,
                           *, timeline: bool = True) -> None:
        """The interaction's trace, frame timeline (``timeline``: the phase was reached), result and summary."""
        self._writer.write_json(BundleFile.TRACE, [s.model_dump(mode="json") for s in trace])
        if timeline:
            self._writer.write_json(BundleFile.FRAMES,
                                    self._recorder.timeline() if self._recorder is not None else [])
        self._writer.write_json(BundleFile.RESULT, result)
        self._writer.write_json(BundleFile.AGENT_SUMMARY, summary)

    def _finish(self, *, video_time: Callable[[float], float | None], incomplete: IncompleteEvidence | None = None,
                shown: Iterable[Finding] = ()) -> EvidenceManifest:
        """Write the console, network and server logs and the passages addressed to the evaluator (``shown``: those
        in what the agent was shown), then commit the bundle with its manifest (``incomplete``: marked as cut short
        by the app).

        ``network.json`` holds the external requests the driver refused, and the mirror's record of the ones that
        reached it: served from the mirror, missed (a CDN URL it has no file for) or refused.
        """
        writer, log, requests = self._writer, self._log, self._requests
        writer.write_json(BundleFile.CONSOLE, [{**{k: v for k, v in e.as_json().items() if k != "wall"},
                                            "video_time_s": video_time(e.wall)} for e in log.entries])
        by_kind = {kind: sorted({r["url"] for r in requests if r.get("kind") == kind and "url" in r})
                   for kind in ("served", "miss", "blocked")}
        writer.write_json(BundleFile.NETWORK, {"blocked": sorted(set(self._blocked) | set(by_kind["blocked"])),
                                           "mirror": {"served": by_kind["served"], "missed": by_kind["miss"]},
                                           "failed": [e.as_json() for e in log.entries if e.kind == "requestfailed"]})
        writer.write_text(BundleFile.SERVER_LOG, "\n".join(self._server_log) + "\n")
        findings = [*shown, *_injection_in(writer.root, log)]
        if findings:
            writer.write_json(BundleFile.INJECTION, [{"source": f.source, "excerpt": f.excerpt} for f in findings])
        self._timings["total"] = time.monotonic() - self._started
        return writer.commit(
            evidence_key=self._evidence_key, artifact_key=self._artifact.key, agent=self._agent,
            timings=self._timings,
            tools=ToolVersions(
                evalgrid=_package_version("evalgrid"), collector=COLLECTOR_VERSION,
                browser=f"chromium {self._browser.version}", playwright=_package_version("playwright"),
                ffmpeg=ffmpeg_version(), sandbox=self._host.label,
            ),
            build=self._build_report, web=web_environment(self._host.mirror or []), incomplete=incomplete,
        )


"""The bundle's passages addressed to the evaluator: in what the agent was shown at every step (title, text, text
generated by CSS, control labels), the source, the first rendered DOM, the console, the server's and the build's
logs. Present only when there are some; the run is then flagged ``prompt_injection``."""
_SCANNED_CHARS = 2_000_000
"""How much of each text is scanned (a megabyte-scale DOM is the page's own loss of detail, not a hiding place:
the judge reads far less of it)."""
_SCANNED_TOTAL = 6_000_000
"""How much is scanned in all (about six seconds): a build of thousands of files cannot hold the run past its limit.
The texts the judges read come first, then the source."""


def _injection_in(root: Path, log: PageLog) -> list[Finding]:
    """Passages addressed to the evaluator in the bundle's texts, whichever judge reads them."""
    read = [root / BundleFile.DOM, root / BundleFile.SERVER_LOG, root / BundleFile.BUILD_LOG,
            *sorted(path for path in (root / BundleFile.SOURCE).rglob("*") if path.suffix in _TEXT_SUFFIXES)]
    texts = [(BundleFile.CONSOLE, "\n".join(e.text for e in log.entries)[:_SCANNED_CHARS])]
    budget = _SCANNED_TOTAL - len(texts[0][1])
    for path in read:
        if budget <= 0:
            break
        if path.is_file():
            with path.open(encoding="utf-8", errors="replace") as file:
                texts.append((path.relative_to(root).as_posix(), file.read(min(_SCANNED_CHARS, budget))))
            budget -= len(texts[-1][1])
    # The same passage in the source and in the DOM is listed for both: where it was is part of the finding.
    return list(dict.fromkeys(finding for source, text in texts for finding in redact(text, source)[1]))


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

    def mux_into(self, video: Path, *, video_started_at: float) -> AudioTrack:
        """Add the recorded sound to ``video`` (its clock starts at ``video_started_at``, time.time())."""
        capture = self._capture
        if capture is None or capture.duration_s <= 0:
            self._wav.unlink(missing_ok=True)
            return AudioTrack(track=False, note=self.note or "no audio was captured")
        offset = capture.started_at_wall - video_started_at
        muxed = video.with_name(".with-audio.mp4")
        try:
            mux_audio(video, capture.wav, offset_s=offset, out=muxed)
            muxed.replace(video)
        except InfrastructureError as exc:
            return AudioTrack(track=False, note=f"muxing the audio failed: {exc}"[:500])
        finally:
            muxed.unlink(missing_ok=True)
            self._wav.unlink(missing_ok=True)
        return AudioTrack(track=True, offset_s=round(offset, 4), lag_s=round(capture.lag_s, 4),
                          captured_s=round(capture.duration_s, 3))
