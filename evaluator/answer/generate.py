"""The generate stage: a candidate's raw answer to a query, replayed from disk or asked of a model.

Replay layout: ``<answers_dir>/<query_id>.md`` (or ``.html``, ``.txt``, ``.markdown``), exactly the
text the model returned. Live generation asks the candidate's model on an OpenAI-compatible
endpoint with evalgrid's system prompt (``prompts/generate-v1.md``: HTML or React, whatever the
query says) or the candidate's own, plus the prompt variant's guidance after the brief. Each
generation is stored under its key (candidate, query, variant, sample, prompts) with its token
counts, cost and latency, so a re-run reuses it and never pays twice.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from evaluator.atomic import write_json_atomic
from evaluator.errors import ConfigError
from evaluator.keys import content_key, sha256_bytes
from evaluator.llm.client import ChatRequest, ChatResult, ModelAccess
from evaluator.models import Candidate, Query
from evaluator.package_data import package_text
from evaluator.preview.report import PreviewReport

ANSWER_SUFFIXES = (".md", ".markdown", ".html", ".htm", ".txt")
GENERATE_PROMPT = "generate-v1"
AGENTIC_PROMPT = "generate-agentic-v1.md"
"""What the system prompt adds for agentic generation (the preview tool and how to use it)."""
VARIANTS = ("unguided", "little_guidance", "expert_guidance")
"""Built-in prompt variants (WebAccessBench's three levels of accessibility guidance)."""


def find_answer(answers_dir: Path, query_id: str) -> Path | None:
    """The stored answer to ``query_id``, or ``None`` when the candidate gave none."""
    for suffix in ANSWER_SUFFIXES:
        path = answers_dir / f"{query_id}{suffix}"
        if path.is_file():
            return path
    return None


def read_answer(answers_dir: Path, query_id: str) -> bytes | None:
    """Raw bytes of the stored answer to ``query_id``, or ``None`` when there is none."""
    path = find_answer(answers_dir, query_id)
    return path.read_bytes() if path is not None else None


def answer_digest(answers_dir: Path, query_id: str) -> str | None:
    """SHA-256 of the stored answer to ``query_id`` (``None`` when there is none): part of a replayed run's key, so
    an edited, added or removed answer is run again rather than kept with the old answer's verdict."""
    answer = read_answer(answers_dir, query_id)
    return sha256_bytes(answer) if answer is not None else None


@functools.cache
def _prompt(name: str) -> str:
    try:
        return package_text("prompts", f"{name}.md").strip()
    except ConfigError:
        raise ConfigError(f"no prompt {name!r}; the built-in variants are {', '.join(VARIANTS)}") from None


def variant_guidance(variant: str | None) -> str:
    """The text a prompt variant adds after the brief."""
    return _prompt(f"variants/{variant}") if variant else ""


class PreviewRound(BaseModel):
    """One call of the preview tool during agentic generation."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    round: int
    """1 for the first preview."""
    files: dict[str, str]
    """The files the model sent (empty when its arguments could not be read)."""
    files_sha256: str
    """Their digest (of the canonical JSON)."""
    report: PreviewReport | None
    """The tool's report, when the preview ran."""
    error: str | None = None
    """What the model was told instead of a report (arguments that are no files, a preview that timed out)."""


    def kept(self) -> KeptPreviewRound:
        """The round as the evidence bundle keeps it."""
        return KeptPreviewRound(files=sorted(self.files), **self.model_dump(exclude={"files"}))


class KeptPreviewRound(BaseModel):
    """One preview round as an evidence bundle keeps it (``generation/rounds.json``): the names of the files the
    model sent, not their contents (the artifact has those). Fields in the order bundles have always held them."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    round: int
    files_sha256: str
    report: PreviewReport | None
    error: str | None = None
    files: list[str]
    """The names of the files the model sent, sorted."""


class Generation(BaseModel):
    """One live generation, as stored under ``generations/<key>.json``."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    key: str
    """Content key: candidate, query, variant, sample and the prompts."""
    candidate_id: str
    """The candidate."""
    query_id: str
    """The query."""
    variant: str | None
    """The prompt variant."""
    sample: int
    """The sample number."""
    model: str
    """The exact model id the endpoint reported."""
    content: str
    """The raw answer."""
    finish_reason: str
    """``stop``, or ``length`` when it was cut at ``max_tokens``."""
    refusal: str | None
    """The model's refusal, when it declined."""
    prompt_tokens: int
    """Prompt tokens."""
    completion_tokens: int
    """Completion tokens."""
    cost_usd: float
    """What it cost."""
    latency_s: float
    """Wall time of the call (of all the calls, for an agentic generation)."""
    rounds: list[PreviewRound] = Field(default_factory=list)
    """Agentic: the previews the model asked for, in order."""
    answer_from_last_preview: bool = False
    """Agentic: the model's final answer held no app, so the files it last previewed are the answer."""
    final_status: Literal["ok", "errors"] | None = None
    """Agentic: what a preview of the final answer reports (the last round's, when it previewed those files;
    None when the model never previewed or the final preview did not run)."""


def agentic_prompt() -> str:
    """The system prompt's addition for agentic generation (package data)."""
    return package_text("prompts", AGENTIC_PROMPT).strip()


def generation_key(candidate: Candidate, query: Query, variant: str | None, sample: int) -> str:
    """The key of a live generation: everything that shapes the answer."""
    system = _system_prompt(candidate)
    return content_key("generation", candidate, query, variant, sample, system, variant_guidance(variant))


def _system_prompt(candidate: Candidate) -> str:
    system = candidate.system_prompt or _prompt(GENERATE_PROMPT)
    return f"{system}\n\n{agentic_prompt()}" if candidate.generate.mode == "agentic" else system


def live_request(candidate: Candidate, query: Query, *, variant: str | None, sample: int) -> ChatRequest:
    """The first request of a live generation: the system prompt, then the brief with the variant's guidance."""
    if candidate.endpoint is None or candidate.model is None:
        raise ConfigError(f"candidate {candidate.id!r} has no endpoint and model to generate with")
    params = dict(candidate.params)
    temperature = float(params.pop("temperature", 0.0))
    max_tokens = int(params.pop("max_tokens", 16_000))
    seed = params.pop("seed", None)
    guidance = variant_guidance(variant)
    return ChatRequest(
        model=candidate.model, temperature=temperature, max_tokens=max_tokens,
        seed=int(seed) + sample if seed is not None else None, extra=params,
        messages=[{"role": "system", "content": _system_prompt(candidate)},
                  {"role": "user", "content": query.brief + (f"\n\n{guidance}" if guidance else "")}],
        cache_salt=f"sample-{sample}" if sample else "",
    )


def stored_generation(store: Path, key: str) -> Generation | None:
    """The generation stored under ``key``, when there is one."""
    path = store / f"{key}.json"
    return Generation.model_validate_json(path.read_text(encoding="utf-8")) if path.is_file() else None


def store_generation(store: Path, generation: Generation) -> Generation:
    """Keep ``generation`` under its key (a re-run reuses it); returns it."""
    store.mkdir(parents=True, exist_ok=True)
    write_json_atomic(store / f"{generation.key}.json", generation)
    return generation


def generation_from(results: list[ChatResult], *, key: str, candidate: Candidate, query: Query,
                    variant: str | None, sample: int, content: str | None = None) -> Generation:
    """The generation whose calls were ``results`` (the last one answered; ``content`` replaces its text)."""
    last = results[-1]
    return Generation(
        key=key, candidate_id=candidate.id, query_id=query.id, variant=variant, sample=sample, model=last.model,
        content=last.content if content is None else content, finish_reason=last.finish_reason,
        refusal=last.refusal, prompt_tokens=sum(r.prompt_tokens for r in results),
        completion_tokens=sum(r.completion_tokens for r in results), cost_usd=sum(r.cost_usd for r in results),
        latency_s=sum(r.latency_s for r in results),
    )


async def generate(candidate: Candidate, query: Query, *, variant: str | None, sample: int, models: ModelAccess,
                   store: Path) -> Generation:
    """The candidate's answer to ``query``, from ``store`` when it was generated before."""
    key = generation_key(candidate, query, variant, sample)
    stored = stored_generation(store, key)
    if stored is not None:
        return stored
    request = live_request(candidate, query, variant=variant, sample=sample)
    result = await models.client(str(candidate.endpoint), role="generation").complete(request)
    return store_generation(store, generation_from([result], key=key, candidate=candidate, query=query,
                                                   variant=variant, sample=sample))
