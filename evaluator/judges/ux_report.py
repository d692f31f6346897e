"""UXBench's judge stage: an evidence-grounded UX report on one frozen bundle.

UXBench judges a judge by what its report is worth. The judge under test writes a report over
seven UX dimensions (``rubrics/ux-v1.yaml``): a 1-5 score on each, and findings, each naming a
dimension and a severity, describing what the user meets, citing where to see it (a step of the
trace, a time in the recording, or a file of the bundle) and proposing a concrete change. A fixed
repair agent (:mod:`evaluator.answer.repair`) then edits the app from the report under invariants
(same product intent, brand and interaction semantics), a fixed evaluator re-scores the repaired
app, and the report's *repair lift* is repaired minus original.

One model call, at the options' temperature (0 by default) with JSON-schema structured output. The
model is shown the brief, the app's source, the action trace with its times, the agent's summary,
the console's errors, the first desktop screenshot and keyframes of the recording; everything that
came from the app is redacted and fenced (:mod:`evaluator.textsafety`).

Answers are checked against what the bundle holds. An answer that is not valid JSON for the schema,
or whose findings cite evidence the bundle does not hold, gets one repair request (the findings at
fault are listed). After it, findings that still cite nothing usable are dropped and counted in
:attr:`~evaluator.models.UxReport.dropped`; the rest of the report stands. When the repair answer
is unusable but the first answer was valid apart from its citations, the first answer is kept with
its unusable findings dropped. Two unusable answers are ``JudgeOutputError("invalid")``; a refusal,
at either call, is ``JudgeOutputError("refused")``.
"""

from __future__ import annotations

import base64
import functools
import json
import re
from dataclasses import dataclass
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from evaluator.errors import ConfigError, JudgeOutputError
from evaluator.evidence.bundle import BundleFile, EvidenceBundle
from evaluator.evidence.keyframes import keyframes
from evaluator.judges.llm_judge import IMAGES_FITTED, INJECTION_FLAG, Cite, console_lines, summary_text, trace_lines
from evaluator.keys import content_key, sha256_bytes
from evaluator.llm.client import ChatClient, ChatRequest, ChatResult, JsonSchema, ModelAccess, ModelOptions, WireObject
from evaluator.llm.sizing import spread
from evaluator.models import EvidenceRef, JudgeInfo, Severity, UxDimension, UxFinding, UxReport
from evaluator.package_data import YamlDocument, package_text, package_yaml
from evaluator.textsafety import Finding, fence, redact

RUBRIC = "ux-v1"
PROMPT = "judge-ux-v1"
MAX_FINDINGS = 16
"""The most findings one report may hold (the schema's ``maxItems``)."""

# The answer's JSON format, part of the version (so of report keys): a report made under another format
# is not reused.
_ANSWER_FORMAT = "ux-cite1"
_SOURCE_EXTENSIONS = (".html", ".htm", ".js", ".mjs", ".jsx", ".ts", ".tsx", ".css", ".json", ".vue", ".svg", ".md")
_TEXT_LIMIT = 400
# A model rounds the recording's length; a citation this far past the end still points at its last frame.
_TIME_SLACK_S = 0.5


@functools.cache
def load_ux_rubric() -> YamlDocument:
    """The UX report's rubric: each dimension's meaning and anchors, and the severities."""
    rubric = package_yaml("rubrics", f"{RUBRIC}.yaml")
    missing = [d.value for d in UxDimension if d.value not in rubric.get("dimensions", {})]
    if missing:
        raise ConfigError(f"the {RUBRIC} rubric does not define {', '.join(missing)}")
    return rubric


class UxJudgeOptions(ModelOptions):
    """Options of the UX report judge."""

    max_tokens: int = Field(default=3000, gt=0)
    keyframes: int = Field(default=6, ge=0, le=32)
    """Video stills shown to the model (with ``images``)."""
    source_chars: int = Field(default=40_000, ge=0)
    """The most characters of source shown; the rest is cut, and said to be."""
    trace_steps: int = Field(default=60, ge=0)
    """The most trace steps shown; only steps shown may be cited."""
    seed: int = 0


class _Finding(BaseModel):
    model_config = ConfigDict(extra="forbid")

    dimension: UxDimension
    severity: Severity
    description: str
    cite: Cite
    suggestion: str


class _Answer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    scores: dict[UxDimension, Annotated[int, Field(ge=1, le=5)]]
    findings: list[_Finding] = Field(default_factory=list)

    @field_validator("scores")
    @classmethod
    def _all_seven(cls, scores: dict[UxDimension, int]) -> dict[UxDimension, int]:
        missing = [d.value for d in UxDimension if d not in scores]
        if missing:
            raise ValueError(f"scores lacks {', '.join(missing)}")
        return scores


