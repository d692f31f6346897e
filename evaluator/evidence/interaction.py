"""Agent-Driven Interaction: the observe → deliberate (frozen) → act loop behind any policy.

The loop owns the guarantees that must not depend on the policy: the page is frozen from each
observation until the action starts; every action is executed with human-like input and its
effect measured; failures come back as observations; the coverage gate refuses an early
``finish``; the step budget is enforced; everything lands in the trace, aligned with the video.
"""

from __future__ import annotations

import asyncio
import base64
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import cv2
import numpy as np
from playwright.async_api import FloatRect, Page
from playwright.async_api import TimeoutError as PlaywrightTimeoutError

from evaluator.agents.humanlike import HumanInput
from evaluator.agents.observation import (
    Action,
    ActionKind,
    ActionResult,
    AgentSummary,
    Coverage,
    Effect,
    ElementInfo,
    Observation,
    ResultStatus,
    StepRecord,
    control_shape,
    is_actionable,
)
from evaluator.agents.policies import Policy
from evaluator.browser.freeze import FreezeController
from evaluator.browser.isolated import evaluate
from evaluator.evidence.bundle import BundleFile, EvidenceWriter
from evaluator.evidence.console import ConsoleClass, PageLog
from evaluator.evidence.facts import EffectFacts
from evaluator.evidence.probes import (
    VISUAL_CHANGE_THRESHOLD,
    changed_fraction,
    effect_facts,
    interactive_elements,
    keyboard_driven,
    settle_transitions,
    state_signature,
    wait_for_render,
)
from evaluator.evidence.screencast import ScreenRecorder
from evaluator.evidence.settle import RequestsInFlight, settle_after_input
from evaluator.models import AgentConfig
from evaluator.textsafety import Finding, redact

_MAX_GATE_REFUSALS = 2
_MAX_REFRESHES = 2  # Cookie-Frame: a garbled page may be refreshed twice, then it is what it is
_ON_ELEMENT = frozenset({ActionKind.CLICK, ActionKind.DBLCLICK, ActionKind.TYPE, ActionKind.SELECT, ActionKind.HOVER,
                         ActionKind.DRAG})
_VIEWPORTS = {"desktop": {"width": 1280, "height": 800}, "mobile": {"width": 390, "height": 844}}
# Step screenshots are compared for change and kept as evidence: JPEG keeps both cheap.
_SHOT: dict[str, Any] = {"type": "jpeg", "quality": 70}
_ACTION_TIMEOUT_MS = 3000
_SETTLE_TIMEOUT_S = 1.5  # the longest an action's effect is waited for beyond its window (a page that never settles)
# The fixed pacing looked at the page no sooner than its pause plus three 50 ms layout polls: a timer or an
# animation due within that is still waited for, so what it saw is seen.
_FIXED_POLLS_S = 0.15
_SCROLL_REST_POLL_S = 0.05  # a scroll position read twice this far apart and equal has come to rest
_SCROLL_REST_TIMEOUT_S = 1.0
_UNSCROLL_TRIES = 3
# A page that changes by itself (a game loop, a clock) must change clearly more after a key press than in
# the same interval without one for the press to count: twice the idle change, plus a margin.
_IDLE_FACTOR = 2.0
_IDLE_MARGIN = 0.002
# A canvas is judged by its own pixels: a stroke or a dot of this many changed pixels is an effect, counted near
# where the pointer went (a drawing's stroke), beyond what changed there by itself; or a change of the whole
# canvas beyond its idle change (a game that starts on a click).
_CANVAS_MIN_PIXELS = 40
_CANVAS_REACH_PX = 40
_PIXEL_DELTA = 24  # as probes.changed_fraction: a grey-level difference above JPEG noise
# An idle interval is sampled this many times, and its idle change is the most that changed between any
# two samples: one comparison of two instants undercounts a periodic motion (a marker that wraps round to near
# where it was, a loop that happened to skip its ticks), and the input's interval would then seem to add change.
_IDLE_SAMPLES = 4
_SINGLE_LINE = frozenset({"", "text", "search", "email", "url", "tel", "password", "number"})
# A delete's item may leave with a short exit animation: its removal is awaited this long before it counts as
# still there.
_REMOVAL_WAIT_S = 1.0
_DELETE_EXPECTED = "the item is removed"
_TICK_EXPECTED = "the item is ticked (its checked state, a class, aria-* or a counter changes)"
_MOVE_EXPECTED = "the item is in the list it was dropped on"
_REORDER_EXPECTED = "the item has a new place in its list"
_SLIDE_EXPECTED = "the slider's thumb follows the drag along its track"
_SLIDE_SHARE = 0.25
"""A thumb that moved less than this share of the drag did not follow it (a stepped thumb moves by whole steps)."""
# A slider thumb's middle (viewport x) and its room on its track, left and right of it (px): the track is the
# first of its three nearest ancestors that is wide and flat, with no words besides the thumb's, as
# interactive_elements.js finds it; null without one (a dial, a vertical slider: its thumb turns or rises, and
# where it lands is not checked).
_TRACK_ROOM_JS = """(selector) => {
  const el = document.querySelector(selector);
  if (!el) return null;
  const r = el.getBoundingClientRect(), middle = r.left + r.width / 2, own = el.innerText || '';
  for (let node = el.parentElement, depth = 0; node && depth < 3; node = node.parentElement, depth++) {
    const t = node.getBoundingClientRect();
    if (t.width >= 100 && t.height <= 60 && t.width >= 3 * t.height) {
      const words = /\\p{L}/u.test((node.innerText || '').replace(own, ''));
      return words ? null : [middle, middle - t.left, t.right - middle];
    }
  }
  return null;
}"""
# The text of a dragged item (its longest line), and the text of the list it is dropped on.
_DRAG_TEXTS_JS = """([item, drop]) => {
  const one = document.querySelector(item), list = document.querySelector(drop);
  const lines = one ? (one.innerText || '').split('\\n').map((t) => t.trim()).filter(Boolean) : [];
  return [lines.sort((a, b) => b.length - a.length)[0] || '', list ? list.innerText || '' : ''];
}"""
# The text that names a delete control's item: its item's text without the control's own.
_ITEM_TEXT_JS = """([item, control]) => {
  const row = document.querySelector(item), own = document.querySelector(control);
  if (!row) return '';
  const mine = own ? (own.innerText || '').trim() : '';
  return (row.innerText || '').split('\\n').map((t) => t.trim()).filter((t) => t && t !== mine)
    .sort((a, b) => b.length - a.length)[0] || '';
}"""
_VISIBLE_TEXT_JS = "() => document.body ? document.body.innerText.slice(0, 20000) : ''"  # as effect_facts.js
_FIELD_VALUE_JS = """(selector) => {
  const e = document.querySelector(selector);
  return e ? ('value' in e ? String(e.value) : String(e.textContent)) : '';
}"""
# What the agent is shown of the page besides its controls, and what is scanned for passages addressed to the
# evaluator at every step: the title (cut where a person would stop reading: a title of millions of characters is
# not carried and scanned at every step), the visible text, and text that CSS generates (`content:`, `attr()`),
# which innerText leaves out although it is on the screen.
_SHOWN_JS = """() => {
  const generated = [];
  const all = document.body ? document.body.getElementsByTagName('*') : [];
  let size = 0;
  for (let i = 0; i < all.length && i < 1500 && size < 4000; i++) {
    for (const pseudo of ['::before', '::after']) {
      const strings = getComputedStyle(all[i], pseudo).content.match(/"(?:[^"\\\\]|\\\\.)*"/g) || [];
      for (const one of strings) if (one.length > 4) { generated.push(one.slice(1, -1)); size += one.length; }
    }
  }
  return {title: String(document.title).slice(0, 500),
          text: document.body ? document.body.innerText.slice(0, 20000) : '',
          generated: generated.join('\\n').slice(0, 4000)};
}"""


