"""The heuristic judge: functional and aesthetic scores from measured evidence only.

Its deduction table is the package data file ``rubrics/heuristic-v8.yaml``: v7's, except that an app whose brief
asks for moving the pointer, and whose surface followed none of the explorer's sweeps, has its core flow dead.
v7 says a drag that moved nothing on a page where another drag moved its item is minor, and a drag app with
nothing to drag is its core flow dead. v6 says a small first screen whose core a stateful probe saw working is
not near-empty; v5 has severity by role (the app's core interaction never working is critical, whatever else
responds), and v4's table, which charges keys only on keyboard apps and has no "share of dead controls" rule;
v3 has v2's deductions, and in place of v2's bonuses the design qualities measured by ``evaluator.evidence.design``
(``v3``, ``v2``, and ``v1`` without the rows for Enter submission and key presses, stay for rejudging old
verdicts). Every deduction becomes a failure attribution citing the evidence (file, step, video time), and
every quality a criterion citing its measured value. Every verdict is labelled heuristic, so no one mistakes
it for a model's judgement.
"""

from __future__ import annotations

import functools
import re
from collections import defaultdict
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict

from evaluator.agents.observation import (
    KEY_PROBE_REASON,
    ActionKind,
    ActionResult,
    Effect,
    ElementInfo,
    InteractionResult,
    ResultStatus,
    StepRecord,
)
from evaluator.brief import asks_for_keys
from evaluator.errors import ConfigError, RegistryError
from evaluator.evidence.bundle import BundleFile, EvidenceBundle
from evaluator.evidence.console import ConsoleClass, ConsoleEntry
from evaluator.evidence.design import Quality, measure_qualities
from evaluator.evidence.facts import BrowserDefaults, ImageProbe, PageFacts, StaticFacts
from evaluator.evidence.language import language_matches
from evaluator.judges import judges
from evaluator.keys import sha256_bytes
from evaluator.llm.client import ModelAccess
from evaluator.models import (
    CriterionReason,
    Dimension,
    EvidenceRef,
    FailureAttribution,
    JudgeInfo,
    Kind,
    Query,
    Severity,
    Verdict,
)
from evaluator.package_data import YamlDocument, package_text, yaml_document

_NEAR_EMPTY_ELEMENTS = 12
_NEAR_EMPTY_TEXT = 20
_CORE_MIN_CONTROLS = 3
_JUDGED_KINDS = frozenset({ActionKind.CLICK, ActionKind.DBLCLICK, ActionKind.DRAG, ActionKind.SELECT, ActionKind.TYPE})
"""Actions on a control whose effect is judged per control (presses are judged by _submissions and _keys)."""
_PHONE_WIDTH = 390
_CLICKS = frozenset({ActionKind.CLICK, ActionKind.DBLCLICK})
# the native controls, and a canvas: a surface, judged as the page's surface, never as a mere listener
_CONTROL_TAGS = frozenset({"button", "input", "select", "textarea", "summary", "option", "canvas"})
_WIDGET_ROLES = frozenset({"button", "link", "tab", "checkbox", "radio", "menuitem", "menuitemcheckbox",
                           "menuitemradio", "option", "switch", "slider", "spinbutton", "combobox", "textbox",
                           "treeitem", "gridcell", "searchbox"})
# what the explorer found a widget to be from its shape (a thumb on a track, a pointer surface) or its name (a
# delete control); a "choice" is found from a group's classes alone, which a decorative group has too
_WIDGET_INTENTS = frozenset({"slider", "surface", "delete"})
_DESKTOP = (1280, 800)
"""Static Perception's desktop viewport (facts from before the design facts do not record it)."""
_CORE_INEFFECTIVE_SHARE = 0.5
# A brief that asks for dragging: boards, sortable lists, sliders' thumbs, drawing ("drop" alone is left out: a
# dropdown is no drag, and a drag-and-drop brief says "drag").
_DRAG_IN_BRIEF = re.compile(r"\b(drag\w*|sortable|reorder\w*|re-order\w*|rearrang\w*)\b", re.I)
# A brief whose core flow is moving the pointer itself (a heatmap, a trail that follows the mouse), not pressing.
_POINTER_IN_BRIEF = re.compile(r"\b(mov(e|es|ing)|sweep\w*|wav(e|es|ing)|run(s|ning)?) (the |your |a )?"
                               r"(mouse|pointer|cursor)\b|\bmouse ?move(s|ment)?\b|\bfollow(s|ing)? the "
                               r"(mouse|pointer|cursor)\b", re.I)
