"""The local outcome store (cluster.store.outcomes): outcomes recorded once, in the ledger then the log, and the
two made to agree on opening after each way a crash or an older run directory can leave them."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from cluster.store.ledger import Ledger
from cluster.store.outcomes import LocalOutcomes, open_outcomes
from cluster.store.results_log import ResultsLog
from tests.cluster.test_results_log import _outcome

pytestmark = pytest.mark.pure


def _record(run_dir: Path, *keys: str) -> None:
    async def go() -> None:
        async with open_outcomes(run_dir) as store:
            for key in keys:
                assert await store.record(_outcome(key))
    asyncio.run(go())


def _opened(run_dir: Path) -> tuple[set[str], dict[str, Any], int]:
    async def go() -> tuple[set[str], dict[str, Any], int]:
        async with open_outcomes(run_dir) as store:
            return store.finished_keys(), ResultsLog(run_dir / "results.jsonl").load(), store.torn_lines
    return asyncio.run(go())


def test_an_outcome_is_recorded_once_in_ledger_and_log(tmp_path: Path) -> None:
    _record(tmp_path, "run-a", "run-b")

    async def again() -> bool:
        async with open_outcomes(tmp_path) as store:
            return await store.record(_outcome("run-a", functional=1.0))
    assert asyncio.run(again()) is False
    finished, logged, _ = _opened(tmp_path)
    assert finished == {"run-a", "run-b"} and set(logged) == finished
    assert logged["run-a"].functional == 6.5


def test_agreeing_records_are_opened_without_parsing_the_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _record(tmp_path, "run-a", "run-b", "run-c")

    def no_parse(self: ResultsLog) -> None:
        raise AssertionError("the whole log was parsed")
    monkeypatch.setattr(ResultsLog, "load", no_parse)
    store = LocalOutcomes(tmp_path)
    try:
        store.reconcile()
        assert store.finished_keys() == {"run-a", "run-b", "run-c"}
    finally:
        store.close()


def test_a_crash_between_the_ledger_and_the_log_is_repaired(tmp_path: Path) -> None:
    _record(tmp_path, "run-a")
    with Ledger.for_run_dir(tmp_path) as ledger:
        assert ledger.finish(_outcome("run-b"))  # the driver died before the log's append
    finished, logged, _ = _opened(tmp_path)
    assert finished == {"run-a", "run-b"} and set(logged) == finished


def test_a_torn_last_line_is_counted_and_its_run_kept(tmp_path: Path) -> None:
    _record(tmp_path, "run-a", "run-b")
    log = tmp_path / "results.jsonl"
    whole = log.read_bytes()
    log.write_bytes(whole[: len(whole) - 40])  # run-b's line cut by a crash mid-append
    finished, logged, torn = _opened(tmp_path)
    assert torn == 1
    assert finished == {"run-a", "run-b"} and set(logged) == finished
    _record(tmp_path, "run-c")
    finished, logged, _ = _opened(tmp_path)
    assert set(logged) == finished == {"run-a", "run-b", "run-c"}


def test_a_crash_between_the_writes_after_a_repaired_torn_line_is_repaired_too(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The log keeps a repaired torn line (an extra line) for good: agreement is not a matter of counting lines."""
    _record(tmp_path, "run-a", "run-b", "run-c")
    log = tmp_path / "results.jsonl"
    whole = log.read_bytes()
    log.write_bytes(whole[: len(whole) - 40])
    _opened(tmp_path)  # repairs: the torn line stays, run-c's whole line follows it
    with Ledger.for_run_dir(tmp_path) as ledger:
        assert ledger.finish(_outcome("run-d"))  # died before the log's append
    finished, logged, _ = _opened(tmp_path)
    assert finished == {"run-a", "run-b", "run-c", "run-d"} and set(logged) == finished


def test_a_log_without_its_ledger_is_adopted(tmp_path: Path) -> None:
    _record(tmp_path, "run-a", "run-b")
    (tmp_path / "ledger.sqlite").unlink()
    for extra in tmp_path.glob("ledger.sqlite-*"):
        extra.unlink()
    finished, logged, _ = _opened(tmp_path)
    assert finished == {"run-a", "run-b"} and set(logged) == finished
