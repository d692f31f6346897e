"""Where a run's stage outputs live under a run directory: artifacts, evidence bundles and verdicts by key.

The one run (``run.py``) and every stage after a sweep share it; the rest of a run directory's layout is
``cluster.store.layout``'s.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar


@dataclass(frozen=True)
class StagePaths:
    """Where stage outputs live under a run directory."""

    root: Path
    ARTIFACTS: ClassVar[str] = "artifacts"
    """The folder of artifact records, ``<key>.json`` each."""
    EVIDENCE: ClassVar[str] = "evidence"
    """The folder of evidence bundles, one folder per key."""
    VERDICTS: ClassVar[str] = "verdicts"
    """The folder of verdicts, ``<key>.json`` each."""

    def artifact(self, key: str) -> Path:
        """The artifact record."""
        return self.root / self.ARTIFACTS / f"{key}.json"

    def evidence(self, key: str) -> Path:
        """The evidence bundle directory."""
        return self.root / self.EVIDENCE / key

    def verdict(self, key: str) -> Path:
        """The verdict record."""
        return self.root / self.VERDICTS / f"{key}.json"
