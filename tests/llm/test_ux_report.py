"""The UX report judge against a scripted OpenAI-compatible server, on evidence collected for real.

The server stands in for the judge model; the bundles come from real Chromium runs of fixture apps.
What is checked is evalgrid's side: what the model is shown, how its answer becomes a UxReport, and
how citations the bundle does not hold, refusals, garbage and injections are handled.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from evaluator.errors import JudgeOutputError
from evaluator.evidence.bundle import EvidenceBundle
from evaluator.evidence.collect import collect_evidence
from evaluator.judges.llm_judge import IMAGES_FITTED
from evaluator.judges.ux_report import (
    UxCitable,
    UxJudge,
    UxJudgeOptions,
    load_ux_rubric,
    ux_report_key,
    ux_schema,
)
from evaluator.llm.client import Endpoint, ModelAccess, ResponseCache
from evaluator.models import AgentConfig, Difficulty, Kind, Query, Severity, UxDimension, UxReport
from tests.llm.scripted_server import ScriptedServer, Turn, scripted_server
from tests.support import APPS, app_artifact, app_query, html_artifact, with_browser

pytestmark = pytest.mark.browser

SCORES = {d.value: 3 for d in UxDimension} | {"action_feedback": 1, "scanability_accessibility": 4}
SAVE = {"dimension": "action_feedback", "severity": "major",
        "description": "Clicking 'Save draft' shows nothing: the user cannot tell whether the draft was kept.",
        "cite": {"step": 1}, "suggestion": "After saving, show 'Draft saved' next to the button for two seconds."}
LABEL = {"dimension": "scanability_accessibility", "severity": "minor",
         "description": "The note count is small grey text that is easy to miss.",
         "cite": {"file": "source/index.html"}, "suggestion": "Make #count 1.25rem and use #333 for its colour."}
TIME = {"dimension": "goal_state_clarity", "severity": "minor", "description": "No empty state before any note.",
        "cite": {"video_time_s": 0.2}, "suggestion": "Show 'No notes yet: add one' when the list is empty."}


def _answer(*findings: dict[str, Any], scores: dict[str, int] | None = None) -> str:
    return json.dumps({"scores": scores or SCORES, "findings": list(findings)})


def _text_of(body: dict[str, Any]) -> str:
    parts = []
    for message in body["messages"]:
        content = message["content"]
        parts += [content] if isinstance(content, str) else [p.get("text", "") for p in content]
    return "\n".join(parts)


def _images(body: dict[str, Any]) -> int:
    return sum(p.get("type") == "image_url" for m in body["messages"] if isinstance(m["content"], list)
               for p in m["content"])


def _options(**options: Any) -> UxJudgeOptions:
    return UxJudgeOptions.model_validate({"endpoint": "ux", "model": "judge-7b", **options})


def _report_with(bundle: Path, answers: list[Turn] | Callable[[dict[str, Any]], Turn], tmp_path: Path,
                 **options: Any) -> tuple[UxReport, ScriptedServer, ModelAccess]:
    script = answers if isinstance(answers, list) else []
    responder = None if isinstance(answers, list) else answers
    with scripted_server(*script, responder=responder) as server:
        access = ModelAccess(endpoints={"ux": Endpoint(base_url=server.url, backoff_s=0.01)},
                             cache=ResponseCache(tmp_path / "cache"))
        judge = UxJudge(_options(**options))
        report = asyncio.run(judge.report(EvidenceBundle(bundle), report_key="ux-test", models=access))
    return report, server, access


@pytest.fixture(scope="module")
def bundles(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Evidence of two apps, collected once for the module: dead-button and the injected habit tracker."""
    root = tmp_path_factory.mktemp("ux-bundles")
    brief = Query(id="habits", brief="Build a habit tracker with a streak counter.", domain="productivity",
                  leaf="trackers", difficulty=Difficulty.EASY, language="en", kind=Kind.INTERACTIVE_APPLICATION)
    jobs = {
        "dead-button": (app_artifact("dead-button.html"), app_query("dead-button.html")),
        "injected": (html_artifact("injected", (APPS / "injection" / "injected.html").read_text()), brief),
    }

    async def collect(browser: Any) -> None:
        for name, (artifact, query) in jobs.items():
            await collect_evidence(browser=browser, artifact=artifact, query=query, agent=AgentConfig(max_steps=3),
                                   bundle_dir=root / name, evidence_key=f"evidence-{name}")

    with_browser(collect)
    return {name: root / name for name in jobs}