_KEYS_BY_TEXT = "text"
"""The explorer's reason for pressing keys when the page's text asks for them (``Observation.keyboard``)."""


@functools.cache
def _rubric_text(version: str) -> str:
    try:
        return package_text("rubrics", f"{version}.yaml")
    except ConfigError:
        raise RegistryError(f"no heuristic rubric {version!r}; rubrics live in evaluator/rubrics/") from None


DEFAULT_RUBRIC = "heuristic-v9"
"""The rubric a judge built without one uses."""


def load_rubric(version: str = DEFAULT_RUBRIC) -> YamlDocument:
    """The deduction table ``rubrics/<version>.yaml``."""
    return yaml_document(_rubric_text(version), f"rubrics/{version}.yaml")


@dataclass
class _Ledger:
    """Deductions of one dimension, applied with the rubric's per-category caps."""

    dimension: Dimension
    table: dict[str, YamlDocument]
    attributions: list[FailureAttribution] = field(default_factory=list)
    taken: dict[str, float] = field(default_factory=lambda: defaultdict(float))

    def deduct(self, category: str, description: str, evidence: list[EvidenceRef], *, times: float = 1.0) -> None:
        row = self.table.get(category)
        if row is None:  # an older rubric without this row (rejudging with heuristic-v1)
            return
        amount = min(row["deduction"] * times, row["cap"] - self.taken[category])
        if amount <= 0:
            return
        self.taken[category] += amount
        self.attributions.append(FailureAttribution(
            category=category, dimension=self.dimension, severity=Severity(row["severity"]),
            deduction=round(amount, 2), description=description, evidence=evidence,
        ))

    @property
    def total(self) -> float:
        return sum(self.taken.values())


class HeuristicJudge:
    """The embedded default judge: measured signals, documented deductions, no model."""

    def __init__(self, *, rubric: str = DEFAULT_RUBRIC) -> None:
        self._table = load_rubric(rubric)
        self._version = f"{rubric}@{sha256_bytes(_rubric_text(rubric).encode())[:12]}"

    @property
    def version(self) -> str:
        """Rubric name and a hash of its text: editing the table re-keys every verdict."""
        return self._version

    async def __call__(self, bundle: EvidenceBundle, *, verdict_key: str, models: ModelAccess | None = None
                       ) -> Verdict:
        """Score ``bundle`` from its measurements (no model is called)."""
        return _score(bundle, self._table, verdict_key, self._version)


class HeuristicOptions(BaseModel):
    """Options of the heuristic judge."""

    model_config = ConfigDict(extra="forbid")
    rubric: str = DEFAULT_RUBRIC
    """The deduction table, a file under ``evaluator/rubrics/`` (``heuristic-v1`` .. ``heuristic-v8``)."""


judges.register("heuristic", options=HeuristicOptions)(HeuristicJudge)


def _score(bundle: EvidenceBundle, rubric: YamlDocument, verdict_key: str, version: str) -> Verdict:
    if bundle.has(BundleFile.STATIC_FAILURE):
        return _never_perceived(bundle, rubric, verdict_key, version)
    query = bundle.query()
    desktop, mobile = bundle.static_facts("desktop"), bundle.static_facts("mobile")
    trace = bundle.trace()
    result = bundle.interaction()
    console = bundle.console()
    func = _Ledger(Dimension.FUNCTIONAL, rubric["functional"]["categories"])
    aes = _Ledger(Dimension.AESTHETIC, rubric["aesthetic"]["categories"])
    criteria: list[CriterionReason] = []
    shot = EvidenceRef(file=BundleFile.screenshot("desktop"))

    facts, image = desktop.facts, desktop.image
    blank = _blank(rubric, desktop)
    if blank:
        func.deduct("render_failure", "the page rendered blank (nothing but background on the desktop screenshot)",
                    [shot, EvidenceRef(file=BundleFile.page_facts("desktop"),
                                       detail=f"image probe {image.model_dump()}")])
    elif _near_empty(rubric, desktop) and not _small_but_working(rubric, trace):
        func.deduct("near_empty_render", f"only {facts.element_count} elements and {facts.text_length} "
                    "characters of text rendered", [shot])
    _errors(func, console, result)
    _controls(func, query, trace, result)
    explored = bundle.manifest.agent.policy == "explorer"
    _core_flow(func, rubric, query, trace, facts, explored=explored)
    _submissions(func, trace)
    probed = explored and not _canvas_page(rubric, facts)
    _keys(func, query, trace, probed=probed)
    _language(func, query, facts)

    aesthetic_base, baseline_reason = _aesthetic_baseline(rubric, facts, blank)
    if not blank:
        _layout(aes, facts, mobile.facts)
    if "qualities" in rubric["aesthetic"]:
        bonus, bonus_reason, qualities = _qualities(rubric, bundle, facts, aesthetic_base)
        criteria += qualities
    else:  # v1 and v2: the crude bonuses they were issued with
        bonus, bonus_reason = _bonuses(rubric, image, aes, aesthetic_base)
    functional = max(0.0, rubric["functional"]["baseline"] - func.total)
    designed = aesthetic_base >= rubric["aesthetic"]["baselines"]["styled"]
    aesthetic = _aesthetic(rubric, aes, aesthetic_base + bonus, designed)
    criteria = [
        CriterionReason(criterion="baseline", dimension=Dimension.AESTHETIC, reason=baseline_reason),
        CriterionReason(criterion="bonuses", dimension=Dimension.AESTHETIC, reason=bonus_reason),
    ] + criteria
    label = rubric["label"]
    return Verdict(
        verdict_key=verdict_key, evidence_key=bundle.manifest.evidence_key,
        judge=JudgeInfo(name="heuristic", kind="heuristic", rubric_version=version),
        functional=round(functional, 2), aesthetic=round(aesthetic, 2),
        functional_reason=_reason(rubric["functional"]["baseline"], func, functional),
        aesthetic_reason=f"{baseline_reason} {bonus_reason} " + _reason(aesthetic_base + bonus, aes, aesthetic),
        criteria=criteria, attributions=func.attributions + aes.attributions, label=label,
    )


