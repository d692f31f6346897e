"""``evalgrid run`` and ``evalgrid calibrate``: sweeps on the grid, with a progress display."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from pydantic import ValidationError
from rich.console import Console

from cluster.calibration.calibrate import (
    BUILT_IN,
    SUITE,
    calibration_table,
    load_labels,
    load_suite,
    measure,
    write_sweep,
)
from cluster.calibration.twins import Operator
from cluster.cli.output import stdout
from cluster.cli.progress import run_with_progress
from cluster.pairwise.summary import summary_tables
from cluster.reduce.leaderboard import leaderboard_table
from cluster.sandbox.backends import sandbox_backends
from cluster.scheduling.ray_grid import RayOptions
from cluster.scheduling.rejudge import parse_judge
from cluster.scheduling.runner import GridOptions, SweepResult
from cluster.store.layout import RunFile
from cluster.store.object_store import StoreLocation, StoreSettings, is_store_url
from cluster.sweep.inputs import InputsRef, fetch_inputs, resolve_inputs
from cluster.sweep.spec import SandboxSpec, Sweep, load_sweep
from evaluator import AgentConfig, ConfigError, write_json_atomic


def run(args: argparse.Namespace, console: Console) -> int:
    """``evalgrid run``: run or resume a sweep; exit 3 when its model budget was reached."""
    sweep, inputs = _sweep_to_run(args, console)
    run_dir, store = _run_location(args, sweep, inputs)
    where = f"{store.url} (staging: {run_dir})" if store else str(run_dir)
    console.print(f"sweep [bold]{sweep.spec.name}[/]: {len(sweep.spec.candidates)} candidates × "
                  f"{len(sweep.queries)} queries = {sweep.size} runs → {where}", highlight=False)
    _describe_sandbox(sweep.spec.sandbox, console)
    grid = GridOptions(scheduler=args.scheduler, workers=sweep.spec.concurrency,
                       ray=RayOptions(shard_size=args.shard_size, address=args.ray_address))
    result = run_with_progress(sweep, run_dir, grid, console, no_progress=args.no_progress, store=store,
                                inputs=inputs)
    return _report_run(result, sweep, run_dir, where, console)


def _sweep_to_run(args: argparse.Namespace, console: Console) -> tuple[Sweep, InputsRef | None]:
    """The sweep file (or the packed inputs) with the command line's overrides."""
    inputs: InputsRef | None = None
    if (args.sweep is None) == (args.inputs is None):
        raise ConfigError("give a sweep file or --inputs URL (one of them)")
    if args.inputs is not None:
        inputs = resolve_inputs(args.inputs, StoreSettings(url=args.inputs, endpoint_url=args.s3_endpoint))
        with console.status(f"fetching the sweep's inputs from {args.inputs} ..."):
            sweep = load_sweep(fetch_inputs(inputs))
    else:
        sweep = load_sweep(args.sweep)
    update: dict[str, object] = {}
    if args.workers is not None:
        if not 1 <= args.workers <= 32:
            raise ConfigError("--workers must be between 1 and 32")
        update["concurrency"] = args.workers
    if args.sandbox is not None:
        update["sandbox"] = sweep.spec.sandbox.model_copy(update={"backend": args.sandbox})
    if args.shard_size < 1:
        raise ConfigError("--shard-size must be at least 1")
    if update:
        sweep = type(sweep)(spec=sweep.spec.model_copy(update=update), path=sweep.path, queries=sweep.queries)
    return sweep, inputs


def _run_location(args: argparse.Namespace, sweep: Sweep, inputs: InputsRef | None
                  ) -> tuple[Path, StoreSettings | None]:
    """The local run directory (the staging copy, for an s3:// one) and the object store, if any."""
    if args.run_dir and is_store_url(args.run_dir):
        location = StoreLocation.parse(args.run_dir)
        store = StoreSettings(url=location.url, endpoint_url=args.s3_endpoint, encryption=args.sse,
                              kms_key_id=args.sse_kms_key)
        return args.staging_dir or _cache_home() / "evalgrid" / "s3" / location.bucket / location.prefix, store
    if args.staging_dir or args.sse != "none" or args.sse_kms_key or (args.s3_endpoint and not inputs):
        raise ConfigError("--staging-dir, --s3-endpoint and --sse apply only to an s3:// --run-dir")
    return (Path(args.run_dir) if args.run_dir else Path("runs") / sweep.spec.name), None


def _describe_sandbox(box: SandboxSpec, console: Console) -> None:
    console.print(sandbox_backends.create(box.backend).describe(box), highlight=False)


