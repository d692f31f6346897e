"""How far a run got: what its worker needs to time the run, and when it abandons it (a hang, a killed sandbox).

:meth:`~evaluator.evidence.collect.EvidenceCollection.run` fills a :class:`RunProgress` as it goes; the worker reads
it when it abandons the run, to probe the run's pages and to commit the evidence collected up to that point.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from evaluator.models import AppFailure, EvidenceManifest, HangProbe

CommitIncomplete = Callable[[AppFailure, str, HangProbe | None], EvidenceManifest]
"""``(failure, detail, probe) -> manifest``: commit the bundle as it stands, marked cut short by the app."""


@dataclass
class RunProgress:
    """Filled by the run as it goes; read by the worker that abandons it."""

    answered_at: float | None = None
    """When the answer was ready (``time.monotonic()``): generation is a stage of its own, and the run's time limit
    counts from here."""
    origin: str | None = None
    """Where the app is served, once it is: the run's pages are the browser's pages at this origin."""
    commit_incomplete: CommitIncomplete | None = None
    """Commits the bundle as it stands, marked incomplete; set once evidence collection has begun."""
