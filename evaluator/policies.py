"""Agent policies: what decides the next action. The deterministic explorer is the default.

A policy is a small async callable built per run from the registry, so it may keep memory of the
run. The interaction loop (``evaluator.interaction``) owns freezing, execution, measurement, the
coverage gate and the budget; a policy only chooses.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Protocol
from urllib.parse import urlsplit

from evaluator.chat import ModelAccess
from evaluator.models import AgentConfig, Query
from evaluator.observation import Action, ActionKind, ElementInfo, Observation, ResultStatus
from evaluator.registry import Registry


class Policy(Protocol):
    """Chooses the next action from an observation."""

    async def __call__(self, observation: Observation) -> Action:
        """Return the next action; ``finish`` ends the interaction."""
        ...


policies: Registry[Policy] = Registry("agent policy")
"""Registry of agent policies; ``policies.create(name, config=..., models=..., query=...)`` builds one for a run."""

_STAGNATION_LIMIT = 3
_MAX_TRIES_PER_CONTROL = 2
_UNTYPABLE = frozenset({"file", "hidden", "color", "date", "time", "datetime-local", "month", "week"})
_CLICKED_INPUTS = frozenset({"checkbox", "radio", "range", "button", "submit", "reset", "image"})
_TEXT_VALUES = {
    "email": "ada.lovelace@example.com",
    "password": "Correct-Horse-42",
    "tel": "5550100",
    "url": "https://example.org",
    "search": "an",
    "number": "42",
}


@dataclass
class _Memory:
    tried: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    results: dict[str, list[ResultStatus]] = field(default_factory=dict)
    recent_states: deque[str] = field(default_factory=lambda: deque(maxlen=_STAGNATION_LIMIT))
    last_selector: str | None = None


@policies.register("explorer")
def explorer(*, config: AgentConfig, models: ModelAccess | None = None, query: Query | None = None) -> Policy:
    """Deterministic explorer: every salient control, in document order, inputs before their buttons.

    - anti-loop: an action is repeated only in a new state, at most twice per control, and only
      for a control whose first use changed nothing (it may depend on state, like "Clear");
    - anti-stagnation: after three identical observations it stops retrying and moves on to
      controls it has never touched;
    - finishes when nothing untried is left (the loop's coverage gate and budget still apply).
    """
    del config, models, query  # the explorer needs none of them; the signature is the registry's contract
    memory = _Memory()

    async def choose(observation: Observation) -> Action:
        if memory.last_selector is not None and observation.last_result is not None:
            memory.results.setdefault(memory.last_selector, []).append(observation.last_result.status)
        memory.recent_states.append(observation.state)
        stagnant = len(memory.recent_states) == _STAGNATION_LIMIT and len(set(memory.recent_states)) == 1
        origin = _origin(observation.url)
        candidates = [(e, a) for e in _ordered(observation) if (a := _action_for(e, origin)) is not None]
        for element, action in candidates:
            if (element.selector, action.kind.value) not in memory.tried:
                return _take(memory, element, action, observation.state, "not exercised yet")
        if not stagnant:
            for element, action in candidates:
                states = memory.tried[(element.selector, action.kind.value)]
                if (observation.state not in states and len(states) < _MAX_TRIES_PER_CONTROL
                        and memory.results.get(element.selector, [None])[-1] is ResultStatus.NO_CHANGE):
                    return _take(memory, element, action, observation.state, "retry in a new state: it did nothing")
        memory.last_selector = None
        reason = "the page stagnated" if stagnant else "every reachable control was exercised"
        return Action(kind=ActionKind.FINISH, reason=reason)

    return choose


def _take(memory: _Memory, element: ElementInfo, action: Action, state: str, why: str) -> Action:
    memory.tried.setdefault((element.selector, action.kind.value), []).append(state)
    memory.last_selector = element.selector
    return action.model_copy(update={"reason": why})


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def is_actionable(element: ElementInfo, origin: str) -> bool:
    """Whether exercising the element stays inside the app's scope.

    Out of scope, as in Cookie-Frame's protocol: external links, mail and phone links, uploads;
    date, time and colour pickers cannot be driven by typing.
    """
    if element.disabled:
        return False
    if element.tag == "input" and element.type in _UNTYPABLE:
        return False
    href = element.href
    if element.tag == "a" and href:
        if href.startswith(("mailto:", "tel:", "javascript:void")):
            return False
        if "://" in href and not href.startswith(origin):
            return False
    return True


def _ordered(observation: Observation) -> list[ElementInfo]:
    """Salient (near the top) first, then the rest; document order inside each group."""
    return ([e for e in observation.elements if e.in_viewport]
            + [e for e in observation.elements if not e.in_viewport])


def _action_for(element: ElementInfo, origin: str) -> Action | None:
    if not is_actionable(element, origin):
        return None
    tag, kind = element.tag, element.type
    if tag == "select":
        choice = element.options[1] if len(element.options) > 1 else (element.options or [""])[0]
        return Action(kind=ActionKind.SELECT, element=element.index, text=choice)
    if tag == "input" and kind == "range":
        return Action(kind=ActionKind.CLICK, element=element.index, amount=0.75)
    if tag == "textarea" or (tag == "input" and kind not in _CLICKED_INPUTS):
        return Action(kind=ActionKind.TYPE, element=element.index, text=_value_for(element))
    return Action(kind=ActionKind.CLICK, element=element.index)


def _value_for(element: ElementInfo) -> str:
    if element.type == "number":
        try:
            low = float(element.min) if element.min else None
            high = float(element.max) if element.max else None
        except ValueError:
            low = high = None
        if low is not None and high is not None and high >= low:
            middle = low + (high - low) * 0.6
            return str(int(middle)) if middle == int(middle) else f"{middle:.1f}"
        if low is not None and low > 42:
            return str(int(low) + 1)
    if element.type in _TEXT_VALUES:
        return _TEXT_VALUES[element.type]
    return "Test item 7"