def _blank(rubric: YamlDocument, desktop: StaticFacts) -> bool:
    """Nothing but background on the desktop screenshot, or no page at all.

    v5: the image probe calls a screen blank when 99.9 % of it is background, which a few short words do not
    fill; a page whose text is that short (a drawing app's tool links over an empty canvas) is near-empty. More
    text than that on a screen the probe found blank is text no one sees: blank.
    """
    facts = desktop.facts
    if desktop.timings.navigation_error is not None and facts.text_length == 0:
        return True
    few_words = (rubric["functional"].get("render", {}).get("few_words_not_blank")
                 and 0 < facts.text_length < _NEAR_EMPTY_TEXT)
    return desktop.image.blank and not few_words


def _near_empty(rubric: YamlDocument, desktop: StaticFacts) -> bool:
    """A handful of elements and no text (v5: also a blank screenshot with a few words, see :func:`_blank`;
    a canvas covering a large share of the first screen is content, whatever the markup around it)."""
    facts = desktop.facts
    render = rubric["functional"].get("render", {})
    if _canvas_page(rubric, facts):
        return False
    if render.get("few_words_not_blank") and desktop.image.blank:
        return True
    return facts.element_count < _NEAR_EMPTY_ELEMENTS and facts.text_length < _NEAR_EMPTY_TEXT


def _small_but_working(rubric: YamlDocument, trace: list[StepRecord]) -> bool:
    """A stateful probe's expected effect happened (v6: an item dragged moved, a thumb followed, a delete removed
    its item, a tick showed), or (v9) a canvas took a drawing: the page rendered a working app, however little of
    it there is (a drawing app's canvas left at the browser's default size)."""
    render = rubric["functional"].get("render", {})
    if not render.get("small_but_working"):
        return False
    drawn = bool(render.get("drawn_canvas_works")) and any(
        s.action.kind is ActionKind.DRAG and s.target is not None and s.target.tag == "canvas"
        and _dragged(s.result, s.target) for s in trace)
    return drawn or any(s.result.expectation_met is True for s in trace)


def _canvas_page(rubric: YamlDocument, facts: PageFacts) -> bool:
    """A canvas covers the rubric's share of the first screen (v5): it is content, and it may take keys itself."""
    share = rubric["functional"].get("render", {}).get("canvas_content_share")
    return share is not None and facts.canvas_share >= share


