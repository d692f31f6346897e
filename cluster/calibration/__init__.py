"""``evalgrid calibrate``: how well a judge and agent tell working apps from their mutation twins.

- ``twins``: a working answer with one behaviour broken or its design damaged;
- ``calibrate``: the suite, the measurement and its table;
- ``match``: the stored calibration that speaks for a sweep's scores.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evaluator import lazy_exports

if TYPE_CHECKING:
    from cluster.calibration.calibrate import Calibration, calibration_table, load_suite, measure
    from cluster.calibration.match import CalibrationMatch, find_calibration
    from cluster.calibration.twins import Operator, make_twin

_WHERE = {
    "Operator": "cluster.calibration.twins",
    "make_twin": "cluster.calibration.twins",
    "Calibration": "cluster.calibration.calibrate",
    "load_suite": "cluster.calibration.calibrate",
    "measure": "cluster.calibration.calibrate",
    "calibration_table": "cluster.calibration.calibrate",
    "CalibrationMatch": "cluster.calibration.match",
    "find_calibration": "cluster.calibration.match",
}

__all__ = [
    "Calibration",
    "CalibrationMatch",
    "Operator",
    "calibration_table",
    "find_calibration",
    "load_suite",
    "make_twin",
    "measure",
]

__getattr__, __dir__ = lazy_exports(__name__, _WHERE, __all__)
