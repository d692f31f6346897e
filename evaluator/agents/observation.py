"""What an agent policy sees and what it answers: the wire format of Agent-Driven Interaction.

A failed action is not an exception: it comes back as the ``last_result`` of the next observation.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer


class _Wire(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class ElementInfo(_Wire):
    """A visible interactive element, addressed by its index in the observation."""

    index: int
    """Handle the policy uses to address the element."""
    selector: str
    """CSS path of the element."""
    tag: str
    """Tag name."""
    role: str = ""
    """ARIA role, when set."""
    type: str = ""
    """``type`` attribute (inputs, buttons)."""
    label: str = ""
    """Accessible name or visible text, shortened."""
    href: str = ""
    """Link target, for links."""
    disabled: bool = False
    """Disabled or aria-disabled."""
    x: float
    """Centre, page coordinates (CSS px)."""
    y: float
    """Centre, page coordinates (CSS px)."""
    width: float
    """Width (CSS px)."""
    height: float
    """Height (CSS px)."""
    in_viewport: bool
    """Near the first screens of the page: part of the salient set."""
    form: str = ""
    """CSS path of the owning form, if any."""
    options: list[str] = Field(default_factory=list)
    """Option values of a ``select``."""
    min: str = ""
    """``min`` attribute."""
    max: str = ""
    """``max`` attribute."""
    step: str = ""
    """``step`` attribute (trace format 4)."""
    inputmode: str = ""
    """``inputmode`` attribute: ``numeric`` or ``decimal`` asks for a number in a text field (trace format 4)."""
    pattern: str = ""
    """``pattern`` attribute, cut at 80 characters (trace format 4)."""
    drop: str = ""
    """For an item a person drags (a board's card, a sortable list's row): CSS path of where the explorer drops
    it, another container like its own, or its own list (trace format 4)."""
    drop_within: bool = False
    """The drop is within the item's own list (a reorder), not into another container (trace format 4)."""
    clickable: bool = True
    """False for an item found only as something to drag: it is dragged, not clicked (trace format 4)."""
    value: str = ""
    """A text field's value when the step was observed, cut at 80 characters (trace format 4)."""
    hint: str = ""
    """What a field asks for, in the words beside it: its labels, placeholder, name, id and title, or the text
    just before it; lower case (trace format 4)."""
    intent: str = ""
    """What the control is for, when the explorer treats it specially: ``delete`` (its name says it removes
    something: a probe checks that its item goes), ``choice`` (one of a group of options of which one is
    current, a filter or a tab: the current one rightly does nothing) (trace format 3), ``slider`` (a slider
    widget's thumb, dragged along its track) (trace format 4), ``surface`` (a large element that follows the
    pointer, a heatmap: swept across with no button held) (collector-14)."""
    item: str = ""
    """CSS path of the list item or row the control belongs to (for a delete control without one: the nearest
    ancestor that holds more than the control), empty when none (trace format 3)."""
    shape: str = ""
    """For a control inside a list item or row: the item's path without its position, the control's place in
    it, and its label without the item's other words ("Remove Milk" in Milk's row reads "Remove"), so the same
    control on every item has one shape; empty outside items (trace format 3)."""
    reveal: str = ""
    """CSS path of the ancestor whose hover shows the control (hidden until then); the geometry above is that
    ancestor's. Empty for a control always shown (trace format 3)."""
    dblclick: bool = False
    """The element listens for a double click (an item edited in place) (trace format 3)."""
    created: bool = False
    """The control appeared after an action (a list item's checkbox, a new panel's tab): salient wherever it is
    on the page, below the fold included (trace format 3)."""


class ResultStatus(StrEnum):
    """What an action did, measured."""

    CHANGED = "changed"
    """The DOM, form values, scroll position or screen changed."""
    NO_CHANGE = "no_change"
    """Nothing observable changed."""
    INPUT_REJECTED = "input_rejected"
    """Typed text did not end up in the field."""
    NAVIGATED_AWAY = "navigated_away"
    """The page left the app; evalgrid went back."""
    FAILED = "failed"
    """The action could not be performed (element gone, covered, detached ...)."""


