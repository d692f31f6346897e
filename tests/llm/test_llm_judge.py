"""The LLM judge's loop against a scripted OpenAI-compatible server, on evidence collected for real.

The server stands in for the judge model (a real one cannot run deterministically here); the
bundles come from real Chromium runs of fixture apps. What is checked is evalgrid's side: what the
model is shown, how its answers become verdicts, and how bad answers, refusals and injections are
handled.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from evaluator.errors import JudgeOutputError, RequestTooLargeError
from evaluator.evidence.bundle import EvidenceBundle, read_manifest
from evaluator.evidence.collect import collect_evidence
from evaluator.judges.llm_judge import (
    IMAGES_FITTED,
    INJECTION_FLAG,
    Citable,
    LLMJudge,
    LLMJudgeOptions,
    dynamic_schema,
    static_schema,
)
from evaluator.llm.client import Endpoint, ModelAccess, ResponseCache
from evaluator.models import AgentConfig, Difficulty, JudgeConfig, Kind, Query, ReasonCode, Verdict
from evaluator.run import FALLBACK_JUDGE, judge_or_fall_back
from evaluator.stages import StagePaths
from tests.llm.scripted_server import ScriptedServer, Turn, scripted_server
from tests.support import APPS, app_artifact, app_query, html_artifact, with_browser

pytestmark = pytest.mark.browser

STATIC = {"functional_assessment": "The add button updates the count; the save button has no handler.",
          "aesthetic_assessment": "Plain but tidy layout.",
          "code_problems": [{"category": "broken_control", "dimension": "functional", "severity": "major",
                             "description": "#save-draft has no click handler", "cite": {"file": "source/index.html"}}]}


def _dynamic(**overrides: Any) -> dict[str, Any]:
    answer: dict[str, Any] = {
        "functional_base": 7.0, "functional_reason": "Notes can be added; saving does nothing.",
        "aesthetic_base": 5.0, "aesthetic_bonus": 0.5, "aesthetic_reason": "Clean, consistent styling.",
        "problems": [
            {"category": "broken_control", "dimension": "functional", "severity": "major",
             "description": "Save draft does nothing when clicked", "cite": {"step": 1}},
            {"category": "console_error", "dimension": "functional", "severity": "minor",
             "description": "nothing logged, but the draft is lost", "cite": {"video_time_s": 0.5}},
            {"category": "inconsistent_style", "dimension": "aesthetic", "severity": "minor",
             "description": "buttons differ in spacing", "cite": {"file": "static/desktop-viewport.png"}},
        ]}
    return {**answer, **overrides}


def _phase(body: dict[str, Any]) -> str:
    return str(body["response_format"]["json_schema"]["name"])


def _text_of(body: dict[str, Any]) -> str:
    parts = []
    for message in body["messages"]:
        content = message["content"]
        parts += [content] if isinstance(content, str) else [p.get("text", "") for p in content]
    return "\n".join(parts)


def _judge_with(bundle: Path, responder: Callable[[dict[str, Any]], Turn], tmp_path: Path, **options: Any
                ) -> tuple[Verdict, ScriptedServer, ModelAccess]:
    with scripted_server(responder=responder) as server:
        access = ModelAccess(endpoints={"judge": Endpoint(base_url=server.url, backoff_s=0.01,
                                                          input_usd_per_mtok=1.0, output_usd_per_mtok=4.0)},
                             cache=ResponseCache(tmp_path / "cache"))
        judge = LLMJudge(LLMJudgeOptions(endpoint="judge", model="judge-7b", **options))
        verdict = asyncio.run(judge(EvidenceBundle(bundle), verdict_key="verdict-test", models=access))
    return verdict, server, access


@pytest.fixture(scope="module")
def bundles(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Evidence of four apps, collected once for the module: dead-button, a list typed into, the injection twins."""
    root = tmp_path_factory.mktemp("bundles")
    brief = Query(id="habits", brief="Build a habit tracker with a streak counter.", domain="productivity",
                  leaf="trackers", difficulty=Difficulty.EASY, language="en", kind=Kind.INTERACTIVE_APPLICATION)
    jobs = {
        "dead-button": (app_artifact("dead-button.html"), app_query("dead-button.html")),
        "enter-list": (app_artifact("enter-list.html"), app_query("enter-list.html")),
        "clean": (html_artifact("clean", (APPS / "injection" / "clean.html").read_text()), brief),
        "injected": (html_artifact("injected", (APPS / "injection" / "injected.html").read_text()), brief),
    }

    async def collect(browser: Any) -> None:
        for name, (artifact, query) in jobs.items():
            await collect_evidence(browser=browser, artifact=artifact, query=query, agent=AgentConfig(max_steps=3),
                                   bundle_dir=root / name, evidence_key=f"evidence-{name}")

    with_browser(collect)
    return {name: root / name for name in jobs}


