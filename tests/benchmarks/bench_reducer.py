"""Benchmark: reducing a sweep of 100,000 synthetic verdicts (target: ≤ 30 s and ≤ 2 GiB).

The run directory is real: a sweep file, a query file, results.jsonl and one verdict file per run,
as `evalgrid run` writes them. Side by side, the baseline is the I/O floor: reading and parsing
the same results log and verdict files and nothing else. Both run in fresh subprocesses so their
peak memory is measured apart. Reported: seconds, peak RSS, and reducer / floor.

``--smoke`` (run by ``make test``) reduces 3 × 40 runs and checks the row count and each candidate's
means against a reference computed from the raw files alone, without the targets.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from cluster.store.layout import RunFile
from cluster.sweep.spec import RecordedPlan, load_sweep
from evaluator.models import Outcome, OutcomeReason, OutcomeStatus, ReasonCode

CATEGORIES = ["dead_control", "error_on_action", "mobile_overflow", "low_contrast", "console_error", "broken_image"]
DOMAINS = ["games", "finance", "education", "tools", "media", "landing", "shop", "viz", "life", "prod", "port"]


def build(root: Path, candidates: int, queries: int, seed: int = 0, *, plan: bool = True) -> None:
    """A run directory with ``candidates × queries`` outcomes and their verdict files (and, unless ``plan`` is
    false, as in run directories made before plans were recorded, its recorded plan)."""
    rng = random.Random(seed)
    (root / "answers").mkdir(parents=True)
    query_docs = [{"id": f"q{i:05d}", "brief": f"Synthetic brief {i}", "domain": DOMAINS[i % len(DOMAINS)],
                   "leaf": f"leaf{i % 54}", "difficulty": ["easy", "medium", "hard"][i % 3],
                   "language": ["en", "zh", "es"][i % 3],
                   "kind": ["static_presentation", "interactive_application"][i % 2]} for i in range(queries)]
    (root / "queries.yaml").write_text(yaml.safe_dump({"queries": query_docs}), encoding="utf-8")
    cands = [{"id": f"model-{c:02d}", "answers": "answers"} for c in range(candidates)]
    (root / "sweep.yaml").write_text(yaml.safe_dump({"name": "synthetic", "queries": "queries.yaml",
                                                     "candidates": cands}), encoding="utf-8")
    run_dir = root / "run"
    (run_dir / "verdicts").mkdir(parents=True)
    sweep = load_sweep(root / "sweep.yaml")
    (run_dir / "sweep.json").write_text(json.dumps({"path": str(root / "sweep.yaml"),
                                                    "spec": sweep.spec.model_dump(mode="json")}))
    if plan:
        (run_dir / RunFile.PLAN).write_text(RecordedPlan(spec=sweep.spec, run_keys=[r.run_key for r in sweep.plan()],
                                                      queries=sweep.queries).model_dump_json())
    with (run_dir / "results.jsonl").open("w", encoding="utf-8") as log:
        for i, spec in enumerate(sweep.plan()):
            skill = int(spec.candidate.id.split("-")[1]) / candidates
            if rng.random() < 0.03:
                outcome = Outcome(run_key=spec.run_key, candidate_id=spec.candidate.id, query_id=spec.query.id,
                                  status=OutcomeStatus.NON_ASSESSABLE,
                                  reason=OutcomeReason(code=ReasonCode.NO_CODE, detail="no code"), attempts=1,
                                  duration_s=0.1, finished_at="2026-11-22T00:00:00+00:00")
            else:
                f = round(min(8.0, max(0.0, rng.gauss(3 + 4 * skill, 1.5))), 1)
                a = round(min(8.0, max(0.0, rng.gauss(3 + 3 * skill, 1.5))), 1)
                vkey, ekey = f"verdict-{i:08d}", f"evidence-{i:08d}"
                costs = rng.sample(CATEGORIES, k=rng.randint(0, 3))
                verdict = {
                    "version": 1, "verdict_key": vkey, "evidence_key": ekey,
                    "judge": {"name": "heuristic", "kind": "heuristic", "rubric_version": "heuristic-v1@synthetic",
                              "model_id": None},
                    "functional": f, "aesthetic": a, "functional_reason": "synthetic", "aesthetic_reason": "synthetic",
                    "criteria": [], "label": "HEURISTIC judge (synthetic)",
                    "attributions": [{"category": c, "dimension": "functional", "severity": "major", "deduction": 1.0,
                                      "description": "synthetic", "evidence": [{"step": 1, "video_time_s": 1.0}]}
                                     for c in costs],
                }
                (run_dir / "verdicts" / f"{vkey}.json").write_text(json.dumps(verdict))
                outcome = Outcome(run_key=spec.run_key, candidate_id=spec.candidate.id, query_id=spec.query.id,
                                  status=OutcomeStatus.JUDGED, reason=OutcomeReason(code=ReasonCode.OK), attempts=1,
                                  evidence_key=ekey, verdict_key=vkey, functional=f, aesthetic=a,
                                  judge_label="HEURISTIC judge (synthetic)", duration_s=5.0,
                                  finished_at="2026-11-22T00:00:00+00:00")
            log.write(outcome.model_dump_json() + "\n")


_REDUCE = """
import sys, time, resource
from pathlib import Path
from cluster.reduce.reducer import reduce_run_dir, write_tables
t = time.perf_counter()
reduction, rows = reduce_run_dir(Path(sys.argv[1]))
write_tables(Path(sys.argv[1]) / "exports", rows, reduction)
print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, len(rows))
"""

_FLOOR = """
import sys, time, json, resource
from pathlib import Path
t = time.perf_counter()
run = Path(sys.argv[1])
lines = [json.loads(l) for l in (run / "results.jsonl").read_text().splitlines()]
verdicts = [json.loads(p.read_text()) for p in (run / "verdicts").glob("*.json")]
print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, len(lines))
"""


def _measure(code: str, run_dir: Path) -> tuple[float, float, int]:
    out = subprocess.run([sys.executable, "-c", code, str(run_dir)], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[2]).stdout.split()
    return float(out[0]), int(out[1]) / 1024, int(out[2])


def _reference(run_dir: Path) -> dict[str, tuple[float, float]]:
    """Each candidate's (functional, aesthetic) mean straight from results.jsonl, by the documented rule
    (judged and non-assessable runs count, a missing score is 0), with no evalgrid code."""
    sums: dict[str, list[float]] = {}
    for line in (run_dir / "results.jsonl").read_text().splitlines():
        o = json.loads(line)
        if o["status"] in ("judged", "non_assessable"):
            total = sums.setdefault(o["candidate_id"], [0.0, 0.0, 0.0])
            total[0] += o.get("functional") or 0.0
            total[1] += o.get("aesthetic") or 0.0
            total[2] += 1
    return {c: (f / n, a / n) for c, (f, a, n) in sums.items()}


def _check(run_dir: Path, rows: int, expected_rows: int) -> None:
    from cluster.reduce.reducer import reduce_run_dir

    if rows != expected_rows:
        raise SystemExit(f"the reducer made {rows} rows of {expected_rows} runs")
    reduction, _ = reduce_run_dir(run_dir, samples=100)
    for candidate, (functional, aesthetic) in _reference(run_dir).items():
        got = next(c for c in reduction.candidates if c.candidate_id == candidate)
        if got.functional is None or got.aesthetic is None or \
                max(abs(got.functional.mean - functional), abs(got.aesthetic.mean - aesthetic)) > 1e-3:
            raise SystemExit(f"{candidate}: reduced to {got.functional}, {got.aesthetic}; the raw files give "
                             f"{functional:.4f}, {aesthetic:.4f}")


def main(candidates: int, queries: int, *, smoke: bool = False) -> bool:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        started = time.perf_counter()
        build(root, candidates, queries)
        print(f"built {candidates * queries} runs in {time.perf_counter() - started:.1f} s")
        floor_s, floor_mb, _ = _measure(_FLOOR, root / "run")
        reduce_s, reduce_mb, rows = _measure(_REDUCE, root / "run")
        _check(root / "run", rows, candidates * queries)
    print(f"\nReducer over {rows} runs ({candidates} candidates × {queries} queries):")
    print(f"  I/O floor (read + parse every file): {floor_s:6.2f} s, peak {floor_mb:7.0f} MiB")
    print(f"  evalgrid reduce + exports:           {reduce_s:6.2f} s, peak {reduce_mb:7.0f} MiB")
    print(f"  ratio reduce / floor = {reduce_s / floor_s:.2f}")
    print("  rows and each candidate's means agree with the raw files")
    if smoke:
        return True
    ok = reduce_s <= 30 and reduce_mb <= 2048
    print(f"  targets: ≤ 30 s and ≤ 2048 MiB: {'OK' if ok else 'MISSED'}")
    return ok


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--candidates", type=int, default=20)
    parser.add_argument("--queries", type=int, default=5000)
    parser.add_argument("--smoke", action="store_true", help="3 × 40 runs, correctness only")
    args = parser.parse_args()
    sys.exit(0 if main(*((3, 40) if args.smoke else (args.candidates, args.queries)), smoke=args.smoke) else 1)
