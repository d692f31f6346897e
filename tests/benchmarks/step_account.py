"""Where an interaction step's time goes: ``bench_regime.py --account``'s instrument.

The interaction loop's stages are timed by wrapping them for the length of a benchmark run (a measurement tool's
instrument; the product keeps no such hooks), and counted only while the loop runs. A call inside another stage
counts as that outer stage's (a screenshot before the input is "page before input"), so the stages add up; the
policy's deliberation comes from the trace, and the rest of the interaction (focus, blur, a field's value read,
the trace's records) is reported as ``other``.

Also here: a way to run the regime with the screencast not started, the video's share measured by difference.
"""

from __future__ import annotations

import functools
import statistics
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from playwright.async_api import Locator, Page

from evaluator.agents.humanlike import HumanInput
from evaluator.browser.freeze import FreezeController
from evaluator.evidence import interaction as loop
from evaluator.evidence.screencast import ScreenRecorder

STAGES: dict[str, tuple[tuple[Any, str], ...]] = {
    "pointer path": ((HumanInput, "move_to"),),
    "press, hold, type": ((HumanInput, "click"), (HumanInput, "dblclick"), (HumanInput, "type")),
    "transitions before input": ((loop, "settle_transitions"),),
    "page before input": ((loop.Interaction, "_note_state"),),
    "idle control (keys, canvas)": ((loop.Interaction, "_idle_control"),),
    "settle after input": ((loop.Interaction, "_settle"), (loop.Interaction, "_await_removal")),
    "freeze and thaw": ((FreezeController, "freeze"), (FreezeController, "thaw")),
    "frozen look and measure": ((Page, "screenshot"), (loop, "state_signature"), (loop.Interaction, "_measure"),
                                (loop.Interaction, "_observe")),
    "target into view, its box": ((Locator, "scroll_into_view_if_needed"), (Locator, "bounding_box")),
}
_IN_LOOP: ContextVar[bool] = ContextVar("in_interaction_loop", default=False)
_IN_STAGE: ContextVar[bool] = ContextVar("in_stage", default=False)


@contextmanager
def accounted() -> Iterator[dict[str, float]]:
    """Seconds spent per stage (``STAGES``, and ``interaction`` for the whole loop) while the block runs."""
    spent: dict[str, float] = dict.fromkeys([*STAGES, "interaction"], 0.0)
    saved: list[tuple[Any, str, Any]] = []
    wrapped = [(stage, owner, name) for stage, places in STAGES.items() for owner, name in places]
    for stage, owner, name in [*wrapped, ("interaction", loop.Interaction, "run")]:
        original = getattr(owner, name)  # a stage renamed in the loop fails here, not silently into ``other``
        saved.append((owner, name, original))
        setattr(owner, name, _timed(original, spent, stage))
    try:
        yield spent
    finally:
        for owner, name, original in reversed(saved):
            setattr(owner, name, original)


def _timed(function: Callable[..., Awaitable[Any]], spent: dict[str, float], stage: str
           ) -> Callable[..., Awaitable[Any]]:
    @functools.wraps(function)
    async def timed(*args: Any, **kwargs: Any) -> Any:
        if stage != "interaction" and (not _IN_LOOP.get() or _IN_STAGE.get()):
            return await function(*args, **kwargs)  # outside the loop (Static Perception), or an outer stage's
        flag = _IN_LOOP if stage == "interaction" else _IN_STAGE
        token = flag.set(True)
        started = time.perf_counter()
        try:
            return await function(*args, **kwargs)
        finally:
            spent[stage] += time.perf_counter() - started
            flag.reset(token)
    return timed


@contextmanager
def without_screencast() -> Iterator[None]:
    """The regime with no screen video: the recorder starts but never asks the browser for frames."""
    original = ScreenRecorder.start

    async def start(self: ScreenRecorder) -> None:
        send = self._cdp.send

        async def no_screencast(method: str, params: dict[str, Any] | None = None) -> Any:
            return {} if method == "Page.startScreencast" else await send(method, params)
        self._cdp.send = no_screencast  # type: ignore[method-assign]
        await original(self)

    ScreenRecorder.start = start  # type: ignore[method-assign]
    try:
        yield
    finally:
        ScreenRecorder.start = original  # type: ignore[method-assign]


def run_account(spent: dict[str, float], steps: int, deliberation_s: float) -> dict[str, float]:
    """One run's seconds per stage, with the policy's ``deliberation`` (the trace's sum), ``other`` (the loop's time
    nothing accounts for) and ``steps``."""
    other = spent["interaction"] - sum(spent[stage] for stage in STAGES) - deliberation_s
    return {**{stage: round(seconds, 4) for stage, seconds in spent.items()}, "deliberation": round(deliberation_s, 4),
            "other": round(other, 4), "steps": float(steps)}


def print_account(columns: dict[str, list[dict[str, float]]], with_video: list[float], no_video: list[float]
                  ) -> None:
    """Per column (a kind of run), each stage's time per interaction step over all its runs (their seconds over
    their steps, so the stages add up to the step), and the video's share from the runs without it."""
    columns = {name: runs for name, runs in columns.items() if runs}
    if not columns:
        print("step account: no run to account for")
        return
    steps = {name: sum(r["steps"] for r in runs) for name, runs in columns.items()}

    def per_step(name: str, stage: str) -> float:
        return sum(r[stage] for r in columns[name]) / max(steps[name], 1.0) * 1000

    print(f"\nwhere an interaction step goes (ms per step; runs: "
          f"{', '.join(f'{n} {len(r)}, {steps[n]:.0f} steps' for n, r in columns.items())}):")
    print(f"  {'':30s}" + "".join(f"{name:>16s}" for name in columns))
    for stage in [*STAGES, "deliberation", "other", "interaction"]:
        cells = [f"{per_step(n, stage):7.0f} {per_step(n, stage) / per_step(n, 'interaction'):5.0%}  "
                 for n in columns]
        print(f"  {stage if stage != 'interaction' else 'the whole step':<30s}" + "".join(f"{c:>16s}" for c in cells))
    if with_video and no_video:
        video, bare = statistics.median(with_video), statistics.median(no_video)
        print(f"the screen video: median run {video:.2f} s with it, {bare:.2f} s without "
              f"({(video - bare) / video:.0%} of the run)")
