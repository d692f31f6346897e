"""The results log: one JSON line per finished run, appended durably; the basis of resume.

A run is finished when its outcome line is in the log. A crash can at worst leave a torn last
line, which is ignored (and the run redone) on the next start.
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import ValidationError

from evaluator.models import Outcome


class ResultsLog:
    """Append-only JSONL of :class:`Outcome` records."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.torn_lines = 0

    def load(self) -> dict[str, Outcome]:
        """Outcomes by run key (the last line of a key wins)."""
        outcomes: dict[str, Outcome] = {}
        if not self.path.exists():
            return outcomes
        self.torn_lines = 0
        with self.path.open(encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if not line.strip():
                    continue
                try:
                    outcome = Outcome.model_validate_json(line)
                except ValidationError:
                    self.torn_lines += 1
                    continue
                outcomes[outcome.run_key] = outcome
        return outcomes

    def summary(self) -> tuple[int, str | None]:
        """How many lines the log holds, and the run key of its last line: ``None`` when that line is torn (or
        the log is empty). Reads no line but the last as JSON, so it costs a fraction of :meth:`load`."""
        if not self.path.exists():
            return 0, None
        lines, last = 0, b""
        with self.path.open("rb") as handle:
            for line in handle:
                if line.strip():
                    lines, last = lines + 1, line
        if not last.endswith(b"\n"):
            return lines, None
        try:
            return lines, Outcome.model_validate_json(last).run_key
        except ValidationError:
            return lines, None

    def append(self, outcome: Outcome) -> None:
        """Record one outcome and force it to disk."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        line = outcome.model_dump_json() + "\n"
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            if os.fstat(fd).st_size and not self._ends_with_newline():
                line = "\n" + line  # the previous writer died mid-line; start clean
            os.write(fd, line.encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)

    def _ends_with_newline(self) -> bool:
        with self.path.open("rb") as handle:
            handle.seek(-1, os.SEEK_END)
            return handle.read(1) == b"\n"
