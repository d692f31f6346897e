"""A small local sweep end to end in real Chromium: bad answers, exactly one outcome per run, resume."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import random
import shutil
import sqlite3
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from cluster.scheduling import runner
from cluster.scheduling.runner import GridOptions, SweepResult, run_sweep
from cluster.store.ledger import Ledger
from cluster.store.results_log import ResultsLog
from cluster.sweep.spec import load_sweep
from evaluator.errors import InfrastructureError, WorkerStartError
from evaluator.evidence.bundle import verify_bundle
from evaluator.models import OutcomeStatus, ReasonCode
from tests.support import APPS, FIXTURES

pytestmark = pytest.mark.browser

QUERIES = ["prod-todo", "edu-flashcards", "tool-calculator"]


def _write_sweep(tmp_path: Path) -> Path:
    queries = yaml.safe_load((FIXTURES / "queries" / "cookie-mini.yaml").read_text(encoding="utf-8"))
    queries["queries"] = [q for q in queries["queries"] if q["id"] in QUERIES]
    (tmp_path / "queries.yaml").write_text(yaml.safe_dump(queries, allow_unicode=True), encoding="utf-8")
    good = tmp_path / "answers" / "good"
    good.mkdir(parents=True)
    # A working app, and a query with no answer file at all.
    shutil.copy(APPS / "dead-button.html", good / "prod-todo.html")
    shutil.copy(APPS / "error-on-click.html", good / "edu-flashcards.html")
    hostile = tmp_path / "answers" / "hostile"
    hostile.mkdir(parents=True)
    (hostile / "prod-todo.md").write_bytes(random.Random(7).randbytes(4096))  # binary garbage
    (hostile / "edu-flashcards.md").write_text(
        "Here are the files.\n\n**../../pwned.html**\n```html\n<h1>owned</h1>\n```\n\n"
        "**/tmp/evalgrid-abs-escape.html**\n```html\n<h1>owned</h1>\n```\n", encoding="utf-8")
    (hostile / "tool-calculator.md").write_text(
        "I'm sorry, but I can't help build that calculator right now.", encoding="utf-8")
    sweep = {
        "name": "mini", "queries": "queries.yaml", "concurrency": 2, "run_timeout_s": 120,
        # One step: no test reads how far the agent got, and each step is seconds of a good app's run.
        "agent": {"max_steps": 1}, "sandbox": {"backend": "local"},
        "candidates": [{"id": "good", "answers": "answers/good"}, {"id": "hostile", "answers": "answers/hostile"}],
    }
    path = tmp_path / "sweep.yaml"
    path.write_text(yaml.safe_dump(sweep), encoding="utf-8")
    return path


def _run(sweep_path: Path, run_dir: Path, *, workers: int | None = None) -> SweepResult:
    return asyncio.run(run_sweep(load_sweep(sweep_path), run_dir, grid=GridOptions(workers=workers)))


def _tree(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


@dataclass(frozen=True)
class _FirstSweep:
    """The sweep's first invocation: the folder it ran in (sweep file, answers, ``run/``) and what it did."""

    root: Path
    result: SweepResult
    created: set[str]
    """What the invocation added to ``root``, relative to it."""

    def copy(self, to: Path) -> tuple[Path, Path]:
        """A test's own copy of the folder, to damage and resume: its sweep file and run directory.

        A copy resumes as the original would: run keys depend on the answers' paths relative to the sweep file and
        on their bytes, and the run directory locates its stages relative to itself (its absolute paths are only
        in outcome messages, and in the sweep record, which each invocation writes again).
        """
        shutil.copytree(self.root, to, dirs_exist_ok=True)
        return to / "sweep.yaml", to / "run"


