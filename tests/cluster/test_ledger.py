"""Tests of cluster.store.ledger.Ledger: the SQLite ledger that resume relies on, on real files and processes."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import cluster.store.ledger
from cluster.store.ledger import SCHEMA_VERSION, InFlight, Ledger
from cluster.store.results_log import ResultsLog
from evaluator.errors import ConfigError
from evaluator.models import Outcome, OutcomeReason, OutcomeStatus, ReasonCode

REPO = Path(__file__).resolve().parents[2]


def _outcome(run_key: str, **changes: Any) -> Outcome:
    data: dict[str, Any] = {
        "run_key": run_key, "candidate_id": "careful", "query_id": "game-tictactoe",
        "status": OutcomeStatus.JUDGED, "reason": OutcomeReason(code=ReasonCode.OK), "attempts": 1,
        "artifact_key": "artifact-1", "evidence_key": "evidence-1", "verdict_key": "verdict-1",
        "functional": 6.5, "aesthetic": 5.75, "judge_label": "heuristic judge (not an LLM)",
        "duration_s": 4.2, "finished_at": "2024-05-01T12:00:00Z",
    }
    data.update(changes)
    return Outcome(**data)


def _failed(run_key: str, status: OutcomeStatus = OutcomeStatus.INFRA_ERROR,
            code: ReasonCode = ReasonCode.BROWSER_CRASHED) -> Outcome:
    return _outcome(run_key, status=status, reason=OutcomeReason(code=code, detail="it broke"), functional=None,
                    aesthetic=None, verdict_key=None, judge_label=None)


def _python(code: str, *args: str) -> list[str]:
    return [sys.executable, "-c", textwrap.dedent(code), *args]


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "runs" / "demo" / "ledger.sqlite"


@pytest.fixture
def ledger(path: Path) -> Iterator[Ledger]:
    with Ledger(path) as opened:
        yield opened


# ------------------------------------------------------------------------------- opening


def test_for_run_dir_creates_the_file_in_wal_mode_with_the_schema_version(tmp_path: Path) -> None:
    run_dir = tmp_path / "runs" / "demo"
    with Ledger.for_run_dir(run_dir) as ledger:
        assert ledger.path == run_dir / "ledger.sqlite"
    db = sqlite3.connect(run_dir / "ledger.sqlite")
    try:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        db.close()


def test_a_ledger_from_a_newer_evalgrid_is_refused_with_a_clear_message(path: Path) -> None:
    Ledger(path).close()
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    db.close()
    with pytest.raises(ConfigError, match=r"schema version 2.*newer evalgrid.*Upgrade evalgrid") as caught:
        Ledger(path)
    assert str(path) in str(caught.value)


def test_a_file_that_is_not_a_database_is_a_config_error(path: Path) -> None:
    path.parent.mkdir(parents=True)
    path.write_bytes(b"this is a results log, not a database\n" * 200)
    with pytest.raises(ConfigError, match="not a readable evalgrid ledger"):
        Ledger(path)


def test_processes_creating_the_same_ledger_at_once_all_succeed(path: Path) -> None:
    code = """
        import sys
        from pathlib import Path
        from cluster.store.ledger import Ledger
        from evaluator.models import Outcome, OutcomeReason
        with Ledger(Path(sys.argv[1])) as ledger:
            ledger.finish(Outcome(run_key=sys.argv[2], candidate_id="c", query_id="q", status="judged",
                                  reason=OutcomeReason(code="ok"), attempts=1, duration_s=1.0, finished_at="t"))
    """
    children = [subprocess.Popen(_python(code, str(path), f"run-{i}"), cwd=REPO, stderr=subprocess.PIPE, text=True)
                for i in range(4)]
    for child in children:
        _, err = child.communicate(timeout=120)
        assert child.returncode == 0, err
    with Ledger(path) as ledger:
        assert ledger.finished_keys() == {"run-0", "run-1", "run-2", "run-3"}


# ---------------------------------------------------------------------------------- runs


def test_finish_records_once_and_keeps_the_first_outcome(ledger: Ledger) -> None:
    first = _outcome("run-a")
    assert ledger.finish(first) is True
    assert ledger.finish(_failed("run-a")) is False
    assert ledger.finish(first) is False
    assert ledger.outcome("run-a") == first
    assert list(ledger.outcomes()) == [first]
    assert ledger.counts()["judged"] == 1
    assert ledger.counts()["infra_error"] == 0


def test_outcome_of_an_unknown_run_is_none(ledger: Ledger) -> None:
    assert ledger.outcome("run-missing") is None


def test_outcomes_round_trip_in_recording_order_across_pages(ledger: Ledger, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cluster.store.ledger, "_PAGE", 3)
    recorded = [_outcome(f"run-{i}", query_id=f"q{i}", reason=OutcomeReason(code=ReasonCode.OK, detail="翻牌 — ¡sí!"))
                for i in (5, 1, 9, 0, 7, 3, 2)]
    for outcome in recorded:
        ledger.finish(outcome)
    assert list(ledger.outcomes()) == recorded


def test_finish_many_counts_only_new_outcomes(ledger: Ledger) -> None:
    ledger.finish(_outcome("run-a"))
    batch = [_outcome("run-a", attempts=3), _outcome("run-b"), _failed("run-c"), _failed("run-b")]
    assert ledger.finish_many(batch) == 2
    assert ledger.outcome("run-a") == _outcome("run-a")
    assert ledger.outcome("run-b") == _outcome("run-b")  # the first of the batch, not the later one
    assert ledger.finish_many([]) == 0
    assert ledger.finish_many(iter([_outcome("run-d")])) == 1
    assert ledger.finished_keys() == {"run-a", "run-b", "run-c", "run-d"}


def test_finish_many_is_one_transaction(ledger: Ledger) -> None:
    def batch() -> Iterator[Outcome]:
        yield _outcome("run-a")
        yield _outcome("run-b")
        raise RuntimeError("the producer died")

    with pytest.raises(RuntimeError, match="producer died"):
        ledger.finish_many(batch())
    assert ledger.finished_keys() == set()
    assert ledger.finish(_outcome("run-a")) is True  # the ledger is usable after the rollback


def test_in_flight_lists_started_runs_until_they_finish(ledger: Ledger) -> None:
    ledger.mark_started("run-a", worker="w0", attempt=1)
    ledger.mark_started("run-b", worker="w1", attempt=1)
    ledger.mark_started("run-a", worker="w2", attempt=2)  # a retry replaces the earlier start
    flights = {f.run_key: f for f in ledger.in_flight()}
    assert set(flights) == {"run-a", "run-b"}
    assert (flights["run-a"].worker, flights["run-a"].attempt) == ("w2", 2)
    assert isinstance(flights["run-b"], InFlight)
    assert flights["run-b"].started_at.endswith("+00:00")

    ledger.finish(_outcome("run-a"))
    assert [f.run_key for f in ledger.in_flight()] == ["run-b"]
    ledger.finish_many([_failed("run-b")])
    assert ledger.in_flight() == []


def test_a_finished_run_is_never_in_flight_again(ledger: Ledger) -> None:
    ledger.finish(_outcome("run-a"))
    ledger.mark_started("run-a", worker="w0", attempt=2)
    assert ledger.in_flight() == []
    assert ledger.counts()["in_flight"] == 0


def test_counts_per_status_plus_in_flight(ledger: Ledger) -> None:
    assert ledger.counts() == {"judged": 0, "non_assessable": 0, "infra_error": 0, "timeout": 0, "in_flight": 0}
    ledger.finish_many([_outcome("run-a"), _outcome("run-b"),
                        _failed("run-c", OutcomeStatus.NON_ASSESSABLE, ReasonCode.NO_CODE),
                        _failed("run-d", OutcomeStatus.TIMEOUT, ReasonCode.RUN_TIMEOUT)])
    ledger.mark_started("run-e", worker="w0", attempt=1)
    ledger.mark_started("run-f", worker="w1", attempt=1)
    assert ledger.counts() == {"judged": 2, "non_assessable": 1, "infra_error": 0, "timeout": 1, "in_flight": 2}


def test_remaining_keeps_the_given_order_and_skips_finished_runs(ledger: Ledger) -> None:
    ledger.finish_many([_outcome("run-2"), _outcome("run-4"), _outcome("run-unplanned")])
    planned = ["run-5", "run-2", "run-1", "run-4", "run-3"]
    assert list(ledger.remaining(planned)) == ["run-5", "run-1", "run-3"]
    assert list(ledger.remaining([])) == []


def test_remaining_streams_its_input(ledger: Ledger) -> None:
    ledger.finish(_outcome("run-1"))
    consumed: list[str] = []

    def planned() -> Iterator[str]:
        for i in range(1_000_000):
            consumed.append(f"run-{i}")
            yield f"run-{i}"

    pending = ledger.remaining(planned())
    assert next(pending) == "run-0"
    assert next(pending) == "run-2"
    assert len(consumed) == 3


def test_reopening_sees_everything(path: Path) -> None:
    with Ledger(path) as ledger:
        ledger.finish(_outcome("run-a"))
        ledger.finish_many([_failed("run-b")])
        ledger.mark_started("run-c", worker="w3", attempt=2)
        ledger.record_stage("verdict", "verdict-1", "verdicts/verdict-1.json")
    with Ledger(path) as reopened:
        assert reopened.outcome("run-a") == _outcome("run-a")
        assert reopened.outcome("run-b") == _failed("run-b")
        assert [(f.run_key, f.worker, f.attempt) for f in reopened.in_flight()] == [("run-c", "w3", 2)]
        assert reopened.stage_location("verdict", "verdict-1") == "verdicts/verdict-1.json"
        assert reopened.finish(_outcome("run-a", attempts=2)) is False


# ---------------------------------------------------------------------------- processes


def test_another_process_reads_while_this_one_writes(path: Path) -> None:
    reader = """
        import sys, time
        from pathlib import Path
        from cluster.store.ledger import Ledger
        ledger = Ledger(Path(sys.argv[1]))
        print(-1, flush=True)
        last, deadline = -1, time.monotonic() + 120
        while last < int(sys.argv[2]) and time.monotonic() < deadline:
            counts = ledger.counts()
            assert counts["timeout"] == 0, "an uncommitted write was visible"
            assert len(ledger.finished_keys()) >= counts["judged"] >= last, "the ledger went back"
            if counts["judged"] != last:
                last = counts["judged"]
                print(last, flush=True)
            time.sleep(0.005)
    """
    half, total = 20, 40
    with Ledger(path) as ledger:
        child = subprocess.Popen(_python(reader, str(path), str(total)), cwd=REPO, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
        try:
            assert child.stdout is not None
            assert child.stdout.readline().strip() == "-1"
            for i in range(half):
                ledger.mark_started(f"run-{i}", worker="w0", attempt=1)
                assert ledger.finish(_outcome(f"run-{i}")) is True
            # A write transaction stays open (uncommitted) while the reader catches up with the commits.
            holder = sqlite3.connect(path, isolation_level=None)
            try:
                holder.execute("BEGIN IMMEDIATE")
                holder.execute("INSERT INTO outcomes (run_key, status, candidate_id, query_id, finished_at, outcome) "
                               "VALUES ('run-open', 'timeout', 'c', 'q', 't', '{}')")
                line = ""
                while line != str(half):
                    line = child.stdout.readline().strip()
                    assert line, "the reader stopped before it saw the committed outcomes"
                holder.execute("ROLLBACK")
            finally:
                holder.close()
            for i in range(half, total):
                assert ledger.finish(_outcome(f"run-{i}")) is True
            out, err = child.communicate(timeout=120)
        finally:
            child.kill()
            child.wait()
    assert child.returncode == 0, err
    assert out.split()[-1] == str(total)


def test_a_second_writer_waits_for_the_lock_instead_of_failing(path: Path) -> None:
    writer = """
        import sys, time
        from pathlib import Path
        from cluster.store.ledger import Ledger
        from evaluator.models import Outcome, OutcomeReason
        ledger = Ledger(Path(sys.argv[1]))
        print("ready", flush=True)
        started = time.monotonic()
        ledger.finish(Outcome(run_key="run-late", candidate_id="c", query_id="q", status="judged",
                              reason=OutcomeReason(code="ok"), attempts=1, duration_s=1.0, finished_at="t"))
        print(time.monotonic() - started, flush=True)
    """
    Ledger(path).close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # hold the write lock, as another writer's long transaction would
    child = subprocess.Popen(_python(writer, str(path)), cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "ready"
        time.sleep(1.5)  # the child is now blocked on the lock
        holder.execute("COMMIT")
        holder.close()
        out, err = child.communicate(timeout=60)
    finally:
        child.kill()
        child.wait()
    assert child.returncode == 0, err  # not "database is locked"
    assert float(out) > 0.5  # it did wait: the busy timeout, not luck
    with Ledger(path) as ledger:
        assert ledger.finished_keys() == {"run-late"}


_CRASH = """
    import os, signal, sys
    from pathlib import Path
    from cluster.store.ledger import Ledger
    from evaluator.models import Outcome
    ledger = Ledger(Path(sys.argv[1]))
    ledger.mark_started("run-next", worker="w1", attempt=1)
    ledger.mark_started("run-done", worker="w0", attempt=1)
    finished = ledger.finish(Outcome.model_validate_json(sys.argv[2]))
    sys.stdout.write(str(finished))
    sys.stdout.flush()
    if sys.argv[3] == "exit":
        os._exit(0)  # no close(), no atexit, no finalizers
    os.kill(os.getpid(), signal.SIGKILL)
