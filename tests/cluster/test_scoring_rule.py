"""One scoring rule: the leaderboard and the reducer agree on a sweep, and reduction reads the plan the run
directory recorded, never the sweep file as it is now (synthetic run directories, no browser)."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest

from cluster.reduce.leaderboard import build_leaderboard
from cluster.reduce.reducer import open_run_directory, reduce_run_dir
from cluster.reduce.scoring import cell_score
from cluster.store.layout import RunFile
from cluster.store.results_log import ResultsLog
from cluster.sweep.spec import RecordedPlan
from evaluator.models import Outcome, OutcomeReason, OutcomeStatus, ReasonCode
from tests.benchmarks.bench_reducer import build


@pytest.fixture(scope="module")
def sampled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A sweep of 3 candidates × 40 queries; a second sample for half the cells, and infra errors that count
    as runs but not as scores."""
    root = tmp_path_factory.mktemp("sampled")
    build(root, candidates=3, queries=40, seed=5)
    run = root / "run"
    rng = random.Random(11)
    plan = RecordedPlan.model_validate_json((run / RunFile.PLAN).read_bytes())
    more = []
    for outcome in ResultsLog(run / "results.jsonl").load().values():
        if outcome.query_id < "q00020":
            more.append(outcome.model_copy(update={
                "run_key": outcome.run_key + "-s1", "sample": 1, "functional": round(rng.uniform(0, 8), 1),
                "aesthetic": round(rng.uniform(0, 8), 1)}))
        elif outcome.query_id > "q00035":
            more.append(Outcome(run_key=outcome.run_key + "-s1", candidate_id=outcome.candidate_id,
                                query_id=outcome.query_id, sample=1, status=OutcomeStatus.INFRA_ERROR,
                                reason=OutcomeReason(code=ReasonCode.BROWSER_UNAVAILABLE, detail="synthetic"),
                                attempts=3, duration_s=1.0, finished_at="2026-11-22T00:00:00+00:00"))
    with (run / "results.jsonl").open("a", encoding="utf-8") as log:
        log.writelines(o.model_dump_json() + "\n" for o in more)
    plan.run_keys += [o.run_key for o in more]
    (run / RunFile.PLAN).write_text(plan.model_dump_json())
    return run


def _with_reduce(run: Path, tmp_path: Path, how: str) -> Path:
    copy = tmp_path / how
    shutil.copytree(run, copy)
    saved = json.loads((copy / RunFile.PLAN).read_text())
    saved["spec"]["sample_reduce"] = how
    (copy / RunFile.PLAN).write_text(json.dumps(saved))
    return copy


@pytest.mark.parametrize("how", ["mean", "best"])
def test_the_leaderboard_and_the_reducer_agree_on_a_sweep(sampled: Path, tmp_path: Path, how: str) -> None:
    run = _with_reduce(sampled, tmp_path, how)
    directory = open_run_directory(run)
    board = build_leaderboard(directory.name, directory.candidates, directory.outcomes,
                              sample_reduce=directory.sample_reduce)
    reduction, rows = reduce_run_dir(run, samples=100)
    assert len(rows) == 3 * 40 + 3 * 20 + 3 * 4
    reduced = {c.candidate_id: c for c in reduction.candidates}
    for row in board.rows:
        mine = reduced[row.candidate_id]
        assert mine.functional is not None and mine.aesthetic is not None and mine.overall is not None
        assert (row.functional, row.aesthetic, row.overall) == (
            mine.functional.mean, mine.aesthetic.mean, mine.overall.mean), row.candidate_id
        assert (row.runs, row.judged, row.infra_error) == (mine.runs, mine.judged, mine.infra_error)
    assert [r.candidate_id for r in board.rows] == [c.candidate_id for c in reduction.candidates]


def test_a_cells_samples_are_reduced_by_the_sweeps_rule() -> None:
    samples = [(2.0, 6.0), (5.0, 3.0), (4.0, 4.0)]
    assert cell_score(samples, "mean") == (pytest.approx(11 / 3), pytest.approx(13 / 3))
    assert cell_score(samples, "best") == (5.0, 3.0)  # 8 = 8 = 8: the higher functional


def test_reduction_reads_the_recorded_plan_not_the_sweep_file(tmp_path: Path) -> None:
    build(tmp_path, candidates=2, queries=12, seed=1)
    before, rows_before = reduce_run_dir(tmp_path / "run", samples=100)
    (tmp_path / "sweep.yaml").write_text((tmp_path / "sweep.yaml").read_text().replace("model-01", "model-99"))
    queries = (tmp_path / "queries.yaml").read_text()
    (tmp_path / "queries.yaml").write_text(queries.replace("difficulty: easy", "difficulty: hard"))
    after, rows_after = reduce_run_dir(tmp_path / "run", samples=100)
    assert rows_after == rows_before and after == before
    (tmp_path / "sweep.yaml").unlink()
    assert reduce_run_dir(tmp_path / "run", samples=100)[0] == before


def test_a_run_directory_made_before_plans_were_recorded_still_reduces_with_a_warning(tmp_path: Path) -> None:
    build(tmp_path / "old", candidates=2, queries=12, seed=1, plan=False)
    build(tmp_path / "new", candidates=2, queries=12, seed=1)
    with pytest.warns(UserWarning, match="no plan.json"):
        old, old_rows = reduce_run_dir(tmp_path / "old" / "run", samples=100)
    new, new_rows = reduce_run_dir(tmp_path / "new" / "run", samples=100)
    assert [r.run_key for r in old_rows] == [r.run_key for r in new_rows]
    assert old.candidates == new.candidates
    with pytest.warns(UserWarning):
        assert "no recorded plan" in (open_run_directory(tmp_path / "old" / "run").note or "")
