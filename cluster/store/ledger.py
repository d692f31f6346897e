"""The ledger: a durable SQLite record beside a run directory (``<run_dir>/ledger.sqlite``).

It holds what resume needs for sweeps of 100,000+ runs: the single outcome of every finished run,
the runs in flight (started, not finished: to be redone after a driver crash), and where every
stage output (artifact, evidence, verdict) was stored, by its content key.

Concurrency: the sweep's driver is the only writer of outcomes; other processes (``evalgrid
status``) may read at any time. The database is in WAL mode, so readers never wait for the writer,
and every connection has a busy timeout, so two writers wait for each other instead of failing.

Durability: ``synchronous=FULL``, so a commit, and therefore :meth:`Ledger.finish`, has reached the
disk when it returns; a crash or a power cut right after cannot lose an outcome (the JSONL results
log's fsync per line made the same promise). In WAL mode that costs one fsync of the WAL per commit.

Schema (its version is ``PRAGMA user_version``)::

    outcomes   id, run_key UNIQUE, status, candidate_id, query_id, finished_at, outcome (Outcome JSON)
    in_flight  run_key PRIMARY KEY, worker, attempt, started_at      (never holds a finished run)
    stages     (stage, key) PRIMARY KEY, location, recorded_at
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Final

from cluster.store.layout import RunFile
from evaluator import ConfigError, Outcome, OutcomeStatus, utc_now

SCHEMA_VERSION: Final = 1
"""Ledger schema version this evalgrid writes and reads (stored in ``PRAGMA user_version``)."""

STAGES: Final = frozenset({"artifact", "evidence", "verdict"})
"""Stages whose outputs :meth:`Ledger.record_stage` records."""

BUSY_TIMEOUT_MS: Final = 30_000
"""How long a connection waits for another connection's lock before giving up."""

# outcomes() reads this many rows per query, so no read transaction stays open while the caller
# works on the rows (an open reader would stop WAL checkpoints and let the WAL file grow).
_PAGE: Final = 2000

# A rowid table for outcomes (not WITHOUT ROWID) because the JSON makes its rows large; the rowid
# also gives outcomes() the recording order. The UNIQUE index on run_key is what makes a second
# outcome of a run impossible, and it covers finished_keys() and remaining(); the status index
# covers counts(). in_flight and stages have small rows looked up by key: WITHOUT ROWID.
_SCHEMA: Final = (
    """CREATE TABLE outcomes (
        id           INTEGER PRIMARY KEY,
        run_key      TEXT NOT NULL UNIQUE,
        status       TEXT NOT NULL,
        candidate_id TEXT NOT NULL,
        query_id     TEXT NOT NULL,
        finished_at  TEXT NOT NULL,
        outcome      TEXT NOT NULL
    )""",
    "CREATE INDEX outcomes_status ON outcomes (status)",
    """CREATE TABLE in_flight (
        run_key    TEXT PRIMARY KEY,
        worker     TEXT NOT NULL,
        attempt    INTEGER NOT NULL,
        started_at TEXT NOT NULL
    ) WITHOUT ROWID""",
    """CREATE TABLE stages (
        stage       TEXT NOT NULL CHECK (stage IN ('artifact', 'evidence', 'verdict')),
        key         TEXT NOT NULL,
        location    TEXT NOT NULL,
        recorded_at TEXT NOT NULL,
        PRIMARY KEY (stage, key)
    ) WITHOUT ROWID""",
    f"PRAGMA user_version = {SCHEMA_VERSION}",
)


@dataclass(frozen=True)
class InFlight:
    """A run that was started and has no outcome yet."""

    run_key: str
    """Content key of the run."""
    worker: str
    """Id of the worker that started it."""
    attempt: int
    """Attempt number it was started with."""
    started_at: str
    """UTC time it was started (ISO 8601)."""