def _never_perceived(bundle: EvidenceBundle, rubric: YamlDocument, verdict_key: str, version: str) -> Verdict:
    """The app crashed or wedged its tab during Static Perception: nothing rendered that could be scored."""
    failure = bundle.json(BundleFile.STATIC_FAILURE)
    func = _Ledger(Dimension.FUNCTIONAL, rubric["functional"]["categories"])
    func.deduct("render_failure", f"the page failed during Static Perception ({failure['phase']}): "
                f"{failure['error'][:200]}",
                [EvidenceRef(file=BundleFile.STATIC_FAILURE, detail=failure["error"][:200])])
    base = rubric["aesthetic"]["baselines"]["blank"]
    reason = f"Baseline {base}: nothing could be seen; the page failed before its first screenshot."
    return Verdict(
        verdict_key=verdict_key, evidence_key=bundle.manifest.evidence_key,
        judge=JudgeInfo(name="heuristic", kind="heuristic", rubric_version=version),
        functional=max(0.0, rubric["functional"]["baseline"] - func.total), aesthetic=base,
        functional_reason=_reason(rubric["functional"]["baseline"], func, 0.0), aesthetic_reason=reason,
        criteria=[CriterionReason(criterion="baseline", dimension=Dimension.AESTHETIC, reason=reason)],
        attributions=func.attributions, label=rubric["label"],
    )


def _errors(func: _Ledger, console: list[ConsoleEntry], result: InteractionResult) -> None:
    at_load = [e for e in console if e.phase in ("load", "mobile") and e.klass is ConsoleClass.UNCAUGHT]
    if at_load:
        first = at_load[0]
        func.deduct("uncaught_error_at_load", f"uncaught error while loading: {first.text[:160]}",
                    [EvidenceRef(file=BundleFile.CONSOLE, detail=first.text[:200])])
    other = [e for e in console if e.klass is ConsoleClass.ERROR]
    # Errors past the log's error budget were not kept, but they happened: a flood hides none of them.
    dropped = result.console_errors_dropped
    if other or dropped:
        example = f", e.g. {other[0].text[:120]}" if other else ""
        unkept = f" ({dropped} more not kept: the page spent the log's error budget)" if dropped else ""
        ref = (EvidenceRef(file=BundleFile.CONSOLE, detail=other[0].text[:200], video_time_s=other[0].video_time_s)
               if other else EvidenceRef(file=BundleFile.RESULT, detail=f"console_errors_dropped: {dropped}"))
        func.deduct("console_error", f"{len(other) + dropped} console errors{example}{unkept}", [ref],
                    times=min(len(other) + dropped, 2))
    if result.error:
        func.deduct("interaction_aborted", f"the interaction was cut short: {result.error[:160]}",
                    [EvidenceRef(file=BundleFile.RESULT, detail=result.error[:200])])


def _controls(func: _Ledger, query: Query, trace: list[StepRecord], result: InteractionResult) -> None:
    # The explorer watches a page that offers nothing to act on (collector-11): one that changed by itself then is
    # a display doing its job (a clock, a slideshow), which a rubric with ``live_display_works`` does not charge.
    watched = [s for s in trace if s.action.kind is ActionKind.WAIT]
    live = bool(func.table.get("no_controls", {}).get("live_display_works")) and any(
        s.result.status is ResultStatus.CHANGED for s in watched)
    salient = result.coverage.salient if result.coverage is not None else 0
    if (query.kind is Kind.INTERACTIVE_APPLICATION and len(watched) == len(trace) and not result.error
            and salient == 0 and not live):
        func.deduct("no_controls", "the brief asks for an interactive application but the page offers no control"
                    + (" and did not change by itself while watched" if watched else ""),
                    [EvidenceRef(file=BundleFile.screenshot("desktop")), EvidenceRef(file=BundleFile.RESULT)]
                    + _refs(watched))
    # A control repeated on every item (each row's delete button) is one control: trace format 3 gives it a
    # shape shared by its copies; older traces have only the selector.
    by_control: dict[str, list[StepRecord]] = defaultdict(list)
    for step in trace:
        if step.target is not None and step.action.kind in _JUDGED_KINDS:
            by_control[step.target.shape or step.target.selector].append(step)
    # v7: a drag that moved nothing, where another drag moved its item, dropped where the app takes nothing
    beside_a_move = bool((func.table.get("dead_control") or {}).get("drags_beside_a_move")) and any(
        s.action.kind is ActionKind.DRAG and s.result.expectation_met is True for s in trace)
    # v9: an element clicked only because a script listens on it promises nothing; its silence is a row of its own
    listeners_apart = "silent_listener" in func.table
    ineffective = 0
    for steps in by_control.values():
        # A probe whose expected effect did not happen (the deleted item still there) did nothing that counts,
        # whatever else it changed.
        statuses = [ResultStatus.NO_CHANGE if s.result.expectation_met is False else s.result.status for s in steps]
        last = steps[-1]
        refs = _refs(steps)
        ineffective += all(status is not ResultStatus.CHANGED for status in statuses)
        errors = [e for s in steps for e in s.result.errors if e.startswith("pageerror")]
        if errors:
            func.deduct("error_on_action", f"{_what(last)} raised {errors[0][:160]}", refs)
        elif ResultStatus.INPUT_REJECTED in statuses:
            func.deduct("input_rejected", f"{_what(last)}: {last.result.detail}", refs)
        elif all(status is ResultStatus.NO_CHANGE for status in statuses):
            distinct_states = len({s.observation_state for s in steps})
            # A failed probe is a control whose expected effect was checked and did not happen: dead at once.
            probe_failed = any(s.result.expectation_met is False for s in steps)
            drop_place = beside_a_move and last.action.kind is ActionKind.DRAG
            listener = (listeners_apart and last.action.kind in _CLICKS and last.target is not None
                        and not _is_control(last.target))
            dead = (distinct_states >= 2 or probe_failed) and not drop_place
            category = "silent_listener" if listener else "dead_control" if dead else "unresponsive_control"
            detail = last.result.detail
            said = f": {detail}" if probe_failed and detail else " changed nothing"
            func.deduct(category, f"{_what(last)}{said} ({len(steps)} tries)", refs)
    refs = [EvidenceRef(file=BundleFile.TRACE), EvidenceRef(file=BundleFile.VIDEO, video_time_s=0.0)]
    # v3 and older: a share of dead controls (row absent from v4, where the deduction is skipped)
    if len(by_control) >= _CORE_MIN_CONTROLS and ineffective / len(by_control) >= _CORE_INEFFECTIVE_SHARE:
        func.deduct("core_interaction_failure",
                    f"{ineffective} of {len(by_control)} exercised controls had no effect: the app does not work", refs)
    # v4: nothing responded at all, whatever the core flow is (row absent from v3 and older)
    if len(by_control) >= 2 and ineffective == len(by_control):
        func.deduct("app_unresponsive", f"none of the {len(by_control)} controls used changed anything", refs)