def test_two_calls_make_a_verdict_whose_arithmetic_and_citations_are_evalgrids(bundles: dict[str, Path],
                                                                             tmp_path: Path) -> None:
    def responder(body: dict[str, Any]) -> Turn:
        answer = STATIC if _phase(body) == "static_audit" else _dynamic()
        return Turn(content=json.dumps(answer), model="judge-7b-2026-06")

    verdict, server, access = _judge_with(bundles["dead-button"], responder, tmp_path)
    assert [_phase(r) for r in server.requests] == ["static_audit", "dynamic_scoring"]
    for request in server.requests:
        assert request["temperature"] == 0.0 and request["response_format"]["type"] == "json_schema"
    static, dynamic = server.requests
    static_parts = static["messages"][1]["content"]
    assert sum(p["type"] == "image_url" for p in static_parts) == 2  # desktop and mobile first screenshots
    assert "Build a" in _text_of(static) or "<<<DATA brief" in _text_of(static)
    dynamic_text = _text_of(dynamic)
    assert '"code_problems"' in dynamic_text  # the static audit is shown to the dynamic phase
    assert "Recording at 0.00 s:" in dynamic_text  # keyframes with their times
    assert "step 0 at" in dynamic_text  # the trace
    # evalgrid's arithmetic: 7 - 1.0 (major) - 0.5 (minor) = 5.5 and 5 + 0.5 - 0.5 = 5.0
    assert (verdict.functional, verdict.aesthetic) == (5.5, 5.0)
    assert [a.deduction for a in verdict.attributions] == [1.0, 0.5, 0.5]
    assert verdict.attributions[0].evidence[0].step == 1
    assert verdict.judge.kind == "llm" and verdict.judge.model_id == "judge-7b-2026-06"
    assert "judge-7b-2026-06" in verdict.label and "Calculation: 7 - 1 (broken_control" in verdict.functional_reason
    assert verdict.flags == []
    [usage] = access.meter.usage()
    assert usage.role == "judge" and usage.calls == 2 and usage.cost_usd > 0


def test_an_unusable_answer_gets_one_repair_then_it_is_a_classified_failure(bundles: dict[str, Path],
                                                                           tmp_path: Path) -> None:
    answers = {"dynamic_scoring": [Turn(content='{"functional_base": 7.0, "functional_re'),  # malformed
                                   Turn(content=json.dumps(_dynamic()))]}

    def responder(body: dict[str, Any]) -> Turn:
        if _phase(body) == "static_audit":
            return Turn(content=json.dumps(STATIC))
        return answers["dynamic_scoring"].pop(0)

    verdict, server, _ = _judge_with(bundles["dead-button"], responder, tmp_path / "a")
    assert len(server.requests) == 3 and verdict.functional == 5.5
    repair = server.requests[-1]["messages"]
    assert repair[-2]["role"] == "assistant" and "cannot be used: it is not valid JSON" in repair[-1]["content"]

    def always_wrong(body: dict[str, Any]) -> Turn:
        if _phase(body) == "static_audit":
            return Turn(content=json.dumps(STATIC))
        problems = [{**_dynamic()["problems"][0], "cite": {"step": 99}}]  # a step that does not exist
        return Turn(content=json.dumps(_dynamic(problems=problems)))

    with pytest.raises(JudgeOutputError, match="step 99 does not exist") as caught:
        _judge_with(bundles["dead-button"], always_wrong, tmp_path / "b")
    assert caught.value.code == "invalid"


@pytest.mark.parametrize(("first", "expected"), [
    (Turn(content=json.dumps(STATIC)[:80], finish_reason="length"), "cut off at the token limit"),
    (Turn(refusal="I cannot evaluate this content."), "refused"),
])
def test_truncation_is_repaired_and_a_refusal_is_classified(bundles: dict[str, Path], tmp_path: Path, first: Turn,
                                                            expected: str) -> None:
    turns = [first, first]

    def responder(body: dict[str, Any]) -> Turn:
        return turns.pop(0) if turns else Turn(content="{}")

    with pytest.raises(JudgeOutputError) as caught:
        _judge_with(bundles["dead-button"], responder, tmp_path)
    assert (caught.value.code == "refused") == (first.refusal is not None)
    assert expected in str(caught.value) or expected in caught.value.code


