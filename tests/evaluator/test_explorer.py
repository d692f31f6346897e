"""The explorer tests like a careful person: it submits typed text with Enter, presses keys on pages that
listen for them (judged against an idle control), finds controls by their listeners, and the trace classes
every step's effect. Real Chromium on purpose-built pages (fixtures/apps), each beside a broken copy."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from playwright.async_api import Browser

from evaluator.collect import collect_evidence
from evaluator.evidence import EvidenceBundle
from evaluator.judges import create_judge
from evaluator.models import AgentConfig, JudgeConfig, Verdict
from evaluator.observation import Effect
from tests.support import app_artifact, app_query, with_browser

pytestmark = pytest.mark.browser

APPS = ("enter-list.html", "enter-dead.html", "key-game.html", "key-game-dead.html", "scripted-control.html",
        "hidden-checkbox.html")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[list[dict[str, Any]], Verdict]]:
    root = tmp_path_factory.mktemp("explorer")

    async def scenario(browser: Browser) -> dict[str, tuple[list[dict[str, Any]], Verdict]]:
        async def one(app: str) -> tuple[list[dict[str, Any]], Verdict]:
            bundle = root / app
            await collect_evidence(browser=browser, artifact=app_artifact(app), query=app_query(app),
                                   agent=AgentConfig(max_steps=12), bundle_dir=bundle, evidence_key=f"ev-{app}")
            verdict = await create_judge(JudgeConfig())(EvidenceBundle(bundle), verdict_key=f"v-{app}")
            return json.loads((bundle / "interaction" / "trace.json").read_text()), verdict
        done = await asyncio.gather(*(one(app) for app in APPS))
        return dict(zip(APPS, done, strict=True))

    return with_browser(scenario)


def _categories(verdict: Verdict) -> list[str]:
    return [a.category for a in verdict.attributions]


def _enter_steps(trace: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [s for s in trace if s["action"]["kind"] == "press" and s["target"] and s["action"]["text"] == "Enter"]


def test_typed_text_is_submitted_with_enter_and_its_effect_is_seen(runs: dict[str, Any]) -> None:
    trace, verdict = runs["enter-list.html"]
    kinds = [(s["action"]["kind"], (s["target"] or {}).get("selector", "")) for s in trace]
    typed_at = kinds.index(("type", "#title"))
    assert kinds[typed_at + 1] == ("press", "#title")  # Enter right after typing, in the same field
    enter = _enter_steps(trace)[0]
    assert enter["result"]["status"] == "changed"
    assert enter["result"]["effect"] == Effect.TYPED_TEXT  # the typed title now shows in the list
    assert "input_ignored" not in _categories(verdict)
    assert verdict.functional == 8.0


def test_enter_that_does_nothing_is_a_cited_deduction(runs: dict[str, Any]) -> None:
    trace, verdict = runs["enter-dead.html"]
    enter = _enter_steps(trace)[0]
    assert enter["result"]["status"] == "no_change" and enter["result"]["effect"] == Effect.NOTHING
    ignored = [a for a in verdict.attributions if a.category == "input_ignored"]
    assert len(ignored) == 1 and ignored[0].deduction == 1.5
    assert {e.step for e in ignored[0].evidence} == {enter["step"], enter["step"] - 1}
    assert verdict.functional < runs["enter-list.html"][1].functional


def test_keys_are_pressed_on_a_keyboard_driven_page_against_an_idle_control(runs: dict[str, Any]) -> None:
    trace, verdict = runs["key-game.html"]
    presses = [s for s in trace if s["action"]["kind"] == "press" and s["target"] is None]
    assert [s["action"]["text"] for s in presses][:1] == ["ArrowRight"]
    assert sum(s["result"]["status"] == "changed" for s in presses) >= 3  # then the key phase ends
    assert all(s["result"]["idle_changed"] for s in presses)  # the bar drifted in every idle interval
    assert "keys_ignored" not in _categories(verdict)


def test_a_page_that_ignores_every_key_is_a_cited_deduction(runs: dict[str, Any]) -> None:
    trace, verdict = runs["key-game-dead.html"]
    presses = [s for s in trace if s["action"]["kind"] == "press" and s["target"] is None]
    assert len(presses) >= 3
    # the bar kept drifting, but no key changed more than it does by itself
    assert all(s["result"]["status"] == "no_change" and s["result"]["idle_changed"] for s in presses)
    assert "keys_ignored" in _categories(verdict)
    assert verdict.functional < runs["key-game.html"][1].functional


def test_a_control_known_only_by_its_listener_is_exercised(runs: dict[str, Any]) -> None:
    trace, verdict = runs["scripted-control.html"]
    clicks = [s for s in trace if s["action"]["kind"] == "click" and s["target"]["selector"] == "#like"]
    assert clicks and clicks[0]["result"]["status"] == "changed"
    assert clicks[0]["result"]["effect"] == Effect.DOM
    assert "no_controls" not in _categories(verdict)


def test_a_checkbox_styled_through_its_label_is_used_there_and_one_in_a_hidden_panel_is_not(
        runs: dict[str, Any]) -> None:
    trace, verdict = runs["hidden-checkbox.html"]
    targets = [s["target"]["selector"] for s in trace if s["target"]]
    assert not [t for t in targets if "beta" in t or "advanced" in t]
    switch = [s for s in trace if s["target"] and s["target"]["tag"] == "label"]
    assert switch and switch[0]["result"]["status"] == "changed"  # the theme text changed
    assert verdict.functional == 8.0


def test_every_step_carries_an_effect_class(runs: dict[str, Any]) -> None:
    for trace, _ in runs.values():
        for step in trace:
            assert step["result"]["effect"] in {e.value for e in Effect}
