"""What the app preview tool tells a candidate: a structured report read from a Static Perception bundle.

The report says only what the configured checks look for: build errors, uncaught exceptions, console errors,
a blank render and failed requests by default. It never carries a judge's view of the app, a rubric or a
query's checklist; the diagnoses and next actions are package data (``prompts/preview-v1.yaml``), versioned.
"""

from __future__ import annotations

import copy
import functools
from typing import Literal

from pydantic import BaseModel, ConfigDict

from evaluator.evidence.bundle import BundleFile, EvidenceBundle
from evaluator.evidence.console import ConsoleClass
from evaluator.llm.client import JsonSchema
from evaluator.package_data import YamlDocument, package_yaml
from evaluator.preview.checks import DEFAULT_CHECKS, PreviewCheck

PREVIEW_GUIDE = "preview-v1.yaml"
_MAX_PROBLEMS = 20
"""Problems in one report at most (a console storm is summarised by its first ones and a count)."""


_ALWAYS_TOLD = ("build_errors", "perception_failure")
_SEVERITY = ("build_errors", "perception_failure", "runtime_exceptions", "blank_render", "console_errors",
             "failed_requests")
"""Most severe first: a report cut to its first problems keeps the exceptions a console storm would bury."""


class PreviewProblem(BaseModel):
    """One problem the preview found."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    kind: str
    """A :class:`PreviewCheck` value, ``perception_failure`` (the page crashed before it was seen) or ``not_an_app``
    (the files could not be read as an app)."""
    message: str
    """What the browser or the build said."""
    file: str | None = None
    """The app's file it points at, where known (for a built app, the built file: source maps are not read)."""
    line: int | None = None
    """The line in ``file`` (1-based), where known."""
    diagnosis: str
    """What it means, in one line."""


class PreviewReport(BaseModel):
    """The preview tool's answer (``create_app_preview``)."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    version: str
    """The guide's version (``preview-v1``): what the tool says about each kind of problem."""
    status: Literal["ok", "errors"]
    problems: list[PreviewProblem]
    more_problems: int = 0
    """Problems found beyond those listed."""
    next_action: str
    """What to do next, explicitly."""
    checks: list[PreviewCheck]
    """What this preview looked for (and so what it could reveal)."""

    def as_text(self) -> str:
        """The report as a model reads it in a tool result."""
        lines = [f"status: {self.status}", f"checks: {', '.join(self.checks)}"]
        for problem in self.problems:
            where = f" at {problem.file}" + (f":{problem.line}" if problem.line else "") if problem.file else ""
            lines.append(f"- [{problem.kind}]{where}: {problem.message}\n  diagnosis: {problem.diagnosis}")
        if self.more_problems:
            lines.append(f"- ... and {self.more_problems} more problems of these kinds")
        lines.append(f"next action: {self.next_action}")
        return "\n".join(lines)


def preview_report(bundle: EvidenceBundle, *, origin: str | None,
                   checks: tuple[PreviewCheck, ...] = DEFAULT_CHECKS) -> PreviewReport:
    """The report of a bundle collected without interaction, limited to ``checks``; ``origin`` is where the app
    was served (its requests' URLs there are named as the app's files)."""
    guide = _guide()
    # Both viewports load the page, so most problems are seen twice: each is told once. An app that could not be
    # served or seen at all is told whatever the checks: "ok" would send its author to answer with it.
    found = list({(p.kind, p.message, p.file, p.line): p for p in (*_failure(bundle), *_console(bundle, origin),
                                                                   *_blank(bundle))
                  if p.kind in checks or p.kind in _ALWAYS_TOLD}.values())
    found.sort(key=lambda p: _SEVERITY.index(p.kind))  # stable: within a kind, as they happened
    dropped = bundle.interaction().console_entries_dropped
    problems = [PreviewProblem(**p.model_dump(exclude={"diagnosis"}), diagnosis=guide["kinds"][p.kind]["diagnosis"])
                for p in found[:_MAX_PROBLEMS]]
    next_action = (guide["kinds"][problems[0].kind]["next_action"] if problems else guide["ok"]["next_action"])
    return PreviewReport(version=guide["version"], status="errors" if problems else "ok", problems=problems,
                         more_problems=max(0, len(found) - _MAX_PROBLEMS) + dropped, next_action=next_action,
                         checks=list(checks))


def preview_tool() -> JsonSchema:
    """The tool as a model is offered it: ``name``, ``description`` and the JSON schema of its ``parameters``."""
    tool: JsonSchema = copy.deepcopy(_guide()["tool"])  # the guide is cached: a caller's edit must not stick
    return tool


def unservable_report(kind: str, detail: str, checks: tuple[PreviewCheck, ...] = DEFAULT_CHECKS) -> PreviewReport:
    """The report on files that were not seen: ``not_an_app`` (``detail``: why, as extraction said),
    ``build_errors`` (this host cannot build them) or ``perception_failure`` (the page stopped answering)."""
    guide = _guide()
    told = guide["kinds"][kind]
    return PreviewReport(version=guide["version"], status="errors", checks=list(checks),
                         problems=[PreviewProblem(kind=kind, message=detail, diagnosis=told["diagnosis"])],
                         next_action=told["next_action"])


@functools.cache
def _guide() -> YamlDocument:
    return package_yaml("prompts", PREVIEW_GUIDE)


def _failure(bundle: EvidenceBundle) -> list[PreviewProblem]:
    if not bundle.has(BundleFile.STATIC_FAILURE):
        return []
    failure = bundle.json(BundleFile.STATIC_FAILURE)
    if failure.get("phase") == "build":
        log = bundle.text(BundleFile.BUILD_LOG) if bundle.has(BundleFile.BUILD_LOG) else ""
        first_error = next((ln.strip() for ln in log.splitlines() if "error" in ln.lower()), "")
        message = f"{failure['error']}" + (f"; first error: {first_error[:300]}" if first_error else "")
        return [PreviewProblem(kind=PreviewCheck.BUILD_ERRORS, message=message, diagnosis="")]
    return [PreviewProblem(kind="perception_failure", message=str(failure.get("error", ""))[:500], diagnosis="")]


def _console(bundle: EvidenceBundle, origin: str | None) -> list[PreviewProblem]:
    problems = []
    for entry in bundle.console():
        if entry.kind == "requestfailed":
            kind = PreviewCheck.FAILED_REQUESTS
        elif entry.klass is ConsoleClass.UNCAUGHT:
            kind = PreviewCheck.RUNTIME_EXCEPTIONS
        elif entry.klass is ConsoleClass.ERROR:
            kind = PreviewCheck.CONSOLE_ERRORS
        else:
            continue
        url = entry.url
        file = url[len(origin) + 1:].split("?", 1)[0] if origin and url.startswith(origin + "/") else None
        problems.append(PreviewProblem(kind=kind, message=entry.text[:500], file=file or None,
                                       line=entry.line if file else None, diagnosis=""))
    return problems


def _blank(bundle: EvidenceBundle) -> list[PreviewProblem]:
    if not bundle.has(BundleFile.page_facts("desktop")):
        return []
    desktop = bundle.static_facts("desktop")
    # Blank to the eye and without text: a sparse page (a heading and a button) is nearly all background too,
    # and telling its author it rendered nothing would mislead.
    if not desktop.image.blank or desktop.facts.text_length > 0:
        return []
    return [PreviewProblem(kind=PreviewCheck.BLANK_RENDER, message="the desktop screenshot shows only the background",
                           file=None, diagnosis="")]
