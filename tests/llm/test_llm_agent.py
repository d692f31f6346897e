"""The LLM agent's loop in real Chromium against a scripted OpenAI-compatible server.

The server stands in for the agent model; everything else is real: the page, the freeze, the
input, the screen recording and the evidence bundle.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Browser

from evaluator.agents.llm_agent import decision_schema
from evaluator.agents.observation import Action, Observation
from evaluator.agents.policies import policies
from evaluator.browser.freeze import FreezeController
from evaluator.browser.serve import serve_directory
from evaluator.errors import ConfigError, ModelUnavailableError
from evaluator.evidence.bundle import EvidenceWriter
from evaluator.evidence.collect import collect_evidence
from evaluator.evidence.console import PageLog
from evaluator.evidence.interaction import Interaction
from evaluator.evidence.screencast import ScreenRecorder
from evaluator.llm.client import Endpoint, ModelAccess
from evaluator.models import AgentConfig
from tests.evaluator.test_freeze import PROBE, _open
from tests.llm.scripted_server import ScriptedServer, Turn, scripted_server
from tests.support import APPS, app_artifact, app_query, with_browser

pytestmark = pytest.mark.browser

SUMMARY = {"actions_performed": ["Clicked Add note", "Clicked Save draft"],
           "observations": ["Save draft changed nothing on screen"],
           "overall_observation": "Adding notes works; saving a draft does nothing visible."}


def _text(body: dict[str, Any]) -> str:
    """Every user message's text (a repair request repeats the observation before its complaint)."""
    parts = []
    for message in body["messages"]:
        if message["role"] == "user":
            content = message["content"]
            parts += [p.get("text", "") for p in content] if isinstance(content, list) else [str(content)]
    return "\n".join(parts)


def _element(body: dict[str, Any], label: str) -> int:
    match = re.search(r"\[(\d+)\] \w+[^\n]*'" + re.escape(label) + "'", _text(body))
    assert match, f"no element {label!r} in the observation"
    return int(match.group(1))


def _decide(action: str, **fields: Any) -> Turn:
    answer = {"thought": f"{action} next", "action": action, "element": None, "to_element": None, "text": None,
              "amount": None, "summary": None, **fields}
    return Turn(content=json.dumps(answer))


def _access(server: ScriptedServer) -> ModelAccess:
    return ModelAccess(endpoints={"agent": Endpoint(base_url=server.url, backoff_s=0.01, max_attempts=3,
                                                    timeout_s=20)})


AGENT = AgentConfig(policy="llm", max_steps=6, coverage_gate=False,
                    options={"endpoint": "agent", "model": "agent-8b"})


def test_the_agent_tests_the_app_and_its_summary_is_the_evidence(tmp_path: Path) -> None:
    state = {"turn": 0}

    def responder(body: dict[str, Any]) -> Turn:
        state["turn"] += 1
        turn = state["turn"]
        if turn == 1:
            return Turn(status=500)  # a passing server error: retried by the client
        if turn == 2:
            return Turn(content='{"action": "click", "element":')  # malformed: one repair
        if turn == 3:
            return _decide("click", element=_element(body, "Add note"))
        if turn == 4:
            return _decide("click", element=999)  # no such element: repaired
        if turn == 5:
            return _decide("click", element=_element(body, "Save draft"))
        return _decide("finish", summary=SUMMARY)

    with scripted_server(responder=responder) as server:
        access = _access(server)

        async def run(browser: Browser) -> None:
            await collect_evidence(browser=browser, artifact=app_artifact("dead-button.html"),
                                   query=app_query("dead-button.html"), agent=AGENT, bundle_dir=tmp_path / "b",
                                   evidence_key="evidence-agent", models=access)

        with_browser(run)
    trace = json.loads((tmp_path / "b" / "interaction" / "trace.json").read_text())
    assert [(s["action"]["kind"], s["target"]["selector"]) for s in trace] == [("click", "#add-note"),
                                                                              ("click", "#save-draft")]
    assert [s["result"]["status"] for s in trace] == ["changed", "no_change"]
    assert json.loads((tmp_path / "b" / "agent_summary.json").read_text()) == SUMMARY
    first = server.requests[0]
    assert first["response_format"]["json_schema"]["schema"] == decision_schema()
    assert any(p["type"] == "image_url" for p in first["messages"][1]["content"])  # it sees the screenshot
    assert "A small app used by evalgrid's tests." in _text(first)  # and the user's brief
    assert "cannot be used: it is not valid JSON" in server.requests[2]["messages"][-1]["content"]
    assert "needs an element number" in server.requests[4]["messages"][-1]["content"]
    assert "step 0: click" in _text(server.requests[-1])  # the history reaches later turns
    [usage] = access.meter.usage()
    assert usage.role == "agent" and usage.calls == 5 and len(server.requests) == 6  # the 500: a retry, not a call