@dataclass(frozen=True)
class UxCitable:
    """What a finding may cite in one bundle: the steps shown, the recording's length, the evidence files."""

    steps: tuple[int, ...] = ()
    video_s: float = 0.0
    files: tuple[str, ...] = ()

    def problem(self, cite: Cite) -> str:
        """Why ``cite`` points at nothing this bundle holds, or ``""``."""
        if cite.step is None and cite.video_time_s is None and not cite.file:
            return "it cites no step, time or file"
        if cite.step is not None and cite.step not in self.steps:
            shown = f"{self.steps[0]}-{self.steps[-1]}" if self.steps else "none"
            return f"step {cite.step} does not exist (steps: {shown})"
        if cite.video_time_s is not None and not 0 <= cite.video_time_s <= self.video_s + _TIME_SLACK_S:
            return f"time {cite.video_time_s} s is outside the {self.video_s:.2f} s recording"
        if cite.file and self.file(cite.file) is None:
            return f"file {cite.file!r} is not in the evidence"
        return ""

    def file(self, name: str) -> str | None:
        """The bundle path a cited file names (``index.html`` is ``source/index.html``), or ``None``."""
        for path in (name, f"{BundleFile.SOURCE}/{name}"):
            if path in self.files:
                return path
        return None

    def ref(self, cite: Cite) -> EvidenceRef:
        """The evidence reference of a usable citation."""
        return EvidenceRef(step=cite.step, video_time_s=cite.video_time_s,
                           file=self.file(cite.file) if cite.file else None)

    def listing(self) -> str:
        """What may be cited, in words for the model."""
        steps = ", ".join(str(s) for s in self.steps) or "none"
        video = f"0 to {self.video_s:.2f} s" if self.video_s > 0 else "none (no recording)"
        return (f"Citable evidence. Steps: {steps}. Recording times: {video}. Files: "
                f"{', '.join(self.files) or 'none'}.")


def ux_schema(citable: UxCitable) -> JsonSchema:
    """JSON schema of the report's answer: all seven scores, and findings that cite only what ``citable`` holds.

    Enforced by the grammar where the server supports JSON schemas; evalgrid checks again either way. With
    nothing to cite, no finding can be reported.
    """
    scores = {"type": "object", "additionalProperties": False, "required": [d.value for d in UxDimension],
              "properties": {d.value: {"type": "integer", "enum": [1, 2, 3, 4, 5]} for d in UxDimension}}
    cites: list[JsonSchema] = []
    if citable.steps:
        cites.append(_one_key("step", {"type": "integer", "enum": list(citable.steps)}))
    if citable.video_s > 0:
        cites.append(_one_key("video_time_s", {"type": "number", "minimum": 0, "maximum": round(citable.video_s, 2)}))
    if citable.files:
        cites.append(_one_key("file", {"type": "string", "enum": list(citable.files)}))
    findings: JsonSchema = {"type": "array", "maxItems": 0}
    if cites:
        item = {"type": "object", "additionalProperties": False,
                "required": ["dimension", "severity", "description", "cite", "suggestion"],
                "properties": {
                    "dimension": {"type": "string", "enum": [d.value for d in UxDimension]},
                    "severity": {"type": "string", "enum": [s.value for s in Severity]},
                    "description": {"type": "string", "maxLength": _TEXT_LIMIT},
                    "cite": {"anyOf": cites},
                    "suggestion": {"type": "string", "maxLength": _TEXT_LIMIT}}}
        findings = {"type": "array", "maxItems": MAX_FINDINGS, "items": item}
    return {"type": "object", "additionalProperties": False, "required": ["scores", "findings"],
            "properties": {"scores": scores, "findings": findings}}


def _one_key(name: str, schema: JsonSchema) -> JsonSchema:
    return {"type": "object", "additionalProperties": False, "required": [name], "properties": {name: schema}}


def ux_report_key(evidence_key: str, options: UxJudgeOptions, version: str) -> str:
    """The content key of a report: the evidence judged, the judge's options and its version."""
    return content_key("ux", evidence_key, options, version)


