"""Generation is a stage of its own: a slow model's minutes are not taken from the run's time limit, and the
generation has a limit of its own.

The candidate model is the scripted server (a boundary: no model runs here); the sweep, its worker and
Chromium are real (the local backend).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import yaml

from cluster.scheduling.runner import run_sweep
from cluster.sweep.spec import load_sweep
from evaluator.models import OutcomeStatus, ReasonCode
from tests.llm.scripted_server import Turn, scripted_server
from tests.support import APPS, FIXTURES

pytestmark = pytest.mark.browser

_DELAY_S = 20.0
"""The model's time to answer: longer than the run's own limit below."""


def _sweep(tmp_path: Path, url: str, *, run_timeout_s: float, generation_timeout_s: float) -> Path:
    tmp_path.mkdir()
    queries = yaml.safe_load((FIXTURES / "queries" / "cookie-mini.yaml").read_text(encoding="utf-8"))
    queries["queries"] = [q for q in queries["queries"] if q["id"] == "prod-todo"]
    (tmp_path / "queries.yaml").write_text(yaml.safe_dump(queries, allow_unicode=True), encoding="utf-8")
    sweep = {
        "name": "slow-model", "queries": "queries.yaml", "concurrency": 1, "max_attempts": 1,
        "run_timeout_s": run_timeout_s, "generation_timeout_s": generation_timeout_s,
        "agent": {"max_steps": 2}, "sandbox": {"backend": "local"},
        "endpoints": {"slow": {"base_url": f"{url}/v1", "max_attempts": 1}},
        "candidates": [{"id": "slow", "provider": "openai", "endpoint": "slow", "model": "slow"}],
    }
    path = tmp_path / "sweep.yaml"
    path.write_text(yaml.safe_dump(sweep), encoding="utf-8")
    return path


def test_a_slow_model_does_not_spend_the_runs_time_but_its_own(tmp_path: Path) -> None:
    answer = f"```html index.html\n{(APPS / 'dead-button.html').read_text(encoding='utf-8')}\n```"
    with scripted_server(responder=lambda body: Turn(content=answer, delay_s=_DELAY_S)) as server:
        # The run's limit is shorter than the generation alone, but not than the run (about 5 s) after it.
        fits = _sweep(tmp_path / "fits", server.url, run_timeout_s=_DELAY_S - 5, generation_timeout_s=60)
        done = asyncio.run(run_sweep(load_sweep(fits), tmp_path / "fits" / "run"))
        # A generation longer than its own limit is stopped at it, as a timeout that says which limit.
        late = _sweep(tmp_path / "late", server.url, run_timeout_s=120, generation_timeout_s=3)
        stopped = asyncio.run(run_sweep(load_sweep(late), tmp_path / "late" / "run"))
    (outcome,) = done.outcomes.values()
    assert outcome.status is OutcomeStatus.JUDGED, outcome.reason
    assert outcome.duration_s > _DELAY_S  # it did wait for the model, longer than the run's own limit
    (cut,) = stopped.outcomes.values()
    assert cut.status is OutcomeStatus.TIMEOUT and cut.reason.code is ReasonCode.RUN_TIMEOUT, cut.reason
    assert "generation_timeout_s" in cut.reason.detail
