"""Evidence bundles: written incrementally, committed by writing ``manifest.json`` last.

A bundle without a manifest is partial (the ``INCOMPLETE`` marker says since when) and is collected
again. A bundle with a manifest is committed, and :func:`verify_bundle` checks every file against its
recorded hash. A committed bundle is complete unless its manifest's ``incomplete`` says the app hung or
crashed the run: then it is the evidence up to that point, kept (collecting again would hang again) and
scored by the failure policy (:mod:`evaluator.judges.failure_policy`), never judged as if complete.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, TypeAdapter, ValidationError

from evaluator.agents.observation import AgentSummary, InteractionResult, StepRecord
from evaluator.atomic import write_json_atomic
from evaluator.clock import utc_now
from evaluator.errors import EvidenceError, UnreadableEvidenceError
from evaluator.evidence.console import ConsoleEntry
from evaluator.evidence.facts import StaticFacts
from evaluator.keys import sha256_bytes
from evaluator.models import (
    AgentConfig,
    BuildReport,
    CapHit,
    EvidenceFile,
    EvidenceManifest,
    IncompleteEvidence,
    Query,
    ToolVersions,
    WebEnvironment,
)

_T = TypeVar("_T")
_ModelT = TypeVar("_ModelT", bound=BaseModel)
_TRACE = TypeAdapter(list[StepRecord])
_CONSOLE = TypeAdapter(list[ConsoleEntry])

MANIFEST = "manifest.json"
INCOMPLETE = "INCOMPLETE"
BUNDLE_LIMIT_BYTES = 256 * 1024 * 1024
"""The most a committed bundle may hold: the largest files go first (each a cap note) until it fits. The
collector's own caps keep a bundle far below it; this is the backstop whatever an app finds to inflate."""


PREVIEW_ROUNDS = "generation/rounds.json"
"""An agentic answer's preview rounds in a bundle: each round's number, file names and digest, and report."""


class BundleFile:
    """The files of a bundle, relative to its root: the one place their names are spelled. The collector writes
    them and every reader (judges, the preview report, the HTML report, the stages after a sweep) names them
    from here."""

    QUERY = "query.json"
    """The query the app answers."""
    ARTIFACT = "artifact.json"
    """The artifact's record, without its files (those are under ``source/``)."""
    SOURCE = "source"
    """The app's files, as served."""
    CONSOLE = "console.json"
    """The page's console entries, classified."""
    NETWORK = "network.json"
    """Requests refused and failed."""
    SERVER_LOG = "server.log"
    """The app server's log."""
    BUILD_LOG = "build.log"
    """The build's log, for an answer that is built."""
    AGENT_SUMMARY = "agent_summary.json"
    """The agent's own summary of what it tested."""
    INJECTION = "injection.json"
    """Text that addressed the evaluator, cut out of what judges read (present only when some was found)."""
    STATIC_FAILURE = "static/failure.json"
    """Why Static Perception could not see the page (present only then)."""
    ACCESSIBILITY = "static/accessibility.json"
    """The accessibility audit of the desktop page."""
    DOM = "static/dom.html"
    """The desktop page's markup after load."""
    ACCESSIBILITY_TREE = "static/accessibility.yaml"
    """The desktop page's accessibility tree after load (Playwright's ARIA snapshot)."""
    TRACE = "interaction/trace.json"
    """The interaction's steps (:class:`~evaluator.agents.observation.StepRecord` each)."""
    RESULT = "interaction/result.json"
    """How the interaction ended and what it measured (:class:`~evaluator.agents.observation.InteractionResult`)."""
    VIDEO = "interaction/video.mp4"
    """The screen recording of the interaction, with its sound."""
    FRAMES = "interaction/frames.json"
    """When each recorded frame was painted."""
    STEPS = "interaction/steps"
    """The screenshot the agent saw at each step (:meth:`step_shot`)."""
    FRAMES_SCRATCH = "interaction/.frames"
    """The screencast's frames while the interaction runs (encoded into :attr:`VIDEO`)."""
    AUDIO_SCRATCH = "interaction/.audio.wav"
    """The page's sound while the interaction runs (muxed into :attr:`VIDEO`)."""

    @staticmethod
    def screenshot(viewport: str, *, full: bool = False) -> str:
        """The ``desktop`` or ``mobile`` screenshot: the viewport's, or the full page's."""
        return f"static/{viewport}-{'full' if full else 'viewport'}.png"

    @staticmethod
    def in_source(path: str) -> bool:
        """Whether ``path`` (relative to the bundle) is one of the app's files."""
        return path.startswith(f"{BundleFile.SOURCE}/")

    @staticmethod
    def is_static_record(path: str) -> bool:
        """Whether ``path`` (relative to the bundle) is one of Static Perception's screenshots or measurements: what
        a judge's finding may cite besides the app's own files and the interaction."""
        return path.startswith("static/") and path.endswith((".png", ".json"))

    @staticmethod
    def step_shot(step: int) -> str:
        """The screenshot of step ``step`` (1-based)."""
        return f"{BundleFile.STEPS}/{step:03d}.jpg"

    @staticmethod
    def page_facts(viewport: str) -> str:
        """What the page measured of itself in the ``desktop`` or ``mobile`` viewport."""
        return f"static/{viewport}-facts.json"