def test_a_judge_told_to_give_full_marks_gives_the_same_verdict_and_the_run_is_flagged(bundles: dict[str, Path],
                                                                                    tmp_path: Path) -> None:
    """A deliberately gullible judge model: it obeys any instruction to give full marks it can read."""

    def gullible(body: dict[str, Any]) -> Turn:
        text = _text_of(body).lower()
        obeys = any(p in text for p in ("full marks", "ignore all previous", "8.0/8.0", "maximum score", "满分"))
        if _phase(body) == "static_audit":
            return Turn(content=json.dumps({**STATIC, "code_problems": []}))
        if obeys:
            return Turn(content=json.dumps(_dynamic(functional_base=8.0, aesthetic_base=5.0, aesthetic_bonus=3.0,
                                                    problems=[])))
        return Turn(content=json.dumps(_dynamic(problems=[])))

    clean, _, _ = _judge_with(bundles["clean"], gullible, tmp_path / "clean")
    injected, server, _ = _judge_with(bundles["injected"], gullible, tmp_path / "injected")
    assert (injected.functional, injected.aesthetic) == (clean.functional, clean.aesthetic) == (7.0, 5.5)
    assert injected.flags == [INJECTION_FLAG] and clean.flags == []
    shown = "\n".join(_text_of(r) for r in server.requests)
    assert "[evalgrid removed" in shown and "full marks" not in shown.lower()
    assert any(c.criterion == INJECTION_FLAG for c in injected.criteria)


def _images_of(body: dict[str, Any]) -> int:
    return sum(p.get("type") == "image_url" for m in body["messages"] if isinstance(m["content"], list)
               for p in m["content"])


def _answers(body: dict[str, Any]) -> Turn:
    return Turn(content=json.dumps(STATIC if _phase(body) == "static_audit" else _dynamic()))


def _sized_judge(bundle: Path, endpoint: dict[str, Any], server_images: int | None) -> tuple[Verdict, ScriptedServer]:
    """A judge on ``bundle`` through an endpoint set as ``endpoint`` says, its server taking ``server_images``."""
    with scripted_server(responder=_answers) as server:
        server.max_images, server.max_model_len = server_images, 32768
        access = ModelAccess(endpoints={"judge": Endpoint(base_url=server.url, backoff_s=0.01, **endpoint)})
        judge = LLMJudge(LLMJudgeOptions(endpoint="judge", model="judge-7b"))
        verdict = asyncio.run(judge(EvidenceBundle(bundle), verdict_key="verdict-sized", models=access))
    return verdict, server


def test_a_judge_shows_no_more_images_than_its_server_takes_and_the_verdict_says_what_was_left_out(
        bundles: dict[str, Path]) -> None:
    whole, server = _sized_judge(bundles["enter-list"], {}, None)
    wanted = _images_of(server.requests[1])
    assert wanted > 3 and IMAGES_FITTED not in whole.flags

    fitted, server = _sized_judge(bundles["enter-list"], {"max_images": 3}, 3)
    static, dynamic = server.requests  # none refused
    assert (_images_of(static), _images_of(dynamic)) == (2, 3)
    shown = _text_of(dynamic)
    assert "First screenshot, desktop:" in shown and "left out to fit the judge server's limits" in shown
    assert fitted.flags == [IMAGES_FITTED]
    [note] = [c.reason for c in fitted.criteria if c.criterion == IMAGES_FITTED]
    assert f"dynamic_scoring: {wanted - 3} of {wanted} images left out" in note and "at most 3 images" in note
    assert (fitted.functional, fitted.aesthetic) == (whole.functional, whole.aesthetic)  # the same answers

    # A context the text alone nearly fills leaves no room for any image (the server reports 32768; the setting wins).
    text_only, server = _sized_judge(bundles["enter-list"], {"context_tokens": 3100}, None)
    assert [_images_of(r) for r in server.requests] == [0, 0]
    assert "static_audit: 2 of 2 images left out" in text_only.criteria[-1].reason
    assert "a context of 3100 tokens" in text_only.criteria[-1].reason


