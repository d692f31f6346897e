"""The ``evalgrid`` command line."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from cluster.leaderboard import build_leaderboard, leaderboard_markdown, leaderboard_table
from cluster.reducer import RunDirectory, open_run_directory, reduce_run_dir, write_tables
from cluster.reduction import Reduction, RunRow
from cluster.report import write_report
from cluster.runner import run_sweep
from cluster.show import run_panel
from cluster.sweep import SweepSpec, load_sweep
from evaluator.errors import ConfigError, EvalgridError
from evaluator.evidence import write_json_atomic
from evaluator.models import (
    Artifact,
    EvidenceManifest,
    Outcome,
    OutcomeStatus,
    Query,
    QuerySet,
    Verdict,
)
from evaluator.observation import Action, AgentSummary, Observation, StepRecord

SCHEMAS: dict[str, type[BaseModel]] = {
    "SweepSpec": SweepSpec, "QuerySet": QuerySet, "Query": Query, "Artifact": Artifact,
    "EvidenceManifest": EvidenceManifest, "Verdict": Verdict, "Outcome": Outcome,
    "Observation": Observation, "Action": Action, "StepRecord": StepRecord, "AgentSummary": AgentSummary,
}

_EPILOG = """examples:
  evalgrid run fixtures/sweeps/demo.yaml            run (or resume) the demo sweep into runs/demo
  evalgrid status runs/demo                          outcome counts of a run directory
  evalgrid leaderboard runs/demo                     print the leaderboard again
  evalgrid report runs/demo                          static HTML report in runs/demo/report
  evalgrid show 3f2a9c                               one run (by run-key prefix) in the terminal
  evalgrid schema Verdict                            JSON schema of one record type
"""


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``evalgrid`` console script."""
    parser = _parser()
    args = parser.parse_args(argv)
    console = Console(stderr=True)
    try:
        code: int = args.handler(args, console)
        return code
    except EvalgridError as exc:
        console.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False)
        return 2
    except KeyboardInterrupt:
        console.print("interrupted; every finished run is recorded — re-run the same command to resume")
        return 130


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="evalgrid", formatter_class=argparse.RawDescriptionHelpFormatter, epilog=_EPILOG,
        description="Evaluate LLM-generated web apps the Cookie-Frame way: static perception, agent-driven "
                    "interaction in a real browser with the page frozen while the agent thinks, then "
                    "functional and aesthetic verdicts with failure attribution.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = sub.add_parser("run", help="run or resume a sweep", formatter_class=argparse.RawDescriptionHelpFormatter,
                         description="Run every candidate × query of SWEEP. Re-running the same command resumes: "
                                     "runs with a recorded outcome are skipped, and stage outputs that exist "
                                     "(artifacts, evidence, verdicts) are reused.")
    run.add_argument("sweep", type=Path, help="sweep file (YAML); see `evalgrid schema SweepSpec`")
    run.add_argument("--run-dir", type=Path, help="where outputs go (default: runs/<sweep name>)")
    run.add_argument("--concurrency", type=int, help="runs in flight at once (overrides the sweep file)")
    run.add_argument("--no-progress", action="store_true", help="no live progress bar (for logs and CI)")
    run.set_defaults(handler=_cmd_run)

    status = sub.add_parser("status", help="outcome counts of a run directory")
    status.add_argument("run_dir", type=Path)
    status.set_defaults(handler=_cmd_status)

    board = sub.add_parser("leaderboard", help="print the leaderboard of a run directory")
    board.add_argument("run_dir", type=Path)
    board.set_defaults(handler=_cmd_leaderboard)

    for name, text in (("report", "write the static HTML report (leaderboard, plots, a page per run with its video)"),
                       ("export", "write runs.parquet, runs.csv, runs.json and reduction.json")):
        reducer = sub.add_parser(name, help=text, description=text[0].upper() + text[1:] + ".")
        reducer.add_argument("run_dir", type=Path)
        reducer.add_argument("--out", type=Path, help=f"output directory (default: RUN_DIR/{name}"
                             f"{'' if name == 'report' else 's'})")
        reducer.add_argument("--pass-threshold", type=float, default=6.0,
                             help="overall score (0-8) a run needs to pass (default: 6.0)")
        reducer.add_argument("--samples", type=int, default=1000, help="bootstrap resamples (default: 1000)")
        reducer.add_argument("--human-ratings", type=Path,
                             help="CSV of human scores: candidate_id, query_id, functional, aesthetic")
        reducer.set_defaults(handler=_cmd_report if name == "report" else _cmd_export)

    show = sub.add_parser("show", help="print one run in the terminal")
    show.add_argument("run_key", help="run key, or a unique prefix of it (with or without 'run-')")
    show.add_argument("--run-dir", type=Path, help="run directory (default: search runs/*)")
    show.set_defaults(handler=_cmd_show)

    schema = sub.add_parser("schema", help="print JSON schemas of evalgrid's records")
    schema.add_argument("name", nargs="?", choices=sorted(SCHEMAS), help="one record type (default: all)")
    schema.set_defaults(handler=_cmd_schema)
    return parser


