"""The heuristic judge, one rubric row at a time (``evaluator/rubrics/heuristic-v5.yaml``, the default).

The bundles here are SYNTHETIC: written by hand into ``tmp_path`` instead of collected from a
browser, because a hand-written bundle isolates one rubric row each. The healthy baseline scores
functional 8.0 and aesthetic 8.0 (styled 5.0 + six measured design qualities at 0.5 each, from the design
facts and screenshot of ``tests/evaluator/test_design_measures.py``); each test changes one measured fact
and asserts the exact scores and the attribution that moved them. Expected numbers are literals worked out
from the rubric by hand, not recomputed from it. v2's bonuses (colourful, structured, polish) are tested
with ``rubric="heuristic-v2"``: they stay for rejudging old verdicts.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from evaluator.agents.observation import KEY_PROBE_REASON
from evaluator.evidence.bundle import EvidenceBundle, EvidenceWriter
from evaluator.judges.heuristic import HeuristicJudge
from evaluator.models import AgentConfig, Difficulty, Kind, Query, ToolVersions, Verdict
from tests.evaluator.test_design_measures import design_facts, design_screenshot

QUERY, DESKTOP, MOBILE = "query.json", "static/desktop-facts.json", "static/mobile-facts.json"
TRACE, RESULT, CONSOLE = "interaction/trace.json", "interaction/result.json", "console.json"
SHOT = "static/desktop-viewport.png"
ENGLISH = ("Track your habits and build a streak with this simple tool. Add a new habit, mark it done "
           "for the day, and see all your progress at a glance on the board.")

Files = dict[str, Any]


def _step(n: int, selector: str, status: str = "changed", *, state: str = "s0", kind: str = "click",
          errors: tuple[str, ...] = ()) -> dict[str, Any]:
    """One trace step acting on control ``selector``."""
    return {
        "step": n, "observation_state": state, "element_count": 30, "screenshot": f"interaction/step-{n:03d}.png",
        "action": {"kind": kind, "element": 0, "text": "abc" if kind == "type" else None},
        "target": {"index": 0, "selector": selector, "tag": "button", "label": selector.lstrip("#"), "x": 10.0,
                   "y": 10.0, "width": 80.0, "height": 30.0, "in_viewport": True},
        "result": {"status": status, "detail": "" if status == "changed" else f"{status} detail",
                   "dom_changed": status == "changed", "visual_changed": False, "errors": list(errors)},
        "observed_at_s": float(n), "deliberation_s": 0.1, "action_start_s": n + 0.2, "action_end_s": n + 0.8,
    }


def _console(phase: str, klass: str, text: str) -> dict[str, Any]:
    return {"phase": phase, "kind": "pageerror" if klass == "uncaught" else "error",
            "class": klass, "text": text, "url": ""}


def _page(**measured: Any) -> dict[str, Any]:
    """The page facts of a styled English page with no defect, as the collector records them (one viewport's)."""
    return {"overflow_x": 0, "broken_images": [], "low_contrast": [], "low_contrast_count": 0, "text_elements": 20,
            "css_rules": 40, "inline_styled_elements": 0, "font_family": "dejavu sans", "element_count": 60,
            "text_length": 400, "title": "Habits", "lang": "en", "has_viewport_meta": True, "text_sample": ENGLISH,
            **measured}


def _healthy() -> Files:
    """A styled English interactive app with no defect whose three controls all changed something."""
    query = Query(id="habits", brief="Build a habit tracker.", domain="productivity", leaf="trackers",
                  difficulty=Difficulty.EASY, language="en", kind=Kind.INTERACTIVE_APPLICATION)
    image = {"blank": False, "colorfulness": 20.0, "background_fraction": 0.6, "edge_density": 0.05, "gray_std": 30.0}
    facts = _page(viewport_width=1280, scroll_width=1280, design=design_facts())
    mobile = _page(viewport_width=390, scroll_width=390)
    timings = {"load_s": 0.4, "settle_s": 0.2, "layout_stable": True, "navigation_error": None}
    return {
        QUERY: query.model_dump(mode="json"),
        DESKTOP: {"facts": facts, "image": image, "timings": timings},
        MOBILE: {"facts": mobile, "image": dict(image), "timings": dict(timings)},
        TRACE: [_step(1, "#add"), _step(2, "#done"), _step(3, "#reset")],
        RESULT: {"ended_by": "policy", "coverage": {"salient": 3, "exercised": 3, "remaining": []}, "error": None,
                 "console_entries_dropped": 0},
        CONSOLE: [],
        SHOT: design_screenshot(),
    }


def _judge(tmp_path: Path, files: Files, rubric: str | None = None, *, policy: str = "explorer") -> Verdict:
    """Commit ``files`` as a bundle under ``tmp_path`` (its trace made by ``policy``) and score it with the
    heuristic judge (its default rubric unless ``rubric`` names one)."""
    writer = EvidenceWriter(tmp_path / "bundle")
    for rel, data in files.items():
        if isinstance(data, bytes):
            writer.write_bytes(rel, data)
        else:
            writer.write_json(rel, data)
    tools = ToolVersions(evalgrid="0", collector="synthetic", browser="none", playwright="none", ffmpeg="none",
                         sandbox="local")
    writer.commit(evidence_key="ev-synthetic", artifact_key="art-synthetic", agent=AgentConfig(policy=policy),
                  tools=tools, timings={})
    judge = HeuristicJudge() if rubric is None else HeuristicJudge(rubric=rubric)
    return asyncio.run(judge(EvidenceBundle(tmp_path / "bundle"), verdict_key="v"))


def _taken(verdict: Verdict) -> list[tuple[str, float]]:
    return [(a.category, a.deduction) for a in verdict.attributions]


@pytest.fixture
def files() -> Files:
    return _healthy()


def test_healthy_baseline_bundle_scores_full_marks(tmp_path: Path, files: Files) -> None:
    verdict = _judge(tmp_path, files)
    assert (verdict.functional, verdict.aesthetic) == (8.0, 8.0)
    assert verdict.attributions == []
    assert verdict.functional_reason == "Calculation: 8.0 with no deduction. Final: 8.0"
    assert "Baseline 5.0" in verdict.aesthetic_reason


# ------------------------------------------------------------------------------------------ functional


def test_render_failure_from_a_blank_image_probe_zeroes_both_scores(tmp_path: Path, files: Files) -> None:
    files[DESKTOP]["image"]["blank"] = True
    files[MOBILE]["facts"]["overflow_x"] = 300  # layout is not judged on a blank render
    verdict = _judge(tmp_path, files)
    assert (verdict.functional, verdict.aesthetic) == (0.0, 0.0)
    assert _taken(verdict) == [("render_failure", 8.0)]
    assert "Baseline 0.0: blank render." in verdict.aesthetic_reason


def test_render_failure_from_a_navigation_error_with_no_text(tmp_path: Path, files: Files) -> None:
    files[DESKTOP]["timings"]["navigation_error"] = "net::ERR_CONNECTION_REFUSED"
    files[DESKTOP]["facts"].update(text_length=0, text_sample="")
    verdict = _judge(tmp_path, files)
    assert (verdict.functional, verdict.aesthetic) == (0.0, 0.0)
    assert _taken(verdict) == [("render_failure", 8.0)]


def test_render_failure_from_static_failure_json_short_circuits(tmp_path: Path, files: Files) -> None:
    files["static/failure.json"] = {"phase": "load", "error": "TargetClosedError: the tab crashed"}
    verdict = _judge(tmp_path, files)
    assert (verdict.functional, verdict.aesthetic) == (0.0, 0.0)
    assert _taken(verdict) == [("render_failure", 8.0)]
    assert "TargetClosedError" in verdict.attributions[0].description


def test_near_empty_render(tmp_path: Path, files: Files) -> None:
    files[DESKTOP]["facts"].update(element_count=11, text_length=19, text_sample="Hello")
    verdict = _judge(tmp_path, files)
    assert (verdict.functional, verdict.aesthetic) == (4.0, 8.0)
    assert _taken(verdict) == [("near_empty_render", 4.0)]


def test_twelve_elements_is_not_near_empty(tmp_path: Path, files: Files) -> None:
    files[DESKTOP]["facts"].update(element_count=12, text_length=0, text_sample="")
    assert _judge(tmp_path, files).functional == 8.0


def test_a_blank_screenshot_with_a_few_words_is_near_empty_and_with_more_text_blank(
        tmp_path: Path, files: Files) -> None:
    """v5: the image probe (99.9 % background) cannot see a few short words; a page of them is near-empty."""
    files[DESKTOP]["image"]["blank"] = True
    files[DESKTOP]["facts"].update(element_count=11, text_length=12, text_sample="Lines Clouds")
    assert _taken(_judge(tmp_path / "few", files))[:1] == [("near_empty_render", 4.0)]
    assert _taken(_judge(tmp_path / "v4", files, rubric="heuristic-v4"))[:1] == [("render_failure", 8.0)]
    files[DESKTOP]["facts"].update(text_length=20)
    assert _taken(_judge(tmp_path / "more", files))[:1] == [("render_failure", 8.0)]


def test_a_canvas_covering_a_fifth_of_the_screen_is_content(tmp_path: Path, files: Files) -> None:
    """v5: a canvas game with no markup around it is not near-empty; a small canvas does not excuse an empty page."""
    files[DESKTOP]["facts"].update(element_count=8, text_length=0, text_sample="", canvas_share=0.2)
    assert _taken(_judge(tmp_path / "game", files)) == []
    files[DESKTOP]["facts"]["canvas_share"] = 0.1
    assert _taken(_judge(tmp_path / "small", files)) == [("near_empty_render", 4.0)]


def test_a_small_canvas_that_took_a_drawing_is_small_not_empty(tmp_path: Path, files: Files) -> None:
    """v9: a near-empty first screen (a drawing app's canvas left at the default 300x150 px under two tool links)
    whose canvas changed under the explorer's drag is working; a drag that changed nothing, or v8, still charges
    it as near-empty."""
    files[DESKTOP]["facts"].update(element_count=11, text_length=12, text_sample="Lines Clouds", canvas_share=0.04)
    drawing = _step(4, "#canvas", "changed", kind="drag", state="s4")
    drawing["target"].update(tag="canvas", width=300.0, height=150.0)
    drawing["result"].update(dom_changed=False, visual_changed=True)
    files[TRACE].append(drawing)
    assert _taken(_judge(tmp_path / "drawn", files)) == []
    assert _taken(_judge(tmp_path / "v8", files, rubric="heuristic-v8")) == [("near_empty_render", 4.0)]
    drawing["result"].update(status="no_change", visual_changed=False)
    assert ("near_empty_render", 4.0) in _taken(_judge(tmp_path / "undrawn", files))


def test_uncaught_error_at_load_counts_once(tmp_path: Path, files: Files) -> None:
    files[CONSOLE] = [_console("load", "uncaught", "TypeError: board is undefined"),
                      _console("mobile", "uncaught", "TypeError: board is undefined")]
    verdict = _judge(tmp_path, files)
    assert (verdict.functional, verdict.aesthetic) == (6.0, 8.0)
    assert _taken(verdict) == [("uncaught_error_at_load", 2.0)]
    assert verdict.functional_reason == "Calculation: 8.0 - 2.0 (uncaught_error_at_load). Final: 6.0"


def test_interaction_aborted(tmp_path: Path, files: Files) -> None:
    files[RESULT]["error"] = "TimeoutError: the page stopped answering"
    verdict = _judge(tmp_path, files)
    assert (verdict.functional, verdict.aesthetic) == (5.0, 8.0)
    assert _taken(verdict) == [("interaction_aborted", 3.0)]


def test_no_controls_on_an_interactive_application(tmp_path: Path, files: Files) -> None:
    files[TRACE] = []
    files[RESULT]["coverage"] = {"salient": 0, "exercised": 0, "remaining": []}
    verdict = _judge(tmp_path, files)
    assert (verdict.functional, verdict.aesthetic) == (5.0, 8.0)
    assert _taken(verdict) == [("no_controls", 3.0)]


def test_a_page_with_nothing_to_act_on_that_changes_by_itself_is_a_working_display(
        tmp_path: Path, files: Files) -> None:
    """v5: the explorer watches a page that offers no control; a countdown that ticked is not charged, a still
    one is (and cites the watch). v4 charges both."""
    files[RESULT]["coverage"] = {"salient": 0, "exercised": 0, "remaining": []}
    watch = _step(1, "#x", kind="wait")
    watch["target"] = None
    files[TRACE] = [watch]
    assert _taken(_judge(tmp_path / "ticks", files)) == []
    assert _taken(_judge(tmp_path / "v4", files, rubric="heuristic-v4")) == [("no_controls", 3.0)]
    watch["result"].update(status="no_change", dom_changed=False)
    verdict = _judge(tmp_path / "still", files)
    assert _taken(verdict) == [("no_controls", 3.0)]
    assert "did not change by itself while watched" in verdict.attributions[0].description
    assert verdict.attributions[0].evidence[-1].step == 1


def test_no_controls_is_not_charged_to_a_static_presentation(tmp_path: Path, files: Files) -> None:
    files[QUERY]["kind"] = "static_presentation"
    files[TRACE] = []
    files[RESULT]["coverage"] = {"salient": 0, "exercised": 0, "remaining": []}
    assert _taken(_judge(tmp_path, files)) == []


def test_language_mismatch(tmp_path: Path, files: Files) -> None:
    files[QUERY]["language"] = "es"
    verdict = _judge(tmp_path, files)
    assert (verdict.functional, verdict.aesthetic) == (6.0, 8.0)
    assert _taken(verdict) == [("language_mismatch", 2.0)]


def test_half_of_the_controls_dead_is_charged_per_control_not_as_an_app_that_does_not_work(
        tmp_path: Path, files: Files) -> None:
    files[TRACE] = [_step(1, "#add"), _step(2, "#done", "no_change"), _step(3, "#reset", "no_change"),
                    _step(4, "#undo")]
    verdict = _judge(tmp_path / "v4", files)
    assert verdict.functional == 7.0  # 8 - 0.5 - 0.5: the share of dead controls says nothing of the core flow
    assert _taken(verdict) == [("unresponsive_control", 0.5), ("unresponsive_control", 0.5)]
    # v3 (kept for rejudging) charged the share
    old = _judge(tmp_path / "v3", files, rubric="heuristic-v3")
    assert _taken(old) == [("unresponsive_control", 0.5), ("unresponsive_control", 0.5),
                           ("core_interaction_failure", 2.0)]


def test_an_app_where_nothing_responds_is_charged_once_as_unresponsive(tmp_path: Path, files: Files) -> None:
    files[TRACE] = [_step(1, "#done", "no_change"), _step(2, "#reset", "no_change")]
    verdict = _judge(tmp_path / "two", files)
    assert verdict.functional == 5.0  # 8 - 0.5 - 0.5 - 2.0
    assert _taken(verdict) == [("unresponsive_control", 0.5), ("unresponsive_control", 0.5),
                               ("app_unresponsive", 2.0)]
    # one dead side control beside working ones: at least 1.5 above the app where nothing works
    files[TRACE] = [_step(1, "#add"), _step(2, "#done"), _step(3, "#reset", "no_change")]
    assert _judge(tmp_path / "side", files).functional - verdict.functional >= 1.5
    # one control is not enough to say nothing responds
    files[TRACE] = [_step(1, "#done", "no_change")]
    assert _taken(_judge(tmp_path / "one", files)) == [("unresponsive_control", 0.5)]


def test_error_on_action(tmp_path: Path, files: Files) -> None:
    files[TRACE][1] = _step(2, "#done", errors=("pageerror: TypeError: cannot read 'streak'",))
    files[CONSOLE] = [_console("interaction", "uncaught", "TypeError: cannot read 'streak'")]
    verdict = _judge(tmp_path, files)
    assert (verdict.functional, verdict.aesthetic) == (7.0, 8.0)
    assert _taken(verdict) == [("error_on_action", 1.0)]


def test_dead_control_was_tried_in_two_states(tmp_path: Path, files: Files) -> None:
    files[TRACE] += [_step(4, "#undo", "no_change", state="s1"), _step(5, "#undo", "no_change", state="s2")]
    verdict = _judge(tmp_path, files)
    assert (verdict.functional, verdict.aesthetic) == (7.0, 8.0)
    assert _taken(verdict) == [("dead_control", 1.0)]
    assert "(2 tries)" in verdict.attributions[0].description


def test_unresponsive_control_was_tried_in_one_state(tmp_path: Path, files: Files) -> None:
    files[TRACE] += [_step(4, "#undo", "no_change", state="s1"), _step(5, "#undo", "no_change", state="s1")]
    verdict = _judge(tmp_path, files)
    assert (verdict.functional, verdict.aesthetic) == (7.5, 8.0)
    assert _taken(verdict) == [("unresponsive_control", 0.5)]


def test_a_failed_probe_is_a_dead_control_at_once_whatever_else_it_changed(tmp_path: Path, files: Files) -> None:
    probe = _step(4, "#list li:nth-child(1) .remove", "changed")
    probe["result"].update(expected="the item is removed", expectation_met=False,
                           detail="the item 'Milk' is still there")
    files[TRACE].append(probe)
    verdict = _judge(tmp_path, files)
    assert (verdict.functional, verdict.aesthetic) == (7.0, 8.0)
    assert _taken(verdict) == [("dead_control", 1.0)]
    assert "the item 'Milk' is still there (1 tries)" in verdict.attributions[0].description


def test_copies_of_a_control_on_every_item_are_one_control(tmp_path: Path, files: Files) -> None:
    rows = [_step(4 + i, f"#list li:nth-child({i + 1}) .remove", "no_change", state=f"s{i + 1}") for i in range(3)]
    for row in rows:
        row["target"]["shape"] = "li > button.remove"
    files[TRACE] += rows
    verdict = _judge(tmp_path, files)
    # One dead control (three tries in three states), not three, and not a core failure of three controls.
    assert _taken(verdict) == [("dead_control", 1.0)]
    assert "(3 tries)" in verdict.attributions[0].description


@pytest.mark.parametrize(("tag", "role", "href", "charged"), [
    ("span", "", "", ("silent_listener", 0.5)),          # a script listens on it: no promise made
    ("a", "", "#", ("silent_listener", 0.5)),            # a link to nowhere, a clock's digit
    ("div", "button", "", ("dead_control", 1.0)),        # an ARIA widget says it does something
    ("a", "", "#details", ("dead_control", 1.0)),        # a link to somewhere
    ("select", "", "", ("dead_control", 1.0)),
])
def test_a_silent_element_that_is_no_control_is_a_listener_not_a_dead_control(
        tmp_path: Path, files: Files, tag: str, role: str, href: str, charged: tuple[str, float]) -> None:
    """v9: tried in two states and silent, an element clicked only because a script listens on it is charged in
    a minor row of its own; a native control, a link or an ARIA widget stays a dead control (major). v8 charged
    every one as dead."""
    files[TRACE] += [_step(4, "#x", "no_change", state="s1"), _step(5, "#x", "no_change", state="s2")]
    for step in files[TRACE][-2:]:
        step["target"].update(tag=tag, role=role, href=href)
    assert _taken(_judge(tmp_path / "v9", files)) == [charged]
    assert _taken(_judge(tmp_path / "v8", files, rubric="heuristic-v8")) == [("dead_control", 1.0)]


def test_silent_listeners_have_their_own_cap_and_leave_room_for_a_silent_button(tmp_path: Path, files: Files) -> None:
    """v9: three silent listeners cost 1.0 (their cap), and a button that did nothing the one time it was tried
    still costs its 0.5 beside them: under v8 the listeners filled the cap the button needed, so an app whose
    core button was dead scored like the working one."""
    for n in (4, 5, 6):
        files[TRACE].append(_step(n, f"#digit{n}", "no_change", state="s1"))
        files[TRACE][-1]["target"].update(tag="a", href="#")
    assert _taken(_judge(tmp_path / "working", files)) == [("silent_listener", 0.5)] * 2
    files[TRACE].append(_step(7, "#start", "no_change", state="s1"))
    dead = _judge(tmp_path / "dead", files)
    assert _taken(dead) == [("silent_listener", 0.5)] * 2 + [("unresponsive_control", 0.5)]
    assert dead.functional == 6.5
    v8 = _judge(tmp_path / "v8", files, rubric="heuristic-v8")
    assert _taken(v8) == [("unresponsive_control", 0.5)] * 3 and v8.functional == 6.5


@pytest.mark.parametrize("kind", ["dblclick", "drag"])
def test_double_clicks_and_drags_are_judged_like_clicks(tmp_path: Path, files: Files, kind: str) -> None:
    files[TRACE] += [_step(4, "#board", "no_change", state="s1", kind=kind),
                     _step(5, "#board", "no_change", state="s2", kind=kind)]
    assert _taken(_judge(tmp_path, files)) == [("dead_control", 1.0)]


def _surface(n: int, status: str, kind: str = "drag") -> dict[str, Any]:
    step = _step(n, "#canvas", status, kind=kind, state=f"s{n}")
    step["target"].update(tag="canvas", width=1280.0, height=700.0)
    if status == "changed":
        step["result"].update(dom_changed=False, visual_changed=True)
    return step


def test_a_main_surface_that_never_responded_is_the_core_flow_dead(tmp_path: Path, files: Files) -> None:
    """v5: a drawing pad (a control covering most of the screen) dead in two uses is critical; one use that drew
    clears it; a small dead control stays a dead control."""
    files[TRACE] += [_surface(4, "no_change", "click"), _surface(5, "no_change")]
    verdict = _judge(tmp_path / "dead", files)
    assert _taken(verdict) == [("dead_control", 1.0), ("core_flow_dead", 3.0)]
    assert "main surface ('canvas', 1280x700 px) never responded in 2 uses" in verdict.attributions[1].description
    assert _taken(_judge(tmp_path / "v4", files, rubric="heuristic-v4")) == [("dead_control", 1.0)]
    files[TRACE][-1] = _surface(5, "changed")
    assert _taken(_judge(tmp_path / "drew", files)) == []


def _drag(n: int, moved: bool | None, *, dom: bool = False) -> dict[str, Any]:
    step = _step(n, f"#todo li:nth-child({n})", "changed" if moved or dom or moved is None else "no_change",
                 kind="drag", state=f"s{n}")
    step["target"].update(tag="li", width=200.0, height=30.0)
    step["result"].update(dom_changed=dom or bool(moved), visual_changed=True, expectation_met=moved,
                          expected="" if moved is None else "the item is in the list it was dropped on")
    return step


def test_a_drag_app_where_no_drag_moved_its_item_is_the_core_flow_dead(tmp_path: Path, files: Files) -> None:
    """v5: the brief asks for dragging and every drag failed: critical. One item that moved is the app working
    (the misses are the explorer's aim); a drag that only lit pixels (text selected, a hover style) moved nothing."""
    files[QUERY]["brief"] = "A kanban board: drag cards between the columns."
    files[TRACE] += [_drag(4, False), _drag(5, None)]
    verdict = _judge(tmp_path / "dead", files)
    assert ("core_flow_dead", 3.0) in _taken(verdict)
    assert "none of 2 drags moved its item" in next(a.description for a in verdict.attributions
                                                    if a.category == "core_flow_dead")
    files[TRACE].append(_drag(6, True))
    assert "core_flow_dead" not in dict(_taken(_judge(tmp_path / "moved", files)))
    files[TRACE][-1] = _drag(6, None, dom=True)
    assert "core_flow_dead" not in dict(_taken(_judge(tmp_path / "markup", files)))
    files[QUERY]["brief"] = "A kanban board with a dropdown of owners."
    files[TRACE] = files[TRACE][:5]
    assert "core_flow_dead" not in dict(_taken(_judge(tmp_path / "no-drag-brief", files)))


def test_a_drag_that_moved_nothing_beside_one_that_moved_is_the_drop_places_doing(
        tmp_path: Path, files: Files) -> None:
    """v7: on a page where a drag moved its item, an item dragged twice (two states) that did not move was dropped
    where the app takes nothing (a list that only gives): minor, not a dead control. With no drag that moved,
    and under v6, it is dead."""
    files[QUERY]["brief"] = "Sortable lists: drag items within and between the lists."
    stuck = [_drag(4, False), _drag(5, False)]
    for step in stuck:
        step["target"]["selector"] = "#locked li"
    files[TRACE] += stuck + [_drag(6, True)]
    assert _taken(_judge(tmp_path / "v7", files)) == [("unresponsive_control", 0.5)]
    assert _taken(_judge(tmp_path / "v6", files, rubric="heuristic-v6")) == [("dead_control", 1.0)]
    files[TRACE][-1] = _drag(6, None, dom=True)  # markup changed, but no item was seen to move
    assert ("dead_control", 1.0) in _taken(_judge(tmp_path / "unproven", files))


def test_a_drag_app_with_nothing_to_drag_is_the_core_flow_dead(tmp_path: Path, files: Files) -> None:
    """v7: the brief asks for dragging, the explorer acted on the page and found nothing to drag (a drawing pad
    whose canvas takes no pointer, its scripts gone): critical. A slider set with a click counts as dragging;
    another policy's trace (a model may choose not to drag) and v6 are not charged."""
    files[QUERY]["brief"] = "A drawing pad: press and drag the mouse to draw lines."
    verdict = _judge(tmp_path / "v7", files)
    assert _taken(verdict) == [("core_flow_dead", 3.0)]
    assert "offered nothing to drag" in verdict.attributions[0].description
    assert _taken(_judge(tmp_path / "v6", files, rubric="heuristic-v6")) == []
    assert _taken(_judge(tmp_path / "llm", files, policy="llm")) == []
    slider = _step(4, "#size")
    slider["target"].update(tag="input", type="range")
    files[TRACE].append(slider)
    assert _taken(_judge(tmp_path / "slider", files)) == []


def _sweep(n: int, status: str) -> dict[str, Any]:
    step = _step(n, "#heatmapContainer", status, kind="hover", state=f"s{n}")
    step["action"]["amount"] = 200.0
    step["target"].update(tag="div", intent="surface", width=1280.0, height=800.0)
    return step


def test_a_surface_that_never_followed_the_pointer_of_a_pointer_app_is_the_core_flow_dead(
        tmp_path: Path, files: Files) -> None:
    """v8: the brief asks for moving the mouse, and the surface listening for pointer movement followed none of the
    explorer's sweeps: critical. One sweep that changed the surface clears it; a brief that does not ask for
    moving the pointer (a page whose large area only listens, a chart's), a hover on what is no surface (a
    model's agent may hover a button) and v7 are not charged."""
    files[QUERY]["brief"] = "A live heatmap: moving the mouse over the window leaves a glowing trail."
    files[TRACE].append(_sweep(4, "no_change"))
    verdict = _judge(tmp_path / "dead", files)
    assert _taken(verdict) == [("core_flow_dead", 3.0)]
    assert "did not follow it in 1 sweeps" in verdict.attributions[0].description
    assert _taken(_judge(tmp_path / "v7", files, rubric="heuristic-v7")) == []
    files[TRACE][-1]["target"].update(tag="button", intent="", width=80.0, height=30.0)
    assert _taken(_judge(tmp_path / "button", files)) == []
    files[TRACE][-1] = _sweep(4, "no_change")
    files[QUERY]["brief"] = "A dashboard of sales charts with a summary table."
    assert _taken(_judge(tmp_path / "no-pointer-brief", files)) == []
    files[QUERY]["brief"] = "A live heatmap: moving the mouse over the window leaves a glowing trail."
    files[TRACE].append(_sweep(5, "changed"))
    assert _taken(_judge(tmp_path / "followed", files)) == []


def test_input_rejected(tmp_path: Path, files: Files) -> None:
    files[TRACE].append(_step(4, "#name", "input_rejected", kind="type"))
    verdict = _judge(tmp_path, files)
    assert (verdict.functional, verdict.aesthetic) == (7.0, 8.0)
    assert _taken(verdict) == [("input_rejected", 1.0)]


def test_console_error_is_one_attribution_capped_at_two_errors(tmp_path: Path, files: Files) -> None:
    files[CONSOLE] = [_console("interaction", "error", "HTTP 404: /api/habits")]
    assert _taken(_judge(tmp_path / "one", files)) == [("console_error", 0.5)]
    files[CONSOLE] += [_console("interaction", "error", f"HTTP 500: /api/{n}") for n in range(4)]
    files[CONSOLE] += [_console("load", "noise", "favicon.ico"), _console("load", "warning", "deprecated")]
    verdict = _judge(tmp_path / "five", files)
    assert (verdict.functional, verdict.aesthetic) == (7.0, 8.0)
    assert _taken(verdict) == [("console_error", 1.0)]
    assert verdict.attributions[0].description.startswith("5 console errors")


def test_per_control_categories_stop_at_their_caps(tmp_path: Path, files: Files) -> None:
    errors = ("pageerror: Error: boom",)
    files[TRACE] = [_step(n, f"#b{n}", errors=errors) for n in range(1, 6)]
    verdict = _judge(tmp_path / "errors", files)
    assert verdict.functional == 5.0  # five erroring controls, error_on_action capped at 3.0
    assert _taken(verdict) == [("error_on_action", 1.0)] * 3
    files[TRACE] = [_step(n, f"#b{n}") for n in range(1, 9)] + [_step(n, f"#d{n}", "no_change") for n in range(4)]
    verdict = _judge(tmp_path / "unresponsive", files)
    assert verdict.functional == 6.5  # four no-change controls, unresponsive_control capped at 1.5
    assert _taken(verdict) == [("unresponsive_control", 0.5)] * 3
    files[TRACE] = [_step(n, f"#t{n}", "input_rejected", kind="type") for n in range(3)] + [
        _step(n, f"#b{n}") for n in range(3, 9)]
    verdict = _judge(tmp_path / "rejected", files)
    assert verdict.functional == 6.0  # three rejected fields, input_rejected capped at 2.0
    assert _taken(verdict) == [("input_rejected", 1.0)] * 2


# ------------------------------------------------------------------------------------------ aesthetic


def test_mobile_overflow(tmp_path: Path, files: Files) -> None:
    files[MOBILE]["facts"].update(overflow_x=210, scroll_width=600)
    verdict = _judge(tmp_path / "wide", files)
    assert (verdict.functional, verdict.aesthetic) == (8.0, 6.5)  # 5 + 3.0 of qualities - 1.5
    assert _taken(verdict) == [("mobile_overflow", 1.5)]
    files[MOBILE]["facts"].update(overflow_x=4, scroll_width=394)
    assert _judge(tmp_path / "tolerated", files).aesthetic == 8.0


def test_mobile_not_adapted(tmp_path: Path, files: Files) -> None:
    files[MOBILE]["facts"].update(has_viewport_meta=False, viewport_width=980)
    verdict = _judge(tmp_path, files)
    assert (verdict.functional, verdict.aesthetic) == (8.0, 7.0)
    assert _taken(verdict) == [("mobile_not_adapted", 1.0)]


def test_broken_image(tmp_path: Path, files: Files) -> None:
    files[DESKTOP]["facts"]["broken_images"] = [{"src": "hero.png", "selector": "img.hero"}]
    verdict = _judge(tmp_path, files)
    assert (verdict.functional, verdict.aesthetic) == (8.0, 7.5)
    assert _taken(verdict) == [("broken_image", 0.5)]


def test_broken_images_are_capped_at_one_and_a_half(tmp_path: Path, files: Files) -> None:
    files[DESKTOP]["facts"]["broken_images"] = [{"src": f"{n}.png", "selector": f"img.n{n}"} for n in range(4)]
    verdict = _judge(tmp_path, files)
    assert verdict.aesthetic == 6.5  # 8 - 1.5, not 8 - 2.0
    assert _taken(verdict) == [("broken_image", 0.5)] * 3


def _low_contrast(count: int) -> dict[str, Any]:
    sample = [{"text": "faint caption", "ratio": 2.1, "required": 4.5, "selector": "p.caption"}]
    return {"low_contrast_count": count, "low_contrast": sample * count}


def test_low_contrast_for_three_elements(tmp_path: Path, files: Files) -> None:
    files[DESKTOP]["facts"].update(_low_contrast(3))
    verdict = _judge(tmp_path, files)
    assert (verdict.functional, verdict.aesthetic) == (8.0, 7.5)
    assert _taken(verdict) == [("low_contrast", 0.5)]


def test_low_contrast_widespread_above_three_elements(tmp_path: Path, files: Files) -> None:
    files[DESKTOP]["facts"].update(_low_contrast(4))
    verdict = _judge(tmp_path, files)
    assert (verdict.functional, verdict.aesthetic) == (8.0, 7.0)
    assert _taken(verdict) == [("low_contrast_widespread", 1.0)]


def test_unstyled_baseline_gets_no_quality(tmp_path: Path, files: Files) -> None:
    files[DESKTOP]["facts"].update(css_rules=0, inline_styled_elements=0)  # design facts and image still tidy
    verdict = _judge(tmp_path, files)
    assert (verdict.functional, verdict.aesthetic) == (8.0, 1.0)
    assert verdict.attributions == []
    assert "Baseline 1.0: raw HTML" in verdict.aesthetic_reason
    assert "No quality is measured below a styled baseline." in verdict.aesthetic_reason
    assert not [c for c in verdict.criteria if c.criterion.startswith("quality:")]


def test_inline_styles_alone_make_a_styled_baseline(tmp_path: Path, files: Files) -> None:
    files[DESKTOP]["facts"].update(css_rules=0, inline_styled_elements=7)
    assert _judge(tmp_path, files).aesthetic == 8.0


# --- heuristic-v2's bonuses, kept for rejudging old verdicts with rubric="heuristic-v2" ---


def test_v2_styled_baseline_without_measured_qualities(tmp_path: Path, files: Files) -> None:
    files[DESKTOP]["image"].update(colorfulness=0.0, background_fraction=0.97, edge_density=0.001)
    verdict = _judge(tmp_path / "polished", files, "heuristic-v2")
    assert verdict.aesthetic == 6.0  # 5 + polish
    assert "Baseline 5.0: author styling" in verdict.aesthetic_reason
    files[DESKTOP]["facts"].update(_low_contrast(1))
    assert _judge(tmp_path / "bare", files, "heuristic-v2").aesthetic == 4.5  # 5 - 0.5, and polish is lost


@pytest.mark.parametrize(("colorfulness", "expected"), [(12.0, 8.0), (11.9, 7.0)])
def test_v2_colorful_bonus_from_twelve(tmp_path: Path, files: Files, colorfulness: float, expected: float) -> None:
    files[DESKTOP]["image"]["colorfulness"] = colorfulness
    verdict = _judge(tmp_path, files, "heuristic-v2")
    assert verdict.aesthetic == expected
    assert ("colourful" in verdict.aesthetic_reason) is (expected == 8.0)


@pytest.mark.parametrize(("background", "edges", "expected"),
                         [(0.9, 0.01, 8.0), (0.91, 0.05, 7.0), (0.6, 0.009, 7.0)])
def test_v2_structured_bonus_needs_little_background_and_enough_edges(
        tmp_path: Path, files: Files, background: float, edges: float, expected: float) -> None:
    files[DESKTOP]["image"].update(background_fraction=background, edge_density=edges)
    verdict = _judge(tmp_path, files, "heuristic-v2")
    assert verdict.aesthetic == expected
    assert ("structured layout" in verdict.aesthetic_reason) is (expected == 8.0)


def test_v2_polish_bonus_is_lost_to_any_aesthetic_deduction(tmp_path: Path, files: Files) -> None:
    files[DESKTOP]["image"]["colorfulness"] = 0.0  # off the 8.0 ceiling, so the polish point shows
    clean = _judge(tmp_path / "clean", files, "heuristic-v2")
    assert clean.aesthetic == 7.0  # 5 + structured + polish
    assert "no layout, image or contrast defect" in clean.aesthetic_reason
    files[DESKTOP]["facts"].update(_low_contrast(1))
    flawed = _judge(tmp_path / "flawed", files, "heuristic-v2")
    assert flawed.aesthetic == 5.5  # 5 + structured - 0.5
    assert "no layout, image or contrast defect" not in flawed.aesthetic_reason


# --- heuristic-v2: Enter submission, key presses, computed-style "unstyled", the floor, illegible text ---

DEFAULTS = {"font": True, "margin": True, "colors": True, "links": True, "buttons": True}
DESIGNED = {"font": False, "margin": False, "colors": False, "links": False, "buttons": False}


def _press(n: int, key: str, status: str, selector: str | None = None, reason: str = KEY_PROBE_REASON
           ) -> dict[str, Any]:
    step = _step(n, selector or "#page", status, kind="press")
    step["action"].update(text=key, reason=f"{reason}: press {key}")
    if selector is None:
        step["target"] = None
    return step


def test_enter_that_changes_nothing_after_typing_is_input_ignored(tmp_path: Path, files: Files) -> None:
    typing = _step(4, "#title", kind="type")
    typing["result"]["effect"] = "visual_only"  # only the field showed the text
    files[TRACE] += [typing, _press(5, "Enter", "no_change", "#title")]
    verdict = _judge(tmp_path, files)
    assert _taken(verdict) == [("input_ignored", 1.5)]
    assert verdict.functional == 6.5


def test_enter_after_a_live_update_or_a_rejected_field_is_not_input_ignored(tmp_path: Path, files: Files) -> None:
    live = _step(4, "#amount", kind="type")
    live["result"]["effect"] = "dom_changed"  # typing already updated the page (a calculator)
    rejected = _step(6, "#name", "input_rejected", kind="type")
    files[TRACE] += [live, _press(5, "Enter", "no_change", "#amount"), rejected,
                     _press(7, "Enter", "no_change", "#name")]
    assert _taken(_judge(tmp_path, files)) == [("input_rejected", 1.0)]


def test_keys_ignored_needs_three_presses_and_none_effective(tmp_path: Path, files: Files) -> None:
    files[QUERY]["brief"] = "Build a habit tracker you can drive with the arrow keys."
    files[TRACE] += [_press(4, "ArrowRight", "no_change"), _press(5, "ArrowDown", "no_change"),
                     _press(6, "Space", "no_change")]
    assert _taken(_judge(tmp_path / "dead", files)) == [("keys_ignored", 2.0)]
    files[TRACE][-1] = _press(6, "Space", "changed")
    assert _taken(_judge(tmp_path / "alive", files)) == []
    # keys another policy pressed for its own reasons (an LLM agent's Escape) are not a key probe
    files[TRACE][-3:] = [_press(4 + i, key, "no_change", reason="close the dialog")
                         for i, key in enumerate(("Escape", "Tab", "Escape"))]
    assert _taken(_judge(tmp_path / "agent", files, policy="llm")) == []


def test_keys_are_charged_only_on_a_keyboard_app(tmp_path: Path, files: Files) -> None:
    """A listener for keys on the document is no promise that keys drive the app (frameworks listen there for
    Enter and Escape in fields): without the brief, the page's text or the lack of anything else to use
    asking for keys, unanswered keys are not charged."""
    presses = [_press(4, "ArrowRight", "no_change"), _press(5, "ArrowDown", "no_change"),
               _press(6, "Space", "no_change")]
    files[TRACE] += presses
    assert _taken(_judge(tmp_path / "form", files)) == []  # "Build a habit tracker.", three working controls
    files[TRACE] = files[TRACE][:3] + [_press(4 + i, p["action"]["text"], "no_change", reason=f"{KEY_PROBE_REASON} "
                                               "(text)") for i, p in enumerate(presses)]
    assert _taken(_judge(tmp_path / "text", files)) == [("keys_ignored", 2.0)]  # the page asks for keys
    files[TRACE] = presses
    assert _taken(_judge(tmp_path / "only-keys", files)) == [("keys_ignored", 2.0)]  # nothing else to use
    old = _healthy()
    old[TRACE] += presses
    assert _taken(_judge(tmp_path / "v3", old, rubric="heuristic-v3")) == [("keys_ignored", 2.0)]


def test_keys_given_to_a_focused_widget_do_not_make_a_keyboard_app(tmp_path: Path, files: Files) -> None:
    """v5: "the arrow keys on a focused knob" is the widget's keyboard access, which presses on the page neither
    reach nor refute; v4 took any mention of keys for a keyboard app."""
    files[QUERY]["brief"] = "Dials you turn with the mouse; the arrow keys on a focused dial step its value."
    files[TRACE] += [_press(4, "ArrowRight", "no_change"), _press(5, "ArrowDown", "no_change"),
                     _press(6, "Space", "no_change")]
    assert _taken(_judge(tmp_path / "widget", files)) == []
    assert _taken(_judge(tmp_path / "v4", files, rubric="heuristic-v4")) == [("keys_ignored", 2.0)]
    files[QUERY]["brief"] = "Dials you turn with the mouse. The arrow keys turn the last dial used."
    assert _taken(_judge(tmp_path / "page", files)) == [("keys_ignored", 2.0)]


def test_a_keyboard_app_that_listens_for_no_key_is_charged(tmp_path: Path, files: Files) -> None:
    """v5: the explorer presses keys on every page that listens for them; a keyboard app that gave it no reason
    to (its key handler gone) has keys that cannot work. Not said of another policy's trace, which probes no keys."""
    files[QUERY]["brief"] = "A 2048 game: the arrow keys slide the tiles."
    verdict = _judge(tmp_path / "unheard", files)
    assert _taken(verdict) == [("keys_ignored", 2.0)]
    assert "gave no sign of listening" in verdict.attributions[0].description
    assert _taken(_judge(tmp_path / "v4", files, rubric="heuristic-v4")) == []
    assert _taken(_judge(tmp_path / "agent", files, policy="llm")) == []
    files[DESKTOP]["facts"]["canvas_share"] = 0.5  # a canvas game may take keys on the canvas itself
    assert _taken(_judge(tmp_path / "canvas", files)) == []
    files[DESKTOP]["facts"]["canvas_share"] = 0.0
    files[TRACE].append(_press(4, "ArrowLeft", "changed"))
    assert _taken(_judge(tmp_path / "heard", files)) == []


def test_unstyled_is_decided_from_computed_defaults_not_style_attributes(tmp_path: Path, files: Files) -> None:
    facts = files[DESKTOP]["facts"]
    facts.update(css_rules=0, inline_styled_elements=3, defaults=DEFAULTS)  # a script set three bar widths
    verdict = _judge(tmp_path / "bare", files)
    assert verdict.aesthetic == 1.0
    assert "browser's default styles show" in verdict.aesthetic_reason
    facts.update(css_rules=0, inline_styled_elements=0, defaults={**DEFAULTS, "buttons": False})
    assert _judge(tmp_path / "buttons", files).aesthetic == 8.0  # restyled buttons: a designed page


def test_a_document_with_no_author_css_is_unstyled_whatever_its_font(tmp_path: Path, files: Files) -> None:
    """v9: no CSS rule, no style attribute, the body's default margins and colours: raw HTML, even when most of
    its text is in the browser's default monospace (a demo of code samples), not its serif. Restyled buttons, or
    colours not the defaults (a web component's own styles, which the document's sheets do not count), still make
    it designed; v8 read the font alone."""
    facts = files[DESKTOP]["facts"]
    facts.update(css_rules=0, inline_styled_elements=0, defaults={**DEFAULTS, "font": False})
    assert _judge(tmp_path / "code", files).aesthetic == 1.0
    assert _judge(tmp_path / "v8", files, rubric="heuristic-v8").aesthetic == 8.0
    facts.update(defaults={**DEFAULTS, "font": False, "colors": False})
    assert _judge(tmp_path / "component", files).aesthetic == 8.0
    facts.update(defaults={**DEFAULTS, "font": False, "buttons": False})
    assert _judge(tmp_path / "buttons", files).aesthetic == 8.0
    facts.update(css_rules=3, defaults={**DEFAULTS, "font": False})
    assert _judge(tmp_path / "sheet", files).aesthetic == 8.0


def test_a_designed_page_never_scores_below_the_unstyled_baseline(tmp_path: Path, files: Files) -> None:
    facts = files[DESKTOP]["facts"]
    facts.update(defaults=DESIGNED, broken_images=[{"selector": f"#i{i}", "src": f"{i}.png"} for i in range(4)],
                 low_contrast_count=5, low_contrast=[{"selector": "#c", "text": "pale", "ratio": 3.0,
                                                      "required": 4.5}])
    del facts["design"], files[SHOT]  # evidence from before the design facts: no quality measured
    files[MOBILE]["facts"].update(overflow_x=300, scroll_width=690, has_viewport_meta=False, viewport_width=980)
    verdict = _judge(tmp_path, files)
    # 5.0 styled, no quality, 1.5 + 1.0 + 1.5 + 1.0 = 5.0 of defects: held at the unstyled baseline 1.0
    assert sum(d for _, d in _taken(verdict)) == 5.0
    assert verdict.aesthetic == 1.0


def test_illegible_text_goes_below_the_floor(tmp_path: Path, files: Files) -> None:
    facts = files[DESKTOP]["facts"]
    collapsed = [{"selector": f"#t{i}", "text": "faint", "ratio": 1.1, "required": 4.5} for i in range(6)]
    facts.update(defaults=DESIGNED, low_contrast_count=6, low_contrast=collapsed, illegible_count=6)
    verdict = _judge(tmp_path, files)
    # 8.0 (5 + six qualities) - 1.0 widespread low contrast - 3.0 illegible
    assert _taken(verdict) == [("illegible_text", 3.0), ("low_contrast_widespread", 1.0)]
    assert verdict.aesthetic == 4.0
    files[MOBILE]["facts"].update(overflow_x=300, scroll_width=690)
    del facts["design"], files[SHOT]
    # 5.0 - 1.5 - 1.0 = 2.5 held above the floor, then - 3.0 illegible: below the unstyled baseline
    assert _judge(tmp_path / "worse", files).aesthetic == 0.0


# --- heuristic-v3: measured design qualities in place of v2's bonuses ---


def _quality(verdict: Verdict, name: str) -> str:
    return next(c.reason for c in verdict.criteria if c.criterion == f"quality:{name}")


def test_every_quality_is_cited_with_its_measured_value(tmp_path: Path, files: Files) -> None:
    verdict = _judge(tmp_path, files)
    assert [c.criterion for c in verdict.criteria] == ["baseline", "bonuses"] + [
        f"quality:{name}" for name in ("alignment", "type_scale", "spacing_rhythm", "palette", "hierarchy",
                                       "whitespace")]
    assert _quality(verdict, "type_scale") == ("+0.5: 3 font sizes (16, 20, 40 px; at most 6) in 1 typeface "
                                               "(at most 2) [static/desktop-facts.json (design)].")
    assert _quality(verdict, "whitespace").endswith("equilibrium 1.00 (needs 0.9) [static/desktop-viewport.png].")
    assert ("Qualities: +0.5 alignment, +0.5 type scale, +0.5 spacing rhythm, +0.5 palette, +0.5 hierarchy, "
            "+0.5 whitespace.") in verdict.aesthetic_reason
    assert verdict.attributions == []  # qualities are criteria, not failure attributions


def _ragged(files: Files) -> None:
    for row, left in zip(files[DESKTOP]["facts"]["design"]["text"][4:8], (137, 171, 149, 193), strict=True):
        row[0] = left


def _many_sizes(files: Files) -> None:
    for row, size in zip(files[DESKTOP]["facts"]["design"]["text"][:4], (31, 13, 15, 17), strict=True):
        row[4] = size


def _many_typefaces(files: Files) -> None:
    design = files[DESKTOP]["facts"]["design"]
    design["families"] += ["georgia", "impact"]
    design["text"][0][9], design["text"][5][9] = 1, 2


def _off_grid(files: Files) -> None:
    files[DESKTOP]["facts"]["design"]["spacing"] = {"7": 10, "13": 10, "8": 5}


def _many_hues(files: Files) -> None:
    files[DESKTOP]["facts"]["design"]["colors"] |= {"220,38,38": 8000, "22,163,74": 8000, "202,138,4": 8000}


def _flat(files: Files) -> None:
    for row in files[DESKTOP]["facts"]["design"]["text"]:
        row[4], row[5] = 16, 400


def _lopsided(files: Files) -> None:
    files[SHOT] = design_screenshot(x0=0, x1=640)


@pytest.mark.parametrize(("name", "spoil", "measured"), [
    ("alignment", _ragged, "60% of 10 text blocks"),
    ("type_scale", _many_sizes, "7 font sizes"),
    ("type_scale", _many_typefaces, "3 font sizes (16, 20, 40 px; at most 6) in 3 typefaces"),
    ("spacing_rhythm", _off_grid, "20% of 25 margins"),
    ("palette", _many_hues, "in 4 hue families"),
    ("hierarchy", _flat, "1.00x"),
    ("whitespace", _lopsided, "equilibrium 0.50"),
])
def test_each_quality_missed_costs_exactly_its_half_point(tmp_path: Path, files: Files, name: str,
                                                          spoil: Any, measured: str) -> None:
    spoil(files)
    verdict = _judge(tmp_path, files)
    assert (verdict.functional, verdict.aesthetic) == (8.0, 7.5)
    assert verdict.attributions == []
    assert _quality(verdict, name).startswith("+0.0: ")
    assert measured in _quality(verdict, name)
    others = [c.reason for c in verdict.criteria
              if c.criterion.startswith("quality:") and c.criterion != f"quality:{name}"]
    assert all(reason.startswith("+0.5: ") for reason in others)


def test_a_page_missing_every_quality_keeps_the_styled_baseline(tmp_path: Path, files: Files) -> None:
    for spoil in (_ragged, _many_typefaces, _off_grid, _many_hues, _flat, _lopsided):  # _flat: one size
        spoil(files)
    verdict = _judge(tmp_path, files)
    assert (verdict.functional, verdict.aesthetic) == (8.0, 5.0)
    assert "Qualities: none earned." in verdict.aesthetic_reason


def test_evidence_from_before_the_design_facts_measures_only_the_screenshot(tmp_path: Path, files: Files) -> None:
    del files[DESKTOP]["facts"]["design"]
    verdict = _judge(tmp_path / "old", files)
    assert verdict.aesthetic == 5.5  # 5 + whitespace
    assert ("Qualities: +0.5 whitespace (not measured: alignment, type scale, spacing rhythm, palette, "
            "hierarchy).") in verdict.aesthetic_reason
    assert "not measured: the evidence has no design facts" in _quality(verdict, "palette")
    del files[SHOT]
    assert _judge(tmp_path / "older", files).aesthetic == 5.0


def test_a_page_in_the_browsers_defaults_gets_exactly_the_unstyled_baseline(tmp_path: Path, files: Files) -> None:
    # the tidy design facts and screenshot are still there: no quality may lift a page that is not designed
    files[DESKTOP]["facts"].update(defaults=DEFAULTS)
    unstyled = _judge(tmp_path / "unstyled", files)
    assert unstyled.aesthetic == 1.0
    files[DESKTOP]["facts"].update(defaults=DESIGNED)
    for spoil in (_ragged, _many_typefaces, _off_grid, _many_hues, _flat, _lopsided):  # _flat: one size
        spoil(files)
    assert _judge(tmp_path / "styled", files).aesthetic == 5.0 > unstyled.aesthetic


@pytest.mark.parametrize("spoil", [_ragged, _many_hues, _lopsided, None])
def test_qualities_never_move_the_functional_score(tmp_path: Path, files: Files, spoil: Any) -> None:
    files[TRACE] += [_step(4, "#undo", "no_change", state="s1"), _step(5, "#undo", "no_change", state="s2")]
    files[CONSOLE] = [_console("interaction", "error", "HTTP 404: /api/habits")]
    if spoil is not None:
        spoil(files)
    v3, v2 = _judge(tmp_path / "v3", files), _judge(tmp_path / "v2", files, "heuristic-v2")
    assert v3.functional == v2.functional == 6.5
    assert v3.functional_reason == v2.functional_reason
    assert [a for a in v3.attributions if a.dimension == "functional"] == [
        a for a in v2.attributions if a.dimension == "functional"]


def test_the_same_evidence_gets_the_same_verdict(tmp_path: Path, files: Files) -> None:
    _ragged(files)
    first = _judge(tmp_path, files)
    second = asyncio.run(HeuristicJudge()(EvidenceBundle(tmp_path / "bundle"), verdict_key="v"))
    assert first == second
