"""The outcome store: where a sweep records each run's outcome, exactly once, and what resume reads.

One interface, two backends:

- :class:`LocalOutcomes`: the run directory on this machine. The SQLite ledger is the source of truth
  (a second outcome for a run is refused); ``results.jsonl`` follows it, the log people and the reducer read.
- :class:`ObjectStoreOutcomes`: a run directory in an object store (``s3://``), staged on this machine. An
  outcome goes to the store before the local ledger records it, so an outcome the ledger has is one the
  store has, whatever crashes; opening adopts every stored outcome, so a new machine resumes from the
  store alone.

The driver alone writes here. Workers publish their runs' stage outputs themselves
(:meth:`~cluster.store.remote.RunStore.publish_stages`); an outcome only names them.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from cluster.store.layout import RunFile
from cluster.store.ledger import InFlight, Ledger
from cluster.store.results_log import ResultsLog
from evaluator import Outcome, StagePaths

if TYPE_CHECKING:
    from cluster.store.object_store import StoreSettings
    from cluster.store.remote import RunStore



class OutcomeStore(Protocol):
    """What a sweep's driver records outcomes in and resumes from."""

    def finished_keys(self) -> set[str]:
        """Run keys with a recorded outcome."""
        ...

    def outcome(self, run_key: str) -> Outcome | None:
        """The recorded outcome of ``run_key``, if any."""
        ...

    def outcomes(self) -> Iterator[Outcome]:
        """Every recorded outcome."""
        ...

    def in_flight(self) -> list[InFlight]:
        """Runs started and not finished (by an invocation that died, or this one)."""
        ...

    def mark_started(self, run_key: str, *, worker: str, attempt: int) -> None:
        """Note that ``worker`` started ``attempt`` of ``run_key``."""
        ...

    async def record(self, outcome: Outcome) -> bool:
        """Record ``outcome``; ``False`` (and nothing written) when its run already has one."""
        ...

    async def publish(self, *names: str) -> None:
        """Make run-level files of the run directory (the plan, the leaderboard …) readable where it lives."""
        ...

    @property
    def torn_lines(self) -> int:
        """Torn lines found in the outcome log when it was opened (a crash mid-append)."""
        ...

    def close(self) -> None:
        """Release the store; outcomes already recorded are durable."""
        ...


class LocalOutcomes:
    """Outcomes in a run directory on this machine: the ledger, then the log."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        run_dir.mkdir(parents=True, exist_ok=True)
        self._log = ResultsLog(run_dir / RunFile.RESULTS)
        self._log.path.touch(exist_ok=True)  # `evalgrid status` works from the first second of a sweep
        self._ledger = Ledger.for_run_dir(run_dir)

    def reconcile(self) -> None:
        """Make the ledger and the log agree after a crash between the two writes, or an older run dir.

        They already agree when the log's last line is whole and is the outcome the ledger recorded last: the
        ledger records each outcome before the log does, in the same order, and every other opening repairs
        the log completely; a crash between the two writes leaves the log's last line an older outcome, and one
        mid-append leaves it torn. Only otherwise is the whole log read (100,000 outcomes: seconds), so
        resuming reads one line of the log, not all of them.
        """
        last = self._log.last_key()
        if last is not None and last == self._ledger.last_finished():
            return
        logged = self._log.load()
        known = self._ledger.finished_keys()
        self._ledger.import_outcomes(o for key, o in logged.items() if key not in known)
        for outcome in [o for o in self._ledger.outcomes() if o.run_key not in logged]:
            self._log.append(outcome)

    def finished_keys(self) -> set[str]:
        """Run keys with a recorded outcome."""
        return self._ledger.finished_keys()

    def outcome(self, run_key: str) -> Outcome | None:
        """The recorded outcome of ``run_key``, if any."""
        return self._ledger.outcome(run_key)

    def outcomes(self) -> Iterator[Outcome]:
        """Every recorded outcome."""
        return self._ledger.outcomes()

    def in_flight(self) -> list[InFlight]:
        """Runs started and not finished."""
        return self._ledger.in_flight()

    def mark_started(self, run_key: str, *, worker: str, attempt: int) -> None:
        """Note that ``worker`` started ``attempt`` of ``run_key``."""
        self._ledger.mark_started(run_key, worker=worker, attempt=attempt)

    async def record(self, outcome: Outcome) -> bool:
        """Record ``outcome`` in the ledger, then the log; ``False`` when its run already has one."""
        if not self._ledger.finish(outcome):
            return False
        for stage, key in (("artifact", outcome.artifact_key), ("evidence", outcome.evidence_key),
                           ("verdict", outcome.verdict_key)):
            if key:
                self._ledger.record_stage(stage, key, _stage_location(stage, key))
        self._log.append(outcome)
        return True

    async def publish(self, *names: str) -> None:
        """Nothing to do: the run directory is where the files are."""

    @property
    def torn_lines(self) -> int:
        """Torn lines found in the log when it was read."""
        return self._log.torn_lines

    def close(self) -> None:
        """Close the ledger."""
        self._ledger.close()


class ObjectStoreOutcomes(LocalOutcomes):
    """Outcomes of a run directory in an object store, staged in ``run_dir`` on this machine."""

    def __init__(self, run_dir: Path, remote: RunStore) -> None:
        super().__init__(run_dir)
        self.remote = remote

    async def adopt(self) -> None:
        """Import every outcome the store has and the local ledger lacks (a new machine, a lost disk)."""
        await asyncio.to_thread(self.remote.rebuild_ledger, self._ledger)

    async def record(self, outcome: Outcome) -> bool:
        """Record ``outcome`` in the store first, then locally; ``False`` when its run already has one."""
        if self.outcome(outcome.run_key) is not None:
            return False
        await asyncio.to_thread(self.remote.put_outcome, outcome)
        return await super().record(outcome)

    async def publish(self, *names: str) -> None:
        """Upload the named run-level files under the same names."""
        for name in names:
            await asyncio.to_thread(self.remote.put_file, name, self.run_dir / name)


@asynccontextmanager
async def open_outcomes(run_dir: Path, store: StoreSettings | None = None) -> AsyncIterator[OutcomeStore]:
    """The outcome store of ``run_dir`` (staged from ``store`` when given), reconciled and ready to resume;
    closed on the way out."""
    opened: LocalOutcomes
    if store:
        # boto3 only for a run directory in an object store (importing it costs about a second).
        from cluster.store.object_store import S3Store
        from cluster.store.remote import RunStore
        opened = ObjectStoreOutcomes(run_dir, RunStore(S3Store(store)))
    else:
        opened = LocalOutcomes(run_dir)
    try:
        if isinstance(opened, ObjectStoreOutcomes):
            await opened.adopt()
        opened.reconcile()
        yield opened
    finally:
        opened.close()


def _stage_location(stage: str, key: str) -> str:
    return {"artifact": f"{StagePaths.ARTIFACTS}/{key}.json", "evidence": f"{StagePaths.EVIDENCE}/{key}",
            "verdict": f"{StagePaths.VERDICTS}/{key}.json"}[stage]
