"""The LLM judge: Cookie-Frame's Static Perception audit, then Dynamic Scoring, on a frozen bundle.

Two calls to a judge model on any OpenAI-compatible endpoint, both at temperature 0 with JSON-schema
structured output:

1. **Static audit** — the brief, the source, the first screenshots, the console and dev-server logs
   → an initial functional and aesthetic assessment and the code-level problems it is sure of;
2. **Dynamic scoring** — the same plus the static audit, keyframes of the interaction video chosen
   by scene change (with their times), the action trace and the agent's summary → a baseline per
   dimension and every problem, each with a category, a severity and its evidence.

The model reads and classifies; evalgrid does the arithmetic (``rubrics/llm-judge-v1.yaml``): each
severity maps to a fixed deduction, each category is capped, and the score is the baseline minus
the deductions. An answer that is not valid JSON, breaks the schema, cites evidence that does not
exist or was cut off gets one repair request; a second failure, or a refusal, is a
:class:`~evaluator.errors.JudgeOutputError`. Everything from the app reaches the model redacted
and fenced (:mod:`evaluator.textsafety`); a run whose app addressed the evaluator is flagged.

Each call shows no more images than the judge's server takes (:mod:`evaluator.llm.sizing`): keyframes give way
first, and the verdict is flagged ``images_fitted`` with what was left out. A request the server refuses for its
size anyway raises :class:`~evaluator.errors.RequestTooLargeError`, which the run scores like an unusable answer.
"""

from __future__ import annotations

import base64
import functools
import json
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from evaluator.agents.observation import ActionKind, AgentSummary, StepRecord
from evaluator.errors import ConfigError, JudgeOutputError
from evaluator.evidence.bundle import BundleFile, EvidenceBundle
from evaluator.evidence.console import ConsoleClass, ConsoleEntry
from evaluator.evidence.keyframes import keyframes
from evaluator.judges import judges
from evaluator.keys import sha256_bytes
from evaluator.llm.client import ChatClient, ChatRequest, ChatResult, JsonSchema, ModelAccess, ModelOptions, WireObject
from evaluator.llm.sizing import Fitted, spread
from evaluator.models import (
    CriterionReason,
    Dimension,
    EvidenceRef,
    FailureAttribution,
    JudgeInfo,
    Query,
    Severity,
    Verdict,
)
from evaluator.package_data import YamlDocument, package_text, package_yaml
from evaluator.textsafety import Finding, fence, redact

RUBRIC = "llm-judge-v1"
_STATIC_PROMPT = "judge-static-v1"
_SOURCE_EXTENSIONS = (".html", ".htm", ".js", ".mjs", ".jsx", ".ts", ".tsx", ".css", ".json", ".vue", ".svg", ".md")
INJECTION_FLAG = "prompt_injection"
"""Flag on a verdict whose app (source, page, logs or the agent's notes) addressed the evaluator."""
IMAGES_FITTED = "images_fitted"
"""Flag (and criterion, saying what) on a verdict whose judge was shown fewer images than it asks for, to fit the
server's limits."""


@functools.cache
def load_rubric() -> YamlDocument:
    """The LLM judge's scoring table."""
    return package_yaml("rubrics", f"{RUBRIC}.yaml")


# The answers' JSON format, part of the judge's version (so of verdict keys): a verdict made under an
# older format is not reused. cite2: a problem's citation is one object limited to what the bundle holds.
_ANSWER_FORMAT = "cite2"


class Cite(BaseModel):
    """Where an answer points in one bundle: a step of the trace, a time in the recording or a file."""

    model_config = ConfigDict(extra="forbid")

    step: int | None = None
    video_time_s: float | None = None
    file: str | None = None


class _Problem(BaseModel):
    model_config = ConfigDict(extra="forbid")

    category: str
    dimension: Literal["functional", "aesthetic"]
    severity: Literal["critical", "major", "minor"]
    description: str
    cite: Cite


class _StaticAudit(BaseModel):
    model_config = ConfigDict(extra="forbid")

    functional_assessment: str
    aesthetic_assessment: str
    code_problems: list[_Problem] = Field(default_factory=list)


class _Findings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    functional_base: float
    functional_reason: str
    aesthetic_base: float
    aesthetic_bonus: float = 0.0
    aesthetic_reason: str
    problems: list[_Problem] = Field(default_factory=list)


