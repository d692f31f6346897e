"""A model's answer: asked of a model or replayed (``generate``), turned into app files (``extract``), and
an app edited from a UX report by a repair model (``repair``, the repair-lift stage's repairer).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evaluator.lazy import lazy_exports

if TYPE_CHECKING:
    from evaluator.answer.extract import ExtractedApp, NotAssessable, extract_app

_WHERE = {
    "ExtractedApp": "evaluator.answer.extract",
    "NotAssessable": "evaluator.answer.extract",
    "extract_app": "evaluator.answer.extract",
}

__all__ = [
    "ExtractedApp",
    "NotAssessable",
    "extract_app",
]

__getattr__, __dir__ = lazy_exports(__name__, _WHERE, __all__)