"""


@pytest.mark.parametrize("death", ["exit", "kill"])
def test_an_outcome_survives_the_death_of_the_process_right_after_finish(path: Path, death: str) -> None:
    outcome = _outcome("run-done")
    child = subprocess.run(_python(_CRASH, str(path), outcome.model_dump_json(), death), cwd=REPO,
                           capture_output=True, text=True, timeout=120)
    assert child.stdout == "True", child.stderr
    assert child.returncode == (0 if death == "exit" else -signal.SIGKILL)
    with Ledger(path) as reopened:
        assert reopened.outcome("run-done") == outcome
        assert [f.run_key for f in reopened.in_flight()] == ["run-next"]  # what the driver must redo
        assert list(reopened.remaining(["run-done", "run-next"])) == ["run-next"]


# -------------------------------------------------------------------------------- stages


def test_stage_records_are_idempotent_and_keep_the_first_location(ledger: Ledger) -> None:
    assert ledger.stage_location("artifact", "artifact-1") is None
    ledger.record_stage("artifact", "artifact-1", "artifacts/artifact-1")
    ledger.record_stage("artifact", "artifact-1", "artifacts/artifact-1")
    ledger.record_stage("artifact", "artifact-1", "s3://bucket/elsewhere")
    ledger.record_stage("evidence", "artifact-1", "evidence/same-key-other-stage")
    assert ledger.stage_location("artifact", "artifact-1") == "artifacts/artifact-1"
    assert ledger.stage_location("evidence", "artifact-1") == "evidence/same-key-other-stage"
    assert ledger.stage_location("verdict", "artifact-1") is None


def test_an_unknown_stage_is_refused(ledger: Ledger) -> None:
    with pytest.raises(ValueError, match="unknown stage 'verdicts'"):
        ledger.record_stage("verdicts", "verdict-1", "verdicts/verdict-1.json")


# ----------------------------------------------------------------------------- migration


def test_import_outcomes_adopts_a_results_log(ledger: Ledger, tmp_path: Path) -> None:
    log = ResultsLog(tmp_path / "results.jsonl")
    log.append(_failed("run-a"))
    log.append(_outcome("run-b"))
    log.append(_outcome("run-a", attempts=2))  # the log's rule: its last line of a key wins
    with log.path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps({"run_key": "run-torn"})[:12])
    ledger.finish(_failed("run-c", OutcomeStatus.TIMEOUT, ReasonCode.RUN_TIMEOUT))
    ledger.mark_started("run-b", worker="w0", attempt=1)

    legacy = {**log.load(), "run-c": _outcome("run-c")}
    assert ledger.import_outcomes(legacy.values()) == 2
    assert ledger.outcome("run-a") == _outcome("run-a", attempts=2)
    assert ledger.outcome("run-b") == _outcome("run-b")
    assert ledger.outcome("run-c") is not None and ledger.outcome("run-c") != _outcome("run-c")  # the ledger's own
    assert ledger.in_flight() == []
    assert ledger.import_outcomes(log.load().values()) == 0  # importing again adds nothing
