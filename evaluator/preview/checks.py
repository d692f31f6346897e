"""What the app preview tool may reveal: the kinds of problem its report may name.

Kept apart from the report so that the command line can offer them without loading the report's machinery.
"""

from __future__ import annotations

from enum import StrEnum


class PreviewCheck(StrEnum):
    """A kind of problem the preview tool may reveal."""

    BUILD_ERRORS = "build_errors"
    RUNTIME_EXCEPTIONS = "runtime_exceptions"
    CONSOLE_ERRORS = "console_errors"
    BLANK_RENDER = "blank_render"
    FAILED_REQUESTS = "failed_requests"


DEFAULT_CHECKS: tuple[PreviewCheck, ...] = tuple(PreviewCheck)
