"""Run directories written before a change of layout still reduce, export and report the same, and the
run keys their plans recorded are the keys today's planner computes (so resume skips their runs)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cluster.cli import main
from cluster.reduce.leaderboard import build_leaderboard
from cluster.reduce.reducer import open_run_directory
from cluster.sweep.spec import PLAN_FILE, RecordedPlan, Sweep
from tests.support import FIXTURES

PRE_LAYOUT = FIXTURES / "rundirs" / "pre-layout"

pytestmark = pytest.mark.pure


@pytest.fixture()
def run_dir(tmp_path: Path) -> Path:
    copy = tmp_path / "pre-layout"
    shutil.copytree(PRE_LAYOUT, copy, ignore=shutil.ignore_patterns("expected"))
    return copy


def test_the_recorded_run_keys_are_the_keys_planned_today() -> None:
    plan = RecordedPlan.model_validate_json((PRE_LAYOUT / PLAN_FILE).read_text(encoding="utf-8"))
    replanned = [run.run_key for run in Sweep(plan.spec, PRE_LAYOUT / "sweep.yaml", plan.queries).plan()]
    assert replanned == plan.run_keys
    assert len(replanned) == 8


def test_export_writes_what_the_version_that_made_the_directory_wrote(run_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "exports"
    assert main(["export", str(run_dir), "--out", str(out)]) == 0
    for name in ("reduction.json", "runs.json"):
        then = json.loads((PRE_LAYOUT / "expected" / name).read_text(encoding="utf-8"))
        now = json.loads((out / name).read_text(encoding="utf-8"))
        assert now == then, name


def test_the_leaderboard_and_report_come_from_the_old_directory(run_dir: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    directory = open_run_directory(run_dir)
    assert directory.note is None
    board = build_leaderboard(directory.name, directory.candidates, directory.outcomes,
                              sample_reduce=directory.sample_reduce)
    recorded = json.loads((PRE_LAYOUT / "leaderboard.json").read_text(encoding="utf-8"))
    assert board.model_dump(mode="json") == recorded
    assert main(["leaderboard", str(run_dir)]) == 0
    printed = capsys.readouterr().out
    assert printed.index("careful") < printed.index("broken")
    assert main(["report", str(run_dir)]) == 0
    index = (run_dir / "report" / "index.html").read_text(encoding="utf-8")
    assert "careful" in index and "broken" in index
    pages = list((run_dir / "report").rglob("*.html"))
    assert len(pages) >= 1 + 8