def _is_control(target: ElementInfo) -> bool:
    """A native control (a button, a field, a select, a link to somewhere) or an ARIA widget: something that
    tells its user it does something. A link to "#" or to a script is a listener in a link's clothes."""
    if target.tag in _CONTROL_TAGS or target.role in _WIDGET_ROLES or target.intent in _WIDGET_INTENTS:
        return True
    href = target.href.strip().lower()
    return target.tag == "a" and bool(href) and href != "#" and not href.startswith("javascript:")


def _core_flow(func: _Ledger, rubric: YamlDocument, query: Query, trace: list[StepRecord],
               facts: PageFacts, *, explored: bool) -> None:
    """The app's core interaction never worked (v5's ``core`` section; absent from older rubrics).

    Its core is read from the evidence: the page's main surface (a control covering a large share of the first
    screen: a canvas, a board), and dragging when the brief asks for it. Either is charged only when every use
    of it failed: a single miss among successes is the explorer's aim, not the app. From v7, a drag app on which
    the explorer (``explored``: it drags whatever a page lets it) acted and found nothing to drag is charged too.
    """
    spec = rubric["functional"].get("core")
    if spec is None:
        return
    width, height = facts.design.viewport if facts.design is not None else _DESKTOP
    screen = max(width * height, 1)
    uses: dict[str, list[tuple[StepRecord, ElementInfo]]] = defaultdict(list)
    for step in trace:
        target = step.target
        if (target is not None and step.action.kind in _JUDGED_KINDS
                and target.width * target.height >= spec["surface_share"] * screen):
            uses[target.selector].append((step, target))
    for used in uses.values():
        steps = [step for step, _ in used]
        if len(steps) >= spec["min_uses"] and not any(s.result.status is ResultStatus.CHANGED for s in steps):
            target = used[-1][1]
            func.deduct("core_flow_dead", f"the page's main surface ({_what(steps[-1]).split(' on ', 1)[1]}, "
                        f"{round(target.width)}x{round(target.height)} px) never responded in {len(steps)} "
                        "uses", _refs(steps))
            return
    # v8: a brief that asks for moving the pointer, over a surface that listens for it, which followed none of the
    # explorer's sweeps (the pointer moved with no button held)
    sweeps = [s for s in trace if s.action.kind is ActionKind.HOVER and s.action.amount and s.target is not None
              and s.target.intent == "surface"]
    if ((func.table.get("core_flow_dead") or {}).get("sweeps") and sweeps and _POINTER_IN_BRIEF.search(query.brief)
            and not any(s.result.status is ResultStatus.CHANGED for s in sweeps)):
        func.deduct("core_flow_dead", f"the brief asks for moving the pointer, and the surface "
                    f"({_what(sweeps[-1]).split(' on ', 1)[-1]}) did not follow it in {len(sweeps)} sweeps",
                    _refs(sweeps))
        return
    drags = [(s, s.target) for s in trace if s.action.kind is ActionKind.DRAG and s.target is not None
             and s.target.selector not in uses]
    if not _DRAG_IN_BRIEF.search(query.brief):
        return
    if len(drags) >= spec["min_uses"] and not any(_dragged(s.result, target) for s, target in drags):
        func.deduct("core_flow_dead", f"the brief asks for dragging, and none of {len(drags)} drags moved its item",
                    _refs([s for s, _ in drags[:3]]))
    elif ((func.table.get("core_flow_dead") or {}).get("unheard") and explored and trace
          and not any(_drag_like(s) for s in trace)):
        func.deduct("core_flow_dead", "the brief asks for dragging, and the page offered nothing to drag (no item "
                    "to move, no surface taking the pointer)", [EvidenceRef(file=BundleFile.TRACE)] + _refs(trace[:3]))


