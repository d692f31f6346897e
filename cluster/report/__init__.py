"""What people read: the static HTML report of a sweep (``html``) and one run in the terminal (``show``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evaluator import lazy_exports

if TYPE_CHECKING:
    from cluster.report.html import run_page_name, write_report
    from cluster.report.show import run_panel

_WHERE = {
    "write_report": "cluster.report.html",
    "run_page_name": "cluster.report.html",
    "run_panel": "cluster.report.show",
}

__all__ = [
    "run_page_name",
    "run_panel",
    "write_report",
]

__getattr__, __dir__ = lazy_exports(__name__, _WHERE, __all__)
