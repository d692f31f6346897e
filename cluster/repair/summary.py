"""Repair lift, UXBench's measure of a judge's report: how much better the app gets when a fixed repairer
acts on it, as a fixed evaluator scores the app before and after.

Per dimension (the seven UX dimensions on 1-5, functional and aesthetic on 0-8): the mean original and
repaired scores and the lift (repaired minus original), each with a bootstrap interval over fixtures,
and the per-fixture lift, which shows whether the mean comes from a few apps or from most of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator
from rich.markup import escape
from rich.table import Table

from cluster.reduce import statistics as st
from cluster.reduce.records import Interval
from cluster.store.layout import RunFile, per_judge_records
from evaluator import UxDimension

LIFT_DIMENSIONS: tuple[str, ...] = (*(d.value for d in UxDimension), "functional", "aesthetic")
"""What a lift is measured on, in the report's order."""

_SAMPLES = 1000


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class DimensionLift(_Model):
    """One dimension's scores before and after repair, and the lift."""

    dimension: str
    """A UX dimension, ``functional`` or ``aesthetic``."""
    scale: str
    """``1-5`` (UX dimensions) or ``0-8`` (functional, aesthetic)."""
    fixtures: int
    """Fixtures scored both before and after."""
    original: Interval
    """Mean score of the original apps."""
    repaired: Interval
    """Mean score of the repaired apps."""
    lift: Interval
    """Mean of repaired minus original, paired per fixture."""

    @model_validator(mode="before")
    @classmethod
    def _counted(cls, data: Any) -> Any:
        # Lift files written before the intervals recorded their n: each interval is over the paired fixtures.
        if not isinstance(data, dict) or not isinstance(data.get("fixtures"), int):
            return data
        counted = dict(data)
        for name in ("original", "repaired", "lift"):
            if isinstance(data.get(name), dict):
                counted[name] = {"n": data["fixtures"], **data[name]}
        return counted


class FixtureLift(_Model):
    """One fixture's repair."""

    query_id: str
    """The query (fixture)."""
    candidate: str
    """Whose app was repaired."""
    status: str
    """``repaired``; or why there is no lift: the judge's report failed (``report_failed``), the evaluator's
    (``evaluation_failed``), the repair (``repair_failed``), the repaired answer held no app (``not_assessable``)
    or its run failed (``run_failed``), or the budget was reached (``deferred``)."""
    findings: int
    """Findings in the judge's report (after dropping those without evidence)."""
    original: dict[str, float]
    """The evaluator's scores of the original app, per dimension."""
    repaired: dict[str, float] | None = None
    """The evaluator's scores of the repaired app."""
    lift: dict[str, float] | None = None
    """Repaired minus original, per dimension."""
    detail: str | None = None
    """Why a repair failed, in a sentence."""


class RepairLiftSummary(_Model):
    """What ``evalgrid repair-lift`` writes (``repair-lift/<judge>/lift.json``) and the report shows."""

    version: int = 1
    """Format version."""
    sweep: str
    """The sweep's name."""
    judge: str
    """The reporting judge's label (the judge being measured)."""
    judge_version: str
    """Its version."""
    repairer: str
    """The fixed repairer's label."""
    evaluator: str
    """The fixed evaluator's label (the UX dimensions)."""
    absolute_judge: str
    """The judge that scored functional and aesthetic, before and after."""
    fixtures: int
    """Fixtures with a repaired score."""
    dimensions: list[DimensionLift]
    """Per dimension, in :data:`LIFT_DIMENSIONS` order."""
    per_fixture: list[FixtureLift]
    """Per fixture, repaired or not."""
    dropped_findings: int
    """Findings dropped from the judge's reports for want of evidence."""
    skipped: dict[str, int]
    """Fixtures left out, by reason."""


def dimension_lifts(fixtures: Sequence[FixtureLift], seed: int = 0) -> list[DimensionLift]:
    """Bootstrap intervals of original, repaired and lift per dimension over the repaired fixtures."""
    out = []
    for dimension in LIFT_DIMENSIONS:
        paired = [(f.original[dimension], f.repaired[dimension]) for f in fixtures
                  if f.repaired is not None and dimension in f.original and dimension in f.repaired]
        if not paired:
            continue
        before = [p[0] for p in paired]
        after = [p[1] for p in paired]
        lift = [b - a for a, b in paired]
        out.append(DimensionLift(
            dimension=dimension, scale="0-8" if dimension in ("functional", "aesthetic") else "1-5",
            fixtures=len(paired), original=_interval(before, seed), repaired=_interval(after, seed),
            lift=_interval(lift, seed)))
    return out


def _interval(values: Sequence[float], seed: int) -> Interval:
    mean = st.bootstrap_mean(values, samples=_SAMPLES, seed=seed)
    return Interval(mean=round(mean.mean, 3), low=round(mean.low, 3), high=round(mean.high, 3), n=mean.n)


def read_lifts(run_dir: Path) -> list[RepairLiftSummary]:
    """Every repair-lift summary written into ``run_dir`` (one per judge), skipping files of another format."""
    return per_judge_records(run_dir, RunFile.REPAIR_LIFT, RunFile.LIFT, RepairLiftSummary)


def lift_table(summary: RepairLiftSummary) -> Table:
    """The lift per dimension as a terminal table."""
    table = Table(title=f"repair lift — judge {escape(summary.judge)}",
                  caption=f"repairer {escape(summary.repairer)}; evaluator {escape(summary.evaluator)} (UX) and "
                          f"{escape(summary.absolute_judge)} (functional, aesthetic); {summary.fixtures} fixtures; "
                          "95% bootstrap intervals over fixtures")
    for column in ("dimension", "scale", "original", "repaired", "lift", "95% interval of the lift"):
        table.add_column(column, justify="left" if column == "dimension" else "right")
    for d in summary.dimensions:
        table.add_row(d.dimension, d.scale, f"{d.original.mean:.2f}", f"{d.repaired.mean:.2f}", f"{d.lift.mean:+.2f}",
                      f"[{d.lift.low:+.2f}, {d.lift.high:+.2f}]")
    return table
