"""The :class:`Judge` protocol, the registry of judges, and building the judge a config names."""

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
