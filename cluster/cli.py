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
from cluster.results import ResultsLog
from cluster.runner import run_sweep
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


def _current(run_dir: Path, console: Console) -> tuple[str, list[str], list[Outcome]]:
    """The sweep recorded in ``run_dir`` and the outcomes of its current plan.

    The results log keeps outcomes of earlier configurations too (a changed judge or agent makes new
    run keys); only the runs the sweep plans now are counted.
    """
    results, recorded = run_dir / "results.jsonl", run_dir / "sweep.json"
    if not results.exists() or not recorded.exists():
        raise ConfigError(f"{run_dir} has no results.jsonl or sweep.json; "
                          "is it a run directory made by `evalgrid run`?")
    outcomes = ResultsLog(results).load()
    saved = json.loads(recorded.read_text(encoding="utf-8"))
    spec = SweepSpec.model_validate(saved["spec"])
    candidates = [c.id for c in spec.candidates]
    try:
        keys = [run.run_key for run in load_sweep(Path(saved["path"])).plan()]
    except ConfigError as exc:
        console.print(f"note: cannot re-plan the sweep ({exc}); showing every recorded outcome")
        return spec.name, candidates, list(outcomes.values())
    return spec.name, candidates, [outcomes[k] for k in keys if k in outcomes]


def _cmd_status(args: argparse.Namespace, console: Console) -> int:
    _, _, outcomes = _current(args.run_dir, console)
    counts = Counter(o.status.value for o in outcomes)
    reasons = Counter(f"{o.status.value}/{o.reason.code.value}" for o in outcomes
                      if o.status is not OutcomeStatus.JUDGED)
    print(json.dumps({"runs": len(outcomes), "by_outcome": dict(sorted(counts.items())),
                      "by_reason": dict(sorted(reasons.items()))}, indent=2))
    return 0


def _cmd_leaderboard(args: argparse.Namespace, console: Console) -> int:
    name, candidates, outcomes = _current(args.run_dir, console)
    _stdout().print(leaderboard_table(build_leaderboard(name, candidates, outcomes)))
    return 0


def _cmd_schema(args: argparse.Namespace, console: Console) -> int:
    names = [args.name] if args.name else sorted(SCHEMAS)
    schemas = {name: SCHEMAS[name].model_json_schema() for name in names}
    print(json.dumps(schemas[args.name] if args.name else schemas, indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
