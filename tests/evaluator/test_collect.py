"""Evidence collection and the heuristic judge on purpose-built apps, in real Chromium."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import cv2
import pytest
from playwright.async_api import Browser

from evaluator.evidence.bundle import EvidenceBundle, verify_bundle
from evaluator.evidence.collect import collect_evidence
from evaluator.judges import create_judge
from evaluator.models import AgentConfig, FailureAttribution, JudgeConfig, Verdict
from tests.support import app_artifact, app_query, with_browser

pytestmark = pytest.mark.browser


APPS = ("dead-button.html", "silent-form.html", "error-on-click.html")


@pytest.fixture(scope="module")
def collected(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Verdict]]:
    """Each app's bundle and heuristic verdict, collected once, one app after another in one Chromium.

    The tests of an app all need the same collection (the same agent settings), so it is made once for them; the
    tests only read the bundles and verdicts.
    """
    root = tmp_path_factory.mktemp("collected")

    async def scenario(browser: Browser) -> dict[str, tuple[Path, Verdict]]:
        out: dict[str, tuple[Path, Verdict]] = {}
        for app in APPS:
            bundle = root / app
            await collect_evidence(browser=browser, artifact=app_artifact(app), query=app_query(app),
                                   agent=AgentConfig(max_steps=8), bundle_dir=bundle, evidence_key=f"ev-{app}")
            judge = create_judge(JudgeConfig())
            out[app] = bundle, await judge(EvidenceBundle(bundle), verdict_key=f"v-{app}")
        return out

    return with_browser(scenario)


def _cited(verdict: Verdict, selector: str) -> list[FailureAttribution]:
    return [a for a in verdict.attributions if any(e.detail and selector in e.detail for e in a.evidence)]


def test_bundle_is_complete_verified_and_holds_every_kind_of_evidence(
        collected: dict[str, tuple[Path, Verdict]]) -> None:
    bundle, _ = collected["dead-button.html"]
    manifest = verify_bundle(bundle)
    paths = {f.path for f in manifest.files}
    for required in ("static/desktop-viewport.png", "static/desktop-full.png", "static/mobile-viewport.png",
                     "static/mobile-full.png", "static/dom.html", "static/accessibility.yaml", "console.json",
                     "network.json", "interaction/trace.json", "interaction/video.mp4", "agent_summary.json",
                     "source/index.html", "server.log", "query.json", "static/accessibility.json"):
        assert required in paths, required
    assert not (bundle / "INCOMPLETE").exists()
    assert not (bundle / "interaction" / ".frames").exists()
    summary = json.loads((bundle / "agent_summary.json").read_text())
    assert set(summary) == {"actions_performed", "observations", "overall_observation"}
    assert manifest.tools.browser.startswith("chromium")
    assert "NOT a sandbox" in manifest.tools.sandbox
    audit = json.loads((bundle / "static" / "accessibility.json").read_text())
    assert audit["error"] is None and audit["dom_elements"] > 5 and audit["axe_version"] == "4.14.1"


def test_video_duration_matches_interaction_wall_time_and_covers_every_step(
        collected: dict[str, tuple[Path, Verdict]]) -> None:
    bundle, _ = collected["dead-button.html"]
    result = json.loads((bundle / "interaction" / "result.json").read_text())
    trace: list[dict[str, Any]] = json.loads((bundle / "interaction" / "trace.json").read_text())
    assert trace, "the explorer took no step"
    capture = cv2.VideoCapture(str(bundle / "interaction" / "video.mp4"))
    fps = capture.get(cv2.CAP_PROP_FPS)
    frames = []
    while True:
        ok, frame = capture.read()
        if not ok:
            break
        frames.append(frame)
    duration = len(frames) / fps
    wall = result["wall_duration_s"]
    assert abs(duration - wall) <= 0.10 * wall, (duration, wall)
    for step in trace:
        assert step["observed_at_s"] <= step["action_start_s"] <= step["action_end_s"] <= duration + 0.05
        for moment in (step["observed_at_s"], step["action_start_s"], step["action_end_s"]):
            index = min(int(moment * fps), len(frames) - 1)
            assert frames[index] is not None and frames[index].std() > 0, f"no picture at step {step['step']}"
        assert (bundle / step["screenshot"]).is_file()


def test_dead_button_is_detected_and_cited_while_the_working_one_is_not(
        collected: dict[str, tuple[Path, Verdict]]) -> None:
    _, verdict = collected["dead-button.html"]
    dead = _cited(verdict, "#save-draft")
    assert [a.category for a in dead] in (["dead_control"], ["unresponsive_control"])
    assert dead[0].evidence[0].step is not None and dead[0].evidence[0].video_time_s is not None
    assert not _cited(verdict, "#add-note")
    assert verdict.functional < 8.0
    assert "HEURISTIC" in verdict.label


def test_form_that_swallows_input_is_detected(collected: dict[str, tuple[Path, Verdict]]) -> None:
    _, verdict = collected["silent-form.html"]
    rejected = _cited(verdict, "#name")
    assert [a.category for a in rejected] == ["input_rejected"]
    assert "typed" in rejected[0].description
    assert {a.category for a in _cited(verdict, "#join")} <= {"dead_control", "unresponsive_control"}
    assert _cited(verdict, "#join")


def test_js_error_on_click_is_detected_and_cited(collected: dict[str, tuple[Path, Verdict]]) -> None:
    bundle, verdict = collected["error-on-click.html"]
    errors = _cited(verdict, "#checkout")
    assert [a.category for a in errors] == ["error_on_action"]
    assert "TypeError" in errors[0].description
    assert not _cited(verdict, "#add")
    console = json.loads((bundle / "console.json").read_text())
    uncaught = [e for e in console if e["class"] == "uncaught"]
    assert uncaught and uncaught[0]["phase"] == "interaction" and uncaught[0]["video_time_s"] is not None


def test_rejudging_stored_evidence_needs_no_browser_and_is_deterministic(
        collected: dict[str, tuple[Path, Verdict]]) -> None:
    bundle, first = collected["error-on-click.html"]
    again = asyncio.run(create_judge(JudgeConfig())(EvidenceBundle(bundle), verdict_key="v-error-on-click.html"))
    assert again == first
