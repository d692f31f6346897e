"""Agentic generation against the scripted model server and real Chromium: a candidate that fixes what the
preview reports recovers, one that ignores it does not, and the single-turn default changes no key.

The model is the scripted server (a boundary: no model runs here); the preview tool is real (loopback).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Browser

from evaluator.answer.agentic import generate_agentic
from evaluator.answer.extract import extract_app
from evaluator.answer.generate import Generation, generation_key
from evaluator.keys import content_key
from evaluator.llm.client import Endpoint, ModelAccess
from evaluator.models import (
    AgentConfig,
    Artifact,
    Candidate,
    Difficulty,
    JudgeConfig,
    Kind,
    Outcome,
    OutcomeStatus,
    Query,
)
from evaluator.preview import AppPreviewer
from evaluator.run import execute_run, make_run_spec
from evaluator.stages import StagePaths
from tests.llm.scripted_server import Turn, scripted_server
from tests.support import with_browser

pytestmark = pytest.mark.browser

_QUERY = Query(id="notes", brief="A page that lists notes.", domain="productivity", leaf="notes",
               difficulty=Difficulty.EASY, language="en", kind=Kind.INTERACTIVE_APPLICATION)
_BROKEN = {"index.html": "<!doctype html><html><body><h1>Notes</h1><p>Your notes, kept here.</p>"
                         "<script src=app.js></script></body></html>",
           "app.js": "const list = document.querySelector('#list');\nlist.append('first note');\n"}
_FIXED = {**_BROKEN, "index.html": _BROKEN["index.html"].replace("<script", "<ul id=list></ul><script")}


def _as_extracted(files: dict[str, str]) -> dict[str, str]:
    return {name: text.rstrip("\n") for name, text in files.items()}  # extraction drops a file's last newlines


def _final(files: dict[str, str]) -> str:
    return "\n\n".join(f"{name}\n```{name.rsplit('.', 1)[-1]}\n{text}\n```" for name, text in files.items())


def _call(files: dict[str, str]) -> Turn:
    return Turn(tool_calls=[{"name": "create_app_preview", "arguments": json.dumps({"files": files})}])


def _respond(body: dict[str, Any]) -> Turn:
    """Scripted candidates. ``fixer`` previews its broken app, adds the element the report's line points at,
    previews again and answers with what previewed clean; ``ignorer`` resubmits the same files every time and
    ends with no answer; ``quiet`` never calls the tool."""
    told = [m["content"] for m in body["messages"] if m["role"] == "tool"]
    if body["model"] == "quiet":
        return Turn(content=_final(_FIXED))
    if body["model"] == "ignorer":
        return _call(_BROKEN) if body.get("tool_choice") != "none" else Turn(content="I am done.")
    if not told:
        return _call(_BROKEN)
    if "status: errors" in told[-1] and "app.js:2" in told[-1]:
        return _call(_FIXED)
    return Turn(content=_final(_FIXED) if "status: ok" in told[-1] else "I could not fix it.")


def _candidate(model: str, rounds: int = 3) -> Candidate:
    return Candidate.model_validate({"id": model, "provider": "openai", "endpoint": "scripted", "model": model,
                                     "generate": {"mode": "agentic", "max_rounds": rounds}})


def _generate(tmp_path: Path, *candidates: Candidate) -> tuple[list[Generation], int]:
    with scripted_server(responder=_respond) as server:
        access = ModelAccess(endpoints={"scripted": Endpoint(base_url=server.url, backoff_s=0.01)})

        async def scenario(browser: Browser) -> list[Generation]:
            previewer = AppPreviewer(browser)
            return [await generate_agentic(c, _QUERY, variant=None, sample=0, models=access, store=tmp_path,
                                           previewer=previewer) for c in candidates]

        generations = with_browser(scenario)
        return generations, len(server.requests)


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Generation], int, Path]:
    store = tmp_path_factory.mktemp("generations")
    generations, requests = _generate(store, _candidate("fixer"), _candidate("ignorer", rounds=2),
                                      _candidate("quiet"))
    return generations, requests, store


def test_a_candidate_that_fixes_what_the_report_names_recovers(generated: Any) -> None:
    fixer = generated[0][0]
    assert [r.report.status for r in fixer.rounds if r.report] == ["errors", "ok"]
    assert fixer.rounds[0].files == _BROKEN and fixer.rounds[1].files == _FIXED
    assert any(p.file == "app.js" and p.line == 2 for p in fixer.rounds[0].report.problems)
    assert not fixer.answer_from_last_preview and fixer.final_status == "ok"
    assert extract_app(fixer.content.encode()).files == _as_extracted(_FIXED)  # type: ignore[union-attr]
    assert fixer.prompt_tokens > 0 and fixer.completion_tokens > 0


def test_a_candidate_that_ignores_the_report_does_not_and_its_last_preview_is_the_answer(generated: Any) -> None:
    ignorer = generated[0][1]
    assert len(ignorer.rounds) == 2 and all(r.report and r.report.status == "errors" for r in ignorer.rounds)
    assert ignorer.answer_from_last_preview, "its final answer held no app"
    assert ignorer.final_status == "errors"
    assert extract_app(ignorer.content.encode()).files == _as_extracted(_BROKEN)  # type: ignore[union-attr]


def test_a_candidate_that_never_calls_the_tool_is_kept_apart(generated: Any) -> None:
    quiet = generated[0][2]
    assert quiet.rounds == [] and not quiet.answer_from_last_preview


def test_a_rerun_reuses_the_stored_generation_and_pays_nothing(generated: Any) -> None:
    _, requests, store = generated
    assert requests == 3 + 3 + 1  # fixer: 2 previews + answer; ignorer: 2 + answer; quiet: 1
    again, new_requests = _generate(store, _candidate("fixer"))
    assert new_requests == 0 and again[0] == generated[0][0]


def test_single_turn_adds_nothing_to_any_key_and_agentic_changes_the_generation_key() -> None:
    live = {"id": "m", "provider": "openai", "endpoint": "e", "model": "m"}
    plain = Candidate.model_validate(live)
    single = Candidate.model_validate({**live, "generate": {"mode": "single", "max_rounds": 9}})
    agentic = Candidate.model_validate({**live, "generate": {"mode": "agentic"}})
    assert content_key("run", plain) == content_key("run", single)
    assert generation_key(plain, _QUERY, None, 0) == generation_key(single, _QUERY, None, 0)
    assert generation_key(agentic, _QUERY, None, 0) != generation_key(plain, _QUERY, None, 0)
    with pytest.raises(ValueError, match="needs a live model"):
        Candidate.model_validate({"id": "r", "answers": "x", "generate": {"mode": "agentic"}})


def test_arguments_that_are_no_files_are_told_to_the_model_as_a_round_with_an_error(tmp_path: Path) -> None:
    def respond(body: dict[str, Any]) -> Turn:
        told = [m["content"] for m in body["messages"] if m["role"] == "tool"]
        if not told:
            return Turn(tool_calls=[{"name": "create_app_preview", "arguments": "{\"files\": [1, 2]"}])
        return Turn(content=_final(_FIXED) + f"\n<!-- {told[-1][:60]} -->")

    with scripted_server(responder=respond) as server:
        access = ModelAccess(endpoints={"scripted": Endpoint(base_url=server.url, backoff_s=0.01)})

        async def scenario(browser: Browser) -> Generation:
            return await generate_agentic(_candidate("fixer"), _QUERY, variant=None, sample=0, models=access,
                                          store=tmp_path, previewer=AppPreviewer(browser))

        generation = with_browser(scenario)
    [bad] = generation.rounds
    assert bad.report is None and bad.error is not None and "not valid JSON" in bad.error
    assert "error:" in generation.content




def test_an_agentic_run_is_judged_and_its_artifact_key_covers_the_rounds(tmp_path: Path) -> None:
    """Through ``execute_run``: the same final answer reached with previews and without gets two artifacts."""
    def as_c(model: str) -> Candidate:
        return Candidate.model_validate({**_candidate(model).model_dump(mode="json"), "id": "c"})

    specs = [make_run_spec(candidate=as_c(model), query=_QUERY, agent=AgentConfig(max_steps=2), judge=JudgeConfig(),
                           judge_version="test", answers_dir=None) for model in ("fixer", "quiet")]
    with scripted_server(responder=_respond) as server:
        access = ModelAccess(endpoints={"scripted": Endpoint(base_url=server.url, backoff_s=0.01)})

        async def scenario(browser: Browser) -> list[Outcome]:
            return [await execute_run(spec, browser=browser, paths=StagePaths(tmp_path), models=access.for_run())
                    for spec in specs]

        fixer, quiet = with_browser(scenario)
    assert fixer.status is OutcomeStatus.JUDGED and quiet.status is OutcomeStatus.JUDGED
    artifacts = [Artifact.model_validate_json(StagePaths(tmp_path).artifact(str(o.artifact_key)).read_text())
                 for o in (fixer, quiet)]
    assert artifacts[0].files == artifacts[1].files and artifacts[0].answer_sha256 == artifacts[1].answer_sha256
    assert fixer.artifact_key != quiet.artifact_key
    assert any(u.role == "generation" and u.calls == 3 for u in fixer.usage), fixer.usage
    assert fixer.preview is not None and quiet.preview is not None
    assert (fixer.preview.rounds, fixer.preview.first, fixer.preview.final_clean) == (2, "errors", True)
    assert (quiet.preview.rounds, quiet.preview.first, quiet.preview.final_clean) == (0, None, None)
    kept = json.loads((StagePaths(tmp_path).evidence(str(fixer.evidence_key)) / "generation" / "rounds.json")
                      .read_text())
    assert [(r["round"], r["report"]["status"], r["files"]) for r in kept] == [
        (1, "errors", ["app.js", "index.html"]), (2, "ok", ["app.js", "index.html"])]
    assert not (StagePaths(tmp_path).evidence(str(quiet.evidence_key)) / "generation").exists()
