"""Sweep files: what to evaluate, validated with errors that say what to fix; planned lazily."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from evaluator.errors import ConfigError
from evaluator.judges import create_judge
from evaluator.keys import COLLECTOR_VERSION, content_key
from evaluator.models import AgentConfig, Candidate, JudgeConfig, Query, QuerySet, RunSpec


class SandboxSpec(BaseModel):
    """Where apps run. Part of the evidence key: evidence from another sandbox is not reused."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    backend: Literal["docker", "kubernetes", "local"] = "docker"
    """``docker``: a hardened container per worker, no network. ``kubernetes``: a hardened pod per
    worker, created through the API (inside a cluster installed with the Helm chart). ``local``: this
    machine's Chromium on loopback, for development only; it is NOT a sandbox."""
    image: str = "evalgrid/sandbox:dev"
    """Sandbox image (``make images`` builds it). On Kubernetes the chart's ``sandbox.image`` wins."""
    memory: str = Field(default="1536m", pattern=r"^[0-9]+[kmg]$")
    """Memory limit of a sandbox (swap included)."""
    cpus: float = Field(default=1.0, gt=0, le=64)
    """CPU limit of a sandbox."""
    pids: int = Field(default=256, ge=32, le=65536)
    """Process limit of a sandbox (stops fork bombs)."""


class SweepSpec(BaseModel):
    """A sweep: candidates × queries under one agent configuration and one judge."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    version: int = 1
    """Format version of the sweep file."""
    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
    """Name of the sweep; the default run directory is ``runs/<name>``."""
    queries: str
    """Query file (YAML), relative to the sweep file."""
    only_queries: list[str] | None = None
    """Restrict the sweep to these query ids."""
    candidates: list[Candidate] = Field(min_length=1)
    """Candidates; replay answer directories are relative to the sweep file."""
    agent: AgentConfig = AgentConfig()
    """Agent-Driven Interaction settings."""
    judge: JudgeConfig = JudgeConfig()
    """The judge."""
    concurrency: int = Field(default=2, ge=1, le=32)
    """Runs in flight at once (browser contexts)."""
    run_timeout_s: float = Field(default=180.0, gt=0, le=3600)
    """Wall-time limit of one run; past it the run's outcome is ``timeout``."""
    max_attempts: int = Field(default=2, ge=1, le=10)
    """Attempts per run when the infrastructure fails (the app's own failures are never retried)."""
    sandbox: SandboxSpec = SandboxSpec()
    """Where the apps run."""

    @field_validator("candidates")
    @classmethod
    def _unique(cls, candidates: list[Candidate]) -> list[Candidate]:
        ids = [c.id for c in candidates]
        duplicates = sorted({i for i in ids if ids.count(i) > 1})
        if duplicates:
            raise ValueError(f"candidate ids must be unique; repeated: {', '.join(duplicates)}")
        return candidates


@dataclass(frozen=True)
class Sweep:
    """A loaded sweep: the spec, where it lives, and its queries."""

    spec: SweepSpec
    path: Path
    queries: list[Query]

    def answers_dir(self, candidate: Candidate) -> Path:
        """Absolute answers directory of a replay candidate."""
        return (self.path.parent / candidate.answers).resolve()

    @property
    def size(self) -> int:
        """Number of runs the sweep plans."""
        return len(self.spec.candidates) * len(self.queries)

    def plan(self) -> Iterator[RunSpec]:
        """Runs in candidate-major order, produced lazily.

        Each model is serialised once, not once per run: a 100,000-run sweep is planned in seconds.
        The keys are the ones :func:`~evaluator.run.make_run_spec` computes.
        """
        judge_version = create_judge(self.spec.judge).version
        agent, judge = self.spec.agent.model_dump(mode="json"), self.spec.judge.model_dump(mode="json")
        queries = [(query, query.model_dump(mode="json")) for query in self.queries]
        for candidate in self.spec.candidates:
            answers_dir = str(self.answers_dir(candidate))
            candidate_doc = candidate.model_dump(mode="json")
            for query, query_doc in queries:
                key = content_key("run", candidate_doc, query_doc, agent, judge, judge_version, COLLECTOR_VERSION)
                yield RunSpec.model_construct(run_key=key, candidate=candidate, query=query, agent=self.spec.agent,
                                              judge=self.spec.judge, answers_dir=answers_dir)


# libyaml's loader is ~10x faster on large query files; both are the safe loader.
_SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _read_yaml(path: Path, what: str) -> Any:
    if not path.is_file():
        raise ConfigError(f"{what} {path} does not exist; check the path")
    try:
        return yaml.load(path.read_text(encoding="utf-8"), Loader=_SafeLoader)
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{what} {path} is not UTF-8 text ({exc.reason})") from exc
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(f"{what} {path} is not valid YAML{where}: {problem}") from exc


def _explain(exc: ValidationError, path: Path) -> ConfigError:
    lines = []
    for error in exc.errors():
        where = ".".join(str(p) for p in error["loc"]) or "(top level)"
        if error["type"] == "extra_forbidden":
            lines.append(f"  {where}: unknown field; remove it or check its spelling")
        elif error["type"] == "missing":
            lines.append(f"  {where}: required field is missing")
        else:
            lines.append(f"  {where}: {error['msg']}")
    return ConfigError(f"{path} is not a valid file:\n" + "\n".join(lines))


def load_sweep(path: Path) -> Sweep:
    """Read and validate a sweep file and its query file."""
    path = path.resolve()
    data = _read_yaml(path, "sweep file")
    if not isinstance(data, dict):
        raise ConfigError(f"sweep file {path} must be a YAML mapping (name:, queries:, candidates: ...)")
    try:
        spec = SweepSpec.model_validate(data)
    except ValidationError as exc:
        raise _explain(exc, path) from exc
    query_path = (path.parent / spec.queries).resolve()
    raw = _read_yaml(query_path, "query file")
    try:
        queries = QuerySet.model_validate(raw).queries
    except ValidationError as exc:
        raise _explain(exc, query_path) from exc
    if spec.only_queries is not None:
        known = {q.id for q in queries}
        unknown = sorted(set(spec.only_queries) - known)
        if unknown:
            raise ConfigError(f"{path}: only_queries names unknown query ids: {', '.join(unknown)}")
        queries = [q for q in queries if q.id in set(spec.only_queries)]
    sweep = Sweep(spec=spec, path=path, queries=queries)
    for candidate in spec.candidates:
        if not sweep.answers_dir(candidate).is_dir():
            raise ConfigError(f"{path}: answers directory of candidate {candidate.id!r} "
                              f"({sweep.answers_dir(candidate)}) does not exist")
    return sweep
