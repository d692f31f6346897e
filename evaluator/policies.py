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
from evaluator.observation import KEY_PROBE_REASON, Action, ActionKind, ElementInfo, Observation, ResultStatus
from evaluator.registry import Registry


class Policy(Protocol):
    """Chooses the next action from an observation."""

    async def __call__(self, observation: Observation) -> Action:
        """Return the next action; ``finish`` ends the interaction."""
        ...


policies: Registry[Policy] = Registry("agent policy")
"""Registry of agent policies; ``policies.create(name, config=..., models=..., query=...)`` builds one for a run."""

_STAGNATION_LIMIT = 3
# Keys that keyboard-driven apps (games, slideshows, editors, calculators) listen for, pressed on the page
# itself; the phase ends once enough of them did something, or when all were tried.
_PAGE_KEYS = ("ArrowRight", "ArrowDown", "ArrowLeft", "ArrowUp", "Space", "Enter", "a", "1", "Escape")
_KEYS_ENOUGH = 3
# A canvas alone (a chart) is no reason to press keys; a listener on the page, or text asking for keys, is.
_KEY_REASONS = frozenset({"listener", "text"})
_SUBMITTED_BY_ENTER = frozenset({"", "text", "search", "email", "url", "tel", "password", "number"})
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
    submit: str | None = None
    """A single-line field just typed into: Enter goes to it next."""
    keys: list[str] = field(default_factory=list)
    """Keys pressed on the page so far."""
    keys_effective: int = 0
    pressing: bool = False
    submitted: str | None = None
    """The field Enter was just pressed in."""
    refill: dict[str, str] = field(default_factory=dict)
    """Button selector -> the field to type into again before it: the field Enter submitted and cleared, whose
    own submit button would otherwise be tried on an empty field."""


@policies.register("explorer")
def explorer(*, config: AgentConfig, models: ModelAccess | None = None, query: Query | None = None) -> Policy:
    """Deterministic explorer: every salient control, in document order, inputs before their buttons.

    - anti-loop: an action is repeated only in a new state, at most twice per control, and only
      for a control whose first use changed nothing (it may depend on state, like "Clear");
    - anti-stagnation: after three identical observations it stops retrying and moves on to
      controls it has never touched;
    - text entry is completed as a person completes it: Enter in the single-line field just typed into;
    - a page driven by keys pressed anywhere (a game, a slideshow: ``observation.keyboard``) gets the keys
      such apps use, pressed on the page, until three of them did something or all were tried;
    - finishes when nothing untried is left (the loop's coverage gate and budget still apply).
    """
    del config, models, query  # the explorer needs none of them; the signature is the registry's contract
    memory = _Memory()

    async def choose(observation: Observation) -> Action:
        if memory.last_selector is not None and observation.last_result is not None:
            memory.results.setdefault(memory.last_selector, []).append(observation.last_result.status)
        if memory.pressing and observation.last_result is not None:
            memory.keys_effective += observation.last_result.status is ResultStatus.CHANGED
        memory.pressing = False
        if memory.submitted is not None and observation.last_result is not None:
            if observation.last_result.status is ResultStatus.CHANGED:
                button = _button_after(observation, memory.submitted)
                if button is not None:
                    memory.refill[button.selector] = memory.submitted
            memory.submitted = None
        memory.recent_states.append(observation.state)
        submit, memory.submit = memory.submit, None
        if submit is not None:
            field_ = next((e for e in observation.elements if e.selector == submit), None)
            if field_ is not None:
                memory.last_selector, memory.submitted = None, submit
                return Action(kind=ActionKind.PRESS, element=field_.index, text="Enter",
                              reason="submit the typed text with Enter")
        if (observation.keyboard in _KEY_REASONS and memory.keys_effective < _KEYS_ENOUGH
                and len(memory.keys) < len(_PAGE_KEYS)):
            key = _PAGE_KEYS[len(memory.keys)]
            memory.keys.append(key)
            memory.pressing, memory.last_selector = True, None
            return Action(kind=ActionKind.PRESS, text=key,
                          reason=f"{KEY_PROBE_REASON} ({observation.keyboard}): press {key}")
        stagnant = len(memory.recent_states) == _STAGNATION_LIMIT and len(set(memory.recent_states)) == 1
        origin = _origin(observation.url)
        candidates = [(e, a) for e in _ordered(observation) if (a := _action_for(e, origin)) is not None]
        for element, action in candidates:
            if (element.selector, action.kind.value) not in memory.tried:
                refill = _refill(memory, observation, element)
                if refill is not None:
                    return refill
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
    if action.kind is ActionKind.TYPE and element.tag == "input" and element.type in _SUBMITTED_BY_ENTER:
        memory.submit = element.selector
    return action.model_copy(update={"reason": why})


def _button_after(observation: Observation, field_selector: str) -> ElementInfo | None:
    """The first button after a field in document order (its form's, when it has one): its submit control."""
    elements = observation.elements
    at = next((i for i, e in enumerate(elements) if e.selector == field_selector), None)
    if at is None:
        return None
    form = elements[at].form
    for e in elements[at + 1:]:
        if form and e.form != form:
            continue
        if e.tag == "button" or (e.tag == "input" and e.type in ("submit", "button")):
            return e
    return None


def _refill(memory: _Memory, observation: Observation, button: ElementInfo) -> Action | None:
    """Type into a submitted (and cleared) field again before trying its own button, as a person would."""
    field_selector = memory.refill.pop(button.selector, None)
    field_ = next((e for e in observation.elements if e.selector == field_selector), None)
    if field_ is None:
        return None
    memory.last_selector = None
    return Action(kind=ActionKind.TYPE, element=field_.index, text=_value_for(field_),
                  reason="type again before trying the field's own button")


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
