"""Model calls: one client for every OpenAI-compatible endpoint (``client``) and the sweep's spending cap
(``budget``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evaluator.lazy import lazy_exports

if TYPE_CHECKING:
    from evaluator.llm.budget import Budget, SpendingCap
    from evaluator.llm.client import POOL_NAME, ChatClient, Endpoint, ModelAccess, ModelOptions, ResponseCache

_WHERE = {
    "Budget": "evaluator.llm.budget",
    "ChatClient": "evaluator.llm.client",
    "Endpoint": "evaluator.llm.client",
    "ModelAccess": "evaluator.llm.client",
    "ModelOptions": "evaluator.llm.client",
    "POOL_NAME": "evaluator.llm.client",
    "ResponseCache": "evaluator.llm.client",
    "SpendingCap": "evaluator.llm.budget",
}

__all__ = [
    "Budget",
    "ChatClient",
    "Endpoint",
    "ModelAccess",
    "ModelOptions",
    "POOL_NAME",
    "ResponseCache",
    "SpendingCap",
]

__getattr__, __dir__ = lazy_exports(__name__, _WHERE, __all__)