class UxJudge:
    """Writes UXBench reports on an OpenAI-compatible endpoint (see the module docstring)."""

    def __init__(self, options: UxJudgeOptions) -> None:
        self._options = options
        texts = package_text("prompts", f"{PROMPT}.md") + package_text("rubrics", f"{RUBRIC}.yaml") + _ANSWER_FORMAT
        digest = sha256_bytes(texts.encode())[:12]
        self._version = (f"{RUBRIC}@{digest}:{options.model}:t={options.temperature}:k={options.keyframes}:"
                         f"img={int(options.images)}:src={options.source_chars}:seed={options.seed}")

    @property
    def version(self) -> str:
        """Prompt, rubric and answer format (by hash), model id and decoding: what shapes the reports."""
        return self._version

    async def report(self, bundle: EvidenceBundle, *, report_key: str, models: ModelAccess) -> UxReport:
        """The UX report on ``bundle``, keyed ``report_key`` (one model call, and at most one repair request)."""
        options = self._options
        client = models.client(options.endpoint, role="judge")
        evidence = _UxEvidence(bundle, options)
        messages = _messages(evidence.content())
        room = await client.image_room(ChatRequest(model=options.model, messages=messages,
                                                   max_tokens=options.max_tokens))
        fitted = room is not None
        if fitted:
            messages = _messages(evidence.content(room))
        answer, model = await self._ask(client, messages, evidence.citable)
        kept = [f for f in answer.findings[:MAX_FINDINGS] if not evidence.citable.problem(f.cite)]
        findings = [UxFinding(dimension=f.dimension, severity=f.severity, description=f.description[:_TEXT_LIMIT],
                              evidence=[evidence.citable.ref(f.cite)], suggestion=f.suggestion[:_TEXT_LIMIT])
                    for f in kept]
        rubric = load_ux_rubric()
        return UxReport(report_key=report_key, evidence_key=bundle.manifest.evidence_key,
                        judge=JudgeInfo(name="ux", kind="llm", rubric_version=self._version, model_id=model),
                        scores=dict(answer.scores), findings=findings,
                        dropped=len(answer.findings[:MAX_FINDINGS]) - len(kept),
                        flags=[INJECTION_FLAG] * bool(evidence.injections) + [IMAGES_FITTED] * fitted,
                        label=f"{rubric['label']} · {model}")

    async def _ask(self, client: ChatClient, messages: list[WireObject], citable: UxCitable
                   ) -> tuple[_Answer, str]:
        """A usable answer and the model that gave it, after at most one repair request."""
        options = self._options
        response_format = ({"type": "json_schema", "json_schema": {"name": "ux_report", "schema": ux_schema(citable),
                                                                   "strict": True}}
                           if options.structured else {"type": "json_object"})
        request = ChatRequest(model=options.model, messages=messages, temperature=options.temperature,
                              max_tokens=options.max_tokens, response_format=response_format, seed=options.seed)
        result = await client.complete(request)
        first, problem = _usable(result, citable)
        if first is not None and not problem:
            return first, result.model
        repair = [*messages, {"role": "assistant", "content": result.content[:20_000]},
                  {"role": "user", "content": f"Your answer cannot be used as it is: {problem}. Answer again with the "
                                              "whole JSON object the schema describes; cite only the evidence listed "
                                              "as citable, and keep every text field short."}]
        retry = await client.complete(request.model_copy(update={"messages": repair,
                                                                 "max_tokens": int(options.max_tokens * 1.5)}))
        second, still = _usable(retry, citable)
        if second is not None:
            return second, retry.model
        if first is not None:
            # Valid apart from some citations: its usable findings stand, the rest are dropped by the caller.
            return first, result.model
        raise JudgeOutputError("invalid", f"the UX judge's answer was unusable twice: {problem}; after the repair "
                                          f"request: {still}")


def _messages(content: list[WireObject]) -> list[WireObject]:
    return [{"role": "system", "content": package_text("prompts", f"{PROMPT}.md")},
            {"role": "user", "content": content}]


def _usable(result: ChatResult, citable: UxCitable) -> tuple[_Answer | None, str]:
    """The parsed answer (``None`` when it is not valid) and what is wrong with it, ``""`` when nothing is.

    A refusal is raised: asking again would not change it.
    """
    if result.refusal:
        raise JudgeOutputError("refused", f"the UX judge model refused: {result.refusal[:300]}")
    answer, problem = result.answer_as(_Answer)
    if answer is None:
        return None, problem + _schema_errors(result.content)
    wrong = [f"finding {i} ({f.description[:60]!r}): {why}" for i, f in enumerate(answer.findings[:MAX_FINDINGS])
             if (why := citable.problem(f.cite))]
    if wrong:
        return answer, "these findings cite evidence this bundle does not hold: " + "; ".join(wrong[:8])
    return answer, ""


def _schema_errors(content: str) -> str:
    """Where a JSON answer breaks the answer's model (the client's message names only the model), or ``""``."""
    text = content.strip()
    fenced = re.fullmatch(r"```(?:json)?\s*(.*?)\s*```", text, re.DOTALL)
    try:
        _Answer.model_validate(json.loads(fenced.group(1) if fenced else text))
    except ValidationError as exc:
        return ": " + "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()[:5])
    except ValueError:
        pass
    return ""


