"""``create_app_preview``: serve a candidate's files the way a run serves its answer, look at them once, report.

The files are read as a final answer would be (:func:`~evaluator.answer.extract.extract_app`: the same limits
on names, sizes and counts), served by the configured host (the hardened sandbox, or loopback for local use),
built when they are a component or project, and given Static Perception on both viewports, nothing more. The
report (:mod:`evaluator.preview.report`) is what the candidate is told; the desktop screenshot may go with it.
"""

from __future__ import annotations

import hashlib
import json
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from playwright.async_api import Browser

from evaluator.answer.extract import NotAssessable, extract_app
from evaluator.browser.app_host import LOOPBACK, AppHost
from evaluator.browser.context_pool import ContextPool
from evaluator.errors import BuildUnavailableError
from evaluator.evidence.bundle import EvidenceBundle
from evaluator.evidence.collect import EvidenceCollection
from evaluator.models import AgentConfig, Artifact, Difficulty, Kind, Query
from evaluator.preview.report import DEFAULT_CHECKS, PreviewCheck, PreviewReport, preview_report, unservable_report
from evaluator.progress import RunProgress

_QUERY = Query(id="preview", brief="an app preview", domain="preview", leaf="preview", difficulty=Difficulty.EASY,
               language="en", kind=Kind.INTERACTIVE_APPLICATION)
"""What the bundle records as its query: the preview never reads it, and never sees the sweep's."""


@dataclass(frozen=True)
class Preview:
    """One preview: the report, and the desktop screenshot when the page was seen."""

    report: PreviewReport
    screenshot_png: bytes | None


class AppPreviewer:
    """Previews apps in ``browser``, served by ``host``, reporting ``checks``."""

    def __init__(self, browser: Browser, *, host: AppHost = LOOPBACK,
                 checks: tuple[PreviewCheck, ...] = DEFAULT_CHECKS) -> None:
        self._browser, self._host, self.checks = browser, host, checks

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
            bundle_dir = Path(work) / "bundle"
            collection = EvidenceCollection(ContextPool(self._browser), bundle_dir, artifact=artifact, query=_QUERY,
                                            agent=AgentConfig(), evidence_key=artifact.key, host=self._host)
            progress = RunProgress()
            try:
                await collection.run(progress, interact=False)
            except BuildUnavailableError as exc:
                return Preview(unservable_report("build_errors", str(exc), self.checks), None)
            bundle = EvidenceBundle(bundle_dir)
            report = preview_report(bundle, origin=progress.origin, checks=self.checks)
            shot = bundle_dir / "static" / "desktop-viewport.png"
            return Preview(report, shot.read_bytes() if shot.is_file() else None)


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