_TEXT_EXCERPT = 1500
"""Characters of the page's visible text an agent is shown."""
_SCAN_DEADLINE_S = 10.0
"""How long one step's scan may take (its texts are capped: some 30,000 characters, well under a second)."""


_BOX_JS = """(selector) => {
  const e = document.querySelector(selector), r = e && e.getBoundingClientRect();
  return r && (r.width || r.height) ? {x: r.x, y: r.y, width: r.width, height: r.height} : null;
}"""


def _own(pending: _Pending) -> str | None:
    """The control a click acts on, whose own look and attributes are not its effect; None for other actions, for
    a canvas (what is drawn on it is the app's output) and for a checkbox, radio or switch, whose own state is
    what a user changes."""
    target = pending.target
    if (target is None or pending.action.kind not in (ActionKind.CLICK, ActionKind.DBLCLICK)
            or target.tag == "canvas" or target.type in ("checkbox", "radio")
            or target.role in ("checkbox", "radio", "switch")):
        return None
    return target.selector


async def _box(page: Page, selector: str) -> FloatRect | None:
    """Where the element is in the viewport, as ``locator.bounding_box`` says (None: not there, or not displayed),
    measured in the isolated world: Playwright's makes a handle to it in the page's own, which the page sees."""
    box: FloatRect | None = await evaluate(page, _BOX_JS, selector)
    return box


_SCROLL_JS = """(selector) => {
  const e = document.querySelector(selector);
  if (!e) return false;
  const r = e.getBoundingClientRect();
  if (r.top < 0 || r.left < 0 || r.bottom > innerHeight || r.right > innerWidth) {
    e.scrollIntoView({block: 'center', inline: 'center', behavior: 'instant'});
  }
  return true;
}"""


async def _scroll_into_view(page: Page, selector: str) -> None:
    """Scroll the element into view unless it is there, waiting for it up to the action timeout, as
    ``locator.scroll_into_view_if_needed`` would, from the isolated world (Playwright's shows the page a handle)."""
    deadline = time.monotonic() + _ACTION_TIMEOUT_MS / 1000
    while not await evaluate(page, _SCROLL_JS, selector):
        if time.monotonic() > deadline:
            raise PlaywrightTimeoutError(f"no element matches {selector} after {_ACTION_TIMEOUT_MS} ms")
        await asyncio.sleep(0.05)


def _passages(texts: list[tuple[str, str]], step: int) -> list[Finding]:
    return [finding for source, text in texts for finding in redact(text, f"{source} at step {step}")[1]]


@dataclass
class InteractionOutcome:
    """What the interaction produced, besides the files it wrote."""

    trace: list[StepRecord]
    summary: AgentSummary
    coverage: Coverage
    ended_by: str
    gate_refusals: int