def _drag_like(step: StepRecord) -> bool:
    """A drag, or a use of a slider: a native range input (the explorer sets it with a click on its track) or what
    the observation calls one (``intent``: a ``role=slider``, or a thumb on a track)."""
    target = step.target
    return step.action.kind is ActionKind.DRAG or (
        target is not None and (target.type == "range" or target.intent == "slider"))


def _dragged(result: ActionResult, target: ElementInfo) -> bool:
    """The drag did what a drag does: its item moved where the probe expected, or (no probe) the page's markup
    changed, or a canvas was drawn on. A drag that only changed pixels elsewhere selected text or lit a hover
    style: the browser's doing, not the app's."""
    if result.status is not ResultStatus.CHANGED or result.expectation_met is False:
        return False
    return bool(result.expectation_met or result.dom_changed or target.tag == "canvas")


def _refs(steps: list[StepRecord]) -> list[EvidenceRef]:
    """The steps as cited evidence: step, video time, screenshot and the control acted on (none for a page key)."""
    return [EvidenceRef(step=s.step, video_time_s=s.action_start_s, file=s.screenshot,
                        detail=s.target.selector if s.target is not None else None) for s in steps]


def _submissions(func: _Ledger, trace: list[StepRecord]) -> None:
    """Text typed into a field, then submitted with Enter, that changed nothing anywhere: the field is dead.

    A field whose typing already changed the page (a live filter, a calculator) is not charged when Enter
    then does nothing more; only a field that did nothing at all, typed into and submitted, is.
    """
    typed: dict[str, StepRecord] = {}
    for step in trace:
        target, kind = step.target, step.action.kind
        if target is None:
            continue
        if kind is ActionKind.TYPE:
            typed[target.selector] = step
        elif kind is ActionKind.PRESS and (step.action.text or "Enter") == "Enter":
            typing = typed.get(target.selector)
            live = typing is not None and typing.result.effect not in (None, Effect.VISUAL, Effect.NOTHING)
            rejected = typing is not None and typing.result.status is ResultStatus.INPUT_REJECTED  # charged already
            if step.result.status is ResultStatus.NO_CHANGE and not live and not rejected:
                refs = _refs([s for s in (typing, step) if s is not None])
                func.deduct("input_ignored", f"typed into {_what(step).split(' on ', 1)[1]} and pressed Enter: "
                            "nothing on the page changed", refs)


def _keys(func: _Ledger, query: Query, trace: list[StepRecord], *, probed: bool) -> None:
    """A page that listens for keys pressed on it, where no key press did anything (against an idle control).

    A rubric whose row says ``keyboard_apps_only`` charges it only on a keyboard app (:func:`_keyboard_app`);
    one that says ``unheard`` also charges a keyboard app on which the keys were ``probed`` (by the explorer,
    which presses keys wherever a page listens for them; not on a page with a large canvas, which may listen for
    keys itself) and none was pressed, the explorer having acted on the page.
    """
    presses = [s for s in trace if s.action.kind is ActionKind.PRESS and s.target is None
               and s.action.reason.startswith(KEY_PROBE_REASON)]
    row = func.table.get("keys_ignored") or {}
    widget_keys = bool(row.get("focused_keys_are_the_widgets"))
    if (row.get("unheard") and probed and trace and not presses
            and asks_for_keys(query.brief, widget_keys=widget_keys)):
        func.deduct("keys_ignored", "the brief asks for keys, and the page gave no sign of listening for any "
                    "(no key listener on it, no text asking for keys)", [EvidenceRef(file=BundleFile.TRACE)])
        return
    if row.get("keyboard_apps_only") and not _keyboard_app(query, trace, presses, widget_keys):
        return
    if len(presses) >= 3 and all(s.result.status is not ResultStatus.CHANGED for s in presses):
        keys = ", ".join(str(s.action.text) for s in presses)
        func.deduct("keys_ignored", f"the page listens for keys, but none of {len(presses)} presses ({keys}) "
                    "changed anything", _refs(presses[:3]))


