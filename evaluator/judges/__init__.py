"""Judges: turn a committed evidence bundle into a :class:`~evaluator.models.Verdict`.

A judge reads only the bundle (never a browser), so verdicts can be re-issued on frozen evidence.
"""

from __future__ import annotations

from typing import Protocol

from evaluator.chat import ModelAccess
from evaluator.evidence import EvidenceBundle
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


judges: Registry[Judge] = Registry("judge", builtins=("evaluator.heuristic", "evaluator.llm_judge"))
"""Registry of judges; ``judges.create(name, **options)`` builds one."""


def create_judge(config: JudgeConfig) -> Judge:
    """Build the judge a :class:`JudgeConfig` names, with its options (a wrong one is a ConfigError)."""
    return judges.create(config.name, **judges.check(config.name, config.options))
