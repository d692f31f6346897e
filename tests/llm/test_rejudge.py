"""Rejudge: a finished sweep's frozen evidence scored by another judge, with no browser at all."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
import yaml

from cluster.cli import main
from cluster.reduce.reducer import reduce_run_dir
from cluster.scheduling.rejudge import rejudge
from cluster.scheduling.runner import run_sweep
from cluster.sweep.spec import load_sweep
from evaluator.llm.client import Endpoint
from evaluator.models import JudgeConfig
from tests.cluster.test_local_sweep import _write_sweep
from tests.llm.scripted_server import Turn, scripted_server
from tests.llm.test_llm_sweep import _judge

pytestmark = pytest.mark.browser


def test_rejudge_scores_stored_evidence_without_a_browser_and_reuses_its_verdicts(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = tmp_path / "run"
    sweep = load_sweep(_write_sweep(tmp_path))
    sweep = type(sweep)(spec=sweep.spec.model_copy(update={"sandbox": sweep.spec.sandbox.model_copy(
        update={"backend": "local"})}), path=sweep.path, queries=sweep.queries)
    asyncio.run(run_sweep(sweep, run_dir))
    before = set((run_dir / "verdicts").glob("*.json"))
    # Any attempt to start a browser from here on fails loudly.
    monkeypatch.setenv("EVALGRID_CHROMIUM", str(tmp_path / "no-browser-here"))
    with scripted_server(responder=_judge) as server:
        endpoints = tmp_path / "endpoints.yaml"
        endpoints.write_text(yaml.safe_dump({"judge": {"base_url": server.url, "backoff_s": 0.01}}))
        argv = ["rejudge", str(run_dir), "--judge", "llm", "--option", "endpoint=judge", "--option", "model=judge-7b",
                "--endpoints", str(endpoints)]
        assert main(argv) == 0
        first = len(server.requests)
        assert first == 4  # two judged runs, two calls each
        assert main(argv) == 0
        assert len(server.requests) == first  # the verdicts were stored: nothing is paid twice
    out = "".join(capsys.readouterr()).replace("\n", "")
    assert "2 bundles judged by llm-judge-v1@" in out
    after = set((run_dir / "verdicts").glob("*.json"))
    assert len(after - before) == 2
    [written] = list((run_dir / "rejudged").iterdir())
    board = json.loads((written / "leaderboard.json").read_text())
    assert any("judge-7b" in label for label in board["judge_labels"])
    reduction, _ = reduce_run_dir(run_dir, samples=200)
    assert len({j.judge for j in reduction.judges}) == 2  # both judges, side by side, with their agreement
    assert reduction.judge_agreement


def test_a_judge_that_refuses_every_app_scores_none_of_them_out_of_the_means(tmp_path: Path) -> None:
    """A refusal (which a page can provoke) is never an infrastructure error: the heuristic judge scores the same
    evidence, the run is judged and flagged, whether in a rejudge or in the sweep itself."""
    run_dir = tmp_path / "run"
    sweep = load_sweep(_write_sweep(tmp_path))
    sweep = type(sweep)(spec=sweep.spec.model_copy(update={"sandbox": sweep.spec.sandbox.model_copy(
        update={"backend": "local"})}), path=sweep.path, queries=sweep.queries)
    heuristic = asyncio.run(run_sweep(sweep, run_dir))
    judged = sorted((o.run_key, o.functional, o.aesthetic) for o in heuristic.outcomes.values()
                    if o.status.value == "judged")
    with scripted_server(responder=lambda body: Turn(refusal="I can't assess this app.")) as server:
        endpoints = {"judge": Endpoint(base_url=server.url, backoff_s=0.01)}
        result = asyncio.run(rejudge(run_dir, JudgeConfig(name="llm", options={"endpoint": "judge", "model": "j"}),
                                     endpoints=endpoints))
    assert result.failed == [] and len(result.fell_back) == len(judged) == 2
    rescored = sorted((o.run_key, o.functional, o.aesthetic) for o in result.outcomes if o.status.value == "judged")
    assert rescored == judged  # the fallback is the heuristic judge: the same scores
    assert all({"judge_refused", "judge_fallback"} <= set(o.flags) and o.reason.code.value == "judge_refused"
               for o in result.outcomes if o.status.value == "judged")
