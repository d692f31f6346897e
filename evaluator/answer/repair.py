"""UXBench's repair stage: a fixed repair model edits an app from a UX report.

A judge's UX report (:mod:`evaluator.judges.ux_report`) is worth the improvement it makes possible.
The repairer, the same model and prompt for every judge, is given the brief, the report (scores and
findings with their evidence and suggestions) and every file of the app, under invariants: the
same product intent, the same brand (names, colours, tone of the copy), the same interaction
semantics; fix only what the report names; no new features and no external URLs
(``prompts/repair-v1.md``). Its answer is markdown with one fenced code block per file, the format
:func:`~evaluator.answer.extract.extract_app` reads, so the repaired app goes through the same
materialisation and evaluation as any candidate's answer; repair lift is its score minus the
original's.

One model call, no JSON schema. The report (a judge model's words) and the files (an untrusted
candidate's code) are both data to the repair model: fenced, and the report redacted. The files are
shown as they are, not redacted, because the answer must reproduce them. Failures reuse
:class:`~evaluator.errors.JudgeOutputError` (the repairer is a model whose output is checked like a
judge's): ``refused`` when the model declines, ``invalid`` when its answer holds no usable app
(``extract_app`` finds nothing to serve), was cut off at the token limit, or leaves out a file of the
app; ``invalid`` too, before any call, for an app with no files or larger than ``source_chars`` (shown
in part, it could not come back whole), so that one large app fails its own repair, not the stage.
"""

from __future__ import annotations

import json

from pydantic import Field

from evaluator.answer.extract import NotAssessable, extract_app
from evaluator.errors import JudgeOutputError
from evaluator.evidence.bundle import BundleFile, EvidenceBundle
from evaluator.keys import content_key, sha256_bytes
from evaluator.llm.client import ChatRequest, ModelAccess, ModelOptions
from evaluator.models import EvidenceRef, Query, UxReport
from evaluator.package_data import package_text
from evaluator.textsafety import fence, redact

PROMPT = "repair-v1"
ROLE = "repair"
"""The role the repairer's calls are counted under in the usage meter."""
# fence() writes these for <<< and >>> so that no file can close its fence; code such as JavaScript's `x >>> 0`
# must come back as it was.
_FENCE_MARKS = {"‹‹‹": "<<<", "›››": ">>>"}


def _prompt() -> str:
    return package_text("prompts", f"{PROMPT}.md")


class RepairOptions(ModelOptions):
    """Options of the repairer (a model on an OpenAI-compatible endpoint)."""

    max_tokens: int = Field(default=12000, gt=0)
    """Room for the whole repaired app."""
    seed: int = 0
    source_chars: int = Field(default=60_000, ge=0)
    """The largest app (all files together, in characters) the repairer takes on."""


def files_digest(files: dict[str, str]) -> str:
    """A digest of an app's files: their paths and contents, in any order."""
    return sha256_bytes(json.dumps(files, sort_keys=True, ensure_ascii=False).encode())


def repair_key(report_key: str, files_digest: str, options: RepairOptions, version: str) -> str:
    """The content key of a repair: the report, the files repaired, the repairer's options and version."""
    return content_key("repair", report_key, files_digest, options, version)


def bundle_sources(bundle: EvidenceBundle) -> dict[str, str]:
    """The app's files as the bundle recorded them (its ``source/`` tree), by path without ``source/``."""
    return {entry.path.removeprefix(f"{BundleFile.SOURCE}/"): bundle.text(entry.path)
            for entry in sorted(bundle.manifest.files, key=lambda e: e.path) if BundleFile.in_source(entry.path)}


