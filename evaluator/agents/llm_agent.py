"""The LLM agent: a model chooses each action of the Agent-Driven Interaction from what it sees.

A policy behind the same interface as the deterministic explorer; the interaction loop still owns
the freeze (the page is frozen while the model deliberates, however long it takes), human-like
input, measurement, the coverage gate and the step budget. Each turn the model sees the brief,
the screenshot, the page's text (redacted and fenced: it is data, never instructions), the
numbered interactive elements, its last action and what that did, and a compact history; it
answers with one action as JSON (``prompts/agent-v1.md`` is Cookie-Frame's testing protocol). With
``finish`` it gives Cookie's summary (actions_performed, observations, overall_observation).

Model answers that cannot be used get one repair request; a turn that still fails becomes a short
wait with a note, and three failed turns in a row end the interaction; so does a request the model's server
refuses for its size (the screenshot is left out when the server's context has no room for it). A model that
cannot be reached is an infrastructure failure of the run, not a result about the app.
"""

from __future__ import annotations

import functools

from pydantic import BaseModel, ConfigDict, Field

from evaluator.agents.observation import Action, ActionKind, AgentSummary, Observation
from evaluator.agents.policies import Policy, policies
from evaluator.errors import ConfigError, RequestTooLargeError
from evaluator.llm.client import ChatClient, ChatRequest, ChatResult, JsonSchema, ModelAccess, ModelOptions, WireObject
from evaluator.models import AgentConfig, Query
from evaluator.package_data import package_text
from evaluator.textsafety import fence, redact

PROMPT = "agent-v1"
_MAX_ELEMENTS = 80
_MAX_FAILED_TURNS = 3


@functools.cache
def _prompt() -> str:
    return package_text("prompts", f"{PROMPT}.md")


class _Summary(BaseModel):
    model_config = ConfigDict(extra="forbid")

    actions_performed: list[str] = Field(max_length=60)
    observations: list[str] = Field(max_length=60)
    overall_observation: str


_ACTIONS = ("click", "type", "press", "select", "scroll", "hover", "drag", "wait", "back", "refresh", "viewport",
            "finish")


class _Decision(BaseModel):
    model_config = ConfigDict(extra="forbid")

    thought: str = ""
    action: str
    element: int | None = None
    to_element: int | None = None
    text: str | None = None
    amount: float | None = None
    summary: _Summary | None = None


def decision_schema() -> JsonSchema:
    """JSON schema of one turn's answer."""
    nullable_int = {"anyOf": [{"type": "integer"}, {"type": "null"}]}
    strings = {"type": "array", "maxItems": 40, "items": {"type": "string", "maxLength": 300}}
    return {
        "type": "object", "additionalProperties": False,
        "required": ["thought", "action", "element", "to_element", "text", "amount", "summary"],
        "properties": {
            "thought": {"type": "string", "maxLength": 400},
            "action": {"type": "string", "enum": list(_ACTIONS)},
            "element": nullable_int, "to_element": nullable_int,
            "text": {"anyOf": [{"type": "string", "maxLength": 500}, {"type": "null"}]},
            "amount": {"anyOf": [{"type": "number"}, {"type": "null"}]},
            "summary": {"anyOf": [{"type": "null"}, {
                "type": "object", "additionalProperties": False,
                "required": ["actions_performed", "observations", "overall_observation"],
                "properties": {"actions_performed": strings, "observations": strings,
                               "overall_observation": {"type": "string", "maxLength": 1500}}}]},
        },
    }


class LLMAgentOptions(ModelOptions):
    """Options of the ``llm`` agent policy (``agent.options``)."""

    max_tokens: int = Field(1200, gt=0)
    history: int = Field(12, ge=0)
    """Earlier steps kept in the prompt."""


@policies.register("llm", options=LLMAgentOptions)
def llm_agent(*, config: AgentConfig, models: ModelAccess | None = None, query: Query | None = None) -> Policy:
    """An agent policy driven by a chat model, configured by :class:`LLMAgentOptions`."""
    options = LLMAgentOptions.model_validate(policies.check("llm", config.options))
    if models is None:
        raise ConfigError("the llm agent needs model endpoints: run it from a sweep with `endpoints:`")
    client = models.client(options.endpoint, role="agent")
    return _LLMAgent(client, options, brief=query.brief if query else "", max_steps=config.max_steps, seed=config.seed)


