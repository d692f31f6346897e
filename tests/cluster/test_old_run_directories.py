"""Run directories written before a change of layout still reduce, export and report the same; run keys change only
on purpose (a resume skips what is still valid and redoes what an older evidence collector made)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cluster.cli import main
from cluster.reduce.leaderboard import build_leaderboard
from cluster.reduce.reducer import open_run_directory
from cluster.repair.summary import DimensionLift
from cluster.store.layout import RunFile
from cluster.sweep.spec import RecordedPlan, Sweep
from evaluator.keys import COLLECTOR_VERSION
from tests.support import FIXTURES

PRE_LAYOUT = FIXTURES / "rundirs" / "pre-layout"

pytestmark = pytest.mark.pure


@pytest.fixture()
def run_dir(tmp_path: Path) -> Path:
    copy = tmp_path / "pre-layout"
    shutil.copytree(PRE_LAYOUT, copy, ignore=shutil.ignore_patterns("expected"))
    return copy


RECORDED_COLLECTOR = "collector-7"
"""The evidence collector the directory's runs were made with (commit ef5fde1)."""
# Today's keys for the directory's recorded plan. They change only on purpose: when evidence collection changes
# (COLLECTOR_VERSION) or a config field that is part of a key is added. Such a change updates this list in the same
# commit and says why; a list that changed by accident means every resumed sweep would redo all its runs.
PLANNED_TODAY = ["run-f53328bd910a558626b641b6", "run-ee969eab4c9976aafef8aa58", "run-1a0fad56c83f4902dff795fe",
                 "run-385e5d0f1ed17a2d40af7aa9", "run-cc4ef727cb944739c24ee116", "run-ef04c76ed89c3c915590008d",
                 "run-fc3dfcbd7f9e529ce6adffc9", "run-e96881f31cef6f469d5ec903"]
# (collector-12: a click is judged by the form values outside its control too, so a native slider's own value is not
# the app's response; a slider thumb's drag goes along its track and is checked by where the thumb ends up. The
# default judge's rubric text is keyed too: heuristic-v6 re-keyed them in the same session. A replayed run is keyed
# by its answer's digest since then as well, so an edited answer is run again; that re-keyed every replay run once.)
# (collector-13: a key's scroll lands at once and is put back once it rests, so a scroll still animating no
# longer moves a page the app left untouched; heuristic-v7, the default judge's new rubric, re-keyed them too.)
# (collector-14: a large surface that listens for pointer movement is swept across with no button held;
# heuristic-v8, the default judge's new rubric, re-keyed them too.)
# (heuristic-v9, the default judge's new rubric, re-keyed them alone; the evidence is collector-14's.)


def _replanned() -> tuple[list[str], list[str]]:
    plan = RecordedPlan.model_validate_json((PRE_LAYOUT / RunFile.PLAN).read_text(encoding="utf-8"))
    return [run.run_key for run in Sweep(plan.spec, PRE_LAYOUT / "sweep.yaml", plan.queries).plan()], plan.run_keys


def test_runs_collected_by_an_older_collector_are_all_redone_on_resume() -> None:
    """collector-8 (settling on signals) changed what the evidence holds: no run of the old directory may be reused
    by a resume, and none of its keys may be planned again."""
    replanned, recorded = _replanned()
    assert COLLECTOR_VERSION != RECORDED_COLLECTOR
    assert len(replanned) == len(recorded) == 8
    assert not set(replanned) & set(recorded)


def test_the_keys_planned_today_change_only_on_purpose() -> None:
    replanned, _ = _replanned()
    assert replanned == PLANNED_TODAY, (
        "run keys changed: if evidence collection or a keyed config changed on purpose, update PLANNED_TODAY "
        "(and bump COLLECTOR_VERSION where the evidence changed); otherwise resumed sweeps would redo every run")


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


def test_a_lift_written_before_its_intervals_recorded_n_reads_with_n_the_paired_fixtures() -> None:
    """The repair lift's intervals are the leaderboard's ``Interval`` now; a lift file written before had no ``n``."""
    old = {"dimension": "functional", "scale": "0-8", "fixtures": 4,
           "original": {"mean": 3.0, "low": 2.0, "high": 4.0}, "repaired": {"mean": 5.0, "low": 4.0, "high": 6.0},
           "lift": {"mean": 2.0, "low": 1.0, "high": 3.0}}
    lift = DimensionLift.model_validate(old)
    assert (lift.original.n, lift.repaired.n, lift.lift.n) == (4, 4, 4)
    assert lift.lift.mean == 2.0
    assert DimensionLift.model_validate(lift.model_dump()) == lift
