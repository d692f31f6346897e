"""Judges: turn a committed evidence bundle into a :class:`~evaluator.models.Verdict`.

A judge reads only the bundle (never a browser), so verdicts can be re-issued on frozen evidence. This
package holds the :class:`Judge` protocol and its registry; the judges are ``heuristic`` and ``llm_judge``,
with ``failure_policy`` (the verdict on an app that hung, crashed or tampered) and ``injection`` (text
that addresses the evaluator, cut out before any judge reads it).

Beside the absolute verdict: ``pairwise`` (the :class:`~evaluator.judges.pairwise.PairwiseJudge` protocol,
its registry and the heuristic pairwise judge) with ``llm_pairwise`` (two bundles, one order, one call), and
``ux_report`` (UXBench's seven-dimension UX report, a record of its own).
"""

from __future__ import annotations

from typing import Protocol

from evaluator.evidence.bundle import EvidenceBundle
from evaluator.llm.client import ModelAccess
from evaluator.models import JudgeConfig, Verdict
from evaluator.registry import Registry


class Judge(Protocol):
    """Scores one evidence bundle."""

    @property
    def version(self) -> str:
        """Identity of everything that shapes the verdicts (rubric or prompts, model); part of the keys."""
        ...

    async def __call__(self, bundle: EvidenceBundle, *, verdict_key: str, models: ModelAccess | None = None
                       ) -> Verdict:
        """Return the verdict on ``bundle``, keyed ``verdict_key``; ``models`` is what a model-based judge may call."""
        ...


judges: Registry[Judge] = Registry("judge", builtins=("evaluator.judges.heuristic", "evaluator.judges.llm_judge"))
"""Registry of judges; ``judges.create(name, **options)`` builds one."""

# The package answers as its registry does (``evaluator.judges.register(...)``), as ``evaluator.policies`` does.
register = judges.register
create = judges.create
check = judges.check
names = judges.names


def create_judge(config: JudgeConfig) -> Judge:
    """Build the judge a :class:`JudgeConfig` names, with its options (a wrong one is a ConfigError)."""
    return judges.create(config.name, **judges.check(config.name, config.options))
