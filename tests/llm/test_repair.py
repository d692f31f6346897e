"""The repairer against a scripted OpenAI-compatible server, on an app recorded in a real evidence bundle.

The server stands in for the repair model. What is checked is evalgrid's side: what the repair model
is told (brief, invariants, the report, every file fenced), how its answer is checked, and the keys.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from evaluator.answer.extract import ExtractedApp, extract_app
from evaluator.answer.repair import Repairer, RepairOptions, bundle_sources, files_digest, repair_key
from evaluator.errors import JudgeOutputError
from evaluator.evidence.bundle import EvidenceBundle
from evaluator.evidence.collect import collect_evidence
from evaluator.llm.client import Endpoint, ModelAccess, ResponseCache
from evaluator.models import (
    AgentConfig,
    Difficulty,
    EvidenceRef,
    JudgeInfo,
    Kind,
    Query,
    Severity,
    UxDimension,
    UxFinding,
    UxReport,
)
from tests.llm.scripted_server import ScriptedServer, Turn, scripted_server
from tests.support import html_artifact, with_browser

pytestmark = pytest.mark.browser

HTML = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Pebble notes</title><link rel="stylesheet" href="style.css"></head>
<body><h1>Pebble notes</h1><input id="note"><button id="add">Add</button><ul id="list"></ul>
<script>
  const seed = (Date.now() >>> 0);
  document.getElementById('add').onclick = () => {
    const li = document.createElement('li'); li.textContent = document.getElementById('note').value;
    document.getElementById('list').append(li);
  };
</script></body></html>"""
CSS = "body { font-family: Georgia, serif; color: #2d3a2e; background: #f4efe6; }\n"
QUERY = Query(id="notes", brief="Build a small note list called Pebble notes.", domain="productivity",
              leaf="notes", difficulty=Difficulty.EASY, language="en", kind=Kind.INTERACTIVE_APPLICATION,
              checklist=("notes can be added",))
REPORT = UxReport(
    report_key="ux-abc", evidence_key="evidence-notes",
    judge=JudgeInfo(name="ux", kind="llm", rubric_version="ux-v1@x:judge-7b", model_id="judge-7b"),
    scores={d: 3 for d in UxDimension} | {UxDimension.ERROR_RECOVERY: 1},
    findings=[
        UxFinding(dimension=UxDimension.ACTION_FEEDBACK, severity=Severity.MINOR,
                  description="Adding a note gives no sign besides the new line at the bottom.",
                  evidence=[EvidenceRef(video_time_s=0.8)], suggestion="Clear the input and focus it after adding."),
        UxFinding(dimension=UxDimension.ERROR_RECOVERY, severity=Severity.MAJOR,
                  description="An empty note can be added and cannot be removed.",
                  evidence=[EvidenceRef(step=1), EvidenceRef(file="source/index.html")],
                  suggestion="Disable Add while the input is empty and give each note a Remove button."),
    ],
    label="UX report (ux-v1) · judge-7b")


def _options(**options: Any) -> RepairOptions:
    return RepairOptions.model_validate({"endpoint": "fixer", "model": "repair-32b", **options})


def _fixed(html: str, css: str) -> str:
    return f"Fixed the two findings.\n\nindex.html\n```html\n{html}\n```\n\nstyle.css\n```css\n{css}\n```\n"


def _repair(answer: Turn, tmp_path: Path, files: dict[str, str] | None = None
            ) -> tuple[str, ScriptedServer, ModelAccess]:
    with scripted_server(answer) as server:
        access = ModelAccess(endpoints={"fixer": Endpoint(base_url=server.url, backoff_s=0.01)},
                             cache=ResponseCache(tmp_path / "cache"))
        repairer = Repairer(_options())
        result = asyncio.run(repairer.repair(files or {"index.html": HTML, "style.css": CSS}, QUERY, REPORT,
                                             models=access))
    return result, server, access