def test_the_page_stays_frozen_through_five_seconds_of_model_latency(tmp_path: Path) -> None:
    samples: list[tuple[dict[str, Any], dict[str, Any]]] = []

    def responder(body: dict[str, Any]) -> Turn:
        if "step 1:" in _text(body) or "step 0: click" in _text(body):
            return _decide("finish", summary=SUMMARY)
        slow = _decide("click", element=_element(body, "Bump"))
        slow.delay_s = 5.0
        return slow

    async def scenario(browser: Browser) -> dict[str, Any]:
        with scripted_server(responder=responder) as server, serve_directory(APPS, []) as origin:
            page, cdp = await _open(browser, origin)
            freezer = FreezeController(page, cdp)
            await freezer.start()
            model = policies.create("llm", config=AGENT, models=_access(server), query=None)

            async def measured(observation: Observation) -> Action:
                before = await page.evaluate(PROBE)
                action = await model(observation)
                samples.append((before, await page.evaluate(PROBE)))
                return action

            recorder = ScreenRecorder(cdp, tmp_path / "frames", live=False)
            await recorder.start()
            interaction = Interaction(page=page, app_url=f"{origin}/freeze-clock.html",
                                      writer=EvidenceWriter(tmp_path / "bundle"), recorder=recorder, freezer=freezer,
                                      log=PageLog(), policy=measured, config=AGENT)
            outcome = await interaction.run()
            await recorder.stop()
            return {"trace": outcome.trace, "final": await page.evaluate(PROBE)}

    r = with_browser(scenario)
    slow = samples[0]
    assert slow[0] == slow[1]  # ticks, rAF frames, Date.now and the CSS animation: all still
    assert r["trace"][0].deliberation_s >= 5.0
    assert r["final"]["bumps"] == 1  # the chosen click ran once the page was thawed


def test_a_model_that_cannot_be_reached_fails_the_run_not_the_app(tmp_path: Path) -> None:
    with scripted_server(responder=lambda body: Turn(status=503)) as server:
        access = _access(server)

        async def run(browser: Browser) -> None:
            await collect_evidence(browser=browser, artifact=app_artifact("dead-button.html"),
                                   query=app_query("dead-button.html"), agent=AGENT, bundle_dir=tmp_path / "b",
                                   evidence_key="evidence-down", models=access)

        with pytest.raises(ModelUnavailableError, match="after 3 attempts"):
            with_browser(run)
    assert not (tmp_path / "b" / "manifest.json").exists()  # no bundle is committed for a failed run


def test_a_refusal_ends_the_interaction_with_the_reason(tmp_path: Path) -> None:
    with scripted_server(responder=lambda body: Turn(refusal="I won't browse this site.")) as server:
        access = _access(server)

        async def run(browser: Browser) -> None:
            await collect_evidence(browser=browser, artifact=app_artifact("dead-button.html"),
                                   query=app_query("dead-button.html"), agent=AGENT, bundle_dir=tmp_path / "b",
                                   evidence_key="evidence-refused", models=access)

        with_browser(run)
        assert len(server.requests) == 1  # a refusal is not argued with
    result = json.loads((tmp_path / "b" / "interaction" / "result.json").read_text())
    assert result["ended_by"] == "policy" and result["steps"] == 0


def _collect_dead_button(access: ModelAccess, bundle: Path) -> None:
    async def run(browser: Browser) -> None:
        await collect_evidence(browser=browser, artifact=app_artifact("dead-button.html"),
                               query=app_query("dead-button.html"), agent=AGENT, bundle_dir=bundle,
                               evidence_key=f"evidence-{bundle.name}", models=access)

    with_browser(run)


def test_a_server_with_no_room_for_the_screenshot_gets_the_text_and_one_refusing_for_size_fails_the_turn(
        tmp_path: Path) -> None:
    """The server counts 100 tokens a screenshot and its context leaves none for one: the agent sends the page's
    text only. A server that refuses for size anyway costs the turn, as an unusable answer does: a wait, and after
    three in a row, the end, with the server's reason."""
    with scripted_server(responder=lambda body: _decide("finish", reason="done")) as server:
        server.max_model_len = 1200 + 100  # the answer's max_tokens and less than one image's room for the prompt
        _collect_dead_button(ModelAccess(endpoints={"agent": Endpoint(base_url=server.url, backoff_s=0.01,
                                                                      image_tokens=100)}), tmp_path / "text")
        assert server.requests and all(isinstance(r["messages"][1]["content"], str) for r in server.requests)
        assert "screenshot is left out to fit" in server.requests[0]["messages"][1]["content"]
    with scripted_server(responder=lambda body: _decide("finish", reason="done")) as server:
        server.max_images = 0
        _collect_dead_button(_access(server), tmp_path / "big")
        assert len(server.requests) == 3  # three turns, each refused once (not retried)
    trace = json.loads((tmp_path / "big" / "interaction" / "trace.json").read_text())
    assert [step["action"]["kind"] for step in trace] == ["wait", "wait"]
    assert "refused the request for its size" in trace[0]["action"]["reason"]


def test_a_policy_without_endpoints_is_a_clear_error() -> None:
    with pytest.raises(ConfigError, match="needs model endpoints"):
        policies.create("llm", config=AGENT, models=None, query=None)
    with pytest.raises(ConfigError, match="no endpoint 'agent'"):
        policies.create("llm", config=AGENT, models=ModelAccess(), query=None)