@pytest.fixture(scope="module")
def first_sweep(tmp_path_factory: pytest.TempPathFactory) -> _FirstSweep:
    """The six runs each resume test starts from, executed once for the module (they are most of each test's time)."""
    root = tmp_path_factory.mktemp("first-sweep")
    sweep_path = _write_sweep(root)
    before = _tree(root)
    result = _run(sweep_path, root / "run")
    return _FirstSweep(root, result, _tree(root) - before)


def _resume(sweep_path: Path, run_dir: Path) -> SweepResult:
    """The next invocation of the sweep, on one worker: it has at most one run to do, and each worker launches a
    Chromium."""
    return _run(sweep_path, run_dir, workers=1)


def test_sweep_classifies_every_run_once_writes_nothing_outside_and_resumes(first_sweep: _FirstSweep,
                                                                           tmp_path: Path) -> None:
    first, run_dir = first_sweep.result, first_sweep.root / "run"

    assert first.executed == 6 and first.skipped == 0
    by_cell = {(o.candidate_id, o.query_id): o for o in first.outcomes.values()}
    assert len(by_cell) == 6
    assert by_cell[("good", "prod-todo")].status is OutcomeStatus.JUDGED
    assert by_cell[("good", "edu-flashcards")].status is OutcomeStatus.JUDGED
    expected = {
        ("good", "tool-calculator"): ReasonCode.MISSING_ANSWER,
        ("hostile", "prod-todo"): ReasonCode.BINARY_ANSWER,
        ("hostile", "edu-flashcards"): ReasonCode.UNSAFE_FILES_ONLY,
        ("hostile", "tool-calculator"): ReasonCode.NO_CODE,
    }
    for cell, code in expected.items():
        assert by_cell[cell].status is OutcomeStatus.NON_ASSESSABLE, cell
        assert by_cell[cell].reason.code is code, cell
        assert by_cell[cell].reason.detail

    # Exactly one line per run in the log; evidence bundles verify against their manifests.
    lines = (run_dir / "results.jsonl").read_text().splitlines()
    assert len(lines) == 6 and len({json.loads(line)["run_key"] for line in lines}) == 6
    for outcome in first.outcomes.values():
        if outcome.evidence_key:
            verify_bundle(run_dir / "evidence" / outcome.evidence_key)

    # Nothing was written outside the run directory, by path traversal or otherwise.
    assert {p for p in first_sweep.created if not p.startswith("run")} == set()
    assert not (first_sweep.root.parent / "pwned.html").exists()
    assert not Path("/tmp/evalgrid-abs-escape.html").exists()

    # Re-running the same sweep skips everything.
    sweep_path, run_dir = first_sweep.copy(tmp_path)
    second = _resume(sweep_path, run_dir)
    assert second.executed == 0 and second.skipped == 6
    assert len((run_dir / "results.jsonl").read_text().splitlines()) == 6


def _crash_mid_run(run_dir: Path, run_key: str) -> None:
    """What a driver killed while ``run_key`` was in flight leaves: started in the ledger, no outcome anywhere."""
    with sqlite3.connect(run_dir / "ledger.sqlite") as db:
        db.execute("DELETE FROM outcomes WHERE run_key = ?", (run_key,))
    with Ledger.for_run_dir(run_dir) as ledger:
        ledger.mark_started(run_key, worker="worker-0", attempt=1)
    lines = [line for line in (run_dir / "results.jsonl").read_text().splitlines()
             if json.loads(line)["run_key"] != run_key]
    (run_dir / "results.jsonl").write_text("".join(line + "\n" for line in lines), encoding="utf-8")


def test_an_outcome_whose_log_line_was_lost_is_restored_not_redone(first_sweep: _FirstSweep, tmp_path: Path) -> None:
    """The ledger commits first; a crash before the JSONL append must not cost the run."""
    sweep_path, run_dir = first_sweep.copy(tmp_path)
    judged = next(o for o in first_sweep.result.outcomes.values() if o.status is OutcomeStatus.JUDGED)
    lines = [line for line in (run_dir / "results.jsonl").read_text().splitlines()
             if json.loads(line)["run_key"] != judged.run_key]
    (run_dir / "results.jsonl").write_text("\n".join(lines) + '\n{"run_key": "torn', encoding="utf-8")

    second = _resume(sweep_path, run_dir)
    assert second.executed == 0 and second.skipped == 6 and second.torn_lines == 1
    log = ResultsLog(run_dir / "results.jsonl").load()
    assert len(log) == 6 and log[judged.run_key] == judged