@dataclass(frozen=True)
class Citable:
    """What a problem may cite in one bundle: its steps, its recording's length and its files."""

    steps: tuple[int, ...] = ()
    video_s: float = 0.0
    files: tuple[str, ...] = ()


def cite_schemas(citable: Citable) -> list[JsonSchema]:
    """The JSON schemas of a citation of ``citable`` (one per kind it holds; none when it holds nothing).

    Grammar-enforced where the server supports JSON schemas, so a model cannot cite step 99 of a
    five-step trace or a file that is not there; evalgrid checks again either way (:func:`cite_error`).
    """
    cites: list[JsonSchema] = []
    if citable.steps:
        cites.append({"type": "object", "additionalProperties": False, "required": ["step"],
                      "properties": {"step": {"type": "integer", "enum": list(citable.steps)}}})
    if citable.video_s > 0:
        cites.append({"type": "object", "additionalProperties": False, "required": ["video_time_s"],
                      "properties": {"video_time_s": {"type": "number", "minimum": 0,
                                                      "maximum": round(citable.video_s, 2)}}})
    if citable.files:
        cites.append({"type": "object", "additionalProperties": False, "required": ["file"],
                      "properties": {"file": {"type": "string", "enum": list(citable.files)}}})
    return cites


def cite_error(cite: Cite, steps: tuple[int, ...], video_s: float, files: Collection[str]) -> str:
    """Why ``cite`` points at a step, time or file the bundle does not hold (``steps``, ``video_s``, ``files``),
    or ``""`` (also when it points at nothing: the caller says what that means)."""
    if cite.step is not None and cite.step not in steps:
        return f"step {cite.step} does not exist (steps: 0-{len(steps) - 1})"
    if cite.video_time_s is not None and not 0 <= cite.video_time_s <= video_s + 0.5:
        return f"time {cite.video_time_s} s is outside the {video_s:.1f} s recording"
    if cite.file and cite.file not in files and f"{BundleFile.SOURCE}/{cite.file}" not in files:
        return f"file {cite.file!r} is not in the evidence"
    return ""


def _problems_schema(rubric: YamlDocument, citable: Citable, most: int) -> JsonSchema:
    """Up to ``most`` problems, each of a category of its dimension citing something that exists in the bundle
    (:func:`cite_schemas`). With nothing to cite, no problem can be reported.
    """
    cites = cite_schemas(citable)
    if not cites:
        return {"type": "array", "maxItems": 0}
    variants = []
    for dimension in ("functional", "aesthetic"):
        variants.append({"type": "object", "additionalProperties": False,
                         "required": ["category", "dimension", "severity", "description", "cite"],
                         "properties": {
                             "category": {"type": "string", "enum": sorted(rubric[dimension]["categories"])},
                             "dimension": {"type": "string", "enum": [dimension]},
                             "severity": {"type": "string", "enum": ["critical", "major", "minor"]},
                             "description": {"type": "string", "maxLength": 300},
                             "cite": {"anyOf": cites}}})
    return {"type": "array", "maxItems": most, "items": {"anyOf": variants}}


def static_schema(citable: Citable) -> JsonSchema:
    """JSON schema of the static audit's answer (code problems cite files)."""
    rubric = load_rubric()
    files = Citable(files=citable.files)
    return {"type": "object", "additionalProperties": False,
            "required": ["functional_assessment", "aesthetic_assessment", "code_problems"],
            "properties": {
                "functional_assessment": {"type": "string", "maxLength": 1200},
                "aesthetic_assessment": {"type": "string", "maxLength": 800},
                "code_problems": _problems_schema(rubric, files, 12)}}


def dynamic_schema(citable: Citable) -> JsonSchema:
    """JSON schema of the dynamic scoring's answer."""
    rubric = load_rubric()
    functional = [float(b) for b in rubric["functional"]["baselines"]]
    aesthetic = [float(b) for b in rubric["aesthetic"]["baselines"]]
    return {"type": "object", "additionalProperties": False,
            "required": ["functional_base", "functional_reason", "aesthetic_base", "aesthetic_bonus",
                         "aesthetic_reason", "problems"],
            "properties": {
                "functional_base": {"type": "number", "enum": functional},
                "functional_reason": {"type": "string", "maxLength": 1200},
                "aesthetic_base": {"type": "number", "enum": aesthetic},
                "aesthetic_bonus": {"type": "number", "enum": [float(b) for b in rubric["aesthetic"]["bonuses"]]},
                "aesthetic_reason": {"type": "string", "maxLength": 1000},
                "problems": _problems_schema(rubric, citable, 16)}}


