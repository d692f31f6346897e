"""Sweep files: what to evaluate, validated with errors that say what to fix; planned lazily."""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from cluster.pairwise.pairs import check_selection
from cluster.sandbox.backends import sandbox_backends
from cluster.store.layout import RunFile
from evaluator import (
    AgentConfig,
    Candidate,
    ConfigError,
    JudgeConfig,
    Query,
    QuerySet,
    Registry,
    RunSpec,
    policies,
    run_key,
)
from evaluator.answer import VARIANTS, answer_digest
from evaluator.judges import create_judge, judges
from evaluator.llm import Endpoint


class SandboxSpec(BaseModel):
    """Where apps run. Part of the evidence key: evidence from another sandbox is not reused."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    backend: str = "docker"
    """A sandbox backend (:data:`~cluster.sandbox.backends.sandbox_backends`). ``docker``: a hardened container
    per worker, no network. ``kubernetes``: a hardened pod per worker, created through the API (inside a cluster
    installed with the Helm chart). ``local``: this machine's Chromium on loopback, for development only; it is
    NOT a sandbox."""
    image: str = "evalgrid/sandbox:dev"
    """Sandbox image (``make images`` builds it). On Kubernetes the chart's ``sandbox.image`` wins."""
    memory: str = Field(default="1536m", pattern=r"^[0-9]+[kmg]$")
    """Memory limit of a sandbox (swap included)."""
    cpus: float = Field(default=1.0, gt=0, le=64)
    """CPU limit of a sandbox."""
    pids: int = Field(default=256, ge=32, le=65536)
    """Process limit of a sandbox (stops fork bombs)."""

    @field_validator("backend")
    @classmethod
    def _registered(cls, name: str) -> str:
        try:
            sandbox_backends.check(name, {})
        except ConfigError as exc:
            raise ValueError(str(exc)) from None
        return name


class PairwiseSpec(BaseModel):
    """The compare stage a sweep runs at its end (``pairwise:``); see ``evalgrid compare --help``.

    It runs where the bundles are: with an object-store run directory (``--run-dir s3://…``) the sweep skips
    it, and ``evalgrid compare`` on a copy of the run directory does the same work.
    """

    model_config = ConfigDict(extra="forbid")
    judge: JudgeConfig = JudgeConfig()
    """The pairwise judge (``heuristic``: no model; ``llm``: with ``endpoint`` and ``model`` options)."""
    pairs: str = "all"
    """``all``, ``adjacent`` (neighbours in each query's absolute ranking) or ``sample:N``."""
    candidates: list[str] = Field(default_factory=list)
    """Candidates to compare (default: all)."""
    known_order: list[str] = Field(default_factory=list)
    """Candidates in known order of quality, best first: gives FA/SA/AA/CA."""

    @field_validator("pairs")
    @classmethod
    def _selection(cls, pairs: str) -> str:
        try:
            return check_selection(pairs)
        except ConfigError as exc:
            raise ValueError(str(exc)) from None