class EvidenceWriter:
    """Writes one bundle under ``root``; nothing can be written outside it."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.caps: list[CapHit] = []
        """The evidence limits the run reached so far (recorded in the manifest)."""
        root.mkdir(parents=True, exist_ok=True)
        (root / MANIFEST).unlink(missing_ok=True)
        (root / INCOMPLETE).write_text(f"started {utc_now()}\n")

    def path(self, rel: str) -> Path:
        """Absolute path of bundle file ``rel``, with its parent created; refuses escapes."""
        target = (self.root / rel).resolve()
        if not target.is_relative_to(self.root.resolve()) or rel in (MANIFEST, INCOMPLETE):
            raise EvidenceError(f"refusing to write {rel!r}: outside the bundle or reserved")
        target.parent.mkdir(parents=True, exist_ok=True)
        return target

    def directory(self, rel: str) -> Path:
        """A scratch directory inside the bundle; dot-directories are left out of the manifest."""
        target = self.path(f"{rel}/.keep").parent
        target.mkdir(parents=True, exist_ok=True)
        return target

    def write_bytes(self, rel: str, data: bytes) -> str:
        """Write a binary file; returns ``rel``."""
        self.path(rel).write_bytes(data)
        return rel

    def write_text(self, rel: str, text: str) -> str:
        """Write a UTF-8 text file; returns ``rel``."""
        self.path(rel).write_text(text, encoding="utf-8")
        return rel

    def write_json(self, rel: str, data: Any) -> str:
        """Write a JSON file (pydantic models are dumped); returns ``rel``."""
        write_json_atomic(self.path(rel), data)
        return rel

    def commit(
        self, *, evidence_key: str, artifact_key: str, agent: AgentConfig, tools: ToolVersions,
        timings: dict[str, float], build: BuildReport | None = None, web: WebEnvironment | None = None,
        incomplete: IncompleteEvidence | None = None,
    ) -> EvidenceManifest:
        """Hash every file, write the manifest last, and drop the INCOMPLETE marker.

        ``incomplete``: the app hung or crashed the run; the manifest records it, and the bundle is committed
        as the evidence up to that point.
        """
        self._fit()
        files = []
        for file in self._files():
            data = file.read_bytes()
            files.append(EvidenceFile(path=file.relative_to(self.root).as_posix(), sha256=sha256_bytes(data),
                                      size=len(data)))
        manifest = EvidenceManifest(
            evidence_key=evidence_key, artifact_key=artifact_key, agent=agent, tools=tools,
            files=files, timings={k: round(v, 3) for k, v in timings.items()}, created_at=utc_now(),
            build=build, web=web, incomplete=incomplete, caps=self.caps,
        )
        write_json_atomic(self.root / MANIFEST, manifest)
        (self.root / INCOMPLETE).unlink(missing_ok=True)
        return manifest


    def _files(self) -> list[Path]:
        """The bundle's files, in order: the manifest, the marker and dot-directories (scratch) left out."""
        return [file for file in sorted(p for p in self.root.rglob("*") if p.is_file())
                if file.name not in (MANIFEST, INCOMPLETE) or file.parent != self.root
                if not any(part.startswith(".") for part in file.relative_to(self.root).parts)]

    def _fit(self) -> None:
        """Drop the largest files until the bundle is within :data:`BUNDLE_LIMIT_BYTES`, noting each."""
        sizes = {file: file.stat().st_size for file in self._files()}
        total = sum(sizes.values())
        for file, size in sorted(sizes.items(), key=lambda item: -item[1]):
            if total <= BUNDLE_LIMIT_BYTES:
                break
            file.unlink()
            total -= size
            self.caps.append(CapHit(what="bundle_size", limit=f"{BUNDLE_LIMIT_BYTES // (1024 * 1024)} MiB",
                                    detail=f"{file.relative_to(self.root).as_posix()} ({size} bytes) was dropped"))