class Effect(StrEnum):
    """The effect oracle: what an action visibly did, strongest first (trace format 2).

    Trace format 3 (collector-6) adds, all with defaults so older traces still load: the element's
    ``intent``, ``item``, ``shape``, ``reveal``, ``dblclick`` and ``created``; the result's ``expected`` and
    ``expectation_met``; the ``dblclick`` action. Trace format 4 (collector-10) adds the element's ``step``,
    ``inputmode``, ``pattern``, ``hint``, ``value``, ``drop``, ``drop_within`` and ``clickable``.
    """

    ERROR = "error"
    """An uncaught error or console error was raised."""
    NAVIGATION = "navigation"
    """The page left the app."""
    TYPED_TEXT = "typed_text_appeared"
    """Text typed into a field appeared elsewhere on the page."""
    COUNT = "count_changed"
    """The number of list items or rows changed."""
    DOM = "dom_changed"
    """The markup changed."""
    VISUAL = "visual_only"
    """Only the screen changed (a canvas, a value in a field, a scroll)."""
    NOTHING = "nothing"
    """Nothing observable changed."""


class ActionResult(_Wire):
    """Measured effect of one action."""

    status: ResultStatus
    """Class of the effect."""
    detail: str = ""
    """Details for the agent and the judge."""
    dom_changed: bool = False
    """Markup, values, scroll or URL changed."""
    visual_changed: bool = False
    """The screen changed (outside hover effects)."""
    errors: list[str] = Field(default_factory=list)
    """Uncaught errors and console errors raised while the action ran."""
    effect: Effect | None = None
    """The effect oracle's class (absent in traces before format 2)."""
    idle_changed: bool = False
    """A key press's or a canvas's control: the page changed by itself in an idle interval of the same length,
    so only a change beyond that counted as the input's effect."""
    expected: str = ""
    """What a stateful probe expected the action to do (``the item is removed``); empty when the action was
    not a probe (trace format 3)."""
    expectation_met: bool | None = None
    """Whether it did; ``None`` when not a probe or when it could not be told (a confirm dialog was dismissed)
    (trace format 3)."""


class ActionKind(StrEnum):
    """Actions a policy may take."""

    CLICK = "click"
    DBLCLICK = "dblclick"
    """Double-click the element (trace format 3)."""
    TYPE = "type"
    PRESS = "press"
    SELECT = "select"
    SCROLL = "scroll"
    HOVER = "hover"
    WAIT = "wait"
    BACK = "back"
    DRAG = "drag"
    REFRESH = "refresh"
    """Reload the page (Cookie-Frame: at most twice, for a garbled page)."""
    VIEWPORT = "viewport"
    """Switch the page to ``text`` = ``mobile`` (390×844) or ``desktop`` (1280×800)."""
    FINISH = "finish"


class AgentSummary(_Wire):
    """Cookie-Frame's end-of-interaction summary."""

    actions_performed: list[str]
    """What was done, in order."""
    observations: list[str]
    """What was seen, problems first."""
    overall_observation: str
    """One-paragraph assessment of the app's behaviour."""


KEY_PROBE_REASON = "the page listens for keys"
"""How the explorer's key presses on a keyboard-driven page begin their ``reason``: the judge charges
``keys_ignored`` on these alone, not on a key another policy pressed for its own purpose."""


class Action(_Wire):
    """One decision of a policy."""

    kind: ActionKind
    """What to do."""
    element: int | None = None
    """Index of the target element in the observation."""
    to_element: int | None = None
    """With ``drag``: the element to drop on."""
    text: str | None = None
    """Text to type, key to press or option to select."""
    amount: float | None = None
    """Scroll distance (px), wait time (s), relative position on a slider (0-1), or with ``hover``, the length
    (px) of a sweep across the element with no button held (without it, the pointer only rests on it)."""
    reason: str = ""
    """Why, in a few words (recorded in the trace)."""
    summary: AgentSummary | None = None
    """With ``finish``: the policy's own summary; evalgrid writes one from the trace when absent."""


class Coverage(_Wire):
    """How much of the salient UI has been exercised."""

    salient: int
    """Salient controls seen so far."""
    exercised: int
    """Of those, how many were acted on."""
    remaining: list[int] = Field(default_factory=list)
    """Indices (in this observation) of salient controls not yet exercised."""


