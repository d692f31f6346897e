"""``evalgrid status``, ``leaderboard``, ``report``, ``export`` and ``show``: reading a run directory."""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from rich.console import Console

from cluster.cli.output import stdout
from cluster.reduce.leaderboard import build_leaderboard, leaderboard_table
from cluster.reduce.records import Reduction, RunRow
from cluster.reduce.reducer import RunDirectory, open_run_directory, reduce_run_dir, write_tables
from cluster.report.show import run_panel
from cluster.store.layout import RunFile
from cluster.store.ledger import Ledger
from evaluator import ConfigError, OutcomeStatus


def status(args: argparse.Namespace, console: Console) -> int:
    """``evalgrid status``: outcome counts (and runs in flight) of a run directory, as JSON."""
    directory = _open(args.run_dir, console)
    outcomes = directory.outcomes
    counts = Counter(o.status.value for o in outcomes)
    reasons = Counter(f"{o.status.value}/{o.reason.code.value}" for o in outcomes
                      if o.status is not OutcomeStatus.JUDGED)
    report: dict[str, object] = {"runs": len(outcomes), "by_outcome": dict(sorted(counts.items())),
                                 "by_reason": dict(sorted(reasons.items()))}
    ledger_path = args.run_dir / RunFile.LEDGER
    if ledger_path.exists():
        with Ledger(ledger_path) as ledger:
            flights = ledger.in_flight()
        report["in_flight"] = len(flights)
        report["in_flight_by_worker"] = dict(sorted(Counter(f.worker for f in flights).items()))
    print(json.dumps(report, indent=2))
    return 0


def leaderboard(args: argparse.Namespace, console: Console) -> int:
    """``evalgrid leaderboard``: print a run directory's leaderboard."""
    directory = _open(args.run_dir, console)
    board = build_leaderboard(directory.name, directory.candidates, directory.outcomes,
                              sample_reduce=directory.sample_reduce)
    stdout().print(leaderboard_table(board))
    return 0


def _open(run_dir: Path, console: Console) -> RunDirectory:
    directory = open_run_directory(run_dir)
    if directory.note:
        console.print(f"note: {directory.note}")
    return directory


def _reduce(args: argparse.Namespace, console: Console) -> tuple[Reduction, list[RunRow]]:
    if not 0.0 <= args.pass_threshold <= 8.0:
        raise ConfigError("--pass-threshold must be between 0.0 and 8.0")
    if args.samples < 100:
        raise ConfigError("--samples must be at least 100")
    with console.status("reducing outcomes and verdicts ..."):
        return reduce_run_dir(args.run_dir, pass_threshold=args.pass_threshold, samples=args.samples,
                              human_ratings=args.human_ratings)


def export(args: argparse.Namespace, console: Console) -> int:
    """``evalgrid export``: write the per-run tables and the reduction."""
    reduction, rows = _reduce(args, console)
    for path in write_tables(args.out or args.run_dir / RunFile.EXPORTS, rows, reduction):
        print(path)
    return 0


def report(args: argparse.Namespace, console: Console) -> int:
    """``evalgrid report``: write the static HTML report."""
    # Only the report draws video stills with OpenCV: the other readers must not load it.
    from cluster.report.html import write_report

    reduction, rows = _reduce(args, console)
    out = args.out or args.run_dir / RunFile.REPORT
    write_tables(out / "data", rows, reduction)
    index = write_report(args.run_dir, reduction, rows, out)
    console.print(f"report: {index} (open it in a browser; it works from a folder or an object-store prefix)")
    return 0


def show(args: argparse.Namespace, console: Console) -> int:
    """``evalgrid show``: one run, found by a prefix of its key, in the terminal."""
    run_dirs = [args.run_dir] if args.run_dir else sorted(p.parent for p in Path("runs").glob(f"*/{RunFile.RESULTS}"))
    for run_dir in run_dirs:
        prefix = args.run_key if args.run_key.startswith("run-") else f"run-{args.run_key}"
        matches = [o for o in open_run_directory(run_dir).outcomes if o.run_key.startswith(prefix)]
        if len(matches) > 1:
            raise ConfigError(f"{args.run_key!r} matches {len(matches)} runs in {run_dir}; give more of the key")
        if matches:
            stdout().print(run_panel(run_dir, matches[0]))
            return 0
    where = ", ".join(str(d) for d in run_dirs) or "no run directory under runs/"
    raise ConfigError(f"no run {args.run_key!r} in {where}; pass --run-dir")