class _UxEvidence:
    """The bundle as the UX judge sees it: redacted and fenced, with the first screenshot and keyframes."""

    def __init__(self, bundle: EvidenceBundle, options: UxJudgeOptions) -> None:
        self.bundle = bundle
        self.options = options
        self.injections: list[Finding] = []
        """Passages that addressed the evaluator and were cut (the report is flagged)."""
        self.query = bundle.query()
        self._files = sorted(entry.path for entry in bundle.manifest.files)
        trace = bundle.trace()
        self._trace = trace[:options.trace_steps]
        self._all_steps = len(trace)
        result = bundle.interaction() if bundle.has(BundleFile.RESULT) else None
        video_s = result.video_duration_s if result is not None else 0.0
        files = tuple(p for p in self._files if BundleFile.in_source(p) or BundleFile.is_static_record(p))
        self.citable = UxCitable(steps=tuple(s.step for s in self._trace), video_s=video_s, files=files)

    def _clean(self, text: str, source: str) -> str:
        cleaned, found = redact(text, source)
        self.injections += found
        return cleaned

    def content(self, room: int | None = None) -> list[WireObject]:
        """The user message: text first, then at most ``room`` images (``None``: all; keyframes give way first)."""
        rubric = load_ux_rubric()
        dimensions = "\n".join(
            f"- {name}: {info['meaning']}. 1: {info['1']}. 3: {info['3']}. 5: {info['5']}."
            for name, info in rubric["dimensions"].items())
        severities = "\n".join(f"- {name}: {meaning}" for name, meaning in rubric["severities"].items())
        video_s = self.citable.video_s
        text = "\n\n".join([
            self._brief(), "The application's source code:", self._source(),
            f"The agent's actions ({self._all_steps} steps, {len(self._trace)} shown; times are on the recording's "
            f"clock, {video_s:.2f} s long):",
            fence("trace", self._clean("\n".join(trace_lines(self._trace)) or "(no steps)", "trace")),
            "The agent's summary:",
            fence("agent summary", self._clean(summary_text(self.bundle.agent_summary()), "agent summary")),
            "Browser console errors:",
            fence("console", self._clean("\n".join(console_lines(self.bundle.console(), 30)) or "(no errors)",
                                         "console")),
            "The seven dimensions (score each 1-5):\n" + dimensions, "Severities:\n" + severities,
            self.citable.listing()])
        return [{"type": "text", "text": text}, *self._images(room)]

    def _brief(self) -> str:
        q = self.query
        checklist = "\n".join(f"- {item}" for item in q.checklist)
        body = q.brief + (f"\n\nRequirements:\n{checklist}" if checklist else "")
        return f"The user's brief (language {q.language}, {q.kind.value.replace('_', ' ')}):\n" + fence("brief", body)

    def _source(self) -> str:
        parts, used, limit = [], 0, self.options.source_chars
        for path in (p for p in self._files if BundleFile.in_source(p) and p.endswith(_SOURCE_EXTENSIONS)):
            room = max(0, limit - used)
            if room == 0:
                parts.append(fence(path, "(left out: the source is longer than the judge's limit)"))
                continue
            text = self.bundle.text(path)
            clipped = text[:room] + ("\n… (cut here: the source is longer than the judge's limit)"
                                     if len(text) > room else "")
            used += len(clipped)
            parts.append(fence(path, self._clean(clipped, path)))
        return "\n\n".join(parts) or "(no source files)"

    def _images(self, room: int | None) -> list[WireObject]:
        if not self.options.images or room == 0:
            return [{"type": "text", "text": "(no images are shown: judge from the text evidence)"}]
        parts: list[WireObject] = []
        desktop = self.bundle.has(BundleFile.screenshot("desktop"))
        if desktop:
            data = base64.b64encode((self.bundle.root / BundleFile.screenshot("desktop")).read_bytes()).decode()
            parts += [{"type": "text", "text": "First screenshot, desktop 1280x800 (static/desktop-viewport.png):"},
                      {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{data}"}}]
        video = self.bundle.root / BundleFile.VIDEO
        stills = keyframes(video, limit=self.options.keyframes) if self.options.keyframes and video.is_file() else []
        shown = [f for f in stills if f.jpeg]
        for frame in shown if room is None else spread(shown, room - desktop):
            data = base64.b64encode(frame.jpeg).decode()
            parts += [{"type": "text", "text": f"Recording at {frame.time_s:.2f} s:"},
                      {"type": "image_url", "image_url": {"url": f"data:image/jpeg;base64,{data}"}}]
        return parts or [{"type": "text", "text": "(no images of this run are available)"}]
