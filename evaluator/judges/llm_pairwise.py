"""The ``llm`` pairwise judge: a judge model shown two apps built for one query, asked which is better.

One call per ordered comparison (the compare stage asks both orders), at the configured temperature
(0 by default) with JSON-schema structured output. The model is shown the query's brief once, then
each app under "App shown FIRST" / "App shown SECOND": its action trace, the agent's summary, a few
console errors and its images (the first desktop screenshot and keyframes of the recording, at most
``images_per_side`` per app). It is not shown source code: what a user can do and see is what is
compared, and two apps' sources would make every call large and dear.

For each dimension (functional, aesthetic) it answers first, second or tie with a reason and one
citation in each bundle, each limited by the schema to what that bundle holds (:func:`answer_schema`).
evalgrid checks the citations again: a dimension citing nothing usable gets one repair request
naming the problem; still unusable after it, that dimension is dropped (listed in the verdict's
``dropped``) and the other is kept. An answer that is not valid JSON twice, or a refusal, is a
:class:`~evaluator.errors.JudgeOutputError`. Everything from the apps is redacted and fenced
(:mod:`evaluator.textsafety`).
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from evaluator.errors import ConfigError, JudgeOutputError
from evaluator.evidence.bundle import BundleFile, EvidenceBundle
from evaluator.judges.llm_judge import (
    Citable,
    Cite,
    brief_text,
    cite_error,
    cite_schemas,
    console_lines,
    stills,
    summary_text,
    trace_lines,
)
from evaluator.judges.pairwise import pairwise_judges
from evaluator.keys import sha256_bytes
from evaluator.llm.client import ChatClient, ChatRequest, ChatResult, JsonSchema, ModelAccess, ModelOptions, WireObject
from evaluator.llm.sizing import Fitted
from evaluator.models import Dimension, EvidenceRef, JudgeInfo, PairChoice, PairwiseVerdict, Preference
from evaluator.package_data import package_text
from evaluator.textsafety import fence, redact

PROMPT = "judge-pairwise-v1"
# The answer's JSON format, part of the version (so of pairwise keys): a verdict made under an older format
# is not reused. pair1: per dimension a choice, a reason and one citation in each bundle.
_ANSWER_FORMAT = "pair1"
_DIMENSIONS: tuple[Literal["functional", "aesthetic"], ...] = ("functional", "aesthetic")


def _prompt() -> str:
    return package_text("prompts", f"{PROMPT}.md")


class LLMPairwiseOptions(ModelOptions):
    """Options of the ``llm`` pairwise judge (``judge.options`` of the compare stage)."""

    max_tokens: int = Field(2000, gt=0)
    images_per_side: int = Field(4, ge=0, le=16)
    """Images of each app: its first desktop screenshot, then keyframes of its recording; capped to keep
    each call (two apps) within context and cost."""
    trace_steps: int = Field(30, ge=0)
    """Steps of each app's trace shown (all of them stay citable)."""
    seed: int = 0


class _Choice(BaseModel):
    model_config = ConfigDict(extra="forbid")

    choice: Literal["first", "second", "tie"]
    reason: str
    # Optional here, required by the schema: a missing citation is one dimension's problem (repaired, then
    # dropped), not an unusable answer.
    first_cite: Cite | None = None
    second_cite: Cite | None = None


class _Answer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    functional: _Choice
    aesthetic: _Choice


def _cite_schema(citable: Citable) -> JsonSchema:
    # A bundle with nothing to cite still needs a valid schema; its choices are then dropped by the check.
    cites = cite_schemas(citable)
    return {"anyOf": cites} if cites else {"type": "object", "additionalProperties": False, "properties": {}}


def answer_schema(first: Citable, second: Citable) -> JsonSchema:
    """JSON schema of the answer: per dimension a choice, a reason and a citation in each app's own bundle."""
    choice = {"type": "object", "additionalProperties": False,
              "required": ["choice", "reason", "first_cite", "second_cite"],
              "properties": {"choice": {"type": "string", "enum": [p.value for p in Preference]},
                             "reason": {"type": "string", "maxLength": 600},
                             "first_cite": _cite_schema(first), "second_cite": _cite_schema(second)}}
    return {"type": "object", "additionalProperties": False, "required": list(_DIMENSIONS),
            "properties": {dimension: choice for dimension in _DIMENSIONS}}


@dataclass(frozen=True)
class _Side:
    """One app as the judge model sees it: its section of the user message and what may be cited in it."""

    content: list[WireObject]
    citable: Citable


