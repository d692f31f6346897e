"""Where the commands' tables go."""

from __future__ import annotations

import sys

from rich.console import Console


def stdout() -> Console:
    """Standard output; wide enough for the leaderboard when it is a file or a pipe (CI logs)."""
    return Console() if sys.stdout.isatty() else Console(width=140)
