"""``create_app_preview``: serve a candidate's files the way a run serves its answer, look at them once, report.

The files are read as a final answer would be (:func:`~evaluator.answer.extract.extract_app`: the same limits
on names, sizes and counts), served by the configured host (the hardened sandbox, or loopback for local use),
built when they are a component or project, and given Static Perception on both viewports, nothing more. The
report (:mod:`evaluator.preview.report`) is what the candidate is told; the desktop screenshot may go with it.

A page that stops answering is found the way a run's is (:func:`~evaluator.browser.hang.probe_hang`): while the
preview lasts, every ``hang_check_s`` its pages are asked to run ``1``. A page that does not, beside a browser that
answers, is reported as the app's problem. A preview still not done after ``timeout_s`` (a page so heavy that it
starves the sandbox's browser, a build that never ends) is reported too: a candidate always gets a report. Either
way its contexts are closed so the next preview starts clean; however a preview ends (done, hung, timed out, or
cancelled by its caller), nothing of it is left running in the browser.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from playwright.async_api import Browser, BrowserContext

from evaluator.abandonment import abandon
from evaluator.answer.extract import NotAssessable, extract_app
from evaluator.browser.app_host import LOOPBACK, AppHost
from evaluator.browser.context_pool import ContextPool, Tab, close_context
from evaluator.browser.hang import probe_hang
from evaluator.errors import BuildUnavailableError, ForgedMeasurementError
from evaluator.evidence.bundle import BundleFile, EvidenceBundle
from evaluator.evidence.collect import EvidenceCollection
from evaluator.models import AgentConfig, Artifact, Difficulty, Kind, Query
from evaluator.preview.checks import DEFAULT_CHECKS, PreviewCheck
from evaluator.preview.report import PreviewReport, preview_report, unservable_report
from evaluator.progress import RunProgress

_QUERY = Query(id="preview", brief="an app preview", domain="preview", leaf="preview", difficulty=Difficulty.EASY,
               language="en", kind=Kind.INTERACTIVE_APPLICATION)
"""What the bundle records as its query: the preview never reads it, and never sees the sweep's."""
PREVIEW_TIMEOUT_S = 60.0
"""A preview's own limit: a page that has not been seen by then is reported as too slow to load."""
HANG_CHECK_S = 10.0
"""How long a preview runs before its pages are probed, and again after each probe: Static Perception takes 1.5–3 s
on a 2-core machine, and a probe calls a page hung only when it does not run ``1`` in 5 s."""
_UNWIND_S = 10.0
"""How long an abandoned preview gets to stop its app (the sandbox kills its processes) before it is left."""


@dataclass(frozen=True)
class Preview:
    """One preview: the report, and the desktop screenshot when the page was seen."""

    report: PreviewReport
    screenshot_png: bytes | None


