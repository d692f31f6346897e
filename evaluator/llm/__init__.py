"""Model calls: one client for every OpenAI-compatible endpoint (``client``) and the sweep's spending cap
(``budget``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evaluator.lazy import lazy_exports

if TYPE_CHECKING:
    from evaluator.llm.client import ChatClient, ModelOptions

_WHERE = {
    "ModelOptions": "evaluator.llm.client",
    "ChatClient": "evaluator.llm.client",
}

__all__ = [
    "ChatClient",
    "ModelOptions",
]

__getattr__, __dir__ = lazy_exports(__name__, _WHERE, __all__)
