"""The app preview tool a candidate may call while it generates (``create_app_preview``): its report on an app
(``report``) and the previewer that serves and looks at the app (``preview``), one implementation behind both
the MCP server (``evalgrid mcp``) and the function-calling tool."""

from __future__ import annotations

from typing import TYPE_CHECKING

from evaluator.lazy import lazy_exports

if TYPE_CHECKING:
    from evaluator.preview.checks import DEFAULT_CHECKS, PreviewCheck
    from evaluator.preview.preview import AppPreviewer, Preview, files_argument
    from evaluator.preview.report import PreviewProblem, PreviewReport

_WHERE = {
    "AppPreviewer": "evaluator.preview.preview",
    "DEFAULT_CHECKS": "evaluator.preview.checks",
    "Preview": "evaluator.preview.preview",
    "PreviewCheck": "evaluator.preview.checks",
    "PreviewProblem": "evaluator.preview.report",
    "PreviewReport": "evaluator.preview.report",
    "files_argument": "evaluator.preview.preview",
}

__all__ = [
    "AppPreviewer",
    "DEFAULT_CHECKS",
    "Preview",
    "PreviewCheck",
    "PreviewProblem",
    "PreviewReport",
    "files_argument",
]

__getattr__, __dir__ = lazy_exports(__name__, _WHERE, __all__)
