"""An app cannot choose to go unscored by breaking the measurements (issue 33, finding 1).

``fixtures/apps/tamper/eval-hook.md`` is a working counter whose page hooks the global ``eval`` and deletes
``element_count`` from every measurement evaluated in its world. That once crashed the heuristic judge with a
``KeyError``: the run ended ``infra_error`` (out of the means), its retry reused the committed evidence so the
app no longer counted as in play, and a candidate of such answers stopped the sweep. The page facts are now
measured in an isolated world the hook cannot reach, and validated where they are measured. Here a sweep with the
strictest breaker (one infrastructure failure in a row stops it) runs three of them beside their unhooked twins,
on the local backend (the attack is on the measurement inside the page, not on the sandbox; real Chromium).
Then a committed bundle whose facts were broken after the fact (as the hook once broke them) is judged: the
failure policy scores it as the app's tampering, never as the machinery's failure.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest

from cluster.scheduling.runner import GridOptions, run_sweep
from evaluator.evidence.bundle import read_manifest
from evaluator.llm.client import ModelAccess
from evaluator.models import JudgeConfig, Outcome, OutcomeStatus, ReasonCode
from evaluator.run import judge_or_fall_back
from evaluator.stages import StagePaths
from tests.support import APPS, write_sweep

pytestmark = pytest.mark.browser

QUERIES = ("q-1", "q-2", "q-3")


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Outcome]]:
    root = tmp_path_factory.mktemp("forged")
    hooked = (APPS / "tamper" / "eval-hook.md").read_text(encoding="utf-8")
    for candidate in ("hooked", "honest"):
        (root / "answers" / candidate).mkdir(parents=True)
        for qid in QUERIES:
            # The honest twin: the same page without the hook. Each answer unique, so no stage output is shared.
            answer = hooked if candidate == "hooked" else hooked.replace("window.eval = function", "const unused = "
                                                                                                "function")
            (root / "answers" / candidate / f"{qid}.md").write_text(answer.replace("<h1>Counter</h1>",
                                                                                   f"<h1>Counter {qid}</h1>"))
    sweep = write_sweep(root, QUERIES, candidates=("hooked", "honest"), brief="A counter.", name="forged",
                        run_timeout_s=90, agent={"max_steps": 2}, sandbox={"backend": "local"})
    result = asyncio.run(run_sweep(sweep, root / "run",
                                   grid=GridOptions(scheduler="local", workers=1), max_infra_streak=1))
    return root / "run", list(result.outcomes.values())


def test_every_run_is_recorded_and_a_hooked_page_scores_as_its_unhooked_twin(
        swept: tuple[Path, list[Outcome]]) -> None:
    run_dir, outcomes = swept
    lines = (run_dir / "results.jsonl").read_text().splitlines()
    assert len(outcomes) == len(lines) == 2 * len(QUERIES)  # recorded, none held back, the sweep not stopped
    by_cell = {(o.candidate_id, o.query_id): o for o in outcomes}
    for qid in QUERIES:
        hooked, honest = by_cell["hooked", qid], by_cell["honest", qid]
        for outcome in (hooked, honest):
            assert (outcome.status, outcome.reason.code) == (OutcomeStatus.JUDGED, ReasonCode.OK), outcome.reason
            assert outcome.attempts == 1 and "tamper_attempted" not in outcome.flags
        assert hooked.functional is not None and honest.functional is not None
        assert hooked.aesthetic is not None and honest.aesthetic is not None
        assert abs(hooked.functional - honest.functional) <= 0.5, (hooked, honest)
        assert abs(hooked.aesthetic - honest.aesthetic) <= 0.5, (hooked, honest)


def test_a_committed_bundle_whose_facts_a_judge_cannot_read_is_scored_as_tampering(
        swept: tuple[Path, list[Outcome]], tmp_path: Path) -> None:
    run_dir, outcomes = swept
    honest = next(o for o in outcomes if o.candidate_id == "honest")
    assert honest.evidence_key is not None
    bundle = tmp_path / "bundle"
    shutil.copytree(StagePaths(run_dir).evidence(honest.evidence_key), bundle)
    facts_file = bundle / "static" / "desktop-facts.json"
    record = json.loads(facts_file.read_text())
    del record["facts"]["element_count"]  # what the hook did, as an older collector would have stored it
    facts_file.write_text(json.dumps(record))
    manifest = read_manifest(bundle)
    assert manifest is not None
    paths = StagePaths(tmp_path / "judged")
    judged = asyncio.run(judge_or_fall_back(JudgeConfig(), "forged-evidence", manifest, bundle, paths, ModelAccess()))
    assert judged.fallback is not None and judged.fallback[0] is ReasonCode.APP_TAMPER
    assert "UnreadableEvidenceError" in judged.fallback[1] and "facts.element_count" in judged.fallback[1]
    verdict = judged.verdict
    assert (verdict.functional, verdict.aesthetic) == (0.0, 0.0) and verdict.flags == ["tamper_attempted"]
    assert verdict.judge.name == "failure-policy" and paths.verdict(verdict.verdict_key).is_file()