class _LLMAgent:
    def __init__(self, client: ChatClient, options: LLMAgentOptions, *, brief: str, max_steps: int, seed: int
                 ) -> None:
        self._client, self._options = client, options
        self._brief, self._max_steps, self._seed = brief, max_steps, seed
        self._history: list[str] = []
        self._failed_turns = 0

    async def __call__(self, observation: Observation) -> Action:
        if observation.last_action is not None and observation.last_result is not None:
            self._remember(observation)
        request = await self._request(observation)
        try:
            result = await self._client.complete(request)
            decision, problem = _parse(result, observation)
            if decision is None and not result.refusal:
                repair = [*request.messages, {"role": "assistant", "content": result.content[:4000]},
                          {"role": "user", "content": f"That answer cannot be used: {problem}. Answer again with "
                                                      "only the JSON object the schema describes."}]
                result = await self._client.complete(request.model_copy(update={"messages": repair}))
                decision, problem = _parse(result, observation)
        except RequestTooLargeError as exc:
            # The server's limits, not the model's answer: the turn fails as an unusable one does.
            return self._failed(f"the agent model's server refused the request for its size: {exc}", final=False)
        if decision is None:
            why = f"the agent model refused: {result.refusal[:200]}" if result.refusal else \
                f"the agent model's answer was unusable: {problem}"
            return self._failed(why, final=bool(result.refusal))
        self._failed_turns = 0
        return _action(decision)

    async def _request(self, observation: Observation) -> ChatRequest:
        """This turn's request; without the screenshot when the server has no room for an image."""
        options = self._options
        format_ = ({"type": "json_schema", "json_schema": {"name": "agent_action", "schema": decision_schema(),
                                                            "strict": True}}
                   if options.structured else {"type": "json_object"})
        system = {"role": "system", "content": _prompt().replace("{max_steps}", str(self._max_steps))}
        request = ChatRequest(model=options.model, messages=[system, {"role": "user", "content": self._content(
                                  observation, image=True)}], temperature=options.temperature,
                              max_tokens=options.max_tokens, response_format=format_, seed=self._seed)
        if await self._client.image_room(request) == 0:
            text = self._content(observation, image=False)
            request = request.model_copy(update={"messages": [system, {"role": "user", "content": text}]})
        return request

    def _failed(self, why: str, *, final: bool) -> Action:
        """A turn that gave no usable action: a short wait, or the end after a refusal or too many in a row."""
        self._failed_turns += 1
        if final or self._failed_turns >= _MAX_FAILED_TURNS:
            return Action(kind=ActionKind.FINISH, reason=why[:300])
        return Action(kind=ActionKind.WAIT, amount=0.2, reason=why[:300])

    def _remember(self, observation: Observation) -> None:
        action, result = observation.last_action, observation.last_result
        assert action is not None and result is not None  # checked by the caller
        target = f" [{action.element}]" if action.element is not None else ""
        typed = f" {action.text!r}" if action.text else ""
        line = f"step {observation.step - 1}: {action.kind.value}{target}{typed} -> {result.status.value}"
        if result.detail:
            line += f" ({result.detail[:120]})"
        self._history = [*self._history, line][-self._options.history:]

    def _content(self, observation: Observation, *, image: bool) -> list[WireObject] | str:
        elements = []
        for e in observation.elements[:_MAX_ELEMENTS]:
            label = redact(e.label, "element label")[0][:80]
            kind = e.type or e.role
            where = "" if e.in_viewport else ", further down"
            extra = f", options {e.options[:6]}" if e.options else ""
            elements.append(f"[{e.index}] {e.tag}{f' ({kind})' if kind else ''} {label!r}{where}"
                            f"{', disabled' if e.disabled else ''}{extra}")
        if len(observation.elements) > _MAX_ELEMENTS:
            elements.append(f"... and {len(observation.elements) - _MAX_ELEMENTS} more")
        last = "none yet"
        if observation.last_action is not None and observation.last_result is not None:
            last = f"{observation.last_action.kind.value} -> {observation.last_result.status.value}"
            if observation.last_result.detail:
                last += f" ({observation.last_result.detail[:200]})"
            if observation.last_result.errors:
                last += f"; errors: {observation.last_result.errors[:2]}"
        text = "\n\n".join([
            "The user's request:", fence("brief", self._brief or "(not given)"),
            f"Step {observation.step + 1} of {self._max_steps} ({observation.steps_left} left). Viewport: "
            f"{observation.viewport}. URL: {observation.url}",
            "The page's visible text:", fence("page text", redact(observation.text_excerpt, "page text")[0]),
            "Interactive elements:", fence("elements", "\n".join(elements) or "(none)"),
            f"Your last action: {last}",
            "Your earlier steps:\n" + ("\n".join(self._history) or "(none)"),
            *(f"evalgrid says: {note}" for note in observation.notes),
        ])
        if not self._options.images or not observation.image:
            return text
        if not image:
            return text + "\n\n(evalgrid says: the screenshot is left out to fit the model server's limits)"
        return [{"type": "text", "text": text},
                {"type": "image_url", "image_url": {"url": f"data:image/jpeg;base64,{observation.image}"}}]


def _parse(result: ChatResult, observation: Observation) -> tuple[_Decision | None, str]:
    decision, problem = result.answer_as(_Decision)
    if decision is None:
        return None, problem
    if decision.action not in _ACTIONS:
        return None, f"action {decision.action!r} is not one of {', '.join(_ACTIONS)}"
    count = len(observation.elements)
    needs_element = decision.action in ("click", "type", "select", "hover", "drag")
    if needs_element and (decision.element is None or not 0 <= decision.element < count):
        return None, f"{decision.action} needs an element number between 0 and {count - 1}"
    if decision.action in ("type", "select", "press", "viewport") and not decision.text:
        return None, f"{decision.action} needs text"
    return decision, ""


def _action(decision: _Decision) -> Action:
    summary = None
    if decision.summary is not None:
        summary = AgentSummary(actions_performed=decision.summary.actions_performed,
                               observations=decision.summary.observations,
                               overall_observation=decision.summary.overall_observation)
    return Action(kind=ActionKind(decision.action), element=decision.element, to_element=decision.to_element,
                  text=decision.text, amount=decision.amount, reason=decision.thought[:300], summary=summary)