def _side(bundle: EvidenceBundle, name: str, options: LLMPairwiseOptions, per_side: int) -> _Side:
    """The section of the app shown ``name`` (FIRST or SECOND): trace, summary, console errors, images.

    Only its heading names the position: the rest reads the same whichever side the app is on, so that what
    the model is shown of an app does not change when the order is swapped.
    """
    trace = bundle.trace()
    result = bundle.interaction() if bundle.has(BundleFile.RESULT) else None
    video_s = result.video_duration_s if result is not None else 0.0
    console = bundle.console()
    files = tuple(sorted(e.path for e in bundle.manifest.files if BundleFile.is_static_record(e.path)))
    citable = Citable(steps=tuple(s.step for s in trace), video_s=video_s, files=files)
    shown = trace[:options.trace_steps]
    lines = trace_lines(shown) + ([f"({len(trace) - len(shown)} later steps not shown)"] if len(trace) > len(shown)
                                  else [])
    # Redacted, but the findings are not recorded: the absolute verdict on the same bundle already flags the run.
    steps = redact("\n".join(lines) or "(no steps)", "trace")[0]
    notes = redact(summary_text(bundle.agent_summary()), "agent summary")[0]
    errors = redact("\n".join(console_lines(console, 8)) or "(no console errors)", "console")[0]
    text = "\n\n".join([
        f"## App shown {name}",
        f"The agent's actions ({len(trace)} steps; times are on this app's recording clock, {video_s:.1f} s long):",
        fence("trace", steps),
        "The agent's summary:", fence("agent summary", notes),
        "Console errors:", fence("console", errors),
        _citable_line(citable),
    ])
    return _Side([{"type": "text", "text": text}, *_images(bundle, options, per_side)], citable)


def _citable_line(citable: Citable) -> str:
    """What the app's citations may point at, in words (the schema enforces it where the server can)."""
    steps = ", ".join(str(s) for s in citable.steps) or "none"
    video = f"0-{citable.video_s:.1f} s" if citable.video_s > 0 else "none (no recording)"
    files = ", ".join(citable.files) or "none"
    return f"What may be cited in this app: steps {steps}; recording times {video}; files {files}."