class Observation(_Wire):
    """What the policy sees at one step, taken while the page is frozen."""

    step: int
    """Step number, from 0."""
    steps_left: int
    """Budget remaining."""
    url: str
    """Current URL."""
    title: str
    """Document title."""
    elements: list[ElementInfo]
    """Visible interactive elements."""
    state: str
    """Fingerprint of the user-visible state."""
    text_excerpt: str
    """Start of the page's visible text."""
    screenshot: str
    """Bundle path of this step's screenshot."""
    last_action: Action | None = None
    """The previous action."""
    last_result: ActionResult | None = None
    """Its measured effect (failures come back here, not as exceptions)."""
    coverage: Coverage
    """Exercise coverage of salient controls."""
    notes: list[str] = Field(default_factory=list)
    """Messages from evalgrid (e.g. the coverage gate refused ``finish``)."""
    viewport: str = "desktop"
    """``desktop`` or ``mobile``: the page's current size."""
    keyboard: str = ""
    """Why the page seems driven by keys pressed anywhere on it: ``listener`` (a keyboard listener on the
    window, document or body), ``canvas``, ``text`` (it tells the user to use keys); empty when not."""
    image: str | None = Field(default=None, exclude=True)
    """The screenshot as base64 JPEG, for policies that look (not stored: the file is in the bundle)."""


class StepRecord(_Wire):
    """One step of the interaction trace, aligned with the screen video."""

    step: int
    """Step number."""
    observation_state: str
    """State fingerprint when the step was observed."""
    element_count: int
    """Interactive elements visible."""
    screenshot: str
    """Bundle path of the screenshot taken at observation."""
    action: Action
    """What the policy chose."""
    target: ElementInfo | None = None
    """The element acted on."""
    result: ActionResult
    """What it did."""
    observed_at_s: float
    """Video time of the observation."""
    deliberation_s: float
    """Time the policy took to decide, with the page frozen."""
    action_start_s: float
    """Video time the action began."""
    action_end_s: float
    """Video time the action's effect was observed."""
    input_at_s: float | None = None
    """Video time the app received the input (the press of a click, the first keystroke), when there was one."""

    @property
    def control(self) -> str:
        """The control acted on, as a reader names it: its label, else its selector (``""`` for a page key)."""
        return self.target.label or self.target.selector if self.target is not None else ""


class AudioTrack(_Wire):
    """The interaction video's sound: the track muxed into it and how it lines up, or why there is none."""

    track: bool
    """The video has a sound track."""
    note: str | None = None
    """Why there is no track (none when there is one)."""
    offset_s: float | None = None
    """The sound's start minus the video's start, seconds (a track only)."""
    lag_s: float | None = None
    """How far the capture trailed real time at its end: more than a few tens of ms means samples were lost
    (a track only)."""
    captured_s: float | None = None
    """Seconds of sound captured (a track only)."""

    @model_serializer(mode="wrap")
    def _given(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # Readers tell a track from its absence by which keys are there, as before this record existed.
        return {name: value for name, value in handler(self).items() if value is not None}


class InteractionResult(_Wire):
    """``interaction/result.json``: how the interaction ended and what it recorded.

    Bundles written before this record have no ``version``; readers take them as version 1.
    """

    version: Literal[1] = 1
    ended_by: str
    """``policy`` (it finished), ``budget`` (steps ran out), ``page_failure`` (the page broke the interaction),
    ``build_failure`` / ``perception_failure`` (no interaction took place), ``not_run`` (none was asked for: an app
    preview), or the app's failure that cut the run short (``hang``, ``crash``, ``tamper``)."""
    error: str | None = None
    """What went wrong, for a person."""
    coverage: Coverage | None = None
    """Salient controls exercised, when the interaction ran to its end."""
    steps: int = 0
    """Steps in the trace."""
    video_duration_s: float = 0.0
    """Length of ``interaction/video.mp4`` (0: none)."""
    frames: int = 0
    """Screencast frames received."""
    wall_duration_s: float = 0.0
    """Wall time from the screencast's start to its end."""
    console_entries_dropped: int
    """Console entries past the log's limits, not recorded in ``console.json`` (errors included)."""
    console_errors_dropped: int = 0
    """Of those, errors past the error budget: still counted against the page (absent before collector-9)."""
    audio: AudioTrack | None = None
    """The video's sound; absent (not null) when no interaction took place."""

    @model_serializer(mode="wrap")
    def _without_absent_audio(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if self.audio is None:
            del data["audio"]
        return data


_UNTYPABLE = frozenset({"file", "hidden", "color", "date", "time", "datetime-local", "month", "week"})


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


def control_shape(element: ElementInfo) -> str:
    """What stands for the control when counting what was tried: its ``shape`` inside a list item (one item's
    checkbox or delete button stands for the same on every item), else its selector."""
    return element.shape or element.selector
