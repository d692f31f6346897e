"""Agents of the Agent-Driven Interaction: the policy interface and its registry, the deterministic
explorer (``policies``; its registry is ``evaluator.policies``), the LLM agent (``llm_agent``), what they see
and answer (``observation``), and human-like input (``humanlike``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evaluator.lazy import lazy_exports

if TYPE_CHECKING:
    from evaluator.agents.observation import Action, ActionKind, AgentSummary, Observation, StepRecord
    from evaluator.agents.policies import Policy

_WHERE = {
    "Policy": "evaluator.agents.policies",
    "Action": "evaluator.agents.observation",
    "ActionKind": "evaluator.agents.observation",
    "AgentSummary": "evaluator.agents.observation",
    "Observation": "evaluator.agents.observation",
    "StepRecord": "evaluator.agents.observation",
}

__all__ = [
    "Action",
    "ActionKind",
    "AgentSummary",
    "Observation",
    "Policy",
    "StepRecord",
]

__getattr__, __dir__ = lazy_exports(__name__, _WHERE, __all__)
