"""The app preview tool a candidate may call while it generates (``create_app_preview``): its report on an app
(``report``) and the previewer that serves and looks at the app (``preview``), one implementation behind both
the MCP server (``evalgrid mcp``) and the function-calling tool."""

from __future__ import annotations

from typing import TYPE_CHECKING

from evaluator.lazy import lazy_exports

if TYPE_CHECKING:
    from evaluator.preview.checks import DEFAULT_CHECKS, PreviewCheck
    from evaluator.preview.preview import PREVIEW_TIMEOUT_S, AppPreviewer, Preview, files_argument
    from evaluator.preview.report import PREVIEW_GUIDE, PreviewProblem, PreviewReport, preview_tool

_WHERE = {
    "AppPreviewer": "evaluator.preview.preview",
    "DEFAULT_CHECKS": "evaluator.preview.checks",
    "files_argument": "evaluator.preview.preview",
    "Preview": "evaluator.preview.preview",
    "PREVIEW_GUIDE": "evaluator.preview.report",
    "PREVIEW_TIMEOUT_S": "evaluator.preview.preview",
    "preview_tool": "evaluator.preview.report",
    "PreviewCheck": "evaluator.preview.checks",
    "PreviewProblem": "evaluator.preview.report",
    "PreviewReport": "evaluator.preview.report",
}

__all__ = [
    "AppPreviewer",
    "DEFAULT_CHECKS",
    "PREVIEW_GUIDE",
    "PREVIEW_TIMEOUT_S",
    "Preview",
    "PreviewCheck",
    "PreviewProblem",
    "PreviewReport",
    "files_argument",
    "preview_tool",
]

__getattr__, __dir__ = lazy_exports(__name__, _WHERE, __all__)