_AnswerT = TypeVar("_AnswerT", _StaticAudit, _Findings)


class LLMJudgeOptions(ModelOptions):
    """Options of the ``llm`` judge (``judge.options``)."""

    max_tokens: int = Field(3000, gt=0)
    keyframes: int = Field(8, ge=0, le=32)
    """Video stills shown to the judge."""
    source_chars: int = Field(60_000, ge=0)
    seed: int = 0
    prompt: Literal["judge-dynamic-v1", "judge-dynamic-v2"] = "judge-dynamic-v2"
    """The dynamic scoring's instructions: v2 checks computed results against the brief; v1 for rejudging."""
    result_shots: int = Field(4, ge=0, le=12)
    """Screens shown after the first steps that entered a value (typed, chosen, slid), where computed results
    appear (``judge-dynamic-v2`` only)."""


class LLMJudge:
    """Cookie-Frame's two-phase judge on an OpenAI-compatible endpoint (see the module docstring)."""

    def __init__(self, options: LLMJudgeOptions) -> None:
        self._options = options
        texts = ("\n".join(package_text("prompts", f"{p}.md") for p in (_STATIC_PROMPT, options.prompt))
                 + package_text("rubrics", f"{RUBRIC}.yaml"))
        digest = sha256_bytes(texts.encode())[:12]
        # v1's version string is kept as it was, so that its stored verdicts are still found by their keys
        shots = f":res={options.result_shots}" if options.prompt != "judge-dynamic-v1" else ""
        self._version = (f"{RUBRIC}@{digest}:{_ANSWER_FORMAT}:{options.model}:t={options.temperature}:"
                         f"k={options.keyframes}:img={int(options.images)}:src={options.source_chars}:"
                         f"seed={options.seed}{shots}")

    @property
    def version(self) -> str:
        """Prompts and rubric (by hash), model id and decoding: what shapes the verdicts."""
        return self._version

    async def __call__(self, bundle: EvidenceBundle, *, verdict_key: str, models: ModelAccess | None = None
                       ) -> Verdict:
        """The verdict on ``bundle`` (two model calls; see the module docstring)."""
        if models is None:
            raise ConfigError("the llm judge needs model endpoints: run it from a sweep with `endpoints:`")
        options = self._options
        client = models.client(options.endpoint, role="judge")
        evidence = _Evidence(bundle, source_chars=options.source_chars, images=options.images,
                             keyframes=options.keyframes,
                             result_shots=options.result_shots if options.prompt != "judge-dynamic-v1" else 0)
        citable = evidence.citable
        messages, fitted_static = await self._fit(client, "static_audit", _STATIC_PROMPT, evidence.static_content)
        static_answer, static_result = await self._ask(
            client, "static_audit", static_schema(citable), _StaticAudit, messages, evidence)
        messages, fitted_dynamic = await self._fit(client, "dynamic_scoring", options.prompt,
                                                   functools.partial(evidence.dynamic_content, static_answer))
        findings, result = await self._ask(
            client, "dynamic_scoring", dynamic_schema(citable), _Findings, messages, evidence)
        fitted = [f for f in (fitted_static, fitted_dynamic) if f is not None]
        return _verdict(bundle, verdict_key, self._version, findings, static_answer,
                        result.model or static_result.model, evidence.findings, fitted)

    async def _fit(self, client: ChatClient, call: str, prompt: str, content: Callable[[int | None], list[WireObject]]
                   ) -> tuple[list[WireObject], Fitted | None]:
        """A call's messages with no more images than ``client``'s server takes, and what was left out to fit, if
        anything. ``content(room)`` builds the user message with at most ``room`` images (``None``: all)."""
        def messages(parts: list[WireObject]) -> list[WireObject]:
            return [{"role": "system", "content": package_text("prompts", f"{prompt}.md")},
                    {"role": "user", "content": parts}]

        whole = ChatRequest(model=self._options.model, messages=messages(content(None)),
                            max_tokens=self._options.max_tokens)
        room = await client.image_room(whole)
        if room is None:
            return whole.messages, None
        fitted = ChatRequest(model=self._options.model, messages=messages(content(room)))
        return fitted.messages, Fitted(call, wanted=whole.images(), shown=fitted.images(),
                                       limits=await client.server_limits())

    async def _ask(self, client: ChatClient, name: str, schema: JsonSchema, parse: type[_AnswerT],
                   messages: list[WireObject], evidence: _Evidence) -> tuple[_AnswerT, ChatResult]:
        """One structured answer, with one repair attempt."""
        options = self._options
        response_format = ({"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": True}}
                           if options.structured else {"type": "json_object"})
        request = ChatRequest(model=options.model, messages=messages, temperature=options.temperature,
                              max_tokens=options.max_tokens, response_format=response_format, seed=options.seed)
        result = await client.complete(request)
        answer, problem = _parse(result, parse, evidence)
        if answer is not None:
            return answer, result
        if result.refusal:
            raise JudgeOutputError("refused", f"the judge model refused ({name}): {result.refusal[:300]}")
        repair = [*messages, {"role": "assistant", "content": result.content[:20_000]},
                  {"role": "user", "content": f"Your answer cannot be used: {problem}. Answer again with only the "
                                              "JSON object the schema describes; keep every text field short."}]
        retry = await client.complete(request.model_copy(update={"messages": repair,
                                                                 "max_tokens": int(options.max_tokens * 1.5)}))
        answer, second = _parse(retry, parse, evidence)
        if answer is not None:
            return answer, retry
        if retry.refusal:
            raise JudgeOutputError("refused", f"the judge model refused ({name}): {retry.refusal[:300]}")
        raise JudgeOutputError("invalid", f"the judge model's {name} answer was unusable twice: {problem}; "
                                          f"after the repair request: {second}")


