"""Evidence of one run, collected and committed: Static Perception, Agent-Driven Interaction, the screen
video with its sound, and the measurements judges read.

- ``collect``: one artifact's evidence, phase by phase; ``bundle``: the bundle, committed by its manifest;
- ``perception`` and ``interaction``: the two phases; ``screencast`` and ``soundtrack``: the video;
- ``probes``, ``design``, ``accessibility``, ``console``, ``language``, ``keyframes``: measurements.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evaluator.lazy import lazy_exports

if TYPE_CHECKING:
    from evaluator.evidence.bundle import (
        MANIFEST,
        PREVIEW_ROUNDS,
        BundleFile,
        EvidenceBundle,
        read_manifest,
        verify_bundle,
    )
    from evaluator.evidence.collect import collect_evidence
    from evaluator.evidence.soundtrack import AudioSource, parec_arguments

_WHERE = {
    "AudioSource": "evaluator.evidence.soundtrack",
    "BundleFile": "evaluator.evidence.bundle",
    "collect_evidence": "evaluator.evidence.collect",
    "EvidenceBundle": "evaluator.evidence.bundle",
    "MANIFEST": "evaluator.evidence.bundle",
    "parec_arguments": "evaluator.evidence.soundtrack",
    "PREVIEW_ROUNDS": "evaluator.evidence.bundle",
    "read_manifest": "evaluator.evidence.bundle",
    "verify_bundle": "evaluator.evidence.bundle",
}

__all__ = [
    "AudioSource",
    "BundleFile",
    "EvidenceBundle",
    "MANIFEST",
    "PREVIEW_ROUNDS",
    "collect_evidence",
    "parec_arguments",
    "read_manifest",
    "verify_bundle",
]

__getattr__, __dir__ = lazy_exports(__name__, _WHERE, __all__)