class Ledger:
    """The SQLite ledger of one run directory: outcomes, runs in flight, stage outputs.

    One connection per object. Calls may come from any thread (the driver may move the fsync of
    :meth:`finish` off its event loop with ``asyncio.to_thread``); a lock serialises them, so two
    threads never interleave their transactions on the shared connection.
    """

    def __init__(self, path: Path) -> None:
        """Open the ledger at ``path``, creating the file (and its directory) and the schema if needed.

        Raises :class:`~evaluator.errors.ConfigError` when the file is not a ledger or was written
        by a newer evalgrid.
        """
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        # isolation_level=None: the sqlite3 module opens no transactions behind our back; every
        # write below says BEGIN IMMEDIATE itself, taking the write lock (or waiting for it) up
        # front instead of failing half-way on a lock upgrade.
        # check_same_thread=False: see the class docstring; self._lock makes it safe.
        self._db = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                                   check_same_thread=False)
        try:
            self._setup()
        except sqlite3.DatabaseError as exc:
            self._db.close()
            raise ConfigError(f"{path} is not a readable evalgrid ledger ({exc}); "
                              "move it away to start a fresh ledger") from exc
        except BaseException:
            self._db.close()
            raise

    @classmethod
    def for_run_dir(cls, run_dir: Path) -> Ledger:
        """The ledger of a run directory: ``<run_dir>/ledger.sqlite``."""
        return cls(run_dir / RunFile.LEDGER)

    def _setup(self) -> None:
        db = self._db
        db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        # WAL is a property of the file (set once, kept); synchronous is a setting of each connection.
        self._enable_wal()
        db.execute("PRAGMA synchronous = FULL")
        if self._user_version() == 0:
            with self._transaction():
                # Another process may have created the schema between our read and our lock.
                if self._user_version() == 0:
                    for statement in _SCHEMA:
                        db.execute(statement)
        version = self._user_version()
        if version > SCHEMA_VERSION:
            raise ConfigError(
                f"{self.path} has ledger schema version {version}, but this evalgrid reads only up to version "
                f"{SCHEMA_VERSION}: the run directory was written by a newer evalgrid. Upgrade evalgrid "
                "(pip install -U evalgrid) to read or resume it."
            )

    def _enable_wal(self) -> None:
        # SQLite does not call the busy handler while a journal-mode switch waits for the exclusive
        # lock, so processes creating the same ledger at once see "database is locked" at once
        # (measured in CI: 1 of 4 processes). Retry here, within the same budget as busy_timeout.
        deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
        delay = 0.005
        while True:
            try:
                mode = self._db.execute("PRAGMA journal_mode").fetchone()[0]
                if str(mode).lower() != "wal":
                    self._db.execute("PRAGMA journal_mode = WAL")
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() + delay > deadline:
                    raise
            time.sleep(delay)
            delay = min(delay * 2, 0.25)

    def _user_version(self) -> int:
        return int(self._db.execute("PRAGMA user_version").fetchone()[0])

    def _transaction(self, *, immediate: bool = True) -> _Transaction:
        return _Transaction(self._db, immediate=immediate)

    # ------------------------------------------------------------------------------ lifecycle

    def close(self) -> None:
        """Close the connection (committed data is already on disk). Closing twice is harmless."""
        with self._lock:
            self._db.close()

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    # ----------------------------------------------------------------------------------- runs

    def mark_started(self, run_key: str, *, worker: str, attempt: int) -> None:
        """Record that ``worker`` started ``run_key`` (attempt ``attempt``); replaces an earlier start.

        A run that already has an outcome is left alone: it is finished, and keeping it out of
        :meth:`in_flight` keeps that list to the runs a crashed driver must redo.
        """
        with self._lock, self._transaction():
            self._db.execute(
                "INSERT INTO in_flight (run_key, worker, attempt, started_at) "
                "SELECT ?1, ?2, ?3, ?4 WHERE NOT EXISTS (SELECT 1 FROM outcomes WHERE run_key = ?1) "
                "ON CONFLICT (run_key) DO UPDATE SET worker = excluded.worker, attempt = excluded.attempt, "
                "started_at = excluded.started_at",
                (run_key, worker, attempt, utc_now()),
            )

    def finish(self, outcome: Outcome) -> bool:
        """Record the single outcome of its run, durably, and end the run's in-flight state.

        Returns ``False``, and changes nothing, when the run already has an outcome: the first
        outcome is kept, a run never has two.
        """
        return self.finish_many((outcome,)) == 1

    def finish_many(self, outcomes: Iterable[Outcome]) -> int:
        """Record many outcomes in one transaction, as :meth:`finish` does; returns how many were new.

        A run that already has an outcome (in the ledger, or earlier in ``outcomes``) keeps its first.
        """
        rows = ((o.run_key, o.status.value, o.candidate_id, o.query_id, o.finished_at, o.model_dump_json())
                for o in outcomes if o.status is not OutcomeStatus.DEFERRED)  # not final: never recorded
        with self._lock, self._transaction():
            added = self._db.executemany(
                "INSERT INTO outcomes (run_key, status, candidate_id, query_id, finished_at, outcome) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (run_key) DO NOTHING", rows,
            ).rowcount
            # in_flight holds at most a few rows per worker (plus a crashed driver's leftovers), so
            # scanning it is cheaper than deleting by each key of a large batch.
            self._db.execute("DELETE FROM in_flight "
                             "WHERE EXISTS (SELECT 1 FROM outcomes o WHERE o.run_key = in_flight.run_key)")
        return added

    def outcome(self, run_key: str) -> Outcome | None:
        """The outcome of ``run_key``, or ``None`` when the run has none."""
        with self._lock:
            row = self._db.execute("SELECT outcome FROM outcomes WHERE run_key = ?", (run_key,)).fetchone()
        return None if row is None else Outcome.model_validate_json(row[0])

    def outcomes(self) -> Iterator[Outcome]:
        """Every outcome, in the order they were recorded, read a page at a time."""
        last = 0
        while True:
            with self._lock:
                page = self._db.execute("SELECT id, outcome FROM outcomes WHERE id > ? ORDER BY id LIMIT ?",
                                        (last, _PAGE)).fetchall()
            for _, text in page:
                yield Outcome.model_validate_json(text)
            if len(page) < _PAGE:
                return
            last = page[-1][0]

    def finished_keys(self) -> set[str]:
        """Run keys that have an outcome."""
        with self._lock:
            return {key for (key,) in self._db.execute("SELECT run_key FROM outcomes")}

    def last_finished(self) -> str | None:
        """The run key of the outcome recorded last (``None`` when there is none)."""
        with self._lock:
            row = self._db.execute("SELECT run_key FROM outcomes ORDER BY id DESC LIMIT 1").fetchone()
        return str(row[0]) if row else None

    def remaining(self, run_keys: Iterable[str]) -> Iterator[str]:
        """The keys of ``run_keys`` without an outcome, in the given order, produced lazily.

        The finished keys are read once, when this is called (not when iteration starts); then
        ``run_keys`` is streamed. Reading them is one scan of the run-key index (about 0.1 s for
        100,000 outcomes), far cheaper than a lookup per planned key.
        """
        finished = self.finished_keys()
        return (key for key in run_keys if key not in finished)

    def in_flight(self) -> list[InFlight]:
        """Runs started and not finished, oldest start first; after a driver crash, the runs to redo."""
        with self._lock:
            rows = self._db.execute(
                "SELECT run_key, worker, attempt, started_at FROM in_flight ORDER BY started_at, run_key"
            ).fetchall()
        return [InFlight(run_key=k, worker=w, attempt=int(a), started_at=s) for k, w, a, s in rows]

    def counts(self) -> dict[str, int]:
        """Outcomes per status value (every status present, zeros included), plus ``"in_flight"``."""
        counts = {status.value: 0 for status in OutcomeStatus if status is not OutcomeStatus.DEFERRED}
        with self._lock:
            # Both reads in one transaction, so a run cannot be counted as finished and in flight.
            with self._transaction(immediate=False):
                counts.update(self._db.execute("SELECT status, count(*) FROM outcomes GROUP BY status").fetchall())
                counts["in_flight"] = int(self._db.execute("SELECT count(*) FROM in_flight").fetchone()[0])
        return counts

    # --------------------------------------------------------------------------------- stages

    def record_stage(self, stage: str, key: str, location: str) -> None:
        """Record where the output of ``stage`` with content key ``key`` is stored.

        ``stage`` is one of :data:`STAGES`; ``location`` a path relative to the run directory or a
        URL. Idempotent: a key already recorded keeps its first location (a content key names
        one content, so any copy will do).
        """
        if stage not in STAGES:
            raise ValueError(f"unknown stage {stage!r}; expected one of {sorted(STAGES)}")
        with self._lock, self._transaction():
            self._db.execute("INSERT OR IGNORE INTO stages (stage, key, location, recorded_at) VALUES (?, ?, ?, ?)",
                             (stage, key, location, utc_now()))

    def stage_location(self, stage: str, key: str) -> str | None:
        """Where the output of ``stage`` with content key ``key`` is stored, or ``None`` if unrecorded."""
        with self._lock:
            row = self._db.execute("SELECT location FROM stages WHERE stage = ? AND key = ?", (stage, key)).fetchone()
        return None if row is None else str(row[0])

    # ------------------------------------------------------------------------------ migration

    def import_outcomes(self, outcomes: Iterable[Outcome]) -> int:
        """Adopt outcomes from an older ``results.jsonl`` log; as :meth:`finish_many`, returns how many were new.

        Pass ``ResultsLog(path).load().values()``: the log's own rule (its last line of a key wins)
        is applied there, and a run the ledger already finished keeps its ledger outcome.
        """
        return self.finish_many(outcomes)


class _Transaction:
    """``BEGIN`` … ``COMMIT``, or ``ROLLBACK`` when the block raises."""

    def __init__(self, db: sqlite3.Connection, *, immediate: bool = True) -> None:
        self._db = db
        self._begin = "BEGIN IMMEDIATE" if immediate else "BEGIN"

    def __enter__(self) -> None:
        self._db.execute(self._begin)

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if exc_type is not None:
            self._db.execute("ROLLBACK")
            return
        try:
            self._db.execute("COMMIT")
        except sqlite3.Error:
            # A failed COMMIT (disk full, I/O error) leaves the transaction open; every later BEGIN
            # would fail with it. Roll back so the ledger stays usable, and report the failure.
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            raise
