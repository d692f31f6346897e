"""The ``evalgrid`` command line: :func:`main`.

``commands`` declares every command and its arguments without importing any subsystem; each command's handler
lives in the module named for what it does (``sweeps``: run and calibrate; ``readers``: status, leaderboard,
report, export, show; ``model_stages``: rejudge, compare, repair-lift; ``kube``: cluster submit and status;
``judges``: judge pools; ``tools``: sandbox gc, mcp, doctor, schema) and is imported only when its command runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evaluator import lazy_exports

if TYPE_CHECKING:
    from cluster.cli.entry import main

_WHERE = {"main": "cluster.cli.entry"}

__all__ = ["main"]

__getattr__, __dir__ = lazy_exports(__name__, _WHERE, __all__)