class SweepSpec(BaseModel):
    """A sweep: candidates × queries (× prompt variants × samples) under one agent and one or more judges."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    version: int = 1
    """Format version of the sweep file."""
    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
    """Name of the sweep; the default run directory is ``runs/<name>``."""
    queries: str
    """Query file (YAML), relative to the sweep file."""
    only_queries: list[str] | None = None
    """Restrict the sweep to these query ids."""
    endpoints: dict[str, Endpoint] = Field(default_factory=dict)
    """Model endpoints by name (OpenAI-compatible); candidates, the LLM agent and LLM judges refer to them.
    Keys come from the environment variable each names, never from this file."""
    candidates: list[Candidate] = Field(min_length=1)
    """Candidates; replay answer directories are relative to the sweep file."""
    agent: AgentConfig = AgentConfig()
    """Agent-Driven Interaction settings."""
    judge: JudgeConfig = JudgeConfig()
    """The judge (when ``judges`` is not given)."""
    judges: list[JudgeConfig] | None = Field(default=None, min_length=1)
    """Several judges of the same evidence: the first gives the outcome's scores, every verdict is stored
    and their disagreement recorded."""
    variants: list[str] | None = Field(default=None, min_length=1)
    """Prompt variants each live candidate answers under (``unguided``, ``little_guidance``,
    ``expert_guidance``); a slice of the reduction."""
    samples: int = Field(default=1, ge=1, le=64)
    """Answers per (candidate, query, variant) cell from live candidates."""
    sample_reduce: Literal["mean", "best"] = "mean"
    """How a cell's samples become its score: their mean, or the best of n."""
    budget_usd: float | None = Field(default=None, ge=0)
    """Cap on the sweep's model spending (US dollars, at the endpoints' prices). Calls stop at the cap;
    the runs they would have served are left for the next invocation."""
    disk_budget_gib: float | None = Field(default=None, gt=0)
    """Cap on the evidence this sweep keeps on this machine (GiB, bundles of earlier invocations included): past
    it the sweep stops with every finished run recorded, so hostile apps that each leave their bundle's worth of
    evidence cannot fill the disk. None: no cap beyond each bundle's own."""
    concurrency: int = Field(default=2, ge=1, le=32)
    """Runs in flight at once (browser contexts)."""
    run_timeout_s: float = Field(default=180.0, gt=0, le=3600)
    """Wall-time limit of one run from the moment its answer is ready (evidence and judging); past it the run's
    outcome is ``timeout``."""
    generation_timeout_s: float = Field(default=1800.0, gt=0, le=86400)
    """Wall-time limit of generating one answer (a stage before the run's limit starts): every call of a live
    candidate and, for an agentic one, every preview round. Past it the attempt fails as a timeout."""
    max_attempts: int = Field(default=2, ge=1, le=10)
    """Attempts per run when the infrastructure fails (the app's own failures are never retried)."""
    sandbox: SandboxSpec = SandboxSpec()
    """Where the apps run."""
    pairwise: PairwiseSpec | None = None
    """Compare candidates pairwise at the end of the sweep, on the stored evidence (both orders)."""

    @field_validator("candidates")
    @classmethod
    def _unique(cls, candidates: list[Candidate]) -> list[Candidate]:
        ids = [c.id for c in candidates]
        duplicates = sorted({i for i in ids if ids.count(i) > 1})
        if duplicates:
            raise ValueError(f"candidate ids must be unique; repeated: {', '.join(duplicates)}")
        return candidates

    @field_validator("variants")
    @classmethod
    def _known_variants(cls, variants: list[str] | None) -> list[str] | None:
        unknown = sorted(set(variants or []) - set(VARIANTS))
        if unknown:
            raise ValueError(f"unknown prompt variants {', '.join(unknown)}; known: {', '.join(VARIANTS)}")
        return variants

    @model_validator(mode="after")
    def _consistent(self) -> SweepSpec:
        if self.judges is not None and "judge" in self.model_fields_set:
            raise ValueError("give `judge:` or `judges:`, not both")
        named = [(f"candidate {c.id!r}", c.endpoint) for c in self.candidates if c.endpoint]
        named += [(f"judge {j.name!r}", str(j.options["endpoint"])) for j in self.judge_panel
                  if "endpoint" in j.options]
        if "endpoint" in self.agent.options:
            named.append((f"agent policy {self.agent.policy!r}", str(self.agent.options["endpoint"])))
        missing = [f"{who} names endpoint {name!r}" for who, name in named if name not in self.endpoints]
        if missing:
            known = ", ".join(sorted(self.endpoints)) or "none"
            raise ValueError(f"{'; '.join(missing)}, which is not under `endpoints:` (known: {known})")
        if self.pairwise is not None:
            ids = {c.id for c in self.candidates}
            unknown = sorted({*self.pairwise.candidates, *self.pairwise.known_order} - ids)
            if unknown:
                raise ValueError(f"pairwise names {', '.join(unknown)}, which are not candidates of this sweep")
            if len(self.pairwise.candidates or ids) < 2:
                raise ValueError("pairwise compares two candidates or more; this sweep has fewer")
            if self.pairwise.pairs == "twins":
                raise ValueError("pairwise pairs: twins is for a run directory of `evalgrid calibrate` "
                                 "(`evalgrid compare RUN_DIR --pairs twins`), not for a sweep")
            if "endpoint" in self.pairwise.judge.options and self.pairwise.judge.options["endpoint"] not in \
                    self.endpoints:
                raise ValueError(f"the pairwise judge names endpoint {self.pairwise.judge.options['endpoint']!r}, "
                                 "which is not under `endpoints:`")
        _check_bases(self.candidates)
        for c in self.candidates:
            previews = c.generate.max_rounds * c.generate.round_timeout_s if c.generate.mode == "agentic" else 0.0
            if previews >= self.generation_timeout_s:
                raise ValueError(f"candidate {c.id!r}: {c.generate.max_rounds} previews of up to "
                                 f"{c.generate.round_timeout_s:g} s can take {previews:g} s, as long as the whole "
                                 f"generation may (generation_timeout_s: {self.generation_timeout_s:g}); raise "
                                 "generation_timeout_s or lower max_rounds or round_timeout_s")
        live = any(c.provider != "replay" for c in self.candidates)
        if (self.variants or self.samples > 1) and not live:
            raise ValueError("variants and samples need a live candidate (provider: openai); replayed answers "
                             "have one stored answer per query")
        return self

    @property
    def judge_panel(self) -> list[JudgeConfig]:
        """Every judge, the one that gives the scores first."""
        return list(self.judges) if self.judges else [self.judge]


