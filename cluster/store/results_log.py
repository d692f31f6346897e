"""The results log: one JSON line per finished run, appended durably; the basis of resume.

A run is finished when its outcome line is in the log. A crash can at worst leave a torn last
line, which is ignored (and the run redone) on the next start.
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import ValidationError

from evaluator import Outcome


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

    def last_key(self) -> str | None:
        """The run key of the log's last line; ``None`` when that line is torn or the log is empty. Reads the
        last line only."""
        if not self.path.exists():
            return None
        with self.path.open("rb") as handle:
            end = handle.seek(0, os.SEEK_END)
            tail = b""
            while end > 0 and tail.count(b"\n") < 2:
                start = max(0, end - 65536)
                handle.seek(start)
                tail = handle.read(end - start) + tail
                end = start
        lines = tail.rstrip(b"\n").split(b"\n") if tail.endswith(b"\n") else []
        if not lines or not lines[-1].strip():
            return None
        try:
            return Outcome.model_validate_json(lines[-1]).run_key
        except ValidationError:
            return None

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