def _images(bundle: EvidenceBundle, options: LLMPairwiseOptions, room: int) -> list[WireObject]:
    """The first desktop screenshot, then keyframes, ``room`` in all; a placeholder when none is shown."""
    if not options.images or room == 0:
        return [{"type": "text", "text": "(images are not shown to this judge)"}]
    parts: list[WireObject] = []
    if bundle.has(BundleFile.screenshot("desktop")):
        data = base64.b64encode((bundle.root / BundleFile.screenshot("desktop")).read_bytes()).decode()
        parts += [{"type": "text", "text": "First screenshot, desktop 1280x800:"},
                  {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{data}"}}]
        room -= 1
    frames = stills(bundle, room) if room and bundle.has(BundleFile.VIDEO) else []
    for time_s, jpeg in frames:
        parts += [{"type": "text", "text": f"Recording at {time_s:.2f} s:"},
                  {"type": "image_url", "image_url": {"url": f"data:image/jpeg;base64,{jpeg}"}}]
    if not parts:
        parts.append({"type": "text", "text": "(no screenshot or recording is available)"})
    return parts


def _messages(first: EvidenceBundle, second: EvidenceBundle, options: LLMPairwiseOptions, per_side: int
              ) -> tuple[list[WireObject], list[_Side]]:
    """The request's messages, with at most ``per_side`` images of each app, and the two sides."""
    # Both bundles answer the same query; the first one's brief is shown, once.
    sides = [_side(first, "FIRST", options, per_side), _side(second, "SECOND", options, per_side)]
    closing = ("Decide the functional and the aesthetic choice: first_cite cites the FIRST app, second_cite "
               "the SECOND app. Answer with only the JSON object.")
    content = [{"type": "text", "text": brief_text(first.query())}, *sides[0].content, *sides[1].content,
               {"type": "text", "text": closing}]
    return [{"role": "system", "content": _prompt()}, {"role": "user", "content": content}], sides


def _why_not(choice: _Choice, first: Citable, second: Citable) -> str:
    """Why a dimension's choice cannot be used (its citations), or ``""``."""
    for side, cite, citable in (("first", choice.first_cite, first), ("second", choice.second_cite, second)):
        if cite is None or (cite.step is None and cite.video_time_s is None and not cite.file):
            return f"{side}_cite cites no step, time or file"
        why = cite_error(cite, citable.steps, citable.video_s, citable.files)
        if why:
            return f"{side}_cite {why}"
    return ""


def _ref(cite: Cite | None) -> EvidenceRef:
    assert cite is not None  # checked by _why_not
    return EvidenceRef(step=cite.step, video_time_s=cite.video_time_s, file=cite.file or None)


class LLMPairwiseJudge:
    """Which of two apps is better, per dimension, by a judge model (see the module docstring)."""

    def __init__(self, options: LLMPairwiseOptions) -> None:
        self._options = options
        digest = sha256_bytes((_prompt() + _ANSWER_FORMAT).encode())[:12]
        self._version = (f"pairwise-v1@{digest}:{options.model}:t={options.temperature}:img={int(options.images)}:"
                         f"n={options.images_per_side}:steps={options.trace_steps}:seed={options.seed}")

    @property
    def version(self) -> str:
        """Prompt and answer format (by hash), model id, decoding and what is shown: what shapes the choices."""
        return self._version

    async def compare(self, first: EvidenceBundle, second: EvidenceBundle, *, pairwise_key: str,
                      models: ModelAccess | None = None) -> PairwiseVerdict:
        """The verdict on ``first`` (shown first) against ``second``: one model call, one repair at most."""
        if models is None:
            raise ConfigError("the llm pairwise judge needs model endpoints: run it from a sweep with `endpoints:`")
        options = self._options
        # Both bundles answer the same query; the first one's brief is shown, once.
        client = models.client(options.endpoint, role="judge")
        messages, sides = _messages(first, second, options, options.images_per_side)
        wanted = ChatRequest(model=options.model, messages=messages, max_tokens=options.max_tokens)
        fitted: list[str] = []
        room = await client.image_room(wanted)
        if room is not None:
            # Both apps lose images alike: a side shown more than the other would tilt the comparison.
            messages, sides = _messages(first, second, options, min(options.images_per_side, room // 2))
            shown = ChatRequest(model=options.model, messages=messages).images()
            fitted.append(Fitted("pairwise", wanted=wanted.images(), shown=shown,
                                 limits=await client.server_limits()).note())
        choices, dropped, model = await self._ask(client, messages, sides[0].citable, sides[1].citable)
        return PairwiseVerdict(
            pairwise_key=pairwise_key, first=first.manifest.evidence_key, second=second.manifest.evidence_key,
            judge=JudgeInfo(name="llm", kind="llm", rubric_version=self._version, model_id=model),
            choices=choices, dropped=dropped, fitted=fitted, label=f"pairwise-v1 · {model}")

    async def _ask(self, client: ChatClient, messages: list[WireObject], first: Citable, second: Citable
                   ) -> tuple[list[PairChoice], list[str], str]:
        """The usable choices, the dropped dimensions with why, and the model id: one call, one repair at most."""
        options = self._options
        schema = answer_schema(first, second)
        response_format = ({"type": "json_schema", "json_schema": {"name": "pairwise", "schema": schema,
                                                                   "strict": True}}
                           if options.structured else {"type": "json_object"})
        request = ChatRequest(model=options.model, messages=messages, temperature=options.temperature,
                              max_tokens=options.max_tokens, response_format=response_format, seed=options.seed)
        result = await client.complete(request)
        answer, problems = _read(result, first, second)
        if answer is not None and not problems:
            choices, dropped = _settle(answer, problems, None, {})
            return choices, dropped, result.model
        told = "; ".join(why if d == "answer" else f"{d}: {why}" for d, why in problems.items())
        repair = [*messages, {"role": "assistant", "content": result.content[:20_000]},
                  {"role": "user", "content": f"Your answer cannot be used: {told}. Answer again with only the JSON "
                                              "object the schema describes, citing in each app only what its list "
                                              "offers; keep every text field short."}]
        retry = await client.complete(request.model_copy(update={"messages": repair,
                                                                 "max_tokens": int(options.max_tokens * 1.5)}))
        again, still = _read(retry, first, second)
        if again is None and answer is None:
            raise JudgeOutputError("invalid", f"the judge model's pairwise answer was unusable twice: "
                                              f"{problems['answer']}; after the repair request: {still['answer']}")
        choices, dropped = _settle(answer, problems, again, still)
        return choices, dropped, retry.model if again is not None else result.model


def _read(result: ChatResult, first: Citable, second: Citable) -> tuple[_Answer | None, dict[str, str]]:
    """The parsed answer and, per dimension, why its choice cannot be used (``answer``: why nothing parsed)."""
    if result.refusal:
        raise JudgeOutputError("refused", f"the judge model refused (pairwise): {result.refusal[:300]}")
    answer, problem = result.answer_as(_Answer)
    if answer is None:
        return None, {"answer": problem}
    return answer, {d: why for d in _DIMENSIONS if (why := _why_not(getattr(answer, d), first, second))}


def _settle(answer: _Answer | None, problems: dict[str, str], again: _Answer | None, still: dict[str, str]
            ) -> tuple[list[PairChoice], list[str]]:
    """The choices kept and the dimensions dropped, with why.

    Per dimension: the repaired answer's choice when it is usable (the model's last word), else the first
    answer's when that one was, else dropped with the latest reason (at least one answer parsed).
    """
    choices, dropped = [], []
    for d in _DIMENSIONS:
        if again is not None and d not in still:
            choices.append(_pair_choice(d, getattr(again, d)))
        elif answer is not None and d not in problems:
            choices.append(_pair_choice(d, getattr(answer, d)))
        else:
            dropped.append(f"{d}: {still[d] if again is not None else problems[d]}")
    return choices, dropped


def _pair_choice(dimension: str, choice: _Choice) -> PairChoice:
    return PairChoice(dimension=Dimension(dimension), choice=Preference(choice.choice), reason=choice.reason[:600],
                      first_evidence=[_ref(choice.first_cite)], second_evidence=[_ref(choice.second_cite)])


@pairwise_judges.register("llm", options=LLMPairwiseOptions)
def llm_pairwise_judge(**options: object) -> LLMPairwiseJudge:
    """The ``llm`` pairwise judge with the options given (checked by the registry: :class:`LLMPairwiseOptions`)."""
    return LLMPairwiseJudge(LLMPairwiseOptions.model_validate(options))