class AppPreviewer:
    """Previews apps in ``browser``, served by ``host``, reporting ``checks``."""

    def __init__(self, browser: Browser, *, host: AppHost = LOOPBACK,
                 checks: tuple[PreviewCheck, ...] = DEFAULT_CHECKS, timeout_s: float = PREVIEW_TIMEOUT_S,
                 hang_check_s: float = HANG_CHECK_S) -> None:
        self._browser, self._host, self.checks = browser, host, checks
        self.timeout_s, self._hang_check_s = timeout_s, hang_check_s

    async def preview(self, files: dict[str, str]) -> Preview:
        """Serve and look at ``files`` (relative path → text) once; what a candidate may be told about them."""
        answer = as_answer(files)
        extracted = extract_app(answer.encode("utf-8"))
        if isinstance(extracted, NotAssessable):
            return Preview(unservable_report("not_an_app", extracted.detail, self.checks), None)
        renamed = sorted(set(files) ^ set(extracted.files))
        if renamed:
            # Names a fenced answer cannot carry (spaces, "=", line breaks) would serve another app than was sent.
            return Preview(unservable_report("not_an_app", f"these paths cannot be used as sent: {renamed[:10]}; use "
                                             "letters, digits, '.', '-', '_' and '/'", self.checks), None)
        digest = hashlib.sha256(answer.encode("utf-8")).hexdigest()
        artifact = Artifact(key=f"preview-{digest[:24]}", candidate_id="preview", query_id="preview",
                            files=extracted.files, entrypoint=extracted.entrypoint, stack=extracted.stack,
                            answer_sha256=digest, rejected=extracted.rejected, notes=extracted.notes)
        with tempfile.TemporaryDirectory(prefix="evalgrid-preview-") as work:
            return await self._look(artifact, Path(work) / "bundle")

    async def _look(self, artifact: Artifact, bundle_dir: Path) -> Preview:
        pool = _TrackedPool(self._browser)
        collection = EvidenceCollection(pool, bundle_dir, artifact=artifact, query=_QUERY, agent=AgentConfig(),
                                        evidence_key=artifact.key, host=self._host)
        progress = RunProgress()
        look = asyncio.ensure_future(collection.run(progress, interact=False))
        try:
            unseen = await self._until_seen(look, progress)
        finally:
            if not look.done():
                await _abandon(look, pool)  # hung, too slow, or the caller gave up on the preview
        if unseen is not None:
            return Preview(unservable_report("perception_failure", unseen, self.checks), None)
        try:
            look.result()
        except BuildUnavailableError as exc:
            return Preview(unservable_report("build_errors", str(exc), self.checks), None)
        except ForgedMeasurementError as exc:
            return Preview(unservable_report("perception_failure", str(exc), self.checks), None)
        bundle = EvidenceBundle(bundle_dir)
        report = preview_report(bundle, origin=progress.origin, checks=self.checks)
        shot = bundle_dir / BundleFile.screenshot("desktop")
        return Preview(report, shot.read_bytes() if shot.is_file() else None)

    async def _until_seen(self, look: asyncio.Future[Any], progress: RunProgress) -> str | None:
        """Wait for the preview to end; or why the page was not seen: it hung, or it was not done in time. A probe
        that finds the pages answering (a build, a loaded machine) waits on, up to ``timeout_s``."""
        deadline = time.monotonic() + self.timeout_s
        while True:
            left = deadline - time.monotonic()
            done, _ = await asyncio.wait({look}, timeout=max(0.0, min(self._hang_check_s, left)))
            if done:
                return None
            probe = await probe_hang(self._browser, origin=progress.origin)
            if probe.app_hung:
                return f"the page stopped answering: {probe.detail}"
            if time.monotonic() >= deadline:
                return f"the page was not seen within {self.timeout_s:g} s of serving it: {probe.detail}"


class _TrackedPool(ContextPool):
    """A pool that remembers the contexts it handed out, so an abandoned preview can close them."""

    def __init__(self, browser: Browser) -> None:
        super().__init__(browser)
        self.opened: list[BrowserContext] = []

    async def open(self, origin: str, blocked: list[str], *, mobile: bool, confine: bool = True) -> Tab:
        tab = await super().open(origin, blocked, mobile=mobile, confine=confine)
        self.opened.append(tab.context)
        return tab


async def _abandon(look: asyncio.Future[Any], pool: _TrackedPool) -> None:
    """Stop a preview that will not finish: cancel it (its host stops the app), then close its contexts, hung
    pages and all. Bounded: a call into a wedged page may never return."""
    await abandon(look, unwind_s=_UNWIND_S)
    await asyncio.gather(*(close_context(context) for context in pool.opened))


def as_answer(files: dict[str, str]) -> str:
    """The files as a markdown answer, one fenced block per file, each fence longer than any backtick run in it."""
    blocks = []
    for path, text in files.items():
        longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
        fence = "`" * max(3, longest + 1)
        blocks.append(f"{fence}{path.rsplit('.', 1)[-1] if '.' in path else 'text'} {path}\n{text}\n{fence}")
    return "\n\n".join(blocks)


def files_argument(raw: object) -> dict[str, str]:
    """The ``files`` argument of a tool call, checked: an object of relative paths to text."""
    if isinstance(raw, str):
        raw = json.loads(raw)
    if not isinstance(raw, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in raw.items()):
        raise ValueError("files must be an object mapping each relative path to the file's text")
    return dict(raw)