def _keyboard_app(query: Query, trace: list[StepRecord], presses: list[StepRecord], widget_keys: bool) -> bool:
    """Whether keys drive the app: the brief asks for them, the page tells its user to use them (the explorer's
    reason ``text``), or the page offered nothing else to use."""
    if asks_for_keys(query.brief, widget_keys=widget_keys):
        return True
    if any(f"({_KEYS_BY_TEXT})" in s.action.reason for s in presses):
        return True
    return not any(s.target is not None and s.action.kind in _JUDGED_KINDS for s in trace)


def _language(func: _Ledger, query: Query, facts: PageFacts) -> None:
    if language_matches(facts.text_sample, query.language) is False:
        func.deduct("language_mismatch", f"the page text is not in the brief's language ({query.language})",
                    [EvidenceRef(file=BundleFile.page_facts("desktop"), detail=facts.text_sample[:120])])


def _aesthetic(rubric: YamlDocument, aes: _Ledger, start: float, designed: bool) -> float:
    """Start minus deductions; a designed page's are held at the rubric's floor (it never scores below the same
    content unstyled), except the rows that may go below it (text no one can read)."""
    spec = rubric["aesthetic"]
    below = sum(amount for category, amount in aes.taken.items() if aes.table[category].get("below_floor"))
    floor = spec["baselines"][spec["floor"]] if designed and "floor" in spec else 0.0
    return min(8.0, max(0.0, max(floor, start - (aes.total - below)) - below))


def _aesthetic_baseline(rubric: YamlDocument, facts: PageFacts, blank: bool) -> tuple[float, str]:
    baselines = rubric["aesthetic"]["baselines"]
    if blank:
        return baselines["blank"], f"Baseline {baselines['blank']}: blank render."
    defaults = facts.defaults
    if defaults is not None and "floor" in rubric["aesthetic"]:
        raw = bool(rubric["aesthetic"].get("raw_html_unstyled")) and (
            facts.css_rules == 0 and facts.inline_styled_elements == 0)
        if _browser_defaults(defaults, raw=raw):
            shown = ", ".join(name for name, value in defaults.model_dump().items() if value)
            return baselines["unstyled"], (f"Baseline {baselines['unstyled']}: the browser's default styles show "
                                           f"({shown}): the page is not designed.")
    elif facts.css_rules == 0 and facts.inline_styled_elements == 0:
        return baselines["unstyled"], f"Baseline {baselines['unstyled']}: raw HTML, no author CSS."
    styling = f"{facts.css_rules} CSS rules, {facts.inline_styled_elements} styled elements"
    return baselines["styled"], f"Baseline {baselines['styled']}: author styling ({styling})."


def _browser_defaults(defaults: BrowserDefaults, *, raw: bool = False) -> bool:
    """No link or button restyled, and the default serif font with default margins or colours; or, in a ``raw``
    document (no author CSS rule or style attribute), the default margins and colours whatever the font."""
    if defaults.links is False or defaults.buttons is False:
        return False
    if defaults.font:
        return defaults.margin or defaults.colors
    return raw and defaults.margin and defaults.colors


