"""Repair lift (UXBench): a judge's UX report handed to a fixed repairer; a fixed evaluator scores the app
before and after.

- ``lift``: the stage (``evalgrid repair-lift``): reports, repairs, the repaired apps' runs, the scores;
- ``summary``: per-dimension lift with bootstrap intervals over fixtures, and per-fixture lift.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evaluator import lazy_exports

if TYPE_CHECKING:
    from cluster.repair.lift import LiftOptions, LiftResult, repair_lift
    from cluster.repair.summary import RepairLiftSummary, lift_table, read_lifts

_WHERE = {
    "LiftOptions": "cluster.repair.lift",
    "LiftResult": "cluster.repair.lift",
    "repair_lift": "cluster.repair.lift",
    "RepairLiftSummary": "cluster.repair.summary",
    "lift_table": "cluster.repair.summary",
    "read_lifts": "cluster.repair.summary",
}

__all__ = [
    "LiftOptions",
    "LiftResult",
    "RepairLiftSummary",
    "lift_table",
    "read_lifts",
    "repair_lift",
]

__getattr__, __dir__ = lazy_exports(__name__, _WHERE, __all__)