@judges.register("llm", options=LLMJudgeOptions)
def llm_judge(**options: object) -> LLMJudge:
    """The ``llm`` judge with the options given (the registry has checked them: see :class:`LLMJudgeOptions`)."""
    return LLMJudge(LLMJudgeOptions.model_validate(options))


def _parse(result: ChatResult, parse: type[_AnswerT], evidence: _Evidence) -> tuple[_AnswerT | None, str]:
    """The validated answer, or ``None`` and why not."""
    answer, problem = result.answer_as(parse)
    if answer is None:
        return None, problem
    if isinstance(answer, _StaticAudit):
        wrong = [why for p in answer.code_problems if (why := evidence.check(p))]
    elif isinstance(answer, _Findings):
        wrong = [why for p in answer.problems if (why := evidence.check(p))] + evidence.check_bases(answer)
    else:
        wrong = []
    if wrong:
        return None, "; ".join(wrong[:5])
    return answer, ""


class _Evidence:
    """The bundle as the judge model sees it: redacted, fenced, with images and keyframes."""

    def __init__(self, bundle: EvidenceBundle, *, source_chars: int, images: bool, keyframes: int,
                 result_shots: int = 0) -> None:
        self.bundle = bundle
        self.rubric = load_rubric()
        self.findings: list[Finding] = []
        self.query = bundle.query()
        self._images = images
        self._files = {entry.path for entry in bundle.manifest.files}
        self._source = self._read_source(source_chars)
        self._trace = bundle.trace()
        result = bundle.interaction() if bundle.has(BundleFile.RESULT) else None
        self._video_s = result.video_duration_s if result is not None else 0.0
        self._keyframes = keyframes
        self._result_shots = result_shots
        self._stills = None if not images or not keyframes or not bundle.has(BundleFile.VIDEO) else \
            stills(bundle, keyframes)

    def _clean(self, text: str, source: str) -> str:
        cleaned, found = redact(text, source)
        self.findings += found
        return cleaned

    def _read_source(self, limit: int) -> str:
        parts, used = [], 0
        for path in sorted(p for p in self._files if BundleFile.in_source(p) and p.endswith(_SOURCE_EXTENSIONS)):
            text = self.bundle.text(path)
            room = max(0, limit - used)
            if room == 0:
                parts.append(fence(path, "(left out: the source is longer than the judge's limit)"))
                continue
            clipped = text[:room] + ("\n… (cut here: the source is longer than the judge's limit)"
                                     if len(text) > room else "")
            used += len(clipped)
            parts.append(fence(path, self._clean(clipped, path)))
        return "\n\n".join(parts) or "(no source files)"

    def _logs(self) -> str:
        console = self.bundle.console()
        lines = console_lines(console, 30)
        noise = len(console) - len(lines)
        lines.append(f"({noise} other console entries classified as noise: warnings, fonts, favicon, blocked hosts)")
        server = self.bundle.text(BundleFile.SERVER_LOG)[-3000:] if self.bundle.has(BundleFile.SERVER_LOG) else ""
        return (fence(BundleFile.CONSOLE, self._clean("\n".join(lines), "console"))
                + "\n\n" + fence(BundleFile.SERVER_LOG, self._clean(server, BundleFile.SERVER_LOG)))

    def _image(self, path: str, label: str, shown: bool = True) -> list[WireObject]:
        if not self._images or not self.bundle.has(path):
            return [{"type": "text", "text": f"({label}: no image)"}]
        if not shown:
            return [{"type": "text", "text": f"({label}: left out to fit the judge server's limits)"}]
        kind = "png" if path.endswith(".png") else "jpeg"
        data = base64.b64encode((self.bundle.root / path).read_bytes()).decode()
        return [{"type": "text", "text": f"{label}:"},
                {"type": "image_url", "image_url": {"url": f"data:image/{kind};base64,{data}"}}]

    def _brief(self) -> str:
        return brief_text(self.query)

    def _categories(self) -> str:
        lines = []
        for dim in ("functional", "aesthetic"):
            for name, info in self.rubric[dim]["categories"].items():
                lines.append(f"- {name} ({dim}, usually {info['default_severity']}): {info['meaning']}")
        return "Problem categories:\n" + "\n".join(lines)

    def static_content(self, room: int | None = None) -> list[WireObject]:
        """The static audit's user message, with at most ``room`` images (``None``: all; the desktop first)."""
        text = "\n\n".join([self._brief(), "The application's source code:", self._source,
                            "Browser console and dev-server output:", self._logs(), self._categories()])
        room = 2 if room is None else room
        return [{"type": "text", "text": text},
                *self._image(BundleFile.screenshot("desktop"), "First screenshot, desktop 1280x800", room >= 1),
                *self._image(BundleFile.screenshot("mobile"), "First screenshot, mobile 390x844", room >= 2)]

    def dynamic_content(self, audit: _StaticAudit, room: int | None = None) -> list[WireObject]:
        """The dynamic scoring's user message, with at most ``room`` images (``None``: all). What gives way first
        is the keyframes (spread over the recording), then the screens of entered values, the first screenshot
        last."""
        rubric = self.rubric
        bases = "\n".join(f"- functional {b}: {m}" for b, m in rubric["functional"]["baselines"].items())
        bases += "\n" + "\n".join(f"- aesthetic {b}: {m}" for b, m in rubric["aesthetic"]["baselines"].items())
        summary = self.bundle.agent_summary()
        content: list[WireObject] = [{"type": "text", "text": "\n\n".join([
            self._brief(), "The application's source code:", self._source,
            "The static audit (written before the application was used):",
            fence("static audit", audit.model_dump_json(indent=1)),
            "Browser console and dev-server output:", self._logs(),
            f"The agent's actions ({len(self._trace)} steps; times are on the recording's clock, "
            f"{self._video_s:.1f} s long):",
            fence("trace", self._clean("\n".join(trace_lines(self._trace[:60])) or "(no steps)", "trace")),
            "The agent's summary:", fence("agent summary", self._clean(summary_text(summary), "agent summary")),
            "Baselines:\n" + bases, self._categories(),
        ])}]
        results = self._results()
        stills = self._stills or []
        first = 1 if room is None else min(1, room)
        shown_results = len(results) if room is None else min(len(results), room - first)
        shown_stills = spread(stills, len(stills) if room is None else room - first - shown_results)
        content += self._image(BundleFile.screenshot("desktop"), "First screenshot, desktop", first == 1)
        for time_s, data in shown_stills:
            content += [{"type": "text", "text": f"Recording at {time_s:.2f} s:"},
                        {"type": "image_url", "image_url": {"url": f"data:image/jpeg;base64,{data}"}}]
        if self._stills is None:
            content.append({"type": "text", "text": "(no keyframes of the recording are available)"})
        elif len(shown_stills) < len(stills):
            content.append({"type": "text", "text": f"({len(stills) - len(shown_stills)} more keyframes left out "
                                                    "to fit the judge server's limits)"})
        for at, (path, label) in enumerate(results):
            content += self._image(path, label, at < shown_results)
        return content

    def _results(self) -> list[tuple[str, str]]:
        """Screens after the first steps that entered a value (typed, chosen, slid), where a computed result
        shows: the judge checks it against the brief. Each is the screen before the next value was entered, at
        most two steps on (the Enter or submit that followed counts; controls tried later do not)."""
        if not self._result_shots:
            return []
        numbers = [s.step for s in self._trace if _entered(s)]
        shots = []
        for at, number in list(enumerate(numbers))[:self._result_shots]:
            shown = min(numbers[at + 1] if at + 1 < len(numbers) else number + 2, number + 2)
            shots.append((BundleFile.step_shot(min(shown, len(self._trace))),
                          f"Screen after the value entered at step {number}"))
        return shots

    @property
    def citable(self) -> Citable:
        """What problems may cite in this bundle."""
        files = tuple(sorted(p for p in self._files if BundleFile.in_source(p) or BundleFile.is_static_record(p)))
        return Citable(steps=tuple(s.step for s in self._trace), video_s=self._video_s, files=files)

    def check(self, problem: _Problem) -> str:
        """Why a problem cannot be used, or ``""``."""
        categories = self.rubric[problem.dimension]["categories"]
        cite = problem.cite
        if problem.category not in categories:
            return f"category {problem.category!r} is not a {problem.dimension} category"
        if cite.step is None and cite.video_time_s is None and not cite.file:
            return f"problem {problem.description[:60]!r} cites no step, time or file"
        return cite_error(cite, tuple(s.step for s in self._trace), self._video_s, self._files)

    def check_bases(self, findings: _Findings) -> list[str]:
        """Why the baselines cannot be used."""
        rubric, wrong = self.rubric, []
        if findings.functional_base not in {float(b) for b in rubric["functional"]["baselines"]}:
            wrong.append(f"functional_base {findings.functional_base} is not one of the baselines")
        if findings.aesthetic_base not in {float(b) for b in rubric["aesthetic"]["baselines"]}:
            wrong.append(f"aesthetic_base {findings.aesthetic_base} is not one of the baselines")
        if findings.aesthetic_bonus not in {float(b) for b in rubric["aesthetic"]["bonuses"]}:
            wrong.append(f"aesthetic_bonus {findings.aesthetic_bonus} is not one of the allowed bonuses")
        return wrong


