"""The agentic demo slice end to end (``fixtures/sweeps/demo-agentic.yaml``, the second half of ``make demo``).

An agentic candidate (``fixer``) and the same model in one turn (``one-turn``, its base) over three queries. Two
first drafts throw while the page loads; the agentic candidate must learn that from the preview tool's report
(which line), delete that line and answer clean, so the reduction's recovery table says 2 of 3 first previews had
errors, 2 of 2 recovered, and the fixed apps' scores give a positive gain over the base. The report must show it
in Chromium: the recovery row with its gain under the leaderboard, and a fixer run's preview rounds.

The model is the scripted demo model (``fixtures/agentic/demo_model.py``) on loopback: a boundary that cannot be
crossed here (no model runs on this machine, and a real one would not answer the same way twice). Everything it
reacts to is real: the sweep file, the Docker sandboxes that serve its previews, the preview reports it reads, the
heuristic judge, the reducer and the report. A preview that stopped naming the failing line, a reducer that lost
the base or the rounds, a report without the recovery table: each fails a test here.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest
from playwright.async_api import Browser

from cluster.reduce.records import Reduction, RunRow
from cluster.reduce.reducer import reduce_run_dir, write_tables
from cluster.report.html import run_page_name, write_report
from cluster.scheduling.runner import SweepResult, run_sweep
from cluster.sweep.spec import Sweep, load_sweep
from evaluator.models import OutcomeStatus
from fixtures.agentic.demo_model import DEFAULT_PORT, load_apps, responder
from tests.llm.scripted_server import scripted_server
from tests.support import FIXTURES, require_docker, with_browser

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.docker]

SWEEP = FIXTURES / "sweeps" / "demo-agentic.yaml"
ENDPOINT = "demo-model"
Demo = tuple[SweepResult, Reduction, list[RunRow], Path]


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Demo:
    """The slice run as ``make demo`` runs it, with the model on a free port instead of the sweep's fixed one, and
    the explorer's steps cut to 4 (from 10): what is checked is in the previews, the recovery and the reduction,
    and a draft that throws while its page loads is broken at any step count (the machine lane's time)."""
    require_docker()  # the sweep runs in the default sandbox backend
    sweep = load_sweep(SWEEP)
    run_dir = tmp_path_factory.mktemp("demo-agentic") / "run"
    with scripted_server(responder=responder(load_apps())) as model:
        endpoint = sweep.spec.endpoints[ENDPOINT].model_copy(update={"base_url": model.url})
        agent = sweep.spec.agent.model_copy(update={"max_steps": 4})
        spec = sweep.spec.model_copy(update={"endpoints": {**sweep.spec.endpoints, ENDPOINT: endpoint}, "agent": agent})
        result = asyncio.run(run_sweep(Sweep(spec=spec, path=sweep.path, queries=sweep.queries), run_dir))
    reduction, rows = reduce_run_dir(run_dir)  # as `evalgrid report` does
    write_tables(run_dir / "report" / "data", rows, reduction)
    index = write_report(run_dir, reduction, rows, run_dir / "report")
    return result, reduction, rows, index


def test_the_sweep_file_names_the_port_the_demo_model_serves_on() -> None:
    """`make demo` starts the model on its default port and runs the file as it is: they must agree."""
    spec = load_sweep(SWEEP).spec
    assert spec.endpoints[ENDPOINT].base_url == f"http://127.0.0.1:{DEFAULT_PORT}/v1"
    fixer, base = spec.candidates
    assert (fixer.id, fixer.generate.mode, fixer.base, base.id, base.generate.mode) == (
        "fixer", "agentic", "one-turn", "one-turn", "single")


def test_every_run_is_judged(demo: Demo) -> None:
    """No infra error, timeout or non-assessable answer: the numbers below are about the apps."""
    result, _, rows, _ = demo
    assert len(result.outcomes) == 6
    assert {o.status for o in result.outcomes.values()} == {OutcomeStatus.JUDGED}, [
        (o.candidate_id, o.query_id, o.status, o.reason.detail) for o in result.outcomes.values()]
    assert {(r.candidate_id, r.query_id) for r in rows} == {
        (c, q) for c in ("fixer", "one-turn") for q in ("game-tictactoe", "tool-calculator", "life-bmi")}


def test_the_fixer_recovers_from_both_errors_and_gains_over_its_one_turn_base(demo: Demo) -> None:
    """The recovery table: 2 of 3 first previews had errors, both recovered, and the gain is positive."""
    _, reduction, rows, _ = demo
    [fixer] = reduction.recovery
    assert (fixer.candidate_id, fixer.base) == ("fixer", "one-turn")
    assert (fixer.never_called, fixer.first_errors, fixer.recovered) == (0, 2, 2)
    assert fixer.gain is not None and fixer.gain.mean > 0, fixer.gain
    rounds = {r.query_id: (r.preview_rounds, r.preview_first, r.preview_final_clean)
              for r in rows if r.candidate_id == "fixer"}
    assert rounds == {"game-tictactoe": (2, "errors", True), "tool-calculator": (2, "errors", True),
                      "life-bmi": (1, "ok", True)}
    assert [c.candidate_id for c in reduction.candidates] == ["fixer", "one-turn"]


def _first_number(text: str) -> float:
    found = re.search(r"[-+−]?\d+(?:\.\d+)?", text)
    assert found is not None, text
    return float(found.group(0).replace("−", "-"))


def test_the_report_shows_the_recovery_row_the_gain_and_the_preview_rounds_in_chromium(demo: Demo) -> None:
    """Opened from disk in real Chromium: the leaderboard ranks the fixer first, the recovery table has its row
    with a positive gain, and the page of a run that recovered lists its two rounds, errors then ok."""
    _, _, rows, index = demo
    recovered = next(r for r in rows if r.candidate_id == "fixer" and r.query_id == "game-tictactoe")
    run_page = index.parent / "runs" / run_page_name(recovered.run_key)

    async def scenario(browser: Browser) -> None:
        page = await browser.new_page()
        await page.goto(index.as_uri())
        ranked = await page.locator("#leaderboard tbody tr").evaluate_all("rows => rows.map(r => r.dataset.candidate)")
        assert ranked == ["fixer", "one-turn"]
        row = page.locator('#recovery tr[data-candidate="fixer"]')
        await row.wait_for(state="visible")
        assert await page.locator("#recovery tbody tr").count() == 1  # the base is no agentic candidate
        assert "one-turn" in await row.inner_text()
        assert _first_number(await row.locator(".gain").inner_text()) > 0
        await page.goto(run_page.as_uri())
        rounds = page.locator("#preview-rounds li.round")
        await rounds.first.wait_for(state="visible")
        assert await rounds.locator(".round-status").all_inner_texts() == ["errors", "ok"]
        assert re.search(r"index\.html:\d+", await rounds.first.inner_text())
        await page.close()

    with_browser(scenario)