@dataclass
class _Pending:
    action: Action
    target: ElementInfo | None
    observation: Observation
    observed_wall: float
    deliberation_s: float
    start_wall: float
    pre_state: str
    pre_shot: bytes | None
    result: ActionResult | None
    input_wall: float | None = None
    pre_facts: EffectFacts | None = None
    idle_fraction: float | None = None
    """For a key press: the share of pixels that changed in an idle interval before it (None: not measured)."""
    idle_markup: bool = False
    """For a key press: the markup changed by itself in that idle interval."""
    idle_seconds: float = 0.0
    """For a key press: how long that idle interval lasted."""
    clip: dict[str, float] | None = None
    """For a canvas: its box in the viewport, the only pixels its input is judged by."""
    clip_shot: bytes | None = None
    """For a canvas: its pixels just before the input (after the idle interval)."""
    idle_clip_shots: tuple[bytes, ...] = ()
    """For a canvas: its pixels sampled through the idle interval, the last being ``clip_shot``."""
    reach: tuple[float, float, float, float] | None = None
    """For a canvas: the box (x0, y0, x1, y1, viewport px) the pointer went through, pressed."""
    item_text: str | None = None
    """For a delete probe: the text of the item it should remove (None: not a probe, or no item to tell by)."""
    drag: tuple[str, str] | None = None
    """For an item dragged to its drop place: its text and the drop list's text before the drag."""
    slide: tuple[float, float] | None = None
    """For a slider thumb dragged along its track: its middle before (viewport x) and the drag's length (px)."""
    scroll: tuple[float, float] | None = None
    """For a key pressed on the page: the page's scroll position before it, restored before the effect is
    measured (see :meth:`Interaction._unscroll`)."""
    scrolled: bool = False
    """The key scrolled the page (the browser's default action, undone before measuring)."""