def _cmd_run(args: argparse.Namespace, console: Console) -> int:
    sweep = load_sweep(args.sweep)
    if args.concurrency is not None:
        if not 1 <= args.concurrency <= 32:
            raise ConfigError("--concurrency must be between 1 and 32")
        sweep = type(sweep)(spec=sweep.spec.model_copy(update={"concurrency": args.concurrency}),
                            path=sweep.path, queries=sweep.queries)
    run_dir: Path = args.run_dir or Path("runs") / sweep.spec.name
    console.print(f"sweep [bold]{sweep.spec.name}[/]: {len(sweep.spec.candidates)} candidates × "
                  f"{len(sweep.queries)} queries = {sweep.size} runs → {run_dir}", highlight=False)
    console.print("[yellow]sandbox: local backend — apps run in this machine's Chromium with requests "
                  "confined to loopback; this is NOT a container sandbox.[/]")
    progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                        TextColumn("{task.fields[counts]}"), TimeElapsedColumn(), TextColumn("ETA"),
                        TimeRemainingColumn(), console=console, disable=args.no_progress)
    counts: Counter[str] = Counter()
    task = progress.add_task("runs", total=sweep.size, counts="")

    def on_start(total: int, skipped: int) -> None:
        if skipped:
            console.print(f"resuming: {skipped} of {total} runs already have an outcome and are skipped")
        progress.update(task, completed=skipped)

    def on_outcome(outcome: Outcome) -> None:
        counts[outcome.status.value] += 1
        progress.update(task, advance=1, counts=" ".join(f"{k}={v}" for k, v in sorted(counts.items())))
        if args.no_progress:
            score = (f"F={outcome.functional:.1f} A={outcome.aesthetic:.1f}"
                     if outcome.status is OutcomeStatus.JUDGED else outcome.reason.code.value)
            console.print(f"  {outcome.candidate_id} × {outcome.query_id}: {outcome.status.value} {score}",
                          highlight=False)

    with progress:
        result = asyncio.run(run_sweep(sweep, run_dir, on_start=on_start, on_outcome=on_outcome))
    if result.torn_lines:
        console.print(f"note: {result.torn_lines} torn line(s) in results.jsonl were ignored (a crash mid-write); "
                      "those runs were redone")
    board = build_leaderboard(sweep.spec.name, [c.id for c in sweep.spec.candidates], result.outcomes.values())
    write_json_atomic(run_dir / "leaderboard.json", board)
    (run_dir / "leaderboard.md").write_text(leaderboard_markdown(board), encoding="utf-8")
    _stdout().print(leaderboard_table(board))
    rate = result.executed / result.seconds if result.seconds else 0.0
    console.print(f"{result.executed} runs executed, {result.skipped} skipped, in {result.seconds:.1f} s "
                  f"({rate * 60:.1f} runs/min). Results: {run_dir / 'results.jsonl'}", highlight=False)
    return 0


def _stdout() -> Console:
    """Standard output; wide enough for the leaderboard when it is a file or a pipe (CI logs)."""
    return Console() if sys.stdout.isatty() else Console(width=140)


def _cmd_status(args: argparse.Namespace, console: Console) -> int:
    outcomes = _open(args.run_dir, console).outcomes
    counts = Counter(o.status.value for o in outcomes)
    reasons = Counter(f"{o.status.value}/{o.reason.code.value}" for o in outcomes
                      if o.status is not OutcomeStatus.JUDGED)
    print(json.dumps({"runs": len(outcomes), "by_outcome": dict(sorted(counts.items())),
                      "by_reason": dict(sorted(reasons.items()))}, indent=2))
    return 0


def _cmd_leaderboard(args: argparse.Namespace, console: Console) -> int:
    directory = _open(args.run_dir, console)
    board = build_leaderboard(directory.name, directory.candidates, directory.outcomes)
    _stdout().print(leaderboard_table(board))
    return 0


def _open(run_dir: Path, console: Console) -> RunDirectory:
    directory = open_run_directory(run_dir)
    if not directory.replanned:
        console.print("note: the sweep file cannot be re-read; showing every recorded outcome")
    return directory


def _reduce(args: argparse.Namespace, console: Console) -> tuple[Reduction, list[RunRow]]:
    if not 0.0 <= args.pass_threshold <= 8.0:
        raise ConfigError("--pass-threshold must be between 0.0 and 8.0")
    if args.samples < 100:
        raise ConfigError("--samples must be at least 100")
    with console.status("reducing outcomes and verdicts ..."):
        return reduce_run_dir(args.run_dir, pass_threshold=args.pass_threshold, samples=args.samples,
                              human_ratings=args.human_ratings)


def _cmd_export(args: argparse.Namespace, console: Console) -> int:
    reduction, rows = _reduce(args, console)
    for path in write_tables(args.out or args.run_dir / "exports", rows, reduction):
        print(path)
    return 0


def _cmd_report(args: argparse.Namespace, console: Console) -> int:
    reduction, rows = _reduce(args, console)
    out = args.out or args.run_dir / "report"
    write_tables(out / "data", rows, reduction)
    index = write_report(args.run_dir, reduction, rows, out)
    console.print(f"report: {index} (open it in a browser; it works from a folder or an object-store prefix)")
    return 0


def _cmd_show(args: argparse.Namespace, console: Console) -> int:
    run_dirs = [args.run_dir] if args.run_dir else sorted(p.parent for p in Path("runs").glob("*/results.jsonl"))
    for run_dir in run_dirs:
        prefix = args.run_key if args.run_key.startswith("run-") else f"run-{args.run_key}"
        matches = [o for o in open_run_directory(run_dir).outcomes if o.run_key.startswith(prefix)]
        if len(matches) > 1:
            raise ConfigError(f"{args.run_key!r} matches {len(matches)} runs in {run_dir}; give more of the key")
        if matches:
            _stdout().print(run_panel(run_dir, matches[0]))
            return 0
    where = ", ".join(str(d) for d in run_dirs) or "no run directory under runs/"
    raise ConfigError(f"no run {args.run_key!r} in {where}; pass --run-dir")


def _cmd_schema(args: argparse.Namespace, console: Console) -> int:
    names = [args.name] if args.name else sorted(SCHEMAS)
    schemas = {name: SCHEMAS[name].model_json_schema() for name in names}
    print(json.dumps(schemas[args.name] if args.name else schemas, indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
