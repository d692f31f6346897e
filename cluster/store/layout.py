"""The layout of a run directory: the one place the names of its files and folders are spelled.

The same names hold in a local run directory and under an object-store prefix (``remote.py`` adds its
``blobs/`` and ``outcomes/``). The stage outputs (``artifacts/``, ``evidence/``, ``verdicts/``) are
:class:`~evaluator.run.StagePaths`', shared with a single run; a bundle's own files are
:class:`~evaluator.evidence.bundle.BundleFile`'s.
"""

from __future__ import annotations

from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

_Record = TypeVar("_Record", bound=BaseModel)


class RunFile:
    """The files and folders of a run directory, relative to its root."""

    SWEEP = "sweep.json"
    """The sweep as last run: its file's path and spec (:class:`~cluster.sweep.spec.SweepRecord`)."""
    PLAN = "plan.json"
    """The plan the last invocation recorded: its spec, queries and run keys."""
    RESULTS = "results.jsonl"
    """Every recorded outcome, one line each, the first per run key counting."""
    LEDGER = "ledger.sqlite"
    """Runs in flight and stages done, for resuming (local; rebuilt from ``outcomes/`` in a store)."""
    OUTCOMES = "outcomes"
    """One outcome per finished run, in an object store."""
    DEFERRED = "deferred.json"
    """The runs a spending cap deferred."""
    LEADERBOARD = "leaderboard.json"
    """The sweep's leaderboard."""
    LEADERBOARD_MD = "leaderboard.md"
    """The leaderboard as Markdown."""
    REJUDGED = "rejudged"
    """``evalgrid rejudge``'s outputs, a folder per judge."""
    REJUDGED_OUTCOMES = "outcomes.jsonl"
    """A rejudged folder's outcomes."""
    PAIRWISE = "pairwise"
    """``evalgrid compare``'s outputs, a folder per judge (and the pairwise verdicts)."""
    PAIRWISE_SUMMARY = "summary.json"
    """A pairwise folder's summary."""
    REPAIR_LIFT = "repair-lift"
    """``evalgrid repair-lift``'s outputs, a folder per judge."""
    LIFT = "lift.json"
    """A repair-lift folder's summary."""
    UX_REPORTS = "ux-reports"
    """The UX reports the repair-lift stage's judge wrote."""
    REPAIRS = "repairs"
    """The apps the repair-lift stage's repairer wrote."""
    CALIBRATION = "calibration.json"
    """``evalgrid calibrate``'s last measurement."""
    CALIBRATIONS = "calibrations"
    """Every calibration measured, one file per judge version and agent config."""
    SUITE = "suite"
    """The calibration suite's sweep, as ``evalgrid calibrate`` wrote it."""
    RUNS_PARQUET = "runs.parquet"
    """The per-run table (``evalgrid export``, and the report's ``data/``), for programs."""
    RUNS_CSV = "runs.csv"
    """The per-run table, for people."""
    RUNS_JSON = "runs.json"
    """The per-run table as JSON records."""
    REDUCTION = "reduction.json"
    """The reduction: per-candidate means with their intervals, and the statistics beside them."""
    REPORT = "report"
    """``evalgrid report``'s default output folder."""
    EXPORTS = "exports"
    """``evalgrid export``'s default output folder."""


def per_judge_records(run_dir: Path, folder: str, name: str, model: type[_Record]) -> list[_Record]:
    """Every ``<folder>/<judge>/<name>`` record of ``run_dir`` (one per judge), sorted by judge, skipping files of
    another format (an older one, or a torn write: a report shows what it can read)."""
    found = []
    for path in sorted((run_dir / folder).glob(f"*/{name}")):
        try:
            found.append(model.model_validate_json(path.read_bytes()))
        except (OSError, ValidationError):
            continue
    return found
