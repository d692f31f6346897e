"""A sweep's evidence has a disk budget (issue 33, finding 7): past ``disk_budget_gib`` the sweep stops with a
clear error and every finished run recorded, and the same command with a larger budget resumes where it stopped.
Real runs on the local backend (Chromium and the video encoder write what the budget counts)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from cluster.scheduling.runner import GridOptions, run_sweep
from cluster.sweep.spec import Sweep
from evaluator.errors import DiskBudgetError
from tests.support import APPS, write_sweep

pytestmark = pytest.mark.browser

QUERIES = ("q-1", "q-2", "q-3")


def _sweep(root: Path, gib: float) -> Sweep:
    return write_sweep(root, QUERIES, candidates=("model",), brief="A counter.", leaf="disk", name="disk",
                       run_timeout_s=60, disk_budget_gib=gib, agent={"max_steps": 1}, sandbox={"backend": "local"})


def test_a_sweep_stops_at_its_disk_budget_and_resumes_with_a_larger_one(tmp_path: Path) -> None:
    (tmp_path / "answers" / "model").mkdir(parents=True)
    page = (APPS / "scripted-control.html").read_text(encoding="utf-8")
    for qid in QUERIES:  # each answer its own, so no evidence is shared
        (tmp_path / "answers" / "model" / f"{qid}.html").write_text(page + f"<!-- {qid} -->", encoding="utf-8")
    run_dir = tmp_path / "run"
    tiny = 1 / 2**30  # one byte: the first bundle passes it
    with pytest.raises(DiskBudgetError, match="of its disk budget .* every finished run is recorded"):
        asyncio.run(run_sweep(_sweep(tmp_path, tiny), run_dir, grid=GridOptions(scheduler="local")))
    recorded = (run_dir / "results.jsonl").read_text().splitlines()
    assert len(recorded) == 1  # the run that passed the budget is recorded, and the sweep stopped there
    result = asyncio.run(run_sweep(_sweep(tmp_path, 10), run_dir, grid=GridOptions(scheduler="local")))
    assert (result.skipped, result.executed, len(result.outcomes)) == (1, 2, 3)