def brief_text(query: Query) -> str:
    """The query as a judge model is shown it: its kind, difficulty and language, and the brief with its
    requirements, fenced (the brief is data too)."""
    q = query
    checklist = "\n".join(f"- {item}" for item in q.checklist)
    return (f"The user's brief (language {q.language}, {q.kind.value.replace('_', ' ')}, difficulty "
            f"{q.difficulty.value}):\n" + fence("brief", q.brief + (f"\n\nRequirements:\n{checklist}" if checklist
                                                                    else "")))


def trace_lines(trace: Iterable[StepRecord]) -> list[str]:
    """One line per step of an interaction trace: when, what was done to which control, and what came of it.

    The lines hold page text (control labels, typed text, errors): redact and fence them before a model sees them.
    """
    lines = []
    for step in trace:
        what = step.control[:80]
        action, result = step.action, step.result
        lines.append(
            f"step {step.step} at {step.action_start_s} s: {action.kind} {what!r}"
            + (f" typing {action.text!r}" if action.text else "")
            + f" -> {result.status}" + (f" ({result.detail})" if result.detail else "")
            + (f"; errors: {result.errors[:2]}" if result.errors else ""))
    return lines


def summary_text(summary: AgentSummary | None) -> str:
    """The agent's summary as a judge model is shown it (``{}`` when there is none). Page text: redact it."""
    return json.dumps(summary.model_dump(mode="json") if summary is not None else {}, ensure_ascii=False, indent=1)


