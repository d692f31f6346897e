"""A sweep end to end with its run directory in a real S3-compatible server, faults included, then
resumed on a "new machine" from the store alone."""

from __future__ import annotations

import asyncio
import dataclasses
import shutil
from pathlib import Path

import pytest

from cluster.cli import main
from cluster.scheduling.runner import run_sweep, worker_settings
from cluster.scheduling.worker import RunWorker
from cluster.store.ledger import Ledger
from cluster.store.object_store import StoreSettings
from cluster.store.remote import RunStore
from cluster.store.results_log import ResultsLog
from cluster.sweep.spec import load_sweep
from evaluator.errors import StoreError
from evaluator.evidence.bundle import verify_bundle
from evaluator.models import Outcome, OutcomeStatus, ReasonCode
from tests.cluster.test_local_sweep import _write_sweep
from tests.s3.faulty_s3 import FaultyS3, make_store

pytestmark = pytest.mark.browser


def test_a_sweep_with_s3_evidence_survives_faults_and_resumes_from_the_store_alone(
        s3: FaultyS3, bucket: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Six runs (two judged, four non-assessable) with throttled outcomes, a cut upload and a lost
    manifest reply: every outcome reaches the store with its evidence, and a second invocation with
    the staging directory deleted skips all six."""
    sweep = _write_sweep(tmp_path)
    staging = tmp_path / "staging"
    url = f"s3://{bucket}/sweeps/mini"
    argv = ["run", str(sweep), "--run-dir", url, "--staging-dir", str(staging), "--s3-endpoint", s3.endpoint,
            "--scheduler", "local", "--sandbox", "local", "--no-progress"]
    throttled = s3.inject("throttle", r"^PUT .*/outcomes/", times=2)
    cut = s3.inject("drop_body", r"^PUT .*/blobs/sha256/", times=1)
    lost = s3.inject("drop_reply", r"^PUT .*/evidence/.*/manifest\.json$", times=1)

    assert main(argv) == 0
    first = "".join(capsys.readouterr())
    assert "6 runs executed, 0 skipped" in first
    assert throttled.injected == 2 and cut.injected == 1 and lost.injected == 1

    runs = RunStore(make_store(s3, bucket, prefix="sweeps/mini"))
    stored = {key: Outcome.model_validate_json(runs.store.get_bytes(f"outcomes/{key}.json") or b"")
              for key in runs.outcome_keys()}
    assert len(stored) == 6
    judged = [o for o in stored.values() if o.status is OutcomeStatus.JUDGED]
    assert len(judged) == 2
    for outcome in judged:
        assert outcome.evidence_key and outcome.verdict_key and outcome.artifact_key
        fetched = tmp_path / "fetched" / outcome.evidence_key
        runs.fetch_bundle(outcome.evidence_key, fetched)
        assert verify_bundle(fetched).evidence_key == outcome.evidence_key
        assert runs.store.size(f"verdicts/{outcome.verdict_key}.json")
        assert runs.store.size(f"artifacts/{outcome.artifact_key}.json")
    for name in ("sweep.json", "results.jsonl", "leaderboard.json", "leaderboard.md"):
        assert runs.store.size(name), name

    shutil.rmtree(staging)  # a new machine: nothing local, only the store
    s3.clear()
    assert main(argv) == 0
    second = "".join(capsys.readouterr())
    assert "resuming: 6 of 6 runs already have an outcome" in second
    assert "0 runs executed, 6 skipped" in second
    assert not any(seen.method == "PUT" and "/outcomes/" in seen.path for seen in s3.seen)
    with Ledger(staging / "ledger.sqlite") as ledger:
        assert ledger.finished_keys() == set(stored)
    assert set(ResultsLog(staging / "results.jsonl").load()) == set(stored)


def test_a_store_outage_stops_the_sweep_without_recording_what_the_store_did_not_get(
        s3: FaultyS3, bucket: str, tmp_path: Path) -> None:
    """Outcome writes fail for good after the first: the sweep raises StoreError, the local ledger
    holds only the outcome the store has, and the next invocation finishes the rest, once each."""
    sweep = load_sweep(_write_sweep(tmp_path))
    settings = StoreSettings(url=f"s3://{bucket}/outage", endpoint_url=s3.endpoint, attempts=2, sdk_attempts=1,
                             backoff_s=0.01)
    staging = tmp_path / "staging"
    s3.inject("500", r"^PUT .*/outcomes/", times=10_000, after=1)
    with pytest.raises(StoreError, match="re-run the same command"):
        asyncio.run(run_sweep(sweep, staging, store=settings))
    runs = RunStore(make_store(s3, bucket, prefix="outage"))
    in_store = set(runs.outcome_keys())
    assert len(in_store) == 1
    with Ledger(staging / "ledger.sqlite") as ledger:
        assert ledger.finished_keys() == in_store

    s3.clear()
    result = asyncio.run(run_sweep(sweep, staging, store=settings))
    assert result.skipped == 1 and result.executed == 5 and result.refused_duplicates == 0
    assert set(runs.outcome_keys()) == set(result.outcomes) and len(result.outcomes) == 6


def test_a_worker_that_cannot_publish_a_run_reports_an_infrastructure_failure(
        s3: FaultyS3, tmp_path: Path) -> None:
    """The store refuses (no such bucket): the judged run comes back as infra_error / store_failed,
    never as judged with its evidence missing from the store."""
    sweep = load_sweep(_write_sweep(tmp_path))
    spec = next(s for s in sweep.plan() if s.candidate.id == "good" and s.query.id == "prod-todo")
    store = StoreSettings(url="s3://no-such-bucket-evalgrid/x", endpoint_url=s3.endpoint, attempts=1, sdk_attempts=1)
    settings = dataclasses.replace(worker_settings(sweep, tmp_path / "staging", store), backend="local")

    async def one() -> Outcome:
        worker = RunWorker(settings, "worker-0")
        await worker.start()
        try:
            return await worker.execute(spec)
        finally:
            await worker.close()

    outcome = asyncio.run(one())
    assert outcome.status is OutcomeStatus.INFRA_ERROR
    assert outcome.reason.code is ReasonCode.STORE_FAILED and "no-such-bucket-evalgrid" in outcome.reason.detail
    assert outcome.functional is None and outcome.verdict_key is None
