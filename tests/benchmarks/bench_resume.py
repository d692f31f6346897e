"""Benchmark: resuming a sweep of 100,000 runs of which 99,000 are finished (target: ≤ 5 s).

Measured: the time from opening the run directory's record to knowing the 1,000 remaining run keys
out of the 100,000 planned ones (the plan is a list of keys, read before the clock starts).

- evalgrid: what ``run_sweep`` does, through the outcome store: ``LocalOutcomes(run_dir)``, its
  ``reconcile()`` (the ledger and the log checked to agree), then the planned keys not in
  ``finished_keys()``.
- Baseline, side by side: the old way, ``ResultsLog(run_dir / "results.jsonl").load()`` over the
  same 99,000 outcomes, then filtering the planned keys against it.

The ledger is built with ``finish_many`` in batches, the log as ``ResultsLog`` writes it. Each
measurement runs in a fresh subprocess (imports are not timed; peak RSS is the process's), the two
ways alternating so machine noise hits both; the median of the repeats is reported, with the ratio
store / log. ``--smoke`` (run by ``make test``): 3,000 runs once; both ways must find exactly the
remaining keys, no target checked.
"""

from __future__ import annotations

import argparse
import hashlib
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

from cluster.store.ledger import Ledger
from evaluator.keys import content_key
from evaluator.models import Outcome, OutcomeReason, OutcomeStatus, ReasonCode

_BATCH = 1000

_PRELUDE = """
import hashlib, resource, sys, time
from pathlib import Path
run_dir = Path(sys.argv[1])
planned = (run_dir / "planned.txt").read_text().split()
rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
"""

_REPORT = """
seconds = time.perf_counter() - started
digest = hashlib.sha256("\\n".join(remaining).encode()).hexdigest()[:16]
print(seconds, rss_before, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, len(remaining), digest)
"""

_LEDGER = _PRELUDE + """
from cluster.store.outcomes import LocalOutcomes
started = time.perf_counter()
store = LocalOutcomes(run_dir)
store.reconcile()
finished = store.finished_keys()
remaining = [key for key in planned if key not in finished]
store.close()
""" + _REPORT

_JSONL = _PRELUDE + """
from cluster.store.results_log import ResultsLog
started = time.perf_counter()
recorded = ResultsLog(run_dir / "results.jsonl").load()
remaining = [key for key in planned if key not in recorded]
""" + _REPORT


def _outcome(rng: random.Random, key: str, i: int) -> Outcome:
    candidate, query = f"model-{i // 5000:02d}", f"q{i % 5000:05d}"
    if rng.random() < 0.05:
        return Outcome(run_key=key, candidate_id=candidate, query_id=query, status=OutcomeStatus.NON_ASSESSABLE,
                       reason=OutcomeReason(code=ReasonCode.NO_CODE, detail="the answer contains no code block"),
                       attempts=1, artifact_key=None, duration_s=0.1, finished_at="2026-11-22T00:00:00.000+00:00")
    return Outcome(run_key=key, candidate_id=candidate, query_id=query, status=OutcomeStatus.JUDGED,
                   reason=OutcomeReason(code=ReasonCode.OK), attempts=1, artifact_key=content_key("artifact", i),
                   evidence_key=content_key("evidence", i), verdict_key=content_key("verdict", i),
                   functional=round(rng.uniform(0, 8), 1), aesthetic=round(rng.uniform(0, 8), 1),
                   judge_label="HEURISTIC judge (synthetic)", duration_s=round(rng.uniform(2, 30), 2),
                   finished_at="2026-11-22T00:00:00.000+00:00")


