"""Judges: turn a committed evidence bundle into a :class:`~evaluator.models.Verdict`.

A judge reads only the bundle (never a browser), so verdicts can be re-issued on frozen evidence. This
package holds the :class:`Judge` protocol and its registry (``protocol``); the judges are ``heuristic`` and
``llm_judge``, with ``failure_policy`` (the verdict on an app that hung, crashed or tampered). Text that addresses the
evaluator is cut out before any judge reads it by :mod:`evaluator.textsafety`.

Beside the absolute verdict: ``pairwise`` (the :class:`~evaluator.judges.pairwise.PairwiseJudge` protocol,
its registry and the heuristic pairwise judge) with ``llm_pairwise`` (two bundles, one order, one call), and
``ux_report`` (UXBench's seven-dimension UX report, a record of its own).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evaluator.lazy import lazy_exports

if TYPE_CHECKING:
    from evaluator.judges.pairwise import PairwiseJudge, create_pairwise_judge, pairwise_judges, pairwise_key
    from evaluator.judges.protocol import Judge, check, create, create_judge, judges, names, register
    from evaluator.judges.ux_report import UxJudge, UxJudgeOptions, ux_report_key

_WHERE = {
    "check": "evaluator.judges.protocol",
    "create": "evaluator.judges.protocol",
    "create_judge": "evaluator.judges.protocol",
    "create_pairwise_judge": "evaluator.judges.pairwise",
    "Judge": "evaluator.judges.protocol",
    "judges": "evaluator.judges.protocol",
    "names": "evaluator.judges.protocol",
    "PairwiseJudge": "evaluator.judges.pairwise",
    "pairwise_judges": "evaluator.judges.pairwise",
    "pairwise_key": "evaluator.judges.pairwise",
    "register": "evaluator.judges.protocol",
    "UxJudge": "evaluator.judges.ux_report",
    "UxJudgeOptions": "evaluator.judges.ux_report",
    "ux_report_key": "evaluator.judges.ux_report",
}

__all__ = [
    "Judge",
    "PairwiseJudge",
    "UxJudge",
    "UxJudgeOptions",
    "check",
    "create",
    "create_judge",
    "create_pairwise_judge",
    "judges",
    "names",
    "pairwise_judges",
    "pairwise_key",
    "register",
    "ux_report_key",
]

__getattr__, __dir__ = lazy_exports(__name__, _WHERE, __all__)