def _layout(aes: _Ledger, desktop: PageFacts, mobile: PageFacts) -> None:
    overflow = mobile.overflow_x
    if overflow > 4:
        aes.deduct("mobile_overflow", f"on a 390 px phone the page is {mobile.scroll_width} px wide "
                   f"({overflow} px of sideways scroll)",
                   _mobile_refs())
    if not mobile.has_viewport_meta and mobile.viewport_width > _PHONE_WIDTH:
        aes.deduct("mobile_not_adapted", f"no viewport meta tag: a phone lays the page out "
                   f"{mobile.viewport_width} px wide and shrinks it to fit",
                   _mobile_refs())
    for image in desktop.broken_images:
        aes.deduct("broken_image", f"image {image.src[:80]} failed to load",
                   [EvidenceRef(file=BundleFile.screenshot("desktop"), detail=image.selector)])
    if desktop.illegible_count > 3:
        sample = next((e for e in desktop.low_contrast if e.ratio < 1.5), None)
        example = f", e.g. {sample.text[:40]!r} at {sample.ratio}:1" if sample else ""
        aes.deduct("illegible_text", f"{desktop.illegible_count} text elements below 1.5:1 contrast{example}",
                   [EvidenceRef(file=BundleFile.screenshot("desktop")),
                    EvidenceRef(file=BundleFile.page_facts("desktop"), detail=sample.selector if sample else None)])
    low = desktop.low_contrast_count
    if low:
        sample = desktop.low_contrast[0]
        category = "low_contrast_widespread" if low > 3 else "low_contrast"
        aes.deduct(category, f"{low} text elements below WCAG AA contrast, e.g. {sample.text[:40]!r} "
                   f"at {sample.ratio}:1 (needs {sample.required}:1)",
                   [EvidenceRef(file=BundleFile.page_facts("desktop"), detail=sample.selector)])


def _bonuses(rubric: YamlDocument, image: ImageProbe, aes: _Ledger, base: float) -> tuple[float, str]:
    if base < rubric["aesthetic"]["baselines"]["styled"]:
        return 0.0, "No bonus below a styled baseline."
    spec = rubric["aesthetic"]["bonuses"]
    parts, points = [], 0.0
    if image.colorfulness >= spec["colorful"]["min_colorfulness"]:
        points += spec["colorful"]["points"]
        parts.append(f"+{spec['colorful']['points']} colourful ({image.colorfulness:.1f})")
    if (image.background_fraction <= spec["structured"]["max_background_fraction"]
            and image.edge_density >= spec["structured"]["min_edge_density"]):
        points += spec["structured"]["points"]
        parts.append(f"+{spec['structured']['points']} structured layout")
    if not aes.attributions:
        points += spec["polish"]["points"]
        parts.append(f"+{spec['polish']['points']} no layout, image or contrast defect")
    return points, "Bonuses: " + (", ".join(parts) if parts else "none") + "."


def _qualities(rubric: YamlDocument, bundle: EvidenceBundle, facts: PageFacts, base: float
               ) -> tuple[float, str, list[CriterionReason]]:
    """Points for the measured design qualities of a styled page, and one criterion citing each measure.

    Only a styled page is measured: the unstyled and blank baselines are exact, so the same content with its
    stylesheets removed can never score above its styled original by way of a quality.
    """
    if base < rubric["aesthetic"]["baselines"]["styled"]:
        return 0.0, "No quality is measured below a styled baseline.", []
    spec = rubric["aesthetic"]["qualities"]
    shot = BundleFile.screenshot("desktop")
    screenshot = (bundle.root / shot).read_bytes() if bundle.has(shot) else None
    measured = measure_qualities(facts.design, screenshot, spec)
    points = sum(spec[q.name]["points"] for q in measured if q.passed)
    earned = [f"+{spec[q.name]['points']} {q.name.replace('_', ' ')}" for q in measured if q.passed]
    unmeasured = [q.name.replace("_", " ") for q in measured if not q.measured]
    reason = "Qualities: " + (", ".join(earned) if earned else "none earned") + (
        f" (not measured: {', '.join(unmeasured)})" if unmeasured else "") + "."
    return points, reason, [_quality_reason(q, spec[q.name]["points"]) for q in measured]


def _quality_reason(quality: Quality, points: float) -> CriterionReason:
    source = (BundleFile.screenshot("desktop") if quality.name == "whitespace"
              else f"{BundleFile.page_facts('desktop')} (design)")
    outcome = f"+{points}" if quality.passed else "+0.0"
    return CriterionReason(criterion=f"quality:{quality.name}", dimension=Dimension.AESTHETIC,
                           reason=f"{outcome}: {quality.detail} [{source}].")


def _what(step: StepRecord) -> str:
    label = step.control or "?"
    return f"{step.action.kind} on {label[:60]!r}"


def _reason(start: float, ledger: _Ledger, final: float) -> str:
    if not ledger.attributions:
        return f"Calculation: {start:.1f} with no deduction. Final: {final:.1f}"
    math = " ".join(f"- {a.deduction:.1f} ({a.category})" for a in ledger.attributions)
    return f"Calculation: {start:.1f} {math}. Final: {final:.1f}"


def _mobile_refs() -> list[EvidenceRef]:
    return [EvidenceRef(file=BundleFile.screenshot("mobile")), EvidenceRef(file=BundleFile.page_facts("mobile"))]