def build(run_dir: Path, runs: int, remaining: int, seed: int = 0) -> str:
    """``planned.txt``, ``results.jsonl`` and ``ledger.sqlite`` with ``runs - remaining`` outcomes.

    Returns the digest of the expected remaining keys, in plan order.
    """
    rng = random.Random(seed)
    run_dir.mkdir(parents=True)
    planned = [content_key("run", "synthetic", i) for i in range(runs)]
    (run_dir / "planned.txt").write_text("\n".join(planned) + "\n")
    left = set(rng.sample(range(runs), remaining))
    expected = [key for i, key in enumerate(planned) if i in left]
    with Ledger.for_run_dir(run_dir) as ledger, (run_dir / "results.jsonl").open("w", encoding="utf-8") as log:
        batch: list[Outcome] = []
        for i, key in enumerate(planned):
            if i in left:
                continue
            batch.append(_outcome(rng, key, i))
            if len(batch) == _BATCH:
                ledger.finish_many(batch)
                log.writelines(o.model_dump_json() + "\n" for o in batch)
                batch = []
        ledger.finish_many(batch)
        log.writelines(o.model_dump_json() + "\n" for o in batch)
        assert ledger.counts()["in_flight"] == 0
    return hashlib.sha256("\n".join(expected).encode()).hexdigest()[:16]


class Sample(NamedTuple):
    """One measurement in a fresh process."""

    seconds: float
    """From opening the record to knowing the remaining keys."""
    wall: float
    """The whole subprocess, interpreter start and imports included."""
    rss_before_mib: float
    """Peak RSS before the clock started (interpreter, imports, planned keys)."""
    rss_peak_mib: float
    """Peak RSS of the process."""
    remaining: int
    """How many remaining keys it found."""
    digest: str
    """Hash of the remaining keys in the order found."""


def _measure(code: str, run_dir: Path) -> Sample:
    started = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code, str(run_dir)], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[2]).stdout.split()
    wall = time.perf_counter() - started
    return Sample(float(out[0]), wall, int(out[1]) / 1024, int(out[2]) / 1024, int(out[3]), out[4])


def main(runs: int, remaining: int, repeats: int, *, smoke: bool = False) -> bool:
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = Path(tmp) / "run"
        started = time.perf_counter()
        expected = build(run_dir, runs, remaining)
        print(f"built {runs - remaining} outcomes (ledger + results.jsonl) in {time.perf_counter() - started:.1f} s; "
              f"ledger {(run_dir / 'ledger.sqlite').stat().st_size / 2**20:.0f} MiB, "
              f"log {(run_dir / 'results.jsonl').stat().st_size / 2**20:.0f} MiB")
        samples: dict[str, list[Sample]] = {"ledger": [], "jsonl": []}
        for _ in range(repeats):
            samples["jsonl"].append(_measure(_JSONL, run_dir))
            samples["ledger"].append(_measure(_LEDGER, run_dir))
    for name, rows in samples.items():
        for row in rows:
            if (row.remaining, row.digest) != (remaining, expected):
                raise SystemExit(f"{name} found {row.remaining} remaining keys (digest {row.digest}), "
                                 f"expected {remaining} (digest {expected})")

    def median(name: str, field: str) -> float:
        return statistics.median(float(getattr(row, field)) for row in samples[name])

    print(f"\nResume of {runs} planned runs, {runs - remaining} finished: time to know the {remaining} remaining "
          f"(median of {repeats}, fresh process each)")
    print(f"  {'':38} {'seconds':>8} {'process wall':>13} {'RSS before':>11} {'peak RSS':>9}")
    for name, label in (("jsonl", "baseline: ResultsLog.load() + filter"), ("ledger", "evalgrid: the outcome store")):
        print(f"  {label:38} {median(name, 'seconds'):8.3f} {median(name, 'wall'):11.2f} s "
              f"{median(name, 'rss_before_mib'):7.0f} MiB {median(name, 'rss_peak_mib'):5.0f} MiB")
    ledger_s, log_s = median("ledger", "seconds"), median("jsonl", "seconds")
    print(f"  ratio store / log = {ledger_s / log_s:.3f} (the log is {log_s / ledger_s:.0f}x slower)")
    if smoke:
        print("smoke: both found exactly the remaining runs (no target checked)")
        return True
    ok = ledger_s <= 5.0
    print(f"  target: ≤ 5 s: {'OK' if ok else 'MISSED'}")
    return ok


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=100_000)
    parser.add_argument("--remaining", type=int, default=1_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--smoke", action="store_true", help="3,000 runs once, correctness only")
    args = parser.parse_args()
    sizes = (3_000, 100, 1) if args.smoke else (args.runs, args.remaining, args.repeats)
    sys.exit(0 if main(*sizes, smoke=args.smoke) else 1)
