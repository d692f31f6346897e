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
from importlib import resources
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from evaluator.atomic import write_json_atomic
from evaluator.errors import ConfigError
from evaluator.keys import content_key
from evaluator.llm.client import ChatRequest, ModelAccess
from evaluator.models import Candidate, Query

ANSWER_SUFFIXES = (".md", ".markdown", ".html", ".htm", ".txt")
GENERATE_PROMPT = "generate-v1"
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


@functools.cache
def _prompt(name: str) -> str:
    path = resources.files("evaluator").joinpath(f"prompts/{name}.md")
    if not path.is_file():
        raise ConfigError(f"no prompt {name!r}; the built-in variants are {', '.join(VARIANTS)}")
    return path.read_text(encoding="utf-8").strip()


def variant_guidance(variant: str | None) -> str:
    """The text a prompt variant adds after the brief."""
    return _prompt(f"variants/{variant}") if variant else ""


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
    """Wall time of the call."""


def generation_key(candidate: Candidate, query: Query, variant: str | None, sample: int) -> str:
    """The key of a live generation: everything that shapes the answer."""
    system = candidate.system_prompt or _prompt(GENERATE_PROMPT)
    return content_key("generation", candidate, query, variant, sample, system, variant_guidance(variant))


async def generate(candidate: Candidate, query: Query, *, variant: str | None, sample: int, models: ModelAccess,
                   store: Path) -> Generation:
    """The candidate's answer to ``query``, from ``store`` when it was generated before."""
    key = generation_key(candidate, query, variant, sample)
    path = store / f"{key}.json"
    if path.is_file():
        return Generation.model_validate_json(path.read_text(encoding="utf-8"))
    if candidate.endpoint is None or candidate.model is None:
        raise ConfigError(f"candidate {candidate.id!r} has no endpoint and model to generate with")
    params = dict(candidate.params)
    temperature = float(params.pop("temperature", 0.0))
    max_tokens = int(params.pop("max_tokens", 16_000))
    seed = params.pop("seed", None)
    guidance = variant_guidance(variant)
    request = ChatRequest(
        model=candidate.model, temperature=temperature, max_tokens=max_tokens,
        seed=int(seed) + sample if seed is not None else None, extra=params,
        messages=[{"role": "system", "content": candidate.system_prompt or _prompt(GENERATE_PROMPT)},
                  {"role": "user", "content": query.brief + (f"\n\n{guidance}" if guidance else "")}],
        cache_salt=f"sample-{sample}" if sample else "",
    )
    result = await models.client(candidate.endpoint, role="generation").complete(request)
    generation = Generation(
        key=key, candidate_id=candidate.id, query_id=query.id, variant=variant, sample=sample, model=result.model,
        content=result.content, finish_reason=result.finish_reason, refusal=result.refusal,
        prompt_tokens=result.prompt_tokens, completion_tokens=result.completion_tokens, cost_usd=result.cost_usd,
        latency_s=result.latency_s,
    )
    store.mkdir(parents=True, exist_ok=True)
    write_json_atomic(path, generation)
    return generation