class RecordedPlan(BaseModel):
    """The runs a sweep invocation planned, and their queries, as recorded in its run directory.

    Reduction reads this, never the sweep file again: an edited or deleted sweep file cannot change
    how a finished run directory reduces. Each invocation records its own plan (a changed sweep makes
    new run keys, and the outcomes of the old ones stay in the log, uncounted).
    """

    model_config = ConfigDict(extra="forbid")
    version: Literal[1] = 1
    spec: SweepSpec
    """The sweep as this invocation ran it (``sweep.json`` is written earlier, and may be a newer one's)."""
    run_keys: list[str]
    queries: list[Query]


class SweepRecord(BaseModel):
    """What a run directory's ``sweep.json`` holds: where the sweep file was, and its spec as last run."""

    model_config = ConfigDict(extra="forbid")
    path: str
    spec: SweepSpec


def read_sweep_record(run_dir: Path) -> SweepRecord:
    """The sweep recorded in ``run_dir``; a :class:`ConfigError` saying what to do when there is none or it cannot
    be read."""
    path = run_dir / RunFile.SWEEP
    try:
        return SweepRecord.model_validate_json(path.read_bytes())
    except FileNotFoundError:
        raise ConfigError(f"{run_dir} has no {RunFile.SWEEP}; is it a run directory made by `evalgrid run`?") from None
    except (OSError, ValidationError) as exc:
        raise ConfigError(f"{path} is not a sweep record this evalgrid can read ({str(exc)[:300]}); re-run the sweep "
                          "into this run directory to record it again") from None


def recorded_endpoints(run_dir: Path) -> dict[str, Endpoint]:
    """The endpoints of the sweep recorded in ``run_dir`` (the default of every stage that runs on its evidence)."""
    return dict(read_sweep_record(run_dir).spec.endpoints)