def _text_of(body: dict[str, Any]) -> str:
    return "\n".join(str(m["content"]) for m in body["messages"])


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Evidence of a two-file app (a page and its stylesheet), collected once for the module."""
    root = tmp_path_factory.mktemp("repair-bundle") / "notes"

    async def collect(browser: Any) -> None:
        await collect_evidence(browser=browser, artifact=html_artifact("notes", HTML, extra={"style.css": CSS}),
                               query=QUERY, agent=AgentConfig(max_steps=2), bundle_dir=root,
                               evidence_key="evidence-notes")

    with_browser(collect)
    return root


def test_bundle_sources_are_the_apps_files(bundle: Path) -> None:
    assert bundle_sources(EvidenceBundle(bundle)) == {"index.html": HTML, "style.css": CSS}


def test_the_request_carries_the_brief_the_invariants_every_finding_and_the_files_fenced(bundle: Path,
                                                                                        tmp_path: Path) -> None:
    files = bundle_sources(EvidenceBundle(bundle))
    html = HTML.replace('<button id="add">', '<button id="add" disabled>')
    answer, server, access = _repair(Turn(content=_fixed(html, CSS), model="repair-32b-v2"), tmp_path, files)
    [request] = server.requests
    assert request["temperature"] == 0.0 and "response_format" not in request
    system, user = (m["content"] for m in request["messages"])
    for invariant in ("same product intent", "same brand", "same interaction semantics",
                      "Fix only what the report names", "No new features", "no external URLs",
                      "Return EVERY file"):
        assert invariant in system
    assert "<<<DATA brief" in user and "Pebble notes" in user and "notes can be added" in user
    assert "<<<DATA ux report" in user and "error_recovery 1" in user
    for finding in REPORT.findings:
        assert finding.suggestion in user and finding.description in user
    assert "[error_recovery, major]" in user and "Seen at: step 1; file source/index.html" in user
    assert user.index("[error_recovery, major]") < user.index("[action_feedback, minor]")  # most severe first
    assert "<<<DATA index.html #" in user and "<<<DATA style.css #" in user and CSS.strip() in user
    app = extract_app(answer.encode())
    # extract_app drops a block's last newline
    assert isinstance(app, ExtractedApp) and app.files == {"index.html": html, "style.css": CSS.rstrip()}
    [usage] = access.meter.usage()
    assert usage.role == "repair" and usage.calls == 1


def test_what_fencing_did_to_the_code_is_undone(tmp_path: Path) -> None:
    """fence() writes ››› for >>>; a model that copies the file as shown gets the operator back."""
    assert "Date.now() >>> 0" in HTML
    with scripted_server() as server:
        server.responder = lambda body: Turn(content=_fixed(_text_of(body).split("<<<DATA index.html #")[1]
                                                            .split("\n", 1)[1].split("\n<<<END DATA")[0], CSS))
        access = ModelAccess(endpoints={"fixer": Endpoint(base_url=server.url, backoff_s=0.01)})
        repairer = Repairer(_options())
        answer = asyncio.run(repairer.repair({"index.html": HTML, "style.css": CSS}, QUERY, REPORT, models=access))
    assert "›››" in _text_of(server.requests[0])
    app = extract_app(answer.encode())
    assert isinstance(app, ExtractedApp) and app.files["index.html"] == HTML


def test_an_app_over_the_limit_is_refused_before_any_call(tmp_path: Path) -> None:
    with scripted_server() as server:
        access = ModelAccess(endpoints={"fixer": Endpoint(base_url=server.url, backoff_s=0.01)})
        with pytest.raises(JudgeOutputError, match="over the repairer's source_chars") as caught:
            asyncio.run(Repairer(_options(source_chars=100)).repair({"index.html": HTML}, QUERY, REPORT,
                                                                    models=access))
    assert caught.value.code == "invalid" and server.requests == []


@pytest.mark.parametrize(("turn", "code", "says"), [
    (Turn(content="I would disable the Add button and clear the input after each note."), "invalid", "no usable app"),
    (Turn(content=f"index.html\n```html\n{HTML}\n```\n"), "invalid", "left out 1 file(s) of the app: style.css"),
    (Turn(content=_fixed(HTML, CSS)[:200], finish_reason="length"), "invalid", "cut off"),
    (Turn(refusal="I can't modify this code."), "refused", "can't modify"),
])
def test_an_answer_without_the_whole_app_or_a_refusal_is_classified(tmp_path: Path, turn: Turn, code: str,
                                                                    says: str) -> None:
    with pytest.raises(JudgeOutputError) as caught:
        _repair(turn, tmp_path)
    assert caught.value.code == code and says in str(caught.value)


def test_version_and_keys_follow_the_model_the_report_and_the_files() -> None:
    a = Repairer(_options())
    b = Repairer(_options(model="repair-70b"))
    assert a.version.startswith("repair-v1@") and a.version.endswith(":repair-32b:t=0.0:seed=0")
    assert a.version != b.version
    files = {"index.html": HTML, "style.css": CSS}
    digest = files_digest(files)
    assert digest == files_digest(dict(reversed(list(files.items()))))  # the order of the files does not matter
    edited = files_digest({**files, "style.css": CSS + "h1 { color: #2d3a2e; }\n"})
    options = _options()
    key = repair_key("ux-abc", digest, options, a.version)
    assert key.startswith("repair-") and key == repair_key("ux-abc", digest, options, a.version)
    assert len({key, repair_key("ux-def", digest, options, a.version), repair_key("ux-abc", edited, options, a.version),
                repair_key("ux-abc", digest, options, b.version)}) == 4