def read_manifest(root: Path) -> EvidenceManifest | None:
    """The bundle's manifest, or ``None`` when the bundle is missing or partial (not committed).

    A committed bundle the app cut short has a manifest too; its ``incomplete`` says so.
    """
    path = root / MANIFEST
    if not path.is_file() or (root / INCOMPLETE).exists():
        return None
    try:
        return EvidenceManifest.model_validate_json(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise EvidenceError(f"{path} is not a valid evidence manifest ({exc}); delete the bundle to recollect") from exc


def verify_bundle(root: Path) -> EvidenceManifest:
    """Check every file of a committed bundle against its hash; raises :class:`EvidenceError`."""
    manifest = read_manifest(root)
    if manifest is None:
        raise EvidenceError(f"{root} is not a committed evidence bundle (no manifest, or marked INCOMPLETE)")
    for entry in manifest.files:
        file = root / entry.path
        if not file.is_file() or sha256_bytes(file.read_bytes()) != entry.sha256:
            raise EvidenceError(f"{root}: {entry.path} is missing or does not match its recorded hash")
    return manifest


class EvidenceBundle:
    """Read side of a committed bundle: what judges see. Reading never touches a browser.

    A bundle the app cut short (``manifest.incomplete``) is refused unless ``allow_incomplete``: a judge
    must not score the evidence up to a hang as if it were the whole run (the failure policy reads it).
    """

    def __init__(self, root: Path, *, allow_incomplete: bool = False) -> None:
        manifest = read_manifest(root)
        if manifest is None:
            raise EvidenceError(f"{root} is not a committed evidence bundle (no manifest, or marked INCOMPLETE)")
        if manifest.incomplete is not None and not allow_incomplete:
            raise EvidenceError(f"{root} stops at the app's {manifest.incomplete.failure.value} "
                                f"({manifest.incomplete.detail[:200]}); score it with evaluator.judges.failure_policy")
        self.root = root
        self.manifest = manifest

    def has(self, rel: str) -> bool:
        """Whether the bundle holds ``rel``."""
        return (self.root / rel).is_file()

    def json(self, rel: str) -> Any:
        """A JSON file of the bundle."""
        path = self.root / rel
        if not path.is_file():
            raise EvidenceError(f"{self.root}: {rel} is missing from the bundle; recollect the evidence")
        return json.loads(path.read_text(encoding="utf-8"))

    def text(self, rel: str) -> str:
        """A text file of the bundle."""
        return (self.root / rel).read_text(encoding="utf-8", errors="replace")

    def query(self) -> Query:
        """The query the app answers."""
        return self._model(BundleFile.QUERY, Query)

    def trace(self) -> list[StepRecord]:
        """The interaction's steps; none when no interaction took place (a bundle that failed before it)."""
        if not self.has(BundleFile.TRACE):
            return []
        return self._typed(BundleFile.TRACE, _TRACE.validate_python)

    def interaction(self) -> InteractionResult:
        """How the interaction ended and what it measured (every committed bundle records it, even when no
        interaction took place)."""
        return self._model(BundleFile.RESULT, InteractionResult)

    def console(self) -> list[ConsoleEntry]:
        """The page's console entries, classified, each placed on the video's clock where it can be."""
        if not self.has(BundleFile.CONSOLE):
            return []
        return self._typed(BundleFile.CONSOLE, _CONSOLE.validate_python)

    def static_facts(self, viewport: str) -> StaticFacts:
        """Static Perception's record at ``viewport`` (``"desktop"`` or ``"mobile"``): the page's facts, the
        screenshot's image probe and the load timings."""
        return self._model(BundleFile.page_facts(viewport), StaticFacts)

    def agent_summary(self) -> AgentSummary | None:
        """The agent's own summary of what it tested; ``None`` when the bundle has none."""
        return self._model(BundleFile.AGENT_SUMMARY, AgentSummary) if self.has(BundleFile.AGENT_SUMMARY) else None

    def _model(self, rel: str, model: type[_ModelT]) -> _ModelT:
        return self._typed(rel, model.model_validate)

    def _typed(self, rel: str, validate: Callable[[Any], _T]) -> _T:
        # Every collector version wrote these files from the same records, only ever adding fields with defaults:
        # a file that does not validate was not written by evalgrid.
        try:
            return validate(self.json(rel))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(map(str, first["loc"])) or "the file"
            raise UnreadableEvidenceError(f"{self.root}: {rel} is not what the collector writes ({exc.error_count()} "
                                          f"problem(s), first: {where}: {first['msg']}); recollect the evidence"
                                          ) from None
