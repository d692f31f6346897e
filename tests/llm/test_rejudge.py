"""Rejudge: a finished sweep's frozen evidence scored by another judge, with no browser at all."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
import yaml

from cluster.cli import main
from cluster.reducer import reduce_run_dir
from cluster.runner import run_sweep
from cluster.sweep import load_sweep
from tests.cluster.test_local_sweep import _write_sweep
from tests.llm.scripted_server import scripted_server
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