def test_one_call_makes_a_report_with_seven_scores_and_cited_findings(bundles: dict[str, Path],
                                                                    tmp_path: Path) -> None:
    report, server, access = _report_with(bundles["dead-button"], [Turn(content=_answer(SAVE, LABEL, TIME),
                                                                        model="judge-7b-2026-06")], tmp_path)
    [request] = server.requests
    assert request["temperature"] == 0.0 and request["response_format"]["type"] == "json_schema"
    jsonschema.validate(json.loads(_answer(SAVE, LABEL, TIME)), request["response_format"]["json_schema"]["schema"])
    shown = _text_of(request)
    assert "<<<DATA brief" in shown and "<<<DATA source/index.html" in shown and "step 1 at" in shown
    assert "Citable evidence. Steps: 0, 1." in shown and "navigation_scent:" in shown  # the rubric is shown
    assert "First screenshot, desktop" in shown and "Recording at 0.00 s:" in shown and _images(request) >= 2
    assert set(report.scores) == set(UxDimension) and report.scores[UxDimension.ACTION_FEEDBACK] == 1
    assert [(f.dimension, f.severity) for f in report.findings] == [
        (UxDimension.ACTION_FEEDBACK, Severity.MAJOR), (UxDimension.SCANABILITY_ACCESSIBILITY, Severity.MINOR),
        (UxDimension.GOAL_STATE_CLARITY, Severity.MINOR)]
    save, label, time = (f.evidence[0] for f in report.findings)
    assert (save.step, label.file, time.video_time_s) == (1, "source/index.html", 0.2)
    assert report.findings[0].suggestion.startswith("After saving") and report.dropped == 0
    assert report.evidence_key == "evidence-dead-button" and report.report_key == "ux-test"
    assert report.judge.kind == "llm" and report.judge.model_id == "judge-7b-2026-06"
    assert report.judge.rubric_version.startswith("ux-v1@") and "judge-7b-2026-06" in report.label
    [usage] = access.meter.usage()
    assert usage.role == "judge" and usage.calls == 1


def test_a_server_that_takes_fewer_images_gets_as_many_and_the_report_is_flagged(bundles: dict[str, Path],
                                                                               tmp_path: Path) -> None:
    with scripted_server(Turn(content=_answer(SAVE))) as server:
        server.max_images = 2
        access = ModelAccess(endpoints={"ux": Endpoint(base_url=server.url, backoff_s=0.01, max_images=2)})
        report = asyncio.run(UxJudge(_options()).report(EvidenceBundle(bundles["dead-button"]), report_key="ux-fit",
                                                        models=access))
    [request] = server.requests  # not refused
    assert _images(request) == 2 and "First screenshot, desktop" in _text_of(request)
    assert report.flags == [IMAGES_FITTED]


def test_without_images_no_image_is_sent(bundles: dict[str, Path], tmp_path: Path) -> None:
    _, server, _ = _report_with(bundles["dead-button"], [Turn(content=_answer(SAVE))], tmp_path, images=False)
    [request] = server.requests
    assert _images(request) == 0 and "no images are shown" in _text_of(request)


