"""Every benchmark runs at its ``--smoke`` size in ``make test``, so a benchmark script cannot rot unnoticed.

The smoke sizes check correctness (row counts, dispatched counts, what each measurement produced, the
reducer against the raw files), never speed: timings of a few runs on a shared CI machine mean nothing.
The full sizes and their targets stay in ``make bench``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCHMARKS = sorted(p.stem for p in (ROOT / "tests" / "benchmarks").glob("bench_*.py"))
NEEDS = {"bench_build": [pytest.mark.docker], "bench_static_perception": [pytest.mark.browser],
         "bench_regime": [pytest.mark.docker, pytest.mark.browser], "bench_grid": [pytest.mark.heavy]}


def test_every_benchmark_is_in_make_bench() -> None:
    makefile = (ROOT / "Makefile").read_text()
    listed = next(line for line in makefile.splitlines() if line.startswith("BENCHMARKS :="))
    assert sorted(listed.split(":=")[1].split()) == BENCHMARKS


@pytest.mark.parametrize("bench", [pytest.param(b, marks=NEEDS.get(b, [])) for b in BENCHMARKS])
def test_a_benchmark_runs_at_its_smoke_size(bench: str) -> None:
    result = subprocess.run([sys.executable, f"tests/benchmarks/{bench}.py", "--smoke"], cwd=ROOT,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