class Repairer:
    """Edits an app from a UX report (see the module docstring)."""

    def __init__(self, options: RepairOptions) -> None:
        self._options = options
        digest = sha256_bytes(_prompt().encode())[:12]
        self._version = f"{PROMPT}@{digest}:{options.model}:t={options.temperature}:seed={options.seed}"

    @property
    def version(self) -> str:
        """Prompt (by hash), model id and decoding: what shapes the repairs."""
        return self._version

    async def repair(self, files: dict[str, str], query: Query, report: UxReport, *, models: ModelAccess) -> str:
        """The repaired app, as a markdown answer with one fenced code block per file (``extract_app`` reads it).

        Raises :class:`JudgeOutputError` (``refused``, ``invalid``) as the module docstring says.
        """
        options = self._options
        size = sum(len(text) for text in files.values())
        if not files or size > options.source_chars:
            # One app's size is that fixture's failure, not the stage's: no model call is made.
            raise JudgeOutputError("invalid", f"the app's files ({len(files)}, {size} characters) are empty or over "
                                              f"the repairer's source_chars ({options.source_chars}); nothing was sent")
        messages = [{"role": "system", "content": _prompt()},
                    {"role": "user", "content": repair_message(files, query, report)}]
        request = ChatRequest(model=options.model, messages=messages, temperature=options.temperature,
                              max_tokens=options.max_tokens, seed=options.seed)
        result = await models.client(options.endpoint, role=ROLE).complete(request)
        if result.refusal:
            raise JudgeOutputError("refused", f"the repair model refused: {result.refusal[:300]}")
        if result.finish_reason == "length":
            raise JudgeOutputError("invalid", "the repair answer was cut off at the token limit: raise max_tokens")
        answer = _restore_marks(result.content, files)
        app = extract_app(answer.encode())
        if isinstance(app, NotAssessable):
            raise JudgeOutputError("invalid", f"the repair answer holds no usable app ({app.code.value}: "
                                              f"{app.detail[:200]})")
        missing = sorted(set(files) - set(app.files))
        if missing:
            raise JudgeOutputError("invalid", f"the repair answer left out {len(missing)} file(s) of the app: "
                                              f"{', '.join(missing[:5])}")
        return answer


def repair_message(files: dict[str, str], query: Query, report: UxReport) -> str:
    """The repair request's user message: the brief, the report and every file, each fenced as data."""
    checklist = "\n".join(f"- {item}" for item in query.checklist)
    brief = query.brief + (f"\n\nRequirements:\n{checklist}" if checklist else "")
    shown = "\n\n".join(fence(path, text) for path, text in sorted(files.items()))
    report_text, _ = redact(_report_text(report), "ux report")
    return "\n\n".join([
        f"The user's brief (the page's language: {query.language}):", fence("brief", brief),
        "The UX report to act on (from a reviewer; findings most severe first):", fence("ux report", report_text),
        f"The application's files ({len(files)}; return every one of them, complete, under the same path):", shown,
        "Repair the application under the invariants, and answer in the format described.",
    ])


def _report_text(report: UxReport) -> str:
    order = {"critical": 0, "major": 1, "minor": 2}
    scores = ", ".join(f"{dimension.value} {score}" for dimension, score in report.scores.items())
    lines = [f"Scores (1 broken - 5 exemplary): {scores}", "", f"Findings ({len(report.findings)}):"]
    ranked = sorted(report.findings, key=lambda f: order.get(f.severity.value, 3))
    for number, finding in enumerate(ranked, 1):
        lines += [f"{number}. [{finding.dimension.value}, {finding.severity.value}] {finding.description}",
                  f"   Seen at: {'; '.join(_where(ref) for ref in finding.evidence)}",
                  f"   Suggested change: {finding.suggestion}"]
    return "\n".join(lines if report.findings else [*lines, "(none)"])


def _where(ref: EvidenceRef) -> str:
    parts = []
    if ref.step is not None:
        parts.append(f"step {ref.step}")
    if ref.video_time_s is not None:
        parts.append(f"recording at {ref.video_time_s:g} s")
    if ref.file:
        parts.append(f"file {ref.file}")
    if ref.detail:
        parts.append(ref.detail)
    return ", ".join(parts)


def _restore_marks(answer: str, files: dict[str, str]) -> str:
    """Undo what fencing did to the files' ``<<<`` / ``>>>``, unless a file really holds the guillemets."""
    if any(mark in text for text in files.values() for mark in _FENCE_MARKS):
        return answer
    for mark, original in _FENCE_MARKS.items():
        answer = answer.replace(mark, original)
    return answer