@dataclass(frozen=True)
class Sweep:
    """A loaded sweep: the spec, where it lives, and its queries."""

    spec: SweepSpec
    path: Path
    queries: list[Query]

    def answers_dir(self, candidate: Candidate) -> Path | None:
        """Absolute answers directory of a replay candidate (``None`` for live ones)."""
        return (self.path.parent / candidate.answers).resolve() if candidate.answers else None

    def cells(self, candidate: Candidate) -> list[tuple[str | None, int]]:
        """The (variant, sample) pairs a candidate answers each query under."""
        if candidate.provider == "replay":
            return [(None, 0)]
        variants: list[str | None] = list(self.spec.variants) if self.spec.variants else [None]
        return [(variant, sample) for variant in variants for sample in range(self.spec.samples)]

    @property
    def size(self) -> int:
        """Number of runs the sweep plans."""
        return sum(len(self.cells(c)) for c in self.spec.candidates) * len(self.queries)

    def plan(self) -> Iterator[RunSpec]:
        """Runs in query-major order, candidates interleaved, produced lazily.

        Interleaved so that no candidate's runs come as one block: a candidate whose apps fail (or an outage
        during its block) never delays or starves the others, and a sweep stopped early has every candidate's
        first queries. Each model is serialised once, not once per run: a 100,000-run sweep is planned in
        seconds. The keys are the ones :func:`~evaluator.run.make_run_spec` computes.
        """
        judges = self.spec.judge_panel
        versions = [create_judge(j).version for j in judges]
        agent = self.spec.agent.model_dump(mode="json")
        judge_docs = [j.model_dump(mode="json") for j in judges]
        panel = tuple(zip(judge_docs[1:], versions[1:], strict=True))
        candidates = []
        for candidate in self.spec.candidates:
            answers = self.answers_dir(candidate)
            candidates.append((candidate, candidate.model_dump(mode="json"),
                               str(answers) if answers is not None else None, list(self.cells(candidate))))
        for query in self.queries:
            query_doc = query.model_dump(mode="json")
            for candidate, candidate_doc, answers_dir, cells in candidates:
                replayed = ((answer_digest(Path(answers_dir), query.id),)
                            if candidate.provider == "replay" and answers_dir else ())
                for variant, sample in cells:
                    key = run_key(candidate_doc, query_doc, agent, judge_docs[0], versions[0], panel=panel,
                                  cell=(variant, sample), replayed=replayed)
                    yield RunSpec.model_construct(run_key=key, candidate=candidate, query=query,
                                                  agent=self.spec.agent, judge=judges[0], answers_dir=answers_dir,
                                                  panel=tuple(judges[1:]), variant=variant, sample=sample)


# libyaml's loader is ~10x faster on large query files; both are the safe loader.
_SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _check_bases(candidates: list[Candidate]) -> None:
    """Each ``base:`` names another candidate of the sweep that asks the same model in one turn."""
    by_id = {c.id: c for c in candidates}
    for c in candidates:
        if c.base is None:
            continue
        base = by_id.get(c.base)
        if base is None:
            near = difflib.get_close_matches(c.base, by_id, n=1)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            raise ValueError(f"candidate {c.id!r} names base {c.base!r}, which is not a candidate of this sweep{hint}")
        same = (base.endpoint, base.model, base.system_prompt, base.params) == (c.endpoint, c.model, c.system_prompt,
                                                                                 c.params)
        if base.generate.mode != "single" or not same:
            raise ValueError(f"candidate {c.id!r}: its base {base.id!r} must ask the same model on the same endpoint, "
                             "with the same system_prompt and params, in one turn (generate: single), so that the "
                             "gain is the tool's")


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


def _check_plugins(spec: SweepSpec, path: Path) -> None:
    """Judges and the agent policy exist and their options fit, before any worker starts."""
    checks: list[tuple[str, Registry[Any], str, dict[str, str | int | float | bool]]] = [
        (f"judges[{i}]", judges, j.name, j.options) for i, j in enumerate(spec.judge_panel)]
    checks.append(("agent", policies, spec.agent.policy, spec.agent.options))
    if spec.pairwise is not None:
        from evaluator.judges import pairwise_judges  # only a sweep that compares pays for the import

        checks.append(("pairwise.judge", pairwise_judges, spec.pairwise.judge.name, spec.pairwise.judge.options))
    for where, registry, name, options in checks:
        try:
            registry.check(name, options)
        except ConfigError as exc:
            raise ConfigError(f"{path}: {where}: {exc}") from None


def load_sweep(path: Path, *, check_plugins: bool = True) -> Sweep:
    """Read and validate a sweep file and its query file (and, unless ``check_plugins`` is false, that its
    judges and agent policy exist and take the options it gives them)."""
    path = path.resolve()
    data = _read_yaml(path, "sweep file")
    if not isinstance(data, dict):
        raise ConfigError(f"sweep file {path} must be a YAML mapping (name:, queries:, candidates: ...)")
    try:
        spec = SweepSpec.model_validate(data)
    except ValidationError as exc:
        raise _explain(exc, path) from exc
    if check_plugins:
        _check_plugins(spec, path)
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
        answers = sweep.answers_dir(candidate)
        if answers is not None and not answers.is_dir():
            raise ConfigError(f"{path}: answers directory of candidate {candidate.id!r} ({answers}) does not exist")
    return sweep
