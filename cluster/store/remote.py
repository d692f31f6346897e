"""A run directory in an object store: stage outputs, evidence bundles and outcomes under ``s3://``.

Layout under the run directory's prefix::

    blobs/sha256/<2 hex>/<sha256>     file contents, addressed by their hash (shared between bundles)
    evidence/<evidence key>/manifest.json   the bundle: path → hash of every file; written LAST
    artifacts/<artifact key>.json     verdicts/<verdict key>.json      (keys are content keys)
    outcomes/<run key>.json           one per finished run; the ledger rebuilds itself from these
    sweep.json, plan.json, results.jsonl, deferred.json, leaderboard.json, leaderboard.md

A bundle exists exactly when its manifest does: every blob is uploaded (and its size checked)
before the manifest is written, so an upload cut short leaves unreferenced blobs, never a bundle
that looks complete. A worker publishes a run's stages before it returns the run's outcome, and the
driver writes the outcome after that, so an outcome in the store always has its evidence there.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from cluster.store.layout import RunFile
from cluster.store.ledger import Ledger
from cluster.store.object_store import S3Store
from evaluator import EvidenceError, EvidenceManifest, Outcome, StagePaths, StoreError, sha256_bytes, write_json_atomic
from evaluator.evidence import MANIFEST, read_manifest

_CONTENT_TYPES = {".json": "application/json", ".mp4": "video/mp4", ".png": "image/png", ".jpg": "image/jpeg",
                  ".html": "text/html; charset=utf-8", ".txt": "text/plain; charset=utf-8",
                  ".wav": "audio/wav", ".jsonl": "application/x-ndjson"}


def blob_name(sha256: str) -> str:
    """Where the file with this hash lives in the store."""
    return f"blobs/sha256/{sha256[:2]}/{sha256}"


class RunStore:
    """The stored side of one run directory."""

    def __init__(self, store: S3Store) -> None:
        self.store = store
        self._known_blobs: set[str] = set()  # blobs this process saw in the store: checked once

    @property
    def url(self) -> str:
        """``s3://`` URL of the run directory."""
        return self.store.location.url

    # ------------------------------------------------------------------------ worker side

    def publish_stages(self, paths: StagePaths, outcome: Outcome) -> None:
        """Upload what ``outcome`` refers to (artifact, evidence bundle, verdict) from the local staging dir.

        Raises :class:`StoreError` when the store refuses; the run's stages stay local for a retry.
        """
        if outcome.artifact_key and paths.artifact(outcome.artifact_key).is_file():
            self._put_small(f"{StagePaths.ARTIFACTS}/{outcome.artifact_key}.json", paths.artifact(outcome.artifact_key))
        if outcome.evidence_key and read_manifest(paths.evidence(outcome.evidence_key)) is not None:
            self.publish_bundle(paths.evidence(outcome.evidence_key), outcome.evidence_key)
        if outcome.verdict_key:
            self._put_small(f"{StagePaths.VERDICTS}/{outcome.verdict_key}.json", paths.verdict(outcome.verdict_key))

    def publish_bundle(self, bundle_dir: Path, evidence_key: str) -> EvidenceManifest:
        """Upload a committed local bundle: its files as blobs, checked, then its manifest last."""
        manifest = read_manifest(bundle_dir)
        if manifest is None:
            raise EvidenceError(f"{bundle_dir} is not a committed evidence bundle; it cannot be published")
        manifest_rel = f"{StagePaths.EVIDENCE}/{evidence_key}/{MANIFEST}"
        if self.store.size(manifest_rel) is not None:
            return manifest  # published before (bundles are immutable: the key is their content)
        for entry in manifest.files:
            name = blob_name(entry.sha256)
            if name in self._known_blobs:
                continue
            if self.store.size(name) != entry.size:
                file = bundle_dir / entry.path
                if sha256_bytes(file.read_bytes()) != entry.sha256:
                    raise EvidenceError(f"{file} changed after its bundle was committed; recollect the evidence")
                self.store.put_file(name, file, content_type=_content_type(entry.path))
                if self.store.size(name) != entry.size:
                    raise StoreError(f"{self.url}: {name} has the wrong size after its upload; "
                                     "re-run the same command to upload it again")
            self._known_blobs.add(name)
        self._put_small(manifest_rel, bundle_dir / MANIFEST)
        return manifest

    # ------------------------------------------------------------------------ driver side

    def put_outcome(self, outcome: Outcome) -> None:
        """Record a run's outcome in the store (after its stages were published)."""
        self.store.put_bytes(f"{RunFile.OUTCOMES}/{outcome.run_key}.json", outcome.model_dump_json().encode(),
                             content_type="application/json")

    def outcome_keys(self) -> Iterator[str]:
        """Run keys of every outcome in the store."""
        for name in self.store.list(f"{RunFile.OUTCOMES}/"):
            if name.endswith(".json"):
                yield name.removeprefix(f"{RunFile.OUTCOMES}/").removesuffix(".json")

    def rebuild_ledger(self, ledger: Ledger) -> int:
        """Import into ``ledger`` every stored outcome it lacks; returns how many were imported.

        With an empty ledger this rebuilds it from the store alone (a new machine, a lost disk).
        """
        known = ledger.finished_keys()
        missing = [key for key in self.outcome_keys() if key not in known]
        outcomes = []
        for key in missing:
            data = self.store.get_bytes(f"{RunFile.OUTCOMES}/{key}.json")
            if data is not None:
                outcomes.append(Outcome.model_validate_json(data))
        return ledger.import_outcomes(outcomes)

    def put_file(self, rel: str, path: Path) -> None:
        """Upload a run-level file (sweep.json, results.jsonl, leaderboard …) under the same name."""
        self.store.put_file(rel, path, content_type=_content_type(rel))

    # ---------------------------------------------------------------------------- readers

    def bundle_manifest(self, evidence_key: str) -> EvidenceManifest | None:
        """The stored bundle's manifest, or ``None`` when the bundle is not (completely) in the store."""
        data = self.store.get_bytes(f"{StagePaths.EVIDENCE}/{evidence_key}/{MANIFEST}")
        return None if data is None else EvidenceManifest.model_validate_json(data)

    def fetch_bundle(self, evidence_key: str, dest: Path) -> EvidenceManifest:
        """Download a stored bundle into ``dest``, checking every file against its hash; manifest last."""
        manifest = self.bundle_manifest(evidence_key)
        if manifest is None:
            raise EvidenceError(f"{self.url}: no complete evidence bundle {evidence_key}")
        dest.mkdir(parents=True, exist_ok=True)
        for entry in manifest.files:
            target = dest / entry.path
            self.store.download_file(blob_name(entry.sha256), target)
            if sha256_bytes(target.read_bytes()) != entry.sha256:
                raise EvidenceError(f"{self.url}: blob {entry.sha256} does not match its hash; the store is corrupt")
        write_json_atomic(dest / MANIFEST, manifest)
        return manifest

    def _put_small(self, rel: str, path: Path) -> None:
        self.store.put_bytes(rel, path.read_bytes(), content_type=_content_type(rel))


def _content_type(rel: str) -> str:
    return _CONTENT_TYPES.get(Path(rel).suffix.lower(), "application/octet-stream")