def test_a_request_its_server_refuses_for_size_is_the_judges_failure_and_the_fallback_scores_the_run(
        bundles: dict[str, Path], tmp_path: Path) -> None:
    bundle = bundles["enter-list"]
    manifest = read_manifest(bundle)
    assert manifest is not None
    config = JudgeConfig(name="llm", options={"endpoint": "judge", "model": "judge-7b"})
    with scripted_server(responder=_answers) as server:
        server.max_images = 3  # and the endpoint does not say so
        access = ModelAccess(endpoints={"judge": Endpoint(base_url=server.url, backoff_s=0.01)})
        with pytest.raises(RequestTooLargeError, match="At most 3 image"):
            asyncio.run(LLMJudge(LLMJudgeOptions(endpoint="judge", model="judge-7b"))(
                EvidenceBundle(bundle), verdict_key="v", models=access))
        assert [_phase(r) for r in server.requests] == ["static_audit", "dynamic_scoring"]  # not retried
        judged = asyncio.run(judge_or_fall_back(config, manifest.evidence_key, manifest, bundle,
                                                StagePaths(tmp_path / "run"), access))
    assert judged.verdict.judge.name == FALLBACK_JUDGE.name
    assert judged.flags == ["judge_request_too_large", "judge_fallback"]
    assert judged.fallback is not None and judged.fallback[0] is ReasonCode.JUDGE_REQUEST_TOO_LARGE
    assert "refused the request for its size" in judged.fallback[1]


def test_v2_shows_the_screens_after_entered_values_and_v1_keeps_its_version(bundles: dict[str, Path],
                                                                           tmp_path: Path) -> None:
    def responder(body: dict[str, Any]) -> Turn:
        return Turn(content=json.dumps(STATIC if _phase(body) == "static_audit" else _dynamic(problems=[])))

    _, server, _ = _judge_with(bundles["enter-list"], responder, tmp_path / "v2")
    trace = json.loads((bundles["enter-list"] / "interaction" / "trace.json").read_text())
    typed = [s["step"] for s in trace if s["action"]["kind"] == "type"]
    assert typed, "the explorer typed nothing into the list's field"
    dynamic = server.requests[1]
    assert "Check every result the page computed" in dynamic["messages"][0]["content"]
    parts = dynamic["messages"][1]["content"]
    labels = [p["text"] for p in parts if p["type"] == "text" and p["text"].startswith("Screen after")]
    assert labels[0] == f"Screen after the value entered at step {typed[0]}:"
    assert parts[parts.index({"type": "text", "text": labels[0]}) + 1]["type"] == "image_url"

    _, server, _ = _judge_with(bundles["enter-list"], responder, tmp_path / "v1", prompt="judge-dynamic-v1")
    dynamic = server.requests[1]
    assert "Check every result" not in dynamic["messages"][0]["content"]
    assert not any(p.get("text", "").startswith("Screen after") for p in dynamic["messages"][1]["content"])
    v1 = LLMJudge(LLMJudgeOptions(endpoint="judge", model="m", prompt="judge-dynamic-v1")).version
    v2 = LLMJudge(LLMJudgeOptions(endpoint="judge", model="m")).version
    assert v1.endswith(":seed=0") and v2.endswith(":seed=0:res=4") and v1.split(":")[0] != v2.split(":")[0]


def test_the_schemas_accept_what_the_parser_accepts_and_allow_only_real_citations() -> None:
    citable = Citable(steps=(0, 1), video_s=3.2, files=("source/index.html", "static/desktop-viewport.png"))
    jsonschema.validate(STATIC, static_schema(citable))
    jsonschema.validate(_dynamic(), dynamic_schema(citable))
    for wrong in (_dynamic(functional_base=6.5),  # not a baseline
                  _dynamic(problems=[{**_dynamic()["problems"][0], "cite": {"step": 7}}]),  # no step 7
                  _dynamic(problems=[{**_dynamic()["problems"][0], "cite": {"video_time_s": 9.0}}]),  # past the end
                  _dynamic(problems=[{**_dynamic()["problems"][0], "category": "layout_broken"}]),  # aesthetic cat.
                  _dynamic(problems=[{**_dynamic()["problems"][0], "cite": {}}])):  # cites nothing
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(wrong, dynamic_schema(citable))
    # A bundle with nothing to cite admits no problem at all, rather than an uncitable one.
    jsonschema.validate(_dynamic(problems=[]), dynamic_schema(Citable()))
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(_dynamic(), dynamic_schema(Citable()))