def test_resume_after_a_crash_redoes_only_the_missing_run_and_reuses_its_evidence(first_sweep: _FirstSweep,
                                                                                   tmp_path: Path) -> None:
    sweep_path, run_dir = first_sweep.copy(tmp_path)
    judged = next(o for o in first_sweep.result.outcomes.values() if o.status is OutcomeStatus.JUDGED)
    manifest = run_dir / "evidence" / str(judged.evidence_key) / "manifest.json"
    stamp = manifest.stat().st_mtime_ns

    # Simulate a crash while the judged run was in flight; the log also ends in a torn line.
    _crash_mid_run(run_dir, judged.run_key)
    with (run_dir / "results.jsonl").open("a", encoding="utf-8") as log_file:
        log_file.write('{"run_key": "torn')

    second = _resume(sweep_path, run_dir)
    assert second.executed == 1 and second.skipped == 5 and second.torn_lines == 1 and second.redone == 1
    redone = second.outcomes[judged.run_key]
    assert redone.status is OutcomeStatus.JUDGED and redone.evidence_key == judged.evidence_key
    assert manifest.stat().st_mtime_ns == stamp, "committed evidence was collected again"
    log = ResultsLog(run_dir / "results.jsonl").load()
    assert len(log) == 6


def test_partial_evidence_from_a_crashed_attempt_is_recollected(first_sweep: _FirstSweep, tmp_path: Path) -> None:
    sweep_path, run_dir = first_sweep.copy(tmp_path)
    judged = next(o for o in first_sweep.result.outcomes.values() if o.status is OutcomeStatus.JUDGED)
    bundle = run_dir / "evidence" / str(judged.evidence_key)
    # A crash mid-collection: the manifest was never written, the marker is still there.
    os.remove(bundle / "manifest.json")
    (bundle / "INCOMPLETE").write_text("started earlier\n")
    _crash_mid_run(run_dir, judged.run_key)
    second = _resume(sweep_path, run_dir)
    assert second.executed == 1
    verify_bundle(bundle)
    assert not (bundle / "INCOMPLETE").exists()


def test_workers_that_cannot_start_stop_the_sweep_and_record_nothing(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALGRID_CHROMIUM", str(tmp_path / "no-such-chromium"))
    run_dir = tmp_path / "run"
    with pytest.raises(WorkerStartError, match="no-such-chromium"):
        _run(_write_sweep(tmp_path), run_dir)
    assert (run_dir / "results.jsonl").read_text() == ""
    with Ledger.for_run_dir(run_dir) as ledger:
        assert ledger.finished_keys() == set()


def test_an_outage_stops_the_sweep_and_leaves_its_runs_to_the_next_invocation(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Simulated outage: the ``noop`` backend ends every run as ``infra_error`` (nothing is evaluated)."""
    real = runner.worker_settings
    monkeypatch.setattr(runner, "worker_settings",
                        lambda *args, **kwargs: dataclasses.replace(real(*args, **kwargs), backend="noop"))
    run_dir = tmp_path / "run"
    with pytest.raises(InfrastructureError, match="3 runs in a row failed"):
        asyncio.run(run_sweep(load_sweep(_write_sweep(tmp_path)), run_dir, max_infra_streak=3))
    with Ledger.for_run_dir(run_dir) as ledger:
        assert ledger.finished_keys() == set()  # held back, not recorded: the next invocation redoes them
        assert ledger.in_flight()
