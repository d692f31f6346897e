"""Agent policies: what decides the next action. The deterministic explorer is the default.

A policy is a small async callable built per run from the registry, so it may keep memory of the
run. The interaction loop (``evaluator.evidence.interaction``) owns freezing, execution, measurement, the
coverage gate and the budget; a policy only chooses.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, field
from typing import Protocol
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict

from evaluator.agents.observation import (
    KEY_PROBE_REASON,
    Action,
    ActionKind,
    ElementInfo,
    Observation,
    ResultStatus,
    control_shape,
    is_actionable,
)
from evaluator.brief import asks_for_keys
from evaluator.llm.client import ModelAccess
from evaluator.models import AgentConfig, Query
from evaluator.registry import Registry


class Policy(Protocol):
    """Chooses the next action from an observation."""

    async def __call__(self, observation: Observation) -> Action:
        """Return the next action; ``finish`` ends the interaction."""
        ...


policies: Registry[Policy] = Registry("agent policy", builtins=("evaluator.agents.llm_agent",))
"""Registry of agent policies; ``policies.create(name, config=..., models=..., query=...)`` builds one for a run."""

_STAGNATION_LIMIT = 3
# Keys that keyboard-driven apps (games, slideshows, editors, calculators) listen for, pressed on the page
# itself; the phase ends once enough of them did something, or when all were tried.
_PAGE_KEYS = ("ArrowRight", "ArrowDown", "ArrowLeft", "ArrowUp", "Space", "Enter", "a", "1", "Escape")
_KEYS_ENOUGH = 3
_WATCH_S = 2.5
"""Seconds a page with nothing to act on is watched: a clock ticks, a slideshow turns within them."""
# A canvas alone (a chart) is no reason to press keys; a listener on the page, or text asking for keys, is.
_KEY_REASONS = frozenset({"listener", "text"})
_KEYS_BY_TEXT = "text"
_SUBMITTED_BY_ENTER = frozenset({"", "text", "search", "email", "url", "tel", "password", "number"})
_MAX_TRIES_PER_CONTROL = 2
_CLICKED_INPUTS = frozenset({"checkbox", "radio", "range", "button", "submit", "reset", "image"})
# The text given to an item opened for editing by a double click: unlike anything already on the page, so the
# Enter that commits it is seen to change the item's text.
_EDITED_TEXT = "Edited item 3"
# A canvas is pressed (a click) and dragged across (a stroke): drawing apps and board games answer one of them.
# The stroke stays inside the canvas: at most 0.4 of its width from a point near its centre.
_CANVAS_DRAG_PX = 120.0
# A surface that follows the pointer (a heatmap) is swept across, as a hand moves the mouse over it.
_SURFACE_SWEEP_PX = 200.0
_SLIDER_DRAG_PX = 80.0
# What a field asks for by its words: numbers in a size a person would use (a loan, not 42 dollars; a rate of
# 5 %), and the values of fields whose type says nothing (a colour, an expression, a date in a text field).
_ASKED: tuple[tuple[re.Pattern[str], str], ...] = tuple((re.compile(words), value) for words, value in (
    (r"\b(loan|principal|mortgage|salary|income|savings|deposit|investment|home price|house price)\b", "25000"),
    (r"\b(rate|interest|apr|percent|tip|tax|discount)\b|%", "5"),
    (r"\b(years?|term|duration)\b", "10"),
    (r"\bmonths?\b", "24"),
    (r"\b(age)\b", "34"),
    (r"\b(weight|kg|lbs?|pounds)\b", "70"),
    (r"\b(height|cm)\b", "175"),
    (r"\b(temperature|celsius|fahrenheit|°[cf])\b", "25"),
    (r"\b(people|persons|guests|quantity|qty|count|servings|players)\b", "4"),
    (r"\b(amount|price|cost|bill|total|budget|value|sum|fee)\b|[$€£¥]", "120"),
    (r"\bcolou?rs?\b", "#3366cc"),
    (r"\b(expression|formula|equation|calculation)\b", "2 + 3 * 4"),
    (r"\be-?mail\b", "ada.lovelace@example.com"),
    (r"\b(phone|telephone|mobile)\b", "5550100"),
    (r"\b(url|website|web site|link)\b", "https://example.org"),
    (r"\bdates?\b", "2025-06-14"),
    (r"\b(city|town)\b", "Lisbon"),
))
_NUMERIC_PATTERN = re.compile(r"[\\d\[\]\-+.,*{}()?^$|0-9]+")
"""A ``pattern`` attribute made of digits and quantifiers only (``\\d+(\\.\\d{1,2})?``) asks for a number."""
_NUMBER = re.compile(r"[-+]?\d[\d\s,.]*")
"""A field already holding a number asks for another."""
_NAME_HINT = re.compile(r"\b(name|author|owner|assignee)\b")
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
    keys_first: bool = True
    """Keys are pressed on the page before its controls are used: the brief or the page's text asks for keys, or
    there is no brief to ask. A key listener alone (frameworks listen on the document for Enter and Escape in
    their fields) waits until the controls are done."""
    watched: bool = False
    """The page, offering nothing to act on, was watched for a while (does it change by itself?)."""
    submitted: str | None = None
    """The field Enter was just pressed in."""
    refill: dict[str, str] = field(default_factory=dict)
    """Button selector -> the field to type into again before it: the field Enter submitted and cleared, whose
    own submit button would otherwise be tried on an empty field."""
    last_shape: str | None = None
    """``control_shape`` of the control acted on last."""
    last_kind: ActionKind | None = None
    """The action taken last (a double click that opened something is followed by typing into it)."""
    last_intent: str = ""
    """The ``intent`` of the control acted on last."""
    home: str | None = None
    """The option (filter, tab) that was current at first (choosing it did nothing): chosen again before
    finishing, so what the other options hid (their items' controls) is reached; ``""`` once done."""
    worked: set[tuple[str, ActionKind]] = field(default_factory=set)
    """Shapes (``control_shape``) and actions of per-item controls that did what they should: their twins on
    other items are not tried again."""
    recheck: dict[str, tuple[str, str]] = field(default_factory=dict)
    """Controls whose probe's expected effect did not happen (a delete that left its item), and options that did
    nothing (the current filter): tried again as soon as the page is in a new state, so a dead one is seen dead
    twice and a current one is seen working once another was chosen. Shape -> (the state it failed in, the
    selector that failed, tried again if it is still there); each shape once."""
    shape_tries: dict[tuple[str, ActionKind], int] = field(default_factory=dict)
    """Tries per shape: a per-item control that failed on two items is not tried on every other one."""
    rechecked: set[str] = field(default_factory=set)
    """Shapes already tried again: a control that keeps failing is not tried over and over."""


class ExplorerOptions(BaseModel):
    """The explorer takes no options: everything it does is in :class:`~evaluator.models.AgentConfig`."""

    model_config = ConfigDict(extra="forbid")


@policies.register("explorer", options=ExplorerOptions)
def explorer(*, config: AgentConfig, models: ModelAccess | None = None, query: Query | None = None) -> Policy:
    """Deterministic explorer: every salient control, in document order, inputs before their buttons.

    - anti-loop: an action is repeated only in a new state, at most twice per control, and only
      for a control whose first use changed nothing (it may depend on state, like "Clear");
    - anti-stagnation: after three identical observations it stops retrying and moves on to
      controls it has never touched;
    - text entry is completed as a person completes it: Enter in the single-line field just typed into;
    - a page driven by keys pressed anywhere (a game, a slideshow: ``observation.keyboard``) gets the keys
      such apps use, pressed on the page, until three of them did something or all were tried: first, when
      the brief or the page's text asks for keys; after its controls, when only a key listener suggests them;
    - stateful probes: what an action created (a list item's checkbox, its delete button, a new panel) is
      acted on first, wherever it is on the page; a delete comes after its item's other controls (it removes
      what they act on), and one whose item stayed is tried again in a new state; so is an option (a filter,
      a tab) that did nothing, being the current one, which is also chosen again before finishing (to reach
      what the others hid); an item that listens for a double click is double-clicked, and the field that
      opens gets new text, committed with Enter; a control repeated on every item (same place in its item,
      same label once the item's own words are left out) is tried on one item only once it worked there, and
      on two at most when it did not;
    - a canvas that listens for presses is clicked and dragged across; a large surface that follows the
      pointer (a heatmap) is swept across with no button held;
    - a page with nothing to act on is watched for a few seconds (a clock or a slideshow works by itself);
    - finishes when nothing untried is left (the loop's coverage gate and budget still apply).
    """
    del config, models  # the explorer needs neither; the signature is the registry's contract
    memory = _Memory(keys_first=query is None or asks_for_keys(query.brief))

    async def choose(observation: Observation) -> Action:
        editing = _learn(memory, observation)
        follow_up = _follow_up(memory, observation)
        return follow_up if follow_up is not None else _next_control(memory, observation, editing)

    return choose


def _learn(memory: _Memory, observation: Observation) -> bool:
    """Take in what the last action did; whether it opened something to edit (a double click that changed the
    page)."""
    last = observation.last_result
    editing = memory.last_kind is ActionKind.DBLCLICK and last is not None and last.status is ResultStatus.CHANGED
    if memory.last_selector is not None and last is not None:
        memory.results.setdefault(memory.last_selector, []).append(last.status)
        current = memory.last_intent == "choice" and last.status is ResultStatus.NO_CHANGE
        shape = memory.last_shape or memory.last_selector
        if (last.expectation_met is False or current) and shape not in memory.rechecked:
            memory.recheck[shape] = (memory.recent_states[-1] if memory.recent_states else "", memory.last_selector)
        if current and memory.home is None:
            memory.home = memory.last_selector
        if last.status is ResultStatus.CHANGED and last.expectation_met is not False and memory.last_kind is not None:
            memory.worked.add((shape, memory.last_kind))
    memory.last_shape, memory.last_kind, memory.last_intent = None, None, ""
    if memory.pressing and last is not None:
        memory.keys_effective += last.status is ResultStatus.CHANGED
    memory.pressing = False
    if memory.submitted is not None and last is not None:
        if last.status is ResultStatus.CHANGED:
            button = _button_after(observation, memory.submitted)
            if button is not None:
                memory.refill[button.selector] = memory.submitted
        memory.submitted = None
    memory.recent_states.append(observation.state)
    return editing


def _follow_up(memory: _Memory, observation: Observation) -> Action | None:
    """What the last actions call for before any other control: Enter in the field just typed into, or the next
    key on a page driven by keys."""
    submit, memory.submit = memory.submit, None
    if submit is not None:
        field_ = next((e for e in observation.elements if e.selector == submit), None)
        if field_ is not None:
            memory.last_selector, memory.submitted = None, submit
            return Action(kind=ActionKind.PRESS, element=field_.index, text="Enter",
                          reason="submit the typed text with Enter")
    if memory.keys_first or observation.keyboard == _KEYS_BY_TEXT or not observation.elements:
        return _key_probe(memory, observation)
    return None


def _key_probe(memory: _Memory, observation: Observation) -> Action | None:
    """The next key pressed on a page driven by keys, until enough of them did something or all were tried."""
    if (observation.keyboard in _KEY_REASONS and memory.keys_effective < _KEYS_ENOUGH
            and len(memory.keys) < len(_PAGE_KEYS)):
        key = _PAGE_KEYS[len(memory.keys)]
        memory.keys.append(key)
        memory.pressing, memory.last_selector = True, None
        return Action(kind=ActionKind.PRESS, text=key,
                      reason=f"{KEY_PROBE_REASON} ({observation.keyboard}): press {key}")
    return None


def _next_control(memory: _Memory, observation: Observation, editing: bool) -> Action:
    """The next control to use, in the explorer's order of preference; ``finish`` when none is left."""
    stagnant = len(memory.recent_states) == _STAGNATION_LIMIT and len(set(memory.recent_states)) == 1
    origin = _origin(observation.url)
    candidates = [(e, a) for e in _ordered(observation) for a in _actions_for(e, origin)]
    chosen = _recheck(memory, observation, candidates)
    if chosen is None and editing:
        chosen = _edit_opened(memory, observation, candidates)
    if chosen is None:
        chosen = _untried(memory, observation, candidates)
    if chosen is None:
        chosen = _key_probe(memory, observation)  # keys a listener alone suggested, once the controls are done
    if chosen is None:
        chosen = _go_home(memory, observation, candidates)
    if chosen is None and not stagnant:
        chosen = _retry(memory, observation, candidates)
    if chosen is not None:
        return chosen
    memory.last_selector = None
    if not observation.elements and not memory.watched:
        # A clock, a countdown or a slideshow does its job with no input: what it does by itself is its evidence.
        memory.watched = True
        return Action(kind=ActionKind.WAIT, amount=_WATCH_S,
                      reason="nothing to act on: watch whether the page changes by itself")
    reason = "the page stagnated" if stagnant else "every reachable control was exercised"
    return Action(kind=ActionKind.FINISH, reason=reason)


def _edit_opened(memory: _Memory, observation: Observation, candidates: list[tuple[ElementInfo, Action]]
                 ) -> Action | None:
    """New text for the field the double click opened (an item edited in place), committed with Enter next."""
    for element, action in candidates:
        if (element.created and action.kind is ActionKind.TYPE and element.tag == "input"
                and element.type in _SUBMITTED_BY_ENTER and (element.selector, "type") not in memory.tried):
            return _take(memory, element, action.model_copy(update={"text": _EDITED_TEXT}), observation.state,
                         "give the item opened by the double click new text")
    return None


def _untried(memory: _Memory, observation: Observation, candidates: list[tuple[ElementInfo, Action]]
             ) -> Action | None:
    """The first use of a control not tried yet, unless a twin of it (a per-item control) worked or was tried
    enough; a field that Enter submitted and cleared is typed into again before its own button."""
    for element, action in candidates:
        use = (control_shape(element), action.kind)
        if ((element.selector, action.kind.value) not in memory.tried and use not in memory.worked
                and memory.shape_tries.get(use, 0) < _MAX_TRIES_PER_CONTROL):
            refill = _refill(memory, observation, element)
            if refill is not None:
                return refill
            return _take(memory, element, action, observation.state, "not exercised yet")
    return None


def _retry(memory: _Memory, observation: Observation, candidates: list[tuple[ElementInfo, Action]]
           ) -> Action | None:
    """A control whose use did nothing, again in a state it was not tried in (it may depend on state, like
    "Clear")."""
    for element, action in candidates:
        if (element.selector, action.kind.value) not in memory.tried:
            continue  # never tried: a twin of a per-item control tried on another item
        states = memory.tried[(element.selector, action.kind.value)]
        if (observation.state not in states and len(states) < _MAX_TRIES_PER_CONTROL
                and memory.results.get(element.selector, [None])[-1] is ResultStatus.NO_CHANGE):
            return _take(memory, element, action, observation.state, "retry in a new state: it did nothing")
    return None


def _go_home(memory: _Memory, observation: Observation, candidates: list[tuple[ElementInfo, Action]]
             ) -> Action | None:
    """Once, when all else was tried: choose again the option that was current at first (a list's "All")."""
    for element, action in candidates:
        if element.selector == memory.home:
            memory.home = ""  # once
            if observation.state not in memory.tried.get((element.selector, action.kind.value), []):
                return _take(memory, element, action, observation.state,
                             "back to the option current at first: what the others hid")
    return None


def _recheck(memory: _Memory, observation: Observation, candidates: list[tuple[ElementInfo, Action]]
             ) -> Action | None:
    """Try a control whose expected effect did not happen again, once the page is in a state it failed in: the
    same one if it is still there, else its twin on another item (the list was redrawn)."""
    due = {shape: selector for shape, (state, selector) in memory.recheck.items() if state != observation.state}
    if not due:
        return None
    ranked = sorted(candidates, key=lambda c: c[0].selector not in due.values())
    for element, action in ranked:
        shape = control_shape(element)
        if shape in due:
            del memory.recheck[shape]
            memory.rechecked.add(shape)
            return _take(memory, element, action, observation.state,
                         "try again in a new state: it did nothing, or not what it should")
    return None


def _take(memory: _Memory, element: ElementInfo, action: Action, state: str, why: str) -> Action:
    memory.tried.setdefault((element.selector, action.kind.value), []).append(state)
    memory.last_selector = element.selector
    memory.last_shape = control_shape(element)
    use = (memory.last_shape, action.kind)
    memory.shape_tries[use] = memory.shape_tries.get(use, 0) + 1
    memory.last_kind, memory.last_intent = action.kind, element.intent
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
        if (form and e.form != form) or e.item:
            continue  # another form's button, or one item's own (its delete), submits nothing
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


def _ordered(observation: Observation) -> list[ElementInfo]:
    """What an action created first (act on what was made), then the salient controls near the top, then the
    rest; document order inside each group, except that a canvas comes first (the page's main surface) and a
    delete after its item's other controls (it removes what they act on)."""
    elements = observation.elements

    def place(e: ElementInfo) -> tuple[int, float]:
        group = 0 if e.created else 1 if e.in_viewport else 2
        if e.tag == "canvas" or e.intent == "surface":
            return group, -1.0  # the page's main surface (a drawing, a board): before its toolbars use the budget
        if e.intent != "delete" or not e.item:
            return group, e.index
        last = max((o.index for o in elements if o.item == e.item and o.intent != "delete"), default=e.index)
        return group, max(e.index, last + 0.5)
    return sorted(elements, key=place)


def _actions_for(element: ElementInfo, origin: str) -> list[Action]:
    """How a person uses the element: typed into, chosen from, clicked, double-clicked, drawn on, or swept over."""
    if not is_actionable(element, origin):
        return []
    tag, kind = element.tag, element.type
    if tag == "select" and element.options:
        choice = element.options[1] if len(element.options) > 1 else element.options[0]
        return [Action(kind=ActionKind.SELECT, element=element.index, text=choice)]
    if tag == "select":  # an empty dropdown offers nothing to choose: a person clicks it, and nothing comes
        return [Action(kind=ActionKind.CLICK, element=element.index)]
    if tag == "input" and kind == "range":
        return [Action(kind=ActionKind.CLICK, element=element.index, amount=0.75)]
    if element.intent == "slider":  # a slider widget's thumb: dragged along its track, as a hand moves it
        return [Action(kind=ActionKind.DRAG, element=element.index, amount=_SLIDER_DRAG_PX)]
    if tag == "textarea" or (tag == "input" and kind not in _CLICKED_INPUTS):
        return [Action(kind=ActionKind.TYPE, element=element.index, text=_value_for(element))]
    if element.drop:
        why = "reorder the item in its list" if element.drop_within else "drag the item to the next list"
        drag = Action(kind=ActionKind.DRAG, element=element.index, reason=why)
        return [drag, Action(kind=ActionKind.CLICK, element=element.index)] if element.clickable else [drag]
    if element.intent == "surface":
        return [Action(kind=ActionKind.HOVER, element=element.index, amount=_SURFACE_SWEEP_PX,
                       reason="move the pointer across the surface, no button held")]
    if tag == "canvas":
        return [Action(kind=ActionKind.CLICK, element=element.index),
                Action(kind=ActionKind.DRAG, element=element.index, amount=min(_CANVAS_DRAG_PX, element.width * 0.4))]
    if element.dblclick:
        return [Action(kind=ActionKind.DBLCLICK, element=element.index)]
    return [Action(kind=ActionKind.CLICK, element=element.index)]


def _value_for(element: ElementInfo) -> str:
    """What a person would type: what the field's type asks for; a number where its words, ``inputmode``,
    ``pattern`` or value ask for one (an amount, a rate, years, within its range and step); the value the page
    put in it (an expression, a colour: the page's own example); else what its words ask for, or a line of text."""
    asked = next((value for words, value in _ASKED if words.search(element.hint)), None)
    if element.type in _TEXT_VALUES and element.type != "number":
        return _TEXT_VALUES[element.type]
    numeric = (element.type == "number" or element.inputmode in ("numeric", "decimal")
               or bool(_NUMERIC_PATTERN.fullmatch(element.pattern or "x"))
               or bool(_NUMBER.fullmatch(element.value)))
    if numeric:
        return _in_range(element, asked if asked is not None and _NUMBER.fullmatch(asked) else "42")
    if element.value.strip():
        return element.value
    if asked is not None:
        return asked
    if _NAME_HINT.search(element.hint):
        return "Ada Lovelace"
    return "Test item 7"


def _in_range(element: ElementInfo, preferred: str) -> str:
    """``preferred`` if the field's min, max and step allow it, else a value on its step 60 % up its range."""
    try:
        low = float(element.min) if element.min else None
        high = float(element.max) if element.max else None
        step = float(element.step) if element.step and element.step != "any" else None
    except ValueError:
        return preferred
    if step is None and element.type == "number" and element.step != "any":
        step = 1.0  # a number field's default step
    base = low or 0.0
    value = float(preferred)
    on_step = step is None or step <= 0 or abs((value - base) / step - round((value - base) / step)) < 1e-6
    if (low is None or value >= low) and (high is None or value <= high) and on_step:
        return preferred
    if low is not None and high is not None and high >= low:
        value = low + (high - low) * 0.6
    elif low is not None:
        value = low + 1
    if step is not None and step > 0:
        value = base + round((value - base) / step) * step
        if high is not None and value > high:
            value -= step
    return str(int(value)) if value == int(value) else f"{value:.4g}"
