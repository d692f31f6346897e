"""The heuristic judge, one rubric row at a time (``evaluator/rubrics/heuristic-v2.yaml``).

The bundles here are SYNTHETIC: written by hand into ``tmp_path`` instead of collected from a
browser, because a hand-written bundle isolates one rubric row each. The healthy baseline scores
functional 8.0 and aesthetic 8.0 (styled 5.0 + colourful 1.0 + structured 1.0 + polish 1.0); each
test changes one measured fact and asserts the exact scores and the attribution that moved them.
Expected numbers are literals worked out from the rubric by hand, not recomputed from it.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from evaluator.evidence import EvidenceBundle, EvidenceWriter
from evaluator.heuristic import HeuristicJudge
from evaluator.models import AgentConfig, Difficulty, Kind, Query, ToolVersions, Verdict
from evaluator.observation import KEY_PROBE_REASON

QUERY, DESKTOP, MOBILE = "query.json", "static/desktop-facts.json", "static/mobile-facts.json"
TRACE, RESULT, CONSOLE = "interaction/trace.json", "interaction/result.json", "console.json"
ENGLISH = ("Track your habits and build a streak with this simple tool. Add a new habit, mark it done "
           "for the day, and see all your progress at a glance on the board.")

Files = dict[str, Any]


def _step(n: int, selector: str, status: str = "changed", *, state: str = "s0", kind: str = "click",
          errors: tuple[str, ...] = ()) -> dict[str, Any]:
    """One trace step acting on control ``selector``."""
    return {
        "step": n, "observation_state": state, "element_count": 30, "screenshot": f"interaction/step-{n:03d}.png",
        "action": {"kind": kind, "element": 0, "text": "abc" if kind == "type" else None},
        "target": {"selector": selector, "label": selector.lstrip("#")},
        "result": {"status": status, "detail": "" if status == "changed" else f"{status} detail",
                   "dom_changed": status == "changed", "visual_changed": False, "errors": list(errors)},
        "observed_at_s": float(n), "deliberation_s": 0.1, "action_start_s": n + 0.2, "action_end_s": n + 0.8,
    }


def _console(phase: str, klass: str, text: str) -> dict[str, Any]:
    return {"wall": 0.0, "phase": phase, "kind": "pageerror" if klass == "uncaught" else "error",
            "class": klass, "text": text, "url": ""}


def _healthy() -> Files:
    """A styled English interactive app with no defect whose three controls all changed something."""
    query = Query(id="habits", brief="Build a habit tracker.", domain="productivity", leaf="trackers",
                  difficulty=Difficulty.EASY, language="en", kind=Kind.INTERACTIVE_APPLICATION)
    image = {"blank": False, "colorfulness": 20.0, "background_fraction": 0.6, "edge_density": 0.05}
    facts = {"element_count": 60, "text_length": 400, "text_sample": ENGLISH, "css_rules": 40,
             "inline_styled_elements": 0, "broken_images": [], "low_contrast_count": 0, "low_contrast": []}
    mobile = {"overflow_x": 0, "scroll_width": 390, "has_viewport_meta": True, "viewport_width": 390}
    return {
        QUERY: query.model_dump(mode="json"),
        DESKTOP: {"facts": facts, "image": image, "timings": {"load_s": 0.4}},
        MOBILE: {"facts": mobile, "image": dict(image), "timings": {"load_s": 0.3}},
        TRACE: [_step(1, "#add"), _step(2, "#done"), _step(3, "#reset")],
        RESULT: {"coverage": {"salient": 3, "exercised": 3, "remaining": []}, "error": None},
        CONSOLE: [],
    }


def _judge(tmp_path: Path, files: Files) -> Verdict:
    """Commit ``files`` as a bundle under ``tmp_path`` and score it with the heuristic judge."""
    writer = EvidenceWriter(tmp_path / "bundle")
    for rel, data in files.items():
        writer.write_json(rel, data)
    tools = ToolVersions(evalgrid="0", collector="synthetic", browser="none", playwright="none", ffmpeg="none",
                         sandbox="local")
    writer.commit(evidence_key="ev-synthetic", artifact_key="art-synthetic", agent=AgentConfig(), tools=tools,
                  timings={})
    return asyncio.run(HeuristicJudge()(EvidenceBundle(tmp_path / "bundle"), verdict_key="v"))


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


def test_core_interaction_failure_when_half_of_three_or_more_controls_do_nothing(tmp_path: Path,
                                                                                  files: Files) -> None:
    files[TRACE] = [_step(1, "#add"), _step(2, "#done", "no_change"), _step(3, "#reset", "no_change"),
                    _step(4, "#undo")]
    verdict = _judge(tmp_path, files)
    assert verdict.functional == 5.0  # 8 - 0.5 - 0.5 - 2.0
    assert _taken(verdict) == [("unresponsive_control", 0.5), ("unresponsive_control", 0.5),
                               ("core_interaction_failure", 2.0)]


def test_no_core_failure_below_three_controls_or_half(tmp_path: Path, files: Files) -> None:
    files[TRACE] = [_step(1, "#add"), _step(2, "#done", "no_change"), _step(3, "#reset")]
    assert _taken(_judge(tmp_path / "third", files)) == [("unresponsive_control", 0.5)]
    files[TRACE] = [_step(1, "#done", "no_change"), _step(2, "#reset", "no_change")]
    verdict = _judge(tmp_path / "two", files)
    assert verdict.functional == 7.0
    assert _taken(verdict) == [("unresponsive_control", 0.5), ("unresponsive_control", 0.5)]


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
    assert (verdict.functional, verdict.aesthetic) == (8.0, 5.5)  # 5 + 1 + 1, no polish, - 1.5
    assert _taken(verdict) == [("mobile_overflow", 1.5)]
    files[MOBILE]["facts"].update(overflow_x=4, scroll_width=394)
    assert _judge(tmp_path / "tolerated", files).aesthetic == 8.0


def test_mobile_not_adapted(tmp_path: Path, files: Files) -> None:
    files[MOBILE]["facts"].update(has_viewport_meta=False, viewport_width=980)
    verdict = _judge(tmp_path, files)
    assert (verdict.functional, verdict.aesthetic) == (8.0, 6.0)
    assert _taken(verdict) == [("mobile_not_adapted", 1.0)]


def test_broken_image(tmp_path: Path, files: Files) -> None:
    files[DESKTOP]["facts"]["broken_images"] = [{"src": "hero.png", "selector": "img.hero"}]
    verdict = _judge(tmp_path, files)
    assert (verdict.functional, verdict.aesthetic) == (8.0, 6.5)
    assert _taken(verdict) == [("broken_image", 0.5)]


def test_broken_images_are_capped_at_one_and_a_half(tmp_path: Path, files: Files) -> None:
    files[DESKTOP]["facts"]["broken_images"] = [{"src": f"{n}.png", "selector": f"img.n{n}"} for n in range(4)]
    verdict = _judge(tmp_path, files)
    assert verdict.aesthetic == 5.5  # 7 - 1.5, not 7 - 2.0
    assert _taken(verdict) == [("broken_image", 0.5)] * 3


def _low_contrast(count: int) -> dict[str, Any]:
    sample = [{"text": "faint caption", "ratio": 2.1, "required": 4.5, "selector": "p.caption"}]
    return {"low_contrast_count": count, "low_contrast": sample * count}


def test_low_contrast_for_three_elements(tmp_path: Path, files: Files) -> None:
    files[DESKTOP]["facts"].update(_low_contrast(3))
    verdict = _judge(tmp_path, files)
    assert (verdict.functional, verdict.aesthetic) == (8.0, 6.5)
    assert _taken(verdict) == [("low_contrast", 0.5)]


def test_low_contrast_widespread_above_three_elements(tmp_path: Path, files: Files) -> None:
    files[DESKTOP]["facts"].update(_low_contrast(4))
    verdict = _judge(tmp_path, files)
    assert (verdict.functional, verdict.aesthetic) == (8.0, 6.0)
    assert _taken(verdict) == [("low_contrast_widespread", 1.0)]


def test_unstyled_baseline_gets_no_bonus(tmp_path: Path, files: Files) -> None:
    files[DESKTOP]["facts"].update(css_rules=0, inline_styled_elements=0)  # image still colourful and structured
    verdict = _judge(tmp_path, files)
    assert (verdict.functional, verdict.aesthetic) == (8.0, 1.0)
    assert verdict.attributions == []
    assert "Baseline 1.0: raw HTML" in verdict.aesthetic_reason
    assert "No bonus below a styled baseline." in verdict.aesthetic_reason


def test_inline_styles_alone_make_a_styled_baseline(tmp_path: Path, files: Files) -> None:
    files[DESKTOP]["facts"].update(css_rules=0, inline_styled_elements=7)
    assert _judge(tmp_path, files).aesthetic == 8.0


def test_styled_baseline_without_measured_qualities(tmp_path: Path, files: Files) -> None:
    files[DESKTOP]["image"].update(colorfulness=0.0, background_fraction=0.97, edge_density=0.001)
    verdict = _judge(tmp_path / "polished", files)
    assert verdict.aesthetic == 6.0  # 5 + polish
    assert "Baseline 5.0: author styling" in verdict.aesthetic_reason
    files[DESKTOP]["facts"].update(_low_contrast(1))
    assert _judge(tmp_path / "bare", files).aesthetic == 4.5  # 5 - 0.5, and polish is lost


@pytest.mark.parametrize(("colorfulness", "expected"), [(12.0, 8.0), (11.9, 7.0)])
def test_colorful_bonus_from_twelve(tmp_path: Path, files: Files, colorfulness: float, expected: float) -> None:
    files[DESKTOP]["image"]["colorfulness"] = colorfulness
    verdict = _judge(tmp_path, files)
    assert verdict.aesthetic == expected
    assert ("colourful" in verdict.aesthetic_reason) is (expected == 8.0)


@pytest.mark.parametrize(("background", "edges", "expected"),
                         [(0.9, 0.01, 8.0), (0.91, 0.05, 7.0), (0.6, 0.009, 7.0)])
def test_structured_bonus_needs_little_background_and_enough_edges(
        tmp_path: Path, files: Files, background: float, edges: float, expected: float) -> None:
    files[DESKTOP]["image"].update(background_fraction=background, edge_density=edges)
    verdict = _judge(tmp_path, files)
    assert verdict.aesthetic == expected
    assert ("structured layout" in verdict.aesthetic_reason) is (expected == 8.0)


def test_polish_bonus_is_lost_to_any_aesthetic_deduction(tmp_path: Path, files: Files) -> None:
    files[DESKTOP]["image"]["colorfulness"] = 0.0  # off the 8.0 ceiling, so the polish point shows
    clean = _judge(tmp_path / "clean", files)
    assert clean.aesthetic == 7.0  # 5 + structured + polish
    assert "no layout, image or contrast defect" in clean.aesthetic_reason
    files[DESKTOP]["facts"].update(_low_contrast(1))
    flawed = _judge(tmp_path / "flawed", files)
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
    files[TRACE] += [_press(4, "ArrowRight", "no_change"), _press(5, "ArrowDown", "no_change"),
                     _press(6, "Space", "no_change")]
    assert _taken(_judge(tmp_path / "dead", files)) == [("keys_ignored", 2.0)]
    files[TRACE][-1] = _press(6, "Space", "changed")
    assert _taken(_judge(tmp_path / "alive", files)) == []
    # keys another policy pressed for its own reasons (an LLM agent's Escape) are not a key probe
    files[TRACE][-3:] = [_press(4 + i, key, "no_change", reason="close the dialog")
                         for i, key in enumerate(("Escape", "Tab", "Escape"))]
    assert _taken(_judge(tmp_path / "agent", files)) == []


def test_unstyled_is_decided_from_computed_defaults_not_style_attributes(tmp_path: Path, files: Files) -> None:
    facts = files[DESKTOP]["facts"]
    facts.update(css_rules=0, inline_styled_elements=3, defaults=DEFAULTS)  # a script set three bar widths
    verdict = _judge(tmp_path / "bare", files)
    assert verdict.aesthetic == 1.0
    assert "browser's default styles show" in verdict.aesthetic_reason
    facts.update(css_rules=0, inline_styled_elements=0, defaults={**DEFAULTS, "buttons": False})
    assert _judge(tmp_path / "buttons", files).aesthetic == 8.0  # restyled buttons: a designed page


def test_a_designed_page_never_scores_below_the_unstyled_baseline(tmp_path: Path, files: Files) -> None:
    facts = files[DESKTOP]["facts"]
    facts.update(defaults=DESIGNED, broken_images=[{"selector": f"#i{i}", "src": f"{i}.png"} for i in range(4)],
                 low_contrast_count=5, low_contrast=[{"selector": "#c", "text": "pale", "ratio": 3.0,
                                                      "required": 4.5}])
    files[DESKTOP]["image"].update(colorfulness=0.0, edge_density=0.0)
    files[MOBILE]["facts"].update(overflow_x=300, scroll_width=690, has_viewport_meta=False, viewport_width=980)
    verdict = _judge(tmp_path, files)
    # 5.0 styled, no bonus, 1.5 + 1.0 + 1.5 + 1.0 = 5.0 of defects: held at the unstyled baseline 1.0
    assert sum(d for _, d in _taken(verdict)) == 5.0
    assert verdict.aesthetic == 1.0


def test_illegible_text_goes_below_the_floor(tmp_path: Path, files: Files) -> None:
    facts = files[DESKTOP]["facts"]
    collapsed = [{"selector": f"#t{i}", "text": "faint", "ratio": 1.1, "required": 4.5} for i in range(6)]
    facts.update(defaults=DESIGNED, low_contrast_count=6, low_contrast=collapsed, illegible_count=6)
    verdict = _judge(tmp_path, files)
    # 8.0 (5 + colourful + structured + no polish) - 1.0 widespread low contrast - 3.0 illegible
    assert _taken(verdict) == [("illegible_text", 3.0), ("low_contrast_widespread", 1.0)]
    assert verdict.aesthetic == 3.0
    files[MOBILE]["facts"].update(overflow_x=300, scroll_width=690)
    files[DESKTOP]["image"].update(colorfulness=0.0, edge_density=0.0)
    # 5.0 - 1.5 - 1.0 = 2.5 held above the floor, then - 3.0 illegible: below the unstyled baseline
    assert _judge(tmp_path / "worse", files).aesthetic == 0.0
