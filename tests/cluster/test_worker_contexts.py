"""A worker runs each run on browser contexts made before the run was assigned (local backend, real Chromium)."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from pathlib import Path
from typing import Any

import pytest

from cluster.scheduling.worker import RunWorker, WorkerSettings
from evaluator.browser import context_pool
from evaluator.browser.context_pool import ContextPool, Tab
from evaluator.models import (
    AgentConfig,
    Candidate,
    Difficulty,
    JudgeConfig,
    Kind,
    OutcomeStatus,
    Query,
    ReasonCode,
    RunSpec,
)
from evaluator.run import make_run_spec
from tests.support import APPS

# timing: the hang run's probe must find the spinning page unresponsive while its browser answers. In a CI
# rehearsal, under the load of the image build beside the suite, the first three runs did not all get the worker's
# one pool; the likely reading is that the browser answered the probe too late and was replaced, and the hang
# retried on a new pool: the policy's answer to a slow browser, but not this test's scenario.
pytestmark = [pytest.mark.browser, pytest.mark.timing]

TIMEOUT_S = 30.0
HANG_TIMEOUT_S = 12.0
"""The hang run's limit: that run always takes all of it (its page spins 2 s after loading), so it is kept short;
12 s is what test_hang_policy gives its hang."""


def _spec(answers: Path, qid: str, html: str) -> RunSpec:
    (answers / f"{qid}.html").write_text(html, encoding="utf-8")
    query = Query(id=qid, brief="A small app.", domain="tests", leaf="pool", difficulty=Difficulty.EASY,
                  language="en", kind=Kind.INTERACTIVE_APPLICATION)
    return make_run_spec(candidate=Candidate(id="pool", answers=str(answers)), query=query,
                         agent=AgentConfig(max_steps=2), judge=JudgeConfig(), judge_version="test", answers_dir=answers)


def test_each_run_gets_contexts_made_before_it_was_assigned_and_a_replaced_browser_gets_a_new_pool(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    made_at: dict[Any, float] = {}  # context → when its making began
    opened: list[tuple[ContextPool, Any]] = []  # (pool, context) of every context handed to a run
    make, open_ = context_pool._make, ContextPool.open

    async def timed_make(browser: Any, mobile: bool) -> Tab:
        began = time.monotonic()
        tab = await make(browser, mobile)
        made_at[tab.context] = began
        return tab

    async def recorded_open(self: ContextPool, *args: Any, **kwargs: Any) -> Tab:
        tab = await open_(self, *args, **kwargs)
        opened.append((self, tab.context))
        return tab

    monkeypatch.setattr(context_pool, "_make", timed_make)
    monkeypatch.setattr(ContextPool, "open", recorded_open)
    answers = tmp_path / "answers"
    answers.mkdir()
    app = (APPS / "dead-button.html").read_text(encoding="utf-8")
    hang = (APPS / "hostile" / "infinite-loop" / "index.html").read_text(encoding="utf-8")
    plan = [("first", app), ("second", app + "<!-- 2 -->"), ("hang", hang), ("after-hang", app + "<!-- 4 -->")]

    async def scenario() -> list[tuple[str, Any, float, list[tuple[ContextPool, Any]]]]:
        worker = RunWorker(WorkerSettings(run_dir=str(tmp_path / "run"), backend="local", run_timeout_s=TIMEOUT_S), "w")
        await worker.start()
        runs = []
        try:
            for qid, html in plan:
                # The worker reads its limit at each attempt: the hang's own is shorter, the others keep theirs.
                limit = HANG_TIMEOUT_S if qid == "hang" else TIMEOUT_S
                worker.settings = dataclasses.replace(worker.settings, run_timeout_s=limit)
                before = len(opened)
                assigned = time.monotonic()
                outcome = await worker.execute(_spec(answers, qid, html))
                runs.append((qid, outcome, assigned, opened[before:]))
        finally:
            await worker.close()
        return runs

    runs = asyncio.run(scenario())
    statuses = {qid: outcome.status for qid, outcome, _, _ in runs}
    assert statuses == {"first": OutcomeStatus.JUDGED, "second": OutcomeStatus.JUDGED,
                        "hang": OutcomeStatus.JUDGED, "after-hang": OutcomeStatus.JUDGED}, statuses
    assert runs[2][1].reason.code is ReasonCode.APP_HANG  # the app's hang is scored, not excluded
    pools = [[pool for pool, _ in used] for _, _, _, used in runs]
    worker_pool = pools[0][0]
    assert all(pool is worker_pool for pool in pools[0] + pools[1] + pools[2])  # the worker's one pool on its browser
    assert all(pool is pools[3][0] and pool is not worker_pool for pool in pools[3])  # thrown away with the browser
    for qid, _, assigned, used in runs:
        assert len(used) == 2, qid  # mobile and desktop
        if qid == "after-hang":
            continue  # its browser is launched when it is assigned (a replacement is made when needed)
        for _, context in used:
            assert made_at[context] < assigned, f"{qid}: a context was made after the run was assigned"
    every = [context for _, _, _, used in runs for _, context in used]
    assert len(set(every)) == len(every)  # no context served two runs
