"""The browser a run drives and the page it serves: Chromium's launch, the frozen web every context is
pinned to, the freeze while the agent deliberates, and what tells a hung or crashed page.

- ``launch``: finding and launching Chromium; ``context_pool``: contexts made before runs ask;
- ``frozen_web``: the pinned environment; ``freeze``: the page stopped during deliberation;
- ``app_host``: the :class:`AppHost` protocol and its loopback default, served by ``serve``;
- ``crash``, ``hang``, ``control_page``: telling the app's failures from the machine's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evaluator.lazy import lazy_exports

if TYPE_CHECKING:
    from evaluator.browser.app_host import LOOPBACK, AppHost
    from evaluator.browser.context_pool import ContextPool
    from evaluator.browser.launch import LAUNCH_ARGS, chromium_executable

_WHERE = {
    "LAUNCH_ARGS": "evaluator.browser.launch",
    "chromium_executable": "evaluator.browser.launch",
    "ContextPool": "evaluator.browser.context_pool",
    "AppHost": "evaluator.browser.app_host",
    "LOOPBACK": "evaluator.browser.app_host",
}

__all__ = [
    "AppHost",
    "ContextPool",
    "LAUNCH_ARGS",
    "LOOPBACK",
    "chromium_executable",
]

__getattr__, __dir__ = lazy_exports(__name__, _WHERE, __all__)
