"""Agentic generation: the candidate model may preview its app (``create_app_preview``) before it answers.

The model is offered the preview tool by OpenAI function calling. Each call it makes is one round: its files
are served and looked at by :class:`~evaluator.preview.AppPreviewer`, and the report goes back as the tool's
result (text only: a ``tool`` message carries no image). After ``max_rounds`` previews the model is asked for
its final answer without the tool. The final answer is what is evaluated; when it holds no app, the files the
model last previewed are the answer, and the generation says so (``answer_from_last_preview``). Every round
(files, report) is kept in the stored generation with the calls' tokens and cost, and a re-run reuses it.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path
from typing import Literal

from evaluator.answer.extract import NotAssessable, extract_app
from evaluator.answer.generate import (
    Generation,
    PreviewRound,
    generation_from,
    generation_key,
    live_request,
    store_generation,
    stored_generation,
)
from evaluator.answer.repair import files_digest
from evaluator.errors import InfrastructureError
from evaluator.llm.client import ChatResult, ModelAccess, ToolCall, ToolSpec
from evaluator.models import Candidate, GenerateConfig, Query
from evaluator.preview.preview import AppPreviewer, as_answer, files_argument
from evaluator.preview.report import PreviewReport, preview_tool


def rounds_digest(rounds: list[PreviewRound]) -> str:
    """A digest of a round history, for the artifact key: two different histories never share one."""
    payload = json.dumps([r.model_dump(mode="json") for r in rounds], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


async def generate_agentic(candidate: Candidate, query: Query, *, variant: str | None, sample: int,
                           models: ModelAccess, store: Path, previewer: AppPreviewer) -> Generation:
    """The candidate's final answer after up to ``max_rounds`` previews (from ``store`` when made before)."""
    key = generation_key(candidate, query, variant, sample)
    stored = stored_generation(store, key)
    if stored is not None:
        return stored
    tool = ToolSpec.model_validate(preview_tool())
    request = live_request(candidate, query, variant=variant, sample=sample)
    client = models.client(str(candidate.endpoint), role="generation")
    messages = list(request.messages)
    rounds: list[PreviewRound] = []
    results: list[ChatResult] = []
    turns = 0
    while True:
        # Calls to a tool that does not exist make no round: the turns are bounded too.
        turns += 1
        final = len(rounds) >= candidate.generate.max_rounds or turns > candidate.generate.max_rounds + 2
        result = await client.complete(request.model_copy(update={
            "messages": list(messages), "tools": [tool], "tool_choice": "none" if final else "auto"}))
        results.append(result)
        if final or not result.tool_calls:
            break
        messages.append(result.assistant_message())
        for call in result.tool_calls:
            messages.append(call.result_message(await _round(call, rounds, previewer, candidate.generate)))
    content, from_last = _final_answer(result.content, rounds)
    generation = generation_from(results, key=key, candidate=candidate, query=query, variant=variant, sample=sample,
                                 content=content)
    final_status = await _final_status(content, rounds, previewer, candidate.generate.round_timeout_s)
    return store_generation(store, generation.model_copy(update={
        "rounds": rounds, "answer_from_last_preview": from_last, "final_status": final_status}))


async def _round(call: ToolCall, rounds: list[PreviewRound], previewer: AppPreviewer, config: GenerateConfig) -> str:
    """What the model is told for one tool call; a round is recorded when it asked for a preview."""
    name = str(preview_tool()["name"])
    if call.name != name:
        return f"error: there is no tool {call.name!r}; the only tool is {name!r}"
    if len(rounds) >= config.max_rounds:
        return "error: no previews are left; give your final answer now"
    arguments, error = call.arguments_or_error()
    files: dict[str, str] = {}
    report: PreviewReport | None = None
    if arguments is not None:
        try:
            files = files_argument(arguments.get("files"))
        except ValueError as exc:
            error = f"{exc}; call {name} again with files"
    if not error:
        try:
            report = (await asyncio.wait_for(previewer.preview(files), config.round_timeout_s)).report
        except TimeoutError:
            error = (f"the preview did not finish within {config.round_timeout_s:g} s; make the page load faster "
                     "and call again")
        except InfrastructureError:
            raise  # the sandbox or its browser failed, not the app: the worker replaces them and tries again
        except Exception as exc:  # noqa: BLE001 - the candidate's app broke its preview: an observation for it
            error = f"the preview failed ({type(exc).__name__}: {str(exc)[:300]}); check the page and call again"
    rounds.append(PreviewRound(round=len(rounds) + 1, files=files, files_sha256=files_digest(files), report=report,
                               error=error or None))
    told = report.as_text() if report is not None else f"error: {error}"
    # The model plans its fixes knowing how many looks it has left; at none, its next turn is its answer.
    return f"{told}\npreviews left: {config.max_rounds - len(rounds)}"


def _final_answer(content: str, rounds: list[PreviewRound]) -> tuple[str, bool]:
    """The answer to evaluate: the model's, or the files it last previewed when its answer holds no app."""
    previewed = [r for r in rounds if r.files]
    if previewed and isinstance(extract_app(content.encode("utf-8")), NotAssessable):
        return as_answer(previewed[-1].files), True
    return content, False


async def _final_status(content: str, rounds: list[PreviewRound], previewer: AppPreviewer,
                        timeout_s: float) -> Literal["ok", "errors"] | None:
    """What a preview of the final answer reports: the last round's when it previewed the same files, else a
    preview of its own (not a round: the model never sees it). None for a model that never previewed."""
    previewed = [r for r in rounds if r.report is not None]
    final = extract_app(content.encode("utf-8"))
    if not previewed or isinstance(final, NotAssessable):
        return None
    last = extract_app(as_answer(previewed[-1].files).encode("utf-8"))
    if not isinstance(last, NotAssessable) and last.files == final.files:
        return previewed[-1].report.status if previewed[-1].report is not None else None
    try:
        return (await asyncio.wait_for(previewer.preview(final.files), timeout_s)).report.status
    except InfrastructureError:
        raise
    except Exception:  # noqa: BLE001 - a timeout or a preview the app broke: unknown, not a failed run
        return None
