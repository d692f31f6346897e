"""The scoring policy for hangs, in real Chromium: an app that spins its main thread is the app's hang.

The hang probe tells a busy page from a healthy one; a worker whose run times out on a spinning app commits
the evidence up to the hang (marked incomplete), scores it functional 0 with a ``hang`` attribution that
cites it, and the candidate's mean counts it. ``evalgrid show``, rejudge and old manifests keep working.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from playwright.async_api import Browser
from rich.console import Console

from cluster.reduce.leaderboard import build_leaderboard
from cluster.report.show import run_panel
from cluster.scheduling.rejudge import rejudge
from cluster.scheduling.worker import RunWorker, WorkerSettings
from cluster.store.results_log import ResultsLog
from cluster.sweep.spec import SweepSpec
from evaluator.browser.hang import probe_hang
from evaluator.browser.serve import serve_directory
from evaluator.errors import EvidenceError
from evaluator.evidence.bundle import EvidenceBundle, verify_bundle
from evaluator.models import (
    MANIFEST_VERSION,
    AgentConfig,
    AppFailure,
    Candidate,
    Difficulty,
    Dimension,
    EvidenceManifest,
    HangProbe,
    JudgeConfig,
    Kind,
    Outcome,
    OutcomeStatus,
    Query,
    ReasonCode,
    RunSpec,
    Verdict,
)
from evaluator.run import execute_run, make_run_spec
from evaluator.stages import StagePaths
from tests.support import with_browser

pytestmark = pytest.mark.browser

SPIN_ON_CLICK = """<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Counter</title>
<style>body{font-family:sans-serif;padding:2rem;background:#f3f4f6}button{font-size:1.2rem;padding:.6rem 1rem}</style>
</head><body><h1>Counter</h1><p>Press the button to count.</p>
<button id="go">Count</button><script>
document.getElementById('go').addEventListener('click', () => { while (true) {} });
</script></body></html>"""

HEALTHY = "<!DOCTYPE html><title>ok</title><h1>ok</h1><button>noop</button>"


def _spec(answers: Path, qid: str, html: str) -> RunSpec:
    (answers / f"{qid}.html").write_text(html, encoding="utf-8")
    query = Query(id=qid, brief="A counter that counts clicks.", domain="tests", leaf="hang",
                  difficulty=Difficulty.EASY, language="en", kind=Kind.INTERACTIVE_APPLICATION)
    return make_run_spec(candidate=Candidate(id="spinner", answers=str(answers)), query=query,
                         agent=AgentConfig(max_steps=3, action_pause_ms=50), judge=JudgeConfig(),
                         judge_version="test", answers_dir=answers)


def test_the_probe_tells_a_busy_page_from_a_healthy_one(tmp_path: Path) -> None:
    (tmp_path / "busy.html").write_text("<title>busy</title><h1>busy</h1>", encoding="utf-8")
    (tmp_path / "fine.html").write_text("<title>fine</title><h1>fine</h1>", encoding="utf-8")

    async def scenario(browser: Browser) -> tuple[HangProbe, HangProbe]:
        with serve_directory(tmp_path, []) as origin:
            context = await browser.new_context()
            fine = await context.new_page()
            await fine.goto(f"{origin}/fine.html")
            # The probe's own bound (5 s), not a tighter one: with 2 s, a CI rehearsal's control (a script in a new
            # blank page, beside the spinning one and the other lane's sandbox) did not answer in time.
            healthy = await probe_hang(browser, origin=origin)
            busy = await (await browser.new_context()).new_page()
            await busy.goto(f"{origin}/busy.html")
            await busy.evaluate("setTimeout(() => { while (true) {} }, 0)")
            hung = await probe_hang(browser, origin=origin)
            return healthy, hung

    healthy, hung = with_browser(scenario)
    assert healthy.browser_answered and healthy.control_answered
    assert not healthy.busy_pages and not healthy.app_hung
    assert hung.app_hung, hung
    assert [url.rsplit("/", 1)[-1] for url in hung.busy_pages] == ["busy.html"]
    assert [url.rsplit("/", 1)[-1] for url in hung.answering_pages] == ["fine.html"]


@pytest.fixture(scope="module")
def hung_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Outcome]:
    """One local worker, one app that spins its main thread when its button is clicked (short run limit)."""
    root = tmp_path_factory.mktemp("hang")
    answers = root / "answers"
    answers.mkdir()

    async def scenario() -> Outcome:
        worker = RunWorker(WorkerSettings(run_dir=str(root / "run"), backend="local", run_timeout_s=12.0), "w")
        await worker.start()
        try:
            return await worker.execute(_spec(answers, "spin-on-click", SPIN_ON_CLICK))
        finally:
            await worker.close()

    return root / "run", asyncio.run(scenario())


def test_a_spinning_app_is_the_apps_hang_scored_from_its_partial_evidence(hung_run: tuple[Path, Outcome]) -> None:
    run_dir, outcome = hung_run
    assert outcome.status is OutcomeStatus.JUDGED, outcome.reason
    assert outcome.reason.code is ReasonCode.APP_HANG
    assert outcome.functional == 0.0
    # Static Perception finished before the click: its aesthetic verdict stands.
    assert outcome.aesthetic is not None and outcome.aesthetic > 0.0

    bundle = run_dir / "evidence" / str(outcome.evidence_key)
    manifest = verify_bundle(bundle)  # committed, and every file matches its hash
    assert manifest.incomplete is not None and manifest.incomplete.failure is AppFailure.HANG
    assert manifest.incomplete.probe is not None and manifest.incomplete.probe.app_hung
    assert manifest.incomplete.phase == "interaction" and manifest.version == MANIFEST_VERSION
    assert json.loads((bundle / "interaction" / "result.json").read_text())["ended_by"] == "hang"
    with pytest.raises(EvidenceError, match="hang"):
        EvidenceBundle(bundle)  # a judge is never handed the evidence up to a hang as if it were whole

    verdict = Verdict.model_validate_json((run_dir / "verdicts" / f"{outcome.verdict_key}.json").read_text())
    hang = [a for a in verdict.attributions if a.category == "hang"]
    assert len(hang) == 1 and hang[0].dimension is Dimension.FUNCTIONAL
    cited = [ref.file for ref in hang[0].evidence]
    last = manifest.incomplete.last_screenshot
    assert last is not None and last.startswith("interaction/steps/") and (bundle / last).is_file()
    assert cited[0] == last and hang[0].evidence[0].step == int(last.rsplit("/", 1)[1].split(".")[0])
    assert not [a for a in verdict.attributions if a.dimension is Dimension.FUNCTIONAL and a.category != "hang"]

    # The candidate's mean counts it (before, a timeout was left out of the means).
    board = build_leaderboard("t", ["spinner"], [outcome])
    assert board.rows[0].functional == 0.0 and board.rows[0].hang == 1 and board.rows[0].infra_error_rate == 0.0


def test_a_rerun_reuses_the_partial_bundle_and_issues_the_same_verdict(hung_run: tuple[Path, Outcome],
                                                                         tmp_path: Path) -> None:
    """Resume and other sweeps over the same evidence score it again by the policy, without a browser."""
    run_dir, outcome = hung_run
    answers = tmp_path / "answers"
    answers.mkdir()
    spec = _spec(answers, "spin-on-click", SPIN_ON_CLICK)

    async def again(browser: Browser) -> Outcome:
        return await execute_run(spec, browser=browser, paths=StagePaths(run_dir))

    second = with_browser(again)
    assert second.reason.code is ReasonCode.APP_HANG and second.verdict_key == outcome.verdict_key
    assert (second.functional, second.aesthetic) == (outcome.functional, outcome.aesthetic)


def test_version_1_manifests_still_read_as_complete(hung_run: tuple[Path, Outcome]) -> None:
    run_dir, outcome = hung_run
    data = json.loads((run_dir / "evidence" / str(outcome.evidence_key) / "manifest.json").read_text())
    data.pop("incomplete")
    data["version"] = 1
    old = EvidenceManifest.model_validate(data)
    assert old.incomplete is None and old.version == 1


def test_show_and_rejudge_read_the_partial_bundle(hung_run: tuple[Path, Outcome]) -> None:
    run_dir, outcome = hung_run
    console = Console(width=200, record=True)
    console.print(run_panel(run_dir, outcome))
    text = console.export_text()
    assert "incomplete" in text and "hang during interaction" in text and "app_hang" in text
    assert "action" in text and "target" in text, "the steps before the hang are shown, read as records"

    # A run directory around the hung run (its sweep file gone: the recorded outcome is used).
    spec = SweepSpec.model_validate({"name": "h", "queries": "q.yaml", "candidates": [{"id": "spinner",
                                                                                        "answers": "a"}]})
    (run_dir / "sweep.json").write_text(json.dumps({"path": str(run_dir / "gone.yaml"),
                                                    "spec": spec.model_dump(mode="json")}), encoding="utf-8")
    ResultsLog(run_dir / "results.jsonl").append(outcome)
    result = asyncio.run(rejudge(run_dir, JudgeConfig(options={"rubric": "heuristic-v1"})))
    assert result.judged == 1 and not result.failed
    rescored = result.outcomes[0]
    assert rescored.functional == 0.0 and rescored.verdict_key != outcome.verdict_key
    verdict = Verdict.model_validate_json((run_dir / "verdicts" / f"{rescored.verdict_key}.json").read_text())
    assert verdict.judge.rubric_version.startswith("heuristic-v1") and "failure policy" in verdict.label
    assert [a.category for a in verdict.attributions if a.dimension is Dimension.FUNCTIONAL] == ["hang"]
