"""The scoring policy for crashes, with a real worker, real Chromium and the real control page.

A crash is charged to the app only when the control page passed on a fresh sandbox between two attempts
that both died under the app; when the control page fails too, the machinery is broken and the run stays
an excluded ``infra_error``.

Mocked boundary: an app that kills its sandbox. A real one (a fork bomb, a memory bomb past the container's
limit) needs the Docker sandbox; here the local backend's browser is closed from outside when a document with a
given title is served to it (or any document at all: a sandbox that dies whatever it runs), which is what a killed
sandbox looks like to the worker: the browser's connection drops.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Browser, BrowserContext, Response

from cluster.reduce.leaderboard import build_leaderboard
from cluster.sandbox import backends
from cluster.scheduling.worker import RunWorker, WorkerSettings
from evaluator.evidence.bundle import read_manifest
from evaluator.models import (
    AgentConfig,
    AppFailure,
    Candidate,
    Difficulty,
    JudgeConfig,
    Kind,
    Outcome,
    OutcomeStatus,
    Query,
    ReasonCode,
    RunSpec,
)
from evaluator.run import make_run_spec

# timing: the watcher must close the browser before the control page is done; beside a sandbox test it lost.
pytestmark = [pytest.mark.browser, pytest.mark.timing]

# Controls to explore keep the run going for seconds after the page shows: the killer always gets there first.
KILLER = """<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Sandbox killer</title></head>
<body><h1>Sandbox killer</h1>""" + "".join(f"<button>Go {i}</button>" for i in range(8)) + "</body></html>"


class _KilledSandboxes(backends.LocalSession):
    """The local backend's session, with each browser closed from outside as soon as a document whose markup holds
    ``doomed`` is served to it (any document, when ``doomed`` is empty).

    The watch is set on every context as the browser makes it, and reads the document from the network: it needs
    no poll that a short run could outpace, and never asks a page that may be frozen for its title.
    """

    doomed = ""
    watched: set[Browser] = set()

    async def browser(self) -> Browser:
        browser = await super().browser()
        if browser not in self.watched:
            self.watched.add(browser)
            make = browser.new_context

            async def new_context(*args: Any, **kwargs: Any) -> BrowserContext:
                context = await make(*args, **kwargs)
                context.on("response", lambda response: self._kill_if_doomed(browser, response))
                return context

            browser.new_context = new_context  # type: ignore[method-assign]
        return browser

    async def _kill_if_doomed(self, browser: Browser, response: Response) -> None:
        if response.request.resource_type != "document" or not browser.is_connected():
            return
        try:
            markup = await response.text()
        except Exception:  # noqa: BLE001 - a response without a body (a redirect): not the app's page
            return
        if self.doomed in markup and browser.is_connected():
            await browser.close()


def _spec(answers: Path) -> RunSpec:
    (answers / "killer.html").write_text(KILLER, encoding="utf-8")
    query = Query(id="killer", brief="A page.", domain="tests", leaf="crash", difficulty=Difficulty.EASY,
                  language="en", kind=Kind.INTERACTIVE_APPLICATION)
    return make_run_spec(candidate=Candidate(id="crasher", answers=str(answers)), query=query,
                         agent=AgentConfig(max_steps=8), judge=JudgeConfig(), judge_version="test",
                         answers_dir=answers)


def _execute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, doomed: str) -> Outcome:
    answers = tmp_path / "answers"
    answers.mkdir()
    monkeypatch.setattr(_KilledSandboxes, "doomed", doomed)
    monkeypatch.setattr(_KilledSandboxes, "watched", set())
    monkeypatch.setattr(backends, "LocalSession", _KilledSandboxes)

    async def scenario() -> Outcome:
        worker = RunWorker(WorkerSettings(run_dir=str(tmp_path / "run"), backend="local", run_timeout_s=30.0), "w")
        await worker.start()
        try:
            return await worker.execute(_spec(answers))
        finally:
            await worker.close()

    return asyncio.run(scenario())


def test_an_app_that_kills_every_fresh_sandbox_while_the_control_passes_is_the_apps_crash(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    outcome = _execute(tmp_path, monkeypatch, doomed="Sandbox killer")
    assert outcome.status is OutcomeStatus.JUDGED, outcome.reason
    assert outcome.reason.code is ReasonCode.APP_CRASH and outcome.attempts == 2, outcome.reason
    assert "control page loaded" in outcome.reason.detail
    assert outcome.functional == 0.0 and outcome.aesthetic is not None
    manifest = read_manifest(tmp_path / "run" / "evidence" / str(outcome.evidence_key))
    assert manifest is not None and manifest.incomplete is not None
    assert manifest.incomplete.failure is AppFailure.CRASH
    board = build_leaderboard("t", ["crasher"], [outcome])
    assert board.rows[0].crash == 1 and board.rows[0].functional == 0.0 and board.rows[0].infra_error_rate == 0.0


def test_when_the_control_page_dies_too_it_stays_the_machinerys_infra_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    outcome = _execute(tmp_path, monkeypatch, doomed="")
    assert outcome.status is OutcomeStatus.INFRA_ERROR, outcome.reason
    assert "control page" in outcome.reason.detail and "machinery" in outcome.reason.detail, outcome.reason
    board = build_leaderboard("t", ["crasher"], [outcome])
    assert board.rows[0].functional is None and board.rows[0].infra_error_rate == 1.0