def _report_run(result: SweepResult, sweep: Sweep, run_dir: Path, where: str, console: Console) -> int:
    """Print what the invocation did and the leaderboard; the exit code (3: the budget was reached)."""
    if result.removed_containers:
        console.print(f"removed {len(result.removed_containers)} sandbox container(s) left by dead processes")
    if result.redone:
        console.print(f"{result.redone} run(s) that were in flight when an earlier invocation died were redone")
    if result.torn_lines:
        console.print(f"note: {result.torn_lines} torn line(s) in results.jsonl were ignored (a crash mid-write); "
                      "those runs were redone")
    assert result.leaderboard is not None  # run_sweep writes it
    stdout().print(leaderboard_table(result.leaderboard))
    for table in summary_tables(result.pairwise) if result.pairwise else []:
        stdout().print(table)
    rate = result.executed / result.seconds if result.seconds else 0.0
    console.print(f"{result.executed} runs executed, {result.skipped} skipped, in {result.seconds:.1f} s "
                  f"({rate * 60:.1f} runs/min). Results: {where}/results.jsonl", highlight=False)
    if result.spent_usd is not None:
        console.print(f"model spending: ${result.spent_usd:.4f} of the ${sweep.spec.budget_usd:.2f} budget",
                      highlight=False)
    if result.deferred:
        console.print(f"[yellow]budget reached: {len(result.deferred)} run(s) were not finished and are listed in "
                      f"{run_dir / RunFile.DEFERRED}; raise budget_usd in the sweep file and re-run the same command "
                      "to continue.[/]", highlight=False)
        return 3
    return 0


def _cache_home() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")


def calibrate(args: argparse.Namespace, console: Console) -> int:
    """``evalgrid calibrate``: run a calibration suite and measure the judge; exit 1 below a minimum."""
    judge = parse_judge(args.judge, args.option)
    agent_fields = parse_judge(args.agent, args.agent_option).options  # same key=value parsing
    known = set(AgentConfig.model_fields) - {"policy", "options"}
    try:
        agent = AgentConfig.model_validate({
            "policy": args.agent, "options": {k: v for k, v in agent_fields.items() if k not in known},
            **{k: v for k, v in agent_fields.items() if k in known}})
    except ValidationError as exc:
        raise ConfigError(f"--agent-option: {exc.errors()[0]['loc'][0]}: {exc.errors()[0]['msg']}") from exc
    try:
        operators = [Operator(op.strip()) for op in args.operators.split(",")] if args.operators else list(Operator)
    except ValueError as exc:
        raise ConfigError(f"--operators: {exc}; known: {', '.join(op.value for op in Operator)}") from exc
    if not 1 <= args.workers <= 32:
        raise ConfigError("--workers must be between 1 and 32")
    suite: Path = args.suite or SUITE
    apps = load_suite(suite, args.apps.split(",") if args.apps else None)
    if args.split != "all":
        if all(app.split is None for app, _ in apps):
            raise ConfigError(f"--split {args.split}: the suite at {suite} has no halves (its apps have no "
                              "provenance); use it without --split")
        apps = [(app, answer) for app, answer in apps if app.split == args.split]
    run_dir: Path = args.run_dir
    path, unconfirmed = write_sweep(apps, operators, run_dir / RunFile.SUITE, agent=agent, judge=judge,
                                    concurrency=args.workers, labels=load_labels(suite))
    if unconfirmed:
        console.print(f"[yellow]{len(unconfirmed)} versions left out:[/] their play-test label is missing, stale or "
                      "does not confirm them (python -m cluster.calibration.playtest --suite SUITE --write labels "
                      "them again)", highlight=False)
    sweep = load_sweep(path)
    if args.sandbox != "docker":
        sweep = Sweep(spec=sweep.spec.model_copy(update={"sandbox": sweep.spec.sandbox.model_copy(
            update={"backend": args.sandbox})}), path=sweep.path, queries=sweep.queries)
    console.print(f"calibration: {len(apps)} apps and {len(sweep.queries) - len(apps)} twins, judge {judge.name}, "
                  f"agent {agent.policy} → {run_dir}", highlight=False)
    result = run_with_progress(sweep, run_dir, GridOptions(scheduler=args.scheduler, workers=args.workers),
                                console, no_progress=args.no_progress)
    suite_name = BUILT_IN if suite.resolve() == SUITE.resolve() else suite.resolve().name
    calibration = measure(result.outcomes.values(), run_dir, agent=agent, judge=judge,
                          suite=[app for app, _ in apps], unconfirmed=unconfirmed, suite_name=suite_name,
                          split=args.split)
    (run_dir / RunFile.CALIBRATIONS).mkdir(exist_ok=True)
    write_json_atomic(run_dir / RunFile.CALIBRATION, calibration)
    write_json_atomic(run_dir / RunFile.CALIBRATIONS / f"{calibration.key}.json", calibration)
    stdout().print(calibration_table(calibration))
    failed = []
    if args.min_pairwise is not None and (calibration.functional_pairwise_accuracy or 0.0) < args.min_pairwise:
        failed.append(f"functional pairwise accuracy {calibration.functional_pairwise_accuracy} < {args.min_pairwise}")
    if args.min_auc is not None and (calibration.auc or 0.0) < args.min_auc:
        failed.append(f"AUC {calibration.auc} < {args.min_auc}")
    for line in failed:
        console.print(f"[bold red]below the minimum:[/] {line}", highlight=False)
    return 1 if failed else 0
