"""``evalgrid rejudge``, ``compare`` and ``repair-lift``: model stages on stored evidence, no browser."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import TypeVar

import yaml
from pydantic import ValidationError
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from cluster.cli.output import stdout
from cluster.pairwise.stage import CompareOptions
from cluster.pairwise.stage import compare as compare_pairs
from cluster.pairwise.summary import summary_tables
from cluster.reduce.leaderboard import leaderboard_table
from cluster.repair.lift import LiftOptions
from cluster.repair.lift import repair_lift as measure_lift
from cluster.repair.summary import lift_table
from cluster.scheduling.rejudge import parse_judge
from cluster.scheduling.rejudge import rejudge as rejudge_run_dir
from evaluator import ConfigError
from evaluator.answer import RepairOptions
from evaluator.judges import UxJudgeOptions
from evaluator.llm import Endpoint, SpendingCap


def rejudge(args: argparse.Namespace, console: Console) -> int:
    """``evalgrid rejudge``: score every stored bundle with another judge; exit 3 when the budget ran out."""
    judge = parse_judge(args.judge, args.option)
    endpoints, budget = _model_settings(args)
    progress = Progress(TextColumn("rejudging"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                        console=console)
    task = progress.add_task("rejudge", total=None)
    with progress:
        result = asyncio.run(rejudge_run_dir(args.run_dir, judge, endpoints=endpoints, concurrency=args.concurrency,
                                     budget=budget, on_progress=lambda done, total: progress.update(
                                         task, completed=done, total=total)))
    assert result.leaderboard is not None  # rejudge always builds one
    stdout().print(leaderboard_table(result.leaderboard))
    console.print(f"{result.judged} bundles judged by {result.judge_version} ({len(result.fell_back)} by the fallback "
                  f"judge after a refusal or an unusable answer); {len(result.failed)} failed, "
                  f"{result.deferred} left for a larger budget. Written to {result.out_dir}", highlight=False)
    for failure in result.failed[:5]:
        console.print(f"  failed: {escape(failure[:300])}", highlight=False)
    for fallback in result.fell_back[:5]:
        console.print(f"  fallback: {escape(fallback[:300])}", highlight=False)
    return 3 if result.deferred else 0


def _model_settings(args: argparse.Namespace) -> tuple[dict[str, Endpoint] | None, SpendingCap | None]:
    """``--endpoints`` (None: the sweep's), ``--budget-usd`` and a checked ``--concurrency``."""
    endpoints = None
    if args.endpoints is not None:
        raw = _yaml_file(args.endpoints)
        try:
            endpoints = {str(name): Endpoint.model_validate(value) for name, value in raw.items()}
        except (ValidationError, AttributeError) as exc:
            raise ConfigError(f"{args.endpoints} is not a mapping of endpoint name to settings: {exc}") from exc
    if args.concurrency < 1:
        raise ConfigError("--concurrency must be at least 1")
    return endpoints, SpendingCap(args.budget_usd) if args.budget_usd is not None else None


def compare(args: argparse.Namespace, console: Console) -> int:
    """``evalgrid compare``: pairwise comparisons in both orders; exit 3 when the budget ran out."""
    judge = parse_judge(args.judge, args.option)
    endpoints, budget = _model_settings(args)
    options = CompareOptions(candidates=_names(args.candidates), pairs=args.pairs, known_order=_names(args.better),
                             human_votes=args.human, seed=args.seed, concurrency=args.concurrency)
    progress = Progress(TextColumn("comparing"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                        console=console)
    task = progress.add_task("compare", total=None)
    with progress:
        result = asyncio.run(compare_pairs(args.run_dir, judge, options, endpoints=endpoints, budget=budget,
                                     on_progress=lambda done, total: progress.update(task, completed=done,
                                                                                     total=total)))
    summary = result.summary
    for table in summary_tables(summary):
        stdout().print(table)
    if summary.human is not None:
        h = summary.human
        agreement = "—" if h.agreement is None else f"{100 * h.agreement:.0f}%"
        console.print(f"human votes: {h.votes} read, {h.matched} on pairs the judge compared; judge–human "
                      f"agreement {agreement}", highlight=False)
    skipped = ", ".join(f"{reason} {n}" for reason, n in sorted(summary.skipped.items())) or "none"
    console.print(f"{summary.pairs} pairs compared in both orders ({summary.selection}); skipped: {skipped}; "
                  f"{summary.dropped_choices} choices dropped for want of evidence; {len(summary.failed)} comparisons "
                  f"failed. Written to {result.out_dir}", highlight=False)
    for failure in summary.failed[:5]:
        console.print(f"  failed: {escape(failure[:300])}", highlight=False)
    return 3 if summary.skipped.get("budget") else 0


def repair_lift(args: argparse.Namespace, console: Console) -> int:
    """``evalgrid repair-lift``: the lift of repairs made from a judge's UX reports."""
    endpoints, budget = _model_settings(args)
    options = LiftOptions(judge=_model_options(UxJudgeOptions, "judge", args.judge, args.judge_option),
                          repairer=_model_options(RepairOptions, "repairer", args.repairer, args.repairer_option),
                          evaluator=_model_options(UxJudgeOptions, "evaluator", args.evaluator, args.evaluator_option),
                          candidates=_names(args.candidates), concurrency=args.concurrency)
    result = asyncio.run(measure_lift(args.run_dir, options, endpoints=endpoints, budget=budget,
                                     on_progress=lambda line: console.print(f"  {escape(line)}", highlight=False)))
    stdout().print(lift_table(result.summary))
    skipped = ", ".join(f"{reason} {n}" for reason, n in sorted(result.summary.skipped.items())) or "none"
    console.print(f"{result.summary.fixtures} fixtures repaired and scored; left out: {skipped}; "
                  f"{result.summary.dropped_findings} findings dropped for want of evidence. "
                  f"Written to {result.out_dir}", highlight=False)
    return 3 if result.summary.skipped.get("deferred") else 0


_OptionsT = TypeVar("_OptionsT", UxJudgeOptions, RepairOptions)


def _model_options(kind: type[_OptionsT], role: str, target: str, options: list[str]) -> _OptionsT:
    """``ENDPOINT:MODEL`` and ``key=value`` options as a plugin's options (a ConfigError naming ``--role``)."""
    endpoint, sep, model = target.partition(":")
    if not sep or not endpoint or not model:
        raise ConfigError(f"--{role} {target!r}: give ENDPOINT:MODEL, the endpoint a name under the sweep's "
                          "endpoints (or --endpoints)")
    parsed = parse_judge(role, options).options
    try:
        return kind.model_validate({"endpoint": endpoint, "model": model, **parsed})
    except ValidationError as exc:
        wrong = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())
        raise ConfigError(f"--{role}-option: {wrong}") from None


def _names(text: str | None) -> list[str]:
    return [name.strip() for name in (text or "").split(",") if name.strip()]


def _yaml_file(path: Path) -> dict[str, object]:
    if not path.is_file():
        raise ConfigError(f"{path} does not exist")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path} is not valid YAML: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path} must be a YAML mapping")
    return data
