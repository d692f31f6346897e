"""Evidence bundles and outcomes in a real S3-compatible server (moto on loopback), with faults."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cluster.store.ledger import Ledger
from cluster.store.remote import RunStore, blob_name
from evaluator.errors import EvidenceError, StoreError
from evaluator.evidence.bundle import EvidenceWriter, verify_bundle
from evaluator.models import AgentConfig, Outcome, OutcomeReason, ToolVersions
from tests.s3.faulty_s3 import FaultyS3, make_store

_TOOLS = ToolVersions(evalgrid="test", collector="test", browser="test", playwright="test", ffmpeg="test",
                      sandbox="test")


def _bundle(root: Path, key: str, *, video_mib: int = 11) -> Path:
    writer = EvidenceWriter(root / key)
    writer.write_json("static/console.json", {"errors": []})
    writer.write_text("trace.txt", "step 1 click #go\n")
    writer.write_bytes("static/desktop.png", os.urandom(50_000))
    writer.write_bytes("video/interaction.mp4", os.urandom(video_mib * 1024 * 1024))
    writer.write_bytes("static/same-as-desktop.png", (root / key / "static/desktop.png").read_bytes())
    writer.commit(evidence_key=key, artifact_key="a" * 16, agent=AgentConfig(), tools=_TOOLS, timings={})
    return root / key


def _outcome(run_key: str) -> Outcome:
    return Outcome(run_key=run_key, candidate_id="c", query_id="q", status="judged",
                   reason=OutcomeReason(code="ok"), attempts=1, duration_s=1.0, finished_at="t")


def test_a_bundle_cut_short_is_never_reported_complete_and_a_retry_finishes_it(
        s3: FaultyS3, bucket: str, tmp_path: Path) -> None:
    """The video's upload fails for good: StoreError, no manifest in the store, so no bundle.

    Publishing again (the worker's retry) uploads only what is missing, writes the manifest last,
    and the bundle fetched back on another disk passes hash verification.
    """
    bundle = _bundle(tmp_path / "local", "ev-1")
    runs = RunStore(make_store(s3, bucket, attempts=2, sdk_attempts=2))
    s3.inject("drop_body", r"partNumber=2", times=10_000)
    with pytest.raises(StoreError):
        runs.publish_bundle(bundle, "ev-1")
    assert runs.bundle_manifest("ev-1") is None
    assert not any(seen.method == "PUT" and seen.path.endswith("/evidence/ev-1/manifest.json") for seen in s3.seen)

    s3.clear()
    manifest = runs.publish_bundle(bundle, "ev-1")
    puts = [seen.path.split("?")[0] for seen in s3.seen if seen.method in ("PUT", "POST")]
    assert puts[-1].endswith("/evidence/ev-1/manifest.json")  # the manifest is the last write
    # Content addressing: the duplicated screenshot is one blob, the small files were kept from
    # the first attempt and are not uploaded twice.
    assert len({entry.sha256 for entry in manifest.files}) == len(manifest.files) - 1
    assert not any(blob_name(e.sha256) in p for e in manifest.files if e.path.endswith(".json") for p in puts)
    fetched = tmp_path / "elsewhere" / "ev-1"
    runs.fetch_bundle("ev-1", fetched)
    assert verify_bundle(fetched).files == manifest.files


def test_publishing_twice_writes_nothing_new(s3: FaultyS3, bucket: str, tmp_path: Path) -> None:
    """A bundle is immutable under its key: a second publish only checks that the manifest exists."""
    bundle = _bundle(tmp_path, "ev-2", video_mib=1)
    runs = RunStore(make_store(s3, bucket))
    runs.publish_bundle(bundle, "ev-2")
    s3.clear()
    RunStore(make_store(s3, bucket)).publish_bundle(bundle, "ev-2")
    assert [seen.method for seen in s3.seen] == ["HEAD"]


def test_a_corrupted_blob_is_refused_on_fetch(s3: FaultyS3, bucket: str, tmp_path: Path) -> None:
    """A blob whose bytes no longer match its hash stops the fetch with an EvidenceError."""
    bundle = _bundle(tmp_path, "ev-3", video_mib=1)
    store = make_store(s3, bucket)
    runs = RunStore(store)
    manifest = runs.publish_bundle(bundle, "ev-3")
    trace = next(entry for entry in manifest.files if entry.path == "trace.txt")
    store.put_bytes(blob_name(trace.sha256), b"tampered\n")
    with pytest.raises(EvidenceError, match="does not match its hash"):
        runs.fetch_bundle("ev-3", tmp_path / "fetched")


def test_the_ledger_rebuilds_itself_from_the_store(s3: FaultyS3, bucket: str, tmp_path: Path) -> None:
    """Outcomes written to the store (some through throttling) come back into an empty ledger, once."""
    runs = RunStore(make_store(s3, bucket, sdk_attempts=2))
    s3.inject("throttle", r"^PUT .*/outcomes/", times=3)
    for i in range(25):
        runs.put_outcome(_outcome(f"run-{i:02d}"))
    with Ledger(tmp_path / "ledger.sqlite") as ledger:
        ledger.finish(_outcome("run-00"))
        assert runs.rebuild_ledger(ledger) == 24
        assert runs.rebuild_ledger(ledger) == 0
        assert ledger.finished_keys() == {f"run-{i:02d}" for i in range(25)}