def _entered(step: StepRecord) -> bool:
    """Whether a trace step entered a value: typed, chose an option, or moved a slider."""
    kind, target = step.action.kind, step.target
    return (kind in (ActionKind.TYPE, ActionKind.SELECT) or (target is not None and target.intent == "slider")
            or (target is not None and target.type == "range" and kind in (ActionKind.CLICK, ActionKind.DRAG)))


def console_lines(console: list[ConsoleEntry], most: int) -> list[str]:
    """The first ``most`` errors of a bundle's ``console.json`` (uncaught and console errors; the rest is noise),
    one line each with its phase and, when known, its time in the recording. Page text: redact and fence them."""
    important = [e for e in console if e.klass in (ConsoleClass.UNCAUGHT, ConsoleClass.ERROR)][:most]
    return [f"[{e.phase}] {e.klass}: {e.text[:300]}"
            + (f" (video {e.video_time_s} s)" if e.video_time_s is not None else "") for e in important]


def stills(bundle: EvidenceBundle, limit: int) -> list[tuple[float, str]]:
    """Up to ``limit`` keyframes of the bundle's recording, chosen by scene change: (time in s, base64 JPEG)."""
    return [(frame.time_s, base64.b64encode(frame.jpeg).decode())
            for frame in keyframes(bundle.root / BundleFile.VIDEO, limit=limit) if frame.jpeg]