@pytest.mark.parametrize(("second", "steps", "dropped"), [
    (_answer({**SAVE, "cite": {"step": 1}}, LABEL), [1, None], 0),  # the repair fixes the citation: kept
    (_answer({**SAVE, "cite": {"step": 42}}, LABEL), [None], 1),  # still wrong: dropped and counted
    ('{"scores": {', [None], 1),  # the repair is garbage: the first answer stands, its bad finding dropped
])
def test_a_finding_citing_a_missing_step_gets_one_repair_request(bundles: dict[str, Path], tmp_path: Path,
                                                                 second: str, steps: list[int | None],
                                                                 dropped: int) -> None:
    first = _answer({**SAVE, "cite": {"step": 99}}, LABEL)
    report, server, _ = _report_with(bundles["dead-button"], [Turn(content=first), Turn(content=second)], tmp_path)
    assert len(server.requests) == 2
    repair = server.requests[1]["messages"]
    assert repair[-2] == {"role": "assistant", "content": first}
    assert "finding 0" in repair[-1]["content"] and "step 99 does not exist" in repair[-1]["content"]
    assert report.dropped == dropped
    assert [f.evidence[0].step for f in report.findings] == steps
    assert report.findings[-1].evidence[0].file == "source/index.html"  # the well-cited finding always stands


def test_a_refusal_is_refused_and_garbage_twice_is_invalid(bundles: dict[str, Path], tmp_path: Path) -> None:
    with pytest.raises(JudgeOutputError) as refused:
        _report_with(bundles["dead-button"], [Turn(refusal="I cannot review this page.")], tmp_path / "a")
    assert refused.value.code == "refused" and "cannot review" in str(refused.value)
    with pytest.raises(JudgeOutputError) as invalid:
        _report_with(bundles["dead-button"], [Turn(content="Here is my review: good!"), Turn(content="{]")],
                     tmp_path / "b")
    assert invalid.value.code == "invalid" and "unusable twice" in str(invalid.value)
    scores = {k: v for k, v in SCORES.items() if k != "flow_efficiency"}  # one dimension missing
    with pytest.raises(JudgeOutputError, match="flow_efficiency"):
        _report_with(bundles["dead-button"], [Turn(content=_answer(scores=scores))] * 2, tmp_path / "c")


def test_text_addressing_the_evaluator_reaches_the_model_redacted(bundles: dict[str, Path], tmp_path: Path) -> None:
    def gullible(body: dict[str, Any]) -> Turn:
        obeys = any(p in _text_of(body).lower() for p in ("full marks", "ignore all previous", "maximum score"))
        return Turn(content=_answer(scores={d.value: 5 if obeys else 3 for d in UxDimension}))

    report, server, _ = _report_with(bundles["injected"], gullible, tmp_path)
    shown = _text_of(server.requests[0])
    assert "[evalgrid removed" in shown and "full marks" not in shown.lower() and "Done today" in shown
    assert set(report.scores.values()) == {3}
    assert report.flags == ["prompt_injection"]  # the report says the app addressed the evaluator


def test_version_and_key_follow_the_model_and_the_evidence() -> None:
    a = UxJudge(_options())
    b = UxJudge(_options(model="judge-70b"))
    assert a.version != b.version and a.version.endswith(":judge-7b:t=0.0:k=6:img=1:src=40000:seed=0")
    options = _options()
    key = ux_report_key("evidence-1", options, a.version)
    assert key.startswith("ux-") and key == ux_report_key("evidence-1", options, a.version)
    assert len({key, ux_report_key("evidence-2", options, a.version), ux_report_key("evidence-1", options, b.version),
                ux_report_key("evidence-1", options.model_copy(update={"trace_steps": 5}), a.version)}) == 4


def test_the_schema_admits_only_real_citations_and_every_dimension_is_defined() -> None:
    assert set(load_ux_rubric()["dimensions"]) == {d.value for d in UxDimension}
    citable = UxCitable(steps=(0, 1), video_s=1.3, files=("source/index.html",))
    schema = ux_schema(citable)
    jsonschema.validate(json.loads(_answer(SAVE, LABEL, TIME)), schema)
    for wrong in ({**SAVE, "cite": {"step": 7}}, {**SAVE, "cite": {"video_time_s": 9.0}},
                  {**SAVE, "cite": {"file": "secrets.txt"}}, {**SAVE, "cite": {}}, {**SAVE, "dimension": "speed"}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(json.loads(_answer(wrong)), schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(json.loads(_answer(scores={**SCORES, "flow_efficiency": 6})), schema)
    with pytest.raises(jsonschema.ValidationError):  # nothing to cite: no finding at all
        jsonschema.validate(json.loads(_answer(SAVE)), ux_schema(UxCitable()))
