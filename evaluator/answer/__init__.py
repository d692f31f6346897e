"""A model's answer: asked of a model or replayed (``generate``), turned into app files (``extract``), and
an app edited from a UX report by a repair model (``repair``, the repair-lift stage's repairer).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evaluator.lazy import lazy_exports

if TYPE_CHECKING:
    from evaluator.answer.extract import MAX_FILES, ExtractedApp, NotAssessable, extract_app
    from evaluator.answer.generate import VARIANTS, answer_digest
    from evaluator.answer.repair import Repairer, RepairOptions, bundle_sources, files_digest, repair_key

_WHERE = {
    "answer_digest": "evaluator.answer.generate",
    "bundle_sources": "evaluator.answer.repair",
    "extract_app": "evaluator.answer.extract",
    "ExtractedApp": "evaluator.answer.extract",
    "files_digest": "evaluator.answer.repair",
    "MAX_FILES": "evaluator.answer.extract",
    "NotAssessable": "evaluator.answer.extract",
    "repair_key": "evaluator.answer.repair",
    "Repairer": "evaluator.answer.repair",
    "RepairOptions": "evaluator.answer.repair",
    "VARIANTS": "evaluator.answer.generate",
}

__all__ = [
    "ExtractedApp",
    "MAX_FILES",
    "NotAssessable",
    "RepairOptions",
    "Repairer",
    "VARIANTS",
    "answer_digest",
    "bundle_sources",
    "extract_app",
    "files_digest",
    "repair_key",
]

__getattr__, __dir__ = lazy_exports(__name__, _WHERE, __all__)