def _verdict(bundle: EvidenceBundle, verdict_key: str, version: str, findings: _Findings, audit: _StaticAudit,
             model: str, injection: list[Finding], fitted: list[Fitted]) -> Verdict:
    rubric = load_rubric()
    deductions = rubric["severity_deductions"]
    attributions: list[FailureAttribution] = []
    taken: dict[tuple[str, str], float] = {}
    for problem in findings.problems:
        cap = rubric[problem.dimension]["categories"][problem.category]["cap"]
        already = taken.get((problem.dimension, problem.category), 0.0)
        amount = max(0.0, min(float(deductions[problem.severity]), cap - already))
        taken[(problem.dimension, problem.category)] = already + amount
        cite = problem.cite
        file = cite.file if not cite.file or cite.file in {e.path for e in bundle.manifest.files} \
            else f"{BundleFile.SOURCE}/{cite.file}"
        attributions.append(FailureAttribution(
            category=problem.category, dimension=Dimension(problem.dimension), severity=Severity(problem.severity),
            deduction=amount, description=problem.description[:300],
            evidence=[EvidenceRef(step=cite.step, video_time_s=cite.video_time_s, file=file)]))

    def score(dimension: str, start: float) -> tuple[float, str]:
        parts = [a for a in attributions if a.dimension.value == dimension]
        total = sum(a.deduction for a in parts)
        value = round(min(8.0, max(0.0, start - total)), 2)
        arithmetic = " ".join(f"- {a.deduction:g} ({a.category}, {a.severity.value})" for a in parts)
        return value, f"Calculation: {start:g} {arithmetic} = {value:g}." if parts else f"Calculation: {start:g}."

    functional, f_math = score("functional", findings.functional_base)
    aesthetic, a_math = score("aesthetic", findings.aesthetic_base + findings.aesthetic_bonus)
    flags = [INJECTION_FLAG] if injection else []
    flags += [IMAGES_FITTED] if fitted else []
    criteria = [
        CriterionReason(criterion="static_audit", dimension=Dimension.FUNCTIONAL,
                        reason=audit.functional_assessment[:1200]),
        CriterionReason(criterion="static_audit", dimension=Dimension.AESTHETIC,
                        reason=audit.aesthetic_assessment[:800]),
    ]
    if injection:
        criteria.append(CriterionReason(
            criterion=INJECTION_FLAG, dimension=Dimension.FUNCTIONAL,
            reason=f"{len(injection)} passage(s) addressed the evaluator and were removed before judging, e.g. "
                   f"{injection[0].excerpt[:160]!r} ({injection[0].source})"))
    if fitted:
        criteria.append(CriterionReason(criterion=IMAGES_FITTED, dimension=Dimension.FUNCTIONAL,
                                        reason="; ".join(f.note() for f in fitted)))
    return Verdict(
        verdict_key=verdict_key, evidence_key=bundle.manifest.evidence_key,
        judge=JudgeInfo(name="llm", kind="llm", rubric_version=version, model_id=model),
        functional=functional, aesthetic=aesthetic,
        functional_reason=f"Baseline {findings.functional_base:g}: {findings.functional_reason} {f_math}",
        aesthetic_reason=f"Baseline {findings.aesthetic_base:g} + bonus {findings.aesthetic_bonus:g}: "
                         f"{findings.aesthetic_reason} {a_math}",
        criteria=criteria, attributions=attributions, flags=flags,
        label=f"{rubric['label']} · {model}",
    )
