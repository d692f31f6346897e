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
    from evaluator.browser.app_host import BUILD_TIMEOUT_S, LOOPBACK, AppHost
    from evaluator.browser.context_pool import ContextPool
    from evaluator.browser.control_page import ControlCheck, run_control_page
    from evaluator.browser.hang import probe_hang
    from evaluator.browser.launch import LAUNCH_ARGS, chromium_executable, confine_to_origin, launch_browser
    from evaluator.browser.serve import serve_directory

_WHERE = {
    "AppHost": "evaluator.browser.app_host",
    "BUILD_TIMEOUT_S": "evaluator.browser.app_host",
    "chromium_executable": "evaluator.browser.launch",
    "confine_to_origin": "evaluator.browser.launch",
    "ContextPool": "evaluator.browser.context_pool",
    "ControlCheck": "evaluator.browser.control_page",
    "LAUNCH_ARGS": "evaluator.browser.launch",
    "launch_browser": "evaluator.browser.launch",
    "LOOPBACK": "evaluator.browser.app_host",
    "probe_hang": "evaluator.browser.hang",
    "run_control_page": "evaluator.browser.control_page",
    "serve_directory": "evaluator.browser.serve",
}

__all__ = [
    "AppHost",
    "BUILD_TIMEOUT_S",
    "ContextPool",
    "ControlCheck",
    "LAUNCH_ARGS",
    "LOOPBACK",
    "chromium_executable",
    "confine_to_origin",
    "launch_browser",
    "probe_hang",
    "run_control_page",
    "serve_directory",
]

__getattr__, __dir__ = lazy_exports(__name__, _WHERE, __all__)