class Interaction:
    """Runs one policy against one page until it finishes or the budget is spent."""

    def __init__(
        self, *, page: Page, app_url: str, writer: EvidenceWriter, recorder: ScreenRecorder,
        freezer: FreezeController, log: PageLog, policy: Policy, config: AgentConfig,
    ) -> None:
        self._page = page
        self._app_url = app_url
        self._origin = "{0.scheme}://{0.netloc}".format(urlsplit(app_url))
        self._writer = writer
        self._recorder = recorder
        self._freezer = freezer
        self._log = log
        self._policy = policy
        self._config = config
        self._input = HumanInput(page, seed=config.seed, mouse_steps=config.mouse_steps,
                                 typing_delay_ms=config.typing_delay_ms)
        self._salient: dict[str, str] = {}
        """Selector of each salient control seen -> its shape (``control_shape``)."""
        self._exercised: set[str] = set()
        """Selectors and shapes acted on: one item's per-item control stands for its twins on the other items."""
        self._seen: set[str] = set()
        """Every control selector observed so far; one not among them after the first step was created."""
        self._created: set[str] = set()
        self._refreshes = 0
        self._viewport = "desktop"
        self._typed: dict[str, str] = {}
        self._requests = RequestsInFlight(page)
        self.trace: list[StepRecord] = []
        self.injection: list[Finding] = []
        """Passages addressed to the evaluator in what the agent was shown (any policy): they flag the run."""
        self._scanned: set[int] = set()

    async def run(self) -> InteractionOutcome:
        """Explore until the policy finishes (past the coverage gate) or the budget is spent."""
        pending: _Pending | None = None
        refusals = 0
        notes: list[str] = []
        step = 0
        action: Action | None = None
        while True:
            await self._freezer.freeze()
            observed_wall = time.time()
            shot = await self._page.screenshot(**_SHOT)
            state = await state_signature(self._page)
            last: tuple[Action, ActionResult] | None = None
            if pending is not None:
                result = pending.result or await self._measure(pending, state, shot)
                self._record(pending, result, observed_wall)
                last, pending = (pending.action, result), None
            observation = await self._observe(step, shot, state, last, notes)
            if step >= self._config.max_steps:
                ended_by = "budget"
                break
            started = time.monotonic()
            action = await self._policy(observation)
            deliberation = time.monotonic() - started
            notes = []
            if action.kind is ActionKind.FINISH:
                if (self._config.coverage_gate and observation.coverage.remaining
                        and refusals < _MAX_GATE_REFUSALS):
                    refusals += 1
                    notes = [f"coverage gate: finish refused, {len(observation.coverage.remaining)} salient "
                             f"controls not exercised yet: {observation.coverage.remaining[:10]}"]
                    continue
                ended_by = "policy"
                break
            await self._freezer.thaw()
            pending = await self._act(action, observation, observed_wall, deliberation)
            step += 1
        await self._freezer.thaw()
        summary = action.summary if action is not None and action.summary else self._summarise()
        return InteractionOutcome(self.trace, summary, observation.coverage, ended_by, refusals)

    async def _observe(self, step: int, shot: bytes, state: str, last: tuple[Action, ActionResult] | None,
                       notes: list[str]) -> Observation:
        found = await interactive_elements(self._page)
        if step > 0:
            self._created.update(e.selector for e in found if e.selector not in self._seen)
        self._seen.update(e.selector for e in found)
        elements = [e.model_copy(update={"created": e.selector in self._created}) for e in found]
        for e in elements:
            # what an action created is salient wherever it landed, below the fold included
            if (e.in_viewport or e.created) and is_actionable(e, self._origin):
                self._salient[e.selector] = control_shape(e)
        remaining = [e.index for e in elements
                     if e.selector in self._salient and not self._was_exercised(e.selector)]
        path = self._writer.write_bytes(BundleFile.step_shot(step), shot)
        shown = await evaluate(self._page, _SHOWN_JS)
        title, text = str(shown["title"]), str(shown["text"])
        await self._scan(step, [("page title", title), ("page text", text), ("generated text", str(shown["generated"])),
                                *(("element label", e.label) for e in elements)])
        return Observation(
            step=step, steps_left=max(0, self._config.max_steps - step), url=self._page.url,
            title=title, elements=elements, state=state, text_excerpt=text[:_TEXT_EXCERPT], screenshot=path,
            last_action=last[0] if last else None, last_result=last[1] if last else None,
            coverage=Coverage(salient=len(self._salient), exercised=self._exercised_count(), remaining=remaining),
            notes=notes, viewport=self._viewport, image=base64.b64encode(shot).decode(),
            keyboard=await keyboard_driven(self._page),
        )

    async def _scan(self, step: int, texts: list[tuple[str, str]]) -> None:
        """Passages addressed to the evaluator in what the page shows now. Each text is scanned once (most do not
        change from step to step), off the event loop and within a deadline: a page cannot stall the run with text
        that is slow to scan."""
        new = [(source, text) for source, text in texts if text and hash(text) not in self._scanned]
        self._scanned.update(hash(text) for _, text in new)
        if not new:
            return
        try:
            found = await asyncio.wait_for(asyncio.to_thread(_passages, new, step), _SCAN_DEADLINE_S)
        except TimeoutError:
            found = [Finding(source=f"page at step {step}", excerpt="[evalgrid: the page's text could not be scanned "
                                                                    f"for passages within {_SCAN_DEADLINE_S:g} s]")]
        seen = {finding.excerpt for finding in self.injection}
        for finding in found:
            if finding.excerpt not in seen:
                seen.add(finding.excerpt)
                self.injection.append(finding)

    def _was_exercised(self, selector: str) -> bool:
        return selector in self._exercised or self._salient.get(selector) in self._exercised

    def _exercised_count(self) -> int:
        return sum(self._was_exercised(selector) for selector in self._salient)

    async def _measure(self, pending: _Pending, state: str, shot: bytes) -> ActionResult:
        facts = await effect_facts(self._page, _own(pending))
        before = pending.pre_facts or facts
        # A click that only marked the control itself (pressed, selected, its own class) did not reach the app's
        # output: its markup counts only outside the control, and its pixels only outside its box.
        own = before.own if before.outside is not None and facts.outside is not None else None
        fraction = (changed_fraction(pending.pre_shot, shot, outside=own) if pending.pre_shot is not None
                    else 0.0)
        markup = facts.markup != before.markup
        count = facts.items != before.items
        dom = state != pending.pre_state
        if own is not None:
            # the state fingerprint sees the control's own value too (a native slider's thumb): only what the
            # control drove counts, in the markup or in another field's value
            markup = markup and facts.outside != before.outside
            dom = dom and (markup or count or facts.url != before.url or facts.values != before.values)
        errors = [f"{e.kind}: {e.text}" for e in
                  self._log.since(pending.start_wall, ConsoleClass.UNCAUGHT, ConsoleClass.ERROR)]
        idle = pending.idle_fraction
        floor, margin = VISUAL_CHANGE_THRESHOLD, _IDLE_MARGIN
        if pending.clip is not None and pending.clip_shot is not None:
            canvas = await self._page.screenshot(clip=pending.clip, **_SHOT)  # type: ignore[arg-type]
            fraction = changed_fraction(pending.clip_shot, canvas)
            floor = margin = _CANVAS_MIN_PIXELS / max(pending.clip["width"] * pending.clip["height"], 1.0)
            near = self._near_pointer(pending, canvas)
        else:
            near = False
        moving = idle is not None and (idle > floor or pending.idle_markup)
        if moving:
            # The page moves by itself: only a change well beyond the idle one is the key's, and markup only
            # if the markup kept still while idle.
            # the press's interval (the wait for its effect, the freeze) may be longer than the idle one: scale to it
            longer = max(1.0, (time.time() - pending.start_wall) / max(pending.idle_seconds, 1e-3))
            visual = fraction > _IDLE_FACTOR * (idle or 0.0) * longer + margin
            markup = markup and not pending.idle_markup
            dom = markup or count
        else:
            visual = fraction > floor
        visual = visual or near
        typed = self._typed_text_appeared(pending, before.text, facts.text)
        if _submits_field(pending):
            # Submitting a field is judged by what it did to the page: a field that only cleared (values are
            # not markup) or only redrew itself did nothing a user asked for.
            changed = markup or count or typed
            detail = "" if changed else "submitting the field with Enter changed nothing but the field"
        else:
            changed = dom or visual
            detail = "" if changed else "nothing observable changed"
        if pending.scrolled and not changed:
            detail = "the key only scrolled the page (the browser's default action, undone): the app did nothing"
        moved = facts.url != before.url
        effect = (Effect.ERROR if errors else Effect.TYPED_TEXT if typed else Effect.COUNT if count
                  else Effect.DOM if markup else Effect.NAVIGATION if moved and changed
                  else Effect.VISUAL if changed else Effect.NOTHING)
        expected, met, detail = await self._expectation(pending, facts, before, dom or markup or count, changed,
                                                        detail)
        return ActionResult(status=ResultStatus.CHANGED if changed else ResultStatus.NO_CHANGE, dom_changed=dom,
                            visual_changed=visual, errors=errors, detail=detail, effect=effect,
                            idle_changed=moving, expected=expected, expectation_met=met)

    async def _expectation(self, pending: _Pending, facts: EffectFacts, before: EffectFacts, marked: bool,
                           changed: bool, detail: str) -> tuple[str, bool | None, str]:
        """What a stateful probe expected (a tick, a move, a removal), whether it happened, and the step's detail."""
        expected, met = "", None
        target = pending.target
        if (target is not None and target.item and pending.action.kind is ActionKind.CLICK
                and (target.type == "checkbox" or target.role in ("checkbox", "switch"))):
            expected, met = _TICK_EXPECTED, marked
        if pending.drag is not None and target is not None:
            expected, met = await self._moved(target, pending.drag)
            if not met:
                detail = f"the item {pending.drag[0][:60]!r} was dropped but did not move" + (
                    "" if changed else "; nothing changed")
        if pending.slide is not None and target is not None:
            box = await _box(self._page, target.selector)
            start, length = pending.slide
            expected = _SLIDE_EXPECTED
            met = box is not None and abs(box["x"] + box["width"] / 2 - start) >= _SLIDE_SHARE * abs(length)
            if not met:
                detail = "the slider's thumb did not follow the drag" + ("" if changed else "; nothing changed")
        if pending.item_text is not None:
            expected = _DELETE_EXPECTED
            if any(e.kind == "dialog" for e in self._log.since(pending.start_wall)):
                detail = "a confirm dialog was dismissed: whether the delete works cannot be told"
            else:
                item = pending.item_text
                met = facts.items < before.items or facts.text.count(item) < before.text.count(item)
                if not met:
                    detail = f"the item {item[:60]!r} is still there" + ("" if changed else "; nothing changed")
        return expected, met, detail

    async def _moved(self, target: ElementInfo, drag: tuple[str, str]) -> tuple[str, bool]:
        """What a drag was expected to do, and whether it did: the item's text now in the other list, or its
        own list's text in another order."""
        item, before = drag
        _, after = await evaluate(self._page, _DRAG_TEXTS_JS, [target.selector, target.drop])
        if target.drop_within:
            return _REORDER_EXPECTED, after != before and item in after
        return _MOVE_EXPECTED, after.count(item) > before.count(item)

    @staticmethod
    def _near_pointer(pending: _Pending, after: bytes) -> bool:
        """Whether a canvas changed where the pointer pressed, clearly more than it changed there while idle."""
        if pending.clip is None or pending.reach is None or pending.clip_shot is None or not pending.idle_clip_shots:
            return False
        x0, y0, x1, y1 = pending.reach
        left, top = pending.clip["x"], pending.clip["y"]
        region = (int(max(0, min(x0, x1) - left - _CANVAS_REACH_PX)), int(max(0, min(y0, y1) - top - _CANVAS_REACH_PX)),
                  int(max(x0, x1) - left + _CANVAS_REACH_PX), int(max(y0, y1) - top + _CANVAS_REACH_PX))
        moved = _most_changed_pixels((pending.clip_shot, after), region)
        idle = _most_changed_pixels(pending.idle_clip_shots, region)
        return moved > _IDLE_FACTOR * idle + _CANVAS_MIN_PIXELS

    def _typed_text_appeared(self, pending: _Pending, before: str, after: str) -> bool:
        """Whether the text last typed into this field now shows outside fields (it was not there before)."""
        typed = self._typed.get(pending.target.selector) if pending.target else None
        if not typed:
            return False
        return after.count(typed) > before.count(typed)

    def _record(self, pending: _Pending, result: ActionResult, observed_wall: float) -> None:
        video = self._recorder.video_time
        self.trace.append(StepRecord(
            step=pending.observation.step, observation_state=pending.observation.state,
            element_count=len(pending.observation.elements), screenshot=pending.observation.screenshot,
            action=pending.action, target=pending.target, result=result,
            observed_at_s=round(video(pending.observed_wall), 3),
            deliberation_s=round(pending.deliberation_s, 3),
            action_start_s=round(video(pending.start_wall), 3), action_end_s=round(video(observed_wall), 3),
            input_at_s=round(video(pending.input_wall), 3) if pending.input_wall is not None else None,
        ))

    async def _act(self, action: Action, observation: Observation, observed_wall: float,
                   deliberation: float) -> _Pending:
        target = None
        if action.element is not None and 0 <= action.element < len(observation.elements):
            target = observation.elements[action.element]
        pending = _Pending(action, target, observation, observed_wall, deliberation, time.time(), observation.state,
                           None, None)
        self._input.last_input_wall = None
        try:
            await self._perform(action, target, pending)
        except Exception as exc:  # noqa: BLE001 - an action that fails is an observation, not a crash
            pending.result = ActionResult(status=ResultStatus.FAILED, detail=f"{type(exc).__name__}: {exc}"[:300])
        if pending.result is not None and pending.result.effect is None:
            # decided before any measurement (could not act, typed text refused): classed all the same
            effect = Effect.ERROR if pending.result.errors else Effect.NOTHING
            pending.result = pending.result.model_copy(update={"effect": effect})
        pending.input_wall = self._input.last_input_wall
        if target is not None:
            self._exercised.update((target.selector, control_shape(target)))
        await self._settle(pending.start_wall)
        if pending.scroll is not None:
            pending.scrolled = await self._unscroll(pending.scroll)
        if pending.item_text is not None and pending.result is None and pending.pre_facts is not None:
            await self._await_removal(pending.item_text, pending.pre_facts.text.count(pending.item_text))
        if not self._page.url.startswith(self._origin):
            left_to = self._page.url
            await self._page.goto(self._app_url, wait_until="load", timeout=10_000)
            pending.result = ActionResult(status=ResultStatus.NAVIGATED_AWAY, dom_changed=True,
                                          effect=Effect.NAVIGATION,
                                          detail=f"the page navigated to {left_to[:200]}; evalgrid went back")
        return pending

    async def _settle(self, since: float) -> None:
        """Wait for the app's reaction to the action begun at ``since``, as the agent config's ``settle`` says."""
        window_s = self._config.action_pause_ms / 1000
        if self._config.settle == "fixed":
            await asyncio.sleep(window_s)
            await wait_for_render(self._page, timeout_s=_SETTLE_TIMEOUT_S)
        else:
            await settle_after_input(self._page, since=since, window_end=time.time() + window_s + _FIXED_POLLS_S,
                                     timeout_s=window_s + _FIXED_POLLS_S + _SETTLE_TIMEOUT_S, requests=self._requests)

    async def _await_removal(self, item_text: str, shown_before: int) -> None:
        """Give a deleted item's exit animation time to end: poll until its text shows less often, up to a second."""
        deadline = time.monotonic() + _REMOVAL_WAIT_S
        while time.monotonic() < deadline:
            if str(await evaluate(self._page, _VISIBLE_TEXT_JS)).count(item_text) < shown_before:
                return
            await asyncio.sleep(0.1)

    async def _reveal(self, target: ElementInfo) -> None:
        """Hover the row that shows a hover-revealed control, as a person's pointer would, until it shows."""
        await _scroll_into_view(self._page, target.reveal)
        box = await _box(self._page, target.reveal)
        if box is not None:
            await self._input.move_to(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        await self._page.locator(target.selector).first.wait_for(state="visible", timeout=_ACTION_TIMEOUT_MS)
        await settle_transitions(self._page)

    async def _perform(self, action: Action, target: ElementInfo | None, pending: _Pending) -> None:
        if action.kind in _ON_ELEMENT:
            if target is None:
                pending.result = ActionResult(status=ResultStatus.FAILED,
                                              detail=f"no element {action.element} in the observation")
                return
            await self._use_element(action, target, pending)
        elif action.kind is ActionKind.PRESS:
            await self._press(action, target, pending)
        else:
            await self._use_page(action, pending)

    async def _use_element(self, action: Action, target: ElementInfo, pending: _Pending) -> None:
        """Point at ``target`` as a hand would, note the page as it is, then give the input."""
        locator = self._page.locator(target.selector).first
        point = await self._point_at(action, target)
        if point is None:
            pending.result = ActionResult(status=ResultStatus.FAILED, detail="the element is no longer visible")
            return
        await self._note_before_input(action, target, pending)
        x, y = point
        sweep = _sweep(action)
        if target.tag == "canvas" or sweep is not None:
            far = x + (action.amount or 0.0) if action.kind in (ActionKind.DRAG, ActionKind.HOVER) else x
            pending.reach = (x, y, far, y + (sweep or 0.0) / 2)
        if action.kind is ActionKind.CLICK:
            await self._input.click()
        elif action.kind is ActionKind.DBLCLICK:
            await self._input.dblclick()
        elif action.kind is ActionKind.TYPE:
            await self._type(action, target, pending)
        elif action.kind is ActionKind.SELECT:
            await self._input.click()
            await locator.select_option(action.text or "", timeout=_ACTION_TIMEOUT_MS)
        elif action.kind is ActionKind.DRAG:
            await self._drag(action, pending, x, y)
        elif sweep is not None:
            # across and back at a slant, as a hand moves the mouse over a surface (no button held)
            self._input.last_input_wall = time.time()
            await self._input.move_to(x + sweep, y)
            await self._input.move_to(x + sweep / 2, y + sweep / 2)

    async def _point_at(self, action: Action, target: ElementInfo) -> tuple[float, float] | None:
        """Move the pointer onto the element (on a range slider, to where ``amount`` says); where it went, or None
        when the element is not visible."""
        if target.reveal:
            await self._reveal(target)
        await _scroll_into_view(self._page, target.selector)
        box = await _box(self._page, target.selector)
        if box is None:
            return None
        dx, dy = self._input.jitter(box["width"], box["height"])
        x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
        if action.kind is ActionKind.CLICK and target.type == "range" and action.amount is not None:
            x, dy = box["x"] + box["width"] * min(max(action.amount, 0.0), 1.0), 0.0
        elif action.kind is ActionKind.CLICK and target.type == "range":
            dx = 0.0
        await self._input.move_to(x + dx, y + dy)
        return x + dx, y + dy

    async def _note_before_input(self, action: Action, target: ElementInfo, pending: _Pending) -> None:
        """The page just before the input, which its effect is measured against (for a canvas, after an interval
        with no input; for a delete, with the text of its item)."""
        page = self._page
        if action.kind is ActionKind.CLICK:
            # The click would move focus away from the last field, and the vanishing focus ring
            # would count as the control's effect; a person's click elsewhere blurs it too.
            await evaluate(page, "(selector) => { const e = document.querySelector(selector);"
                                 " const a = document.activeElement;"
                                 " if (a && a !== e && a !== document.body) a.blur(); }", target.selector)
        await settle_transitions(page)
        await self._note_state(pending)
        if target.tag == "canvas" or _sweep(action) is not None:
            await self._idle_control(pending, clip=await _box(page, target.selector))
        if action.kind is ActionKind.CLICK and target.intent == "delete" and target.item:
            pending.item_text = await evaluate(page, _ITEM_TEXT_JS, [target.item, target.selector]) or None
        if action.kind is ActionKind.DRAG and target.drop and action.to_element is None:
            text, list_text = await evaluate(page, _DRAG_TEXTS_JS, [target.selector, target.drop])
            pending.drag = (str(text), str(list_text)) if text else None
        pending.start_wall = time.time()

    async def _note_state(self, pending: _Pending) -> None:
        pending.pre_state = await state_signature(self._page)
        pending.pre_shot = await self._page.screenshot(**_SHOT)
        pending.pre_facts = await effect_facts(self._page, _own(pending))

    async def _type(self, action: Action, target: ElementInfo, pending: _Pending) -> None:
        """Type over the field's text; a field that does not take the text rejects the input."""
        await self._input.click()
        await self._page.keyboard.press("ControlOrMeta+a")
        text = action.text or ""
        await self._input.type(text)
        self._typed[target.selector] = text
        value = str(await evaluate(self._page, _FIELD_VALUE_JS, target.selector))
        if text and text not in value and not _number_equal(text, value):
            pending.result = ActionResult(
                status=ResultStatus.INPUT_REJECTED,
                detail=f"typed {text!r} but the field holds {value[:80]!r}",
                errors=[f"{e.kind}: {e.text}" for e in self._log.since(
                    pending.start_wall, ConsoleClass.UNCAUGHT, ConsoleClass.ERROR)],
            )

    async def _use_page(self, action: Action, pending: _Pending) -> None:
        """An action on the page as a whole: scroll, wait, back, refresh or resize."""
        page = self._page
        await self._note_state(pending)
        pending.start_wall = time.time()
        if action.kind is ActionKind.SCROLL:
            await page.mouse.wheel(0, action.amount if action.amount is not None else 600)
        elif action.kind is ActionKind.WAIT:
            await asyncio.sleep(min(max(action.amount or 1.0, 0.0), 5.0))
        elif action.kind is ActionKind.BACK:
            await page.go_back(timeout=_ACTION_TIMEOUT_MS)
        elif action.kind is ActionKind.REFRESH:
            if self._refreshes >= _MAX_REFRESHES:
                pending.result = ActionResult(status=ResultStatus.FAILED,
                                              detail=f"the page was already refreshed {_MAX_REFRESHES} times")
                return
            self._refreshes += 1
            await page.reload(wait_until="load", timeout=10_000)
        elif action.kind is ActionKind.VIEWPORT:
            wanted = (action.text or "").strip().lower()
            if wanted not in _VIEWPORTS:
                pending.result = ActionResult(status=ResultStatus.FAILED,
                                              detail=f"viewport must be 'mobile' or 'desktop', not {wanted!r}")
                return
            self._viewport = wanted
            await page.set_viewport_size(_VIEWPORTS[wanted])  # type: ignore[arg-type]

    async def _press(self, action: Action, target: ElementInfo | None, pending: _Pending) -> None:
        """Press a key in a field (``target``) or on the page itself, whose idle change is measured first."""
        page = self._page
        if target is not None:
            await page.locator(target.selector).first.focus(timeout=_ACTION_TIMEOUT_MS)
        else:
            # keys meant for the page (a game's arrows) go to the body, not to the control clicked last
            await evaluate(page, "() => { const a = document.activeElement; if (a && a !== document.body) a.blur(); }")
        await self._note_state(pending)
        if target is None:
            await self._idle_control(pending)
            pending.scroll = await _scroll_position(page)
        pending.start_wall = time.time()
        self._input.last_input_wall = time.time()
        await page.keyboard.press(action.text or "Enter")

    async def _unscroll(self, scroll: tuple[float, float]) -> bool:
        """Put the page back where it was scrolled before a key pressed on it.

        Space and the arrow keys scroll a page that listens for nothing: the browser's default action, not the
        app's response. Measured in the same scroll position, a key is judged by what the app did; a game that
        answers the key (and cancels the scroll) is unaffected.
        """
        if await _resting_scroll_position(self._page) == scroll:
            return False
        for _ in range(_UNSCROLL_TRIES):
            await evaluate(self._page, "([x, y]) => window.scrollTo({left: x, top: y, behavior: 'instant'})",
                           list(scroll))
            await wait_for_render(self._page, timeout_s=_SETTLE_TIMEOUT_S)
            if await _resting_scroll_position(self._page) == scroll:
                break
        return True

    async def _idle_control(self, pending: _Pending, *, clip: Any = None) -> None:
        """The control for input judged by pixels (keys on the page, a canvas): the same interval with no input.

        What the page did by itself (a game loop, an animation) is not the input's. With ``clip`` (a canvas's
        box) the pixels compared are the canvas's own. The interval is sampled (``_IDLE_SAMPLES``) and its change
        is the most that changed between any two samples.
        """
        page = self._page
        before_markup = pending.pre_facts.markup if pending.pre_facts is not None else None
        first = await page.screenshot(clip=clip, **_SHOT) if clip else pending.pre_shot
        shots: list[bytes] = [first] if first is not None else []
        idle_started = time.time()
        pause = self._config.action_pause_ms / 1000 + 0.25
        for _ in range(_IDLE_SAMPLES - 1):
            await asyncio.sleep(pause / (_IDLE_SAMPLES - 1))
            shots.append(await page.screenshot(clip=clip, **_SHOT) if clip else await page.screenshot(**_SHOT))
        idle_shot = shots[-1]
        idle_facts = await effect_facts(page)
        pending.idle_seconds = time.time() - idle_started
        pending.idle_fraction = _most_changed_pixels(shots) / max(_pixel_count(idle_shot), 1)
        pending.idle_markup = idle_facts.markup != before_markup
        pending.pre_state, pending.pre_facts = await state_signature(page), idle_facts
        if clip:
            pending.clip, pending.clip_shot, pending.idle_clip_shots = clip, idle_shot, tuple(shots)
            pending.pre_shot = await page.screenshot(**_SHOT)
        else:
            pending.pre_shot = idle_shot

    async def _drag(self, action: Action, pending: _Pending, x: float, y: float) -> None:
        """Press on the element, move like a hand to the drop target (or ``amount`` px right), release."""
        if action.to_element is not None:
            elements = pending.observation.elements
            if not 0 <= action.to_element < len(elements):
                pending.result = ActionResult(status=ResultStatus.FAILED,
                                              detail=f"no element {action.to_element} to drop on")
                return
            box = await _box(self._page, elements[action.to_element].selector)
            if box is None:
                pending.result = ActionResult(status=ResultStatus.FAILED, detail="the drop target is not visible")
                return
            to_x, to_y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
        elif pending.target is not None and pending.target.drop:
            place = await self._drop_place(pending.target)
            if place is None:
                pending.result = ActionResult(status=ResultStatus.FAILED, detail="the list to drop on is not visible")
                return
            to_x, to_y = place
        else:
            length = action.amount if action.amount is not None else 100.0
            if pending.target is not None and pending.target.intent == "slider":
                # along the track, towards its roomier end: a thumb at the far end cannot follow a drag past it
                track = await evaluate(self._page, _TRACK_ROOM_JS, pending.target.selector)
                if track is not None:
                    middle, left, right = track
                    length = -abs(length) if left > right else abs(length)
                    pending.slide = (middle, length)
            to_x, to_y = x + length, y
        await self._page.mouse.down()
        self._input.last_input_wall = time.time()
        # A person's drag starts with a small move and ends with a short hover over the place: drag libraries
        # wait for a few pixels of movement before they pick an item up, and place it on the last moves.
        await self._input.move_to(x + 6, y + 6)
        await asyncio.sleep(0.05)
        await self._input.move_to(to_x, to_y)
        await self._input.move_to(to_x + 3, to_y + 3)
        await asyncio.sleep(0.1)
        await self._page.mouse.up()

    async def _drop_place(self, target: ElementInfo) -> tuple[float, float] | None:
        """Where an item is dropped, in the viewport: the middle of another list, or the far end of its own
        (the top for an item in the lower half, where a drop at the bottom could leave it in place)."""
        box = await _box(self._page, target.drop)
        item = await _box(self._page, target.selector)
        if box is None or item is None:
            return None
        size = self._page.viewport_size or _VIEWPORTS["desktop"]
        y = box["y"] + box["height"] / 2
        if target.drop_within:
            lower = item["y"] + item["height"] / 2 > y
            y = box["y"] + 4 if lower else box["y"] + box["height"] - 4
        return box["x"] + box["width"] / 2, min(max(y, 6.0), size["height"] - 6.0)

    def fallback_summary(self, error: str) -> AgentSummary:
        """Summary of a run the page cut short (crash, hang): what was done before it broke."""
        summary = self._summarise()
        summary.observations.insert(0, f"the interaction was cut short: {error}")
        return summary

    def _summarise(self) -> AgentSummary:
        actions = [f"Opened {self._app_url}"]
        observations = []
        for s in self.trace:
            what = s.control
            target = f" {what!r}" if what else ""
            typed = f" with {s.action.text!r}" if s.action.text else ""
            actions.append(f"step {s.step}: {s.action.kind.value}{target}{typed}")
            if s.result.status is not ResultStatus.CHANGED:
                observations.append(f"step {s.step}: {s.action.kind.value} on {what!r} → {s.result.status.value}"
                                    + (f" ({s.result.detail})" if s.result.detail else ""))
            for err in s.result.errors[:3]:
                observations.append(f"step {s.step}: error while acting: {err[:200]}")
        changed = sum(1 for s in self.trace if s.result.status is ResultStatus.CHANGED)
        overall = (f"{len(self.trace)} actions, {changed} with a visible effect; "
                   f"{self._exercised_count()} of {len(self._salient)} salient controls exercised.")
        return AgentSummary(actions_performed=actions, observations=observations or ["no problem observed"],
                            overall_observation=overall)


def _sweep(action: Action) -> float | None:
    """The length (px) of a hover that sweeps across its element (``amount``), None for one that rests on it."""
    return action.amount if action.kind is ActionKind.HOVER and action.amount else None


async def _resting_scroll_position(page: Page) -> tuple[float, float]:
    """The page's scroll position once it stops moving (a scroll still under way is read where it ends)."""
    position = await _scroll_position(page)
    deadline = time.monotonic() + _SCROLL_REST_TIMEOUT_S
    while time.monotonic() < deadline:
        await asyncio.sleep(_SCROLL_REST_POLL_S)
        now = await _scroll_position(page)
        if now == position:
            break
        position = now
    return position


async def _scroll_position(page: Page) -> tuple[float, float]:
    x, y = await evaluate(page, "() => [Math.round(window.scrollX), Math.round(window.scrollY)]")
    return float(x), float(y)


def _most_changed_pixels(shots: Sequence[bytes], region: tuple[int, int, int, int] | None = None) -> int:
    """The most pixels that differ clearly between any two of ``shots`` (the same size), inside ``region``."""
    grey = [g for g in (cv2.imdecode(np.frombuffer(s, np.uint8), cv2.IMREAD_GRAYSCALE) for s in shots) if g is not None]
    frames = [g.astype(np.int16) for g in grey if g.shape == grey[0].shape]
    if region is not None:
        x0, y0, x1, y1 = region
        frames = [f[y0:y1, x0:x1] for f in frames]
    return max((int((np.abs(a - b) > _PIXEL_DELTA).sum()) for i, a in enumerate(frames) for b in frames[i + 1:]),
               default=0)


def _pixel_count(shot: bytes) -> int:
    image = cv2.imdecode(np.frombuffer(shot, np.uint8), cv2.IMREAD_GRAYSCALE)
    return 0 if image is None else int(image.size)


def _submits_field(pending: _Pending) -> bool:
    target = pending.target
    return (pending.action.kind is ActionKind.PRESS and (pending.action.text or "Enter") == "Enter"
            and target is not None and target.tag == "input" and target.type in _SINGLE_LINE)


def _number_equal(typed: str, value: str) -> bool:
    try:
        return float(typed) == float(value)
    except ValueError:
        return False
