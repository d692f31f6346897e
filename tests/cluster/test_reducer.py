"""The reducer on synthetic run directories with a known truth (no browser)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from cluster.reduce.reducer import reduce_run_dir, write_tables
from evaluator.errors import ConfigError
from tests.benchmarks.bench_reducer import build


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("synthetic")
    build(root, candidates=3, queries=60, seed=3)
    return root / "run"


def test_candidates_rank_in_their_true_skill_order_with_intervals(synthetic: Path) -> None:
    reduction, rows = reduce_run_dir(synthetic, samples=300)
    assert len(rows) == 180
    assert [c.candidate_id for c in reduction.candidates] == ["model-02", "model-01", "model-00"]
    for c in reduction.candidates:
        assert c.overall is not None and c.overall.low <= c.overall.mean <= c.overall.high
        assert c.runs == c.judged + c.non_assessable == 60
    assert [r.candidate_id for r in reduction.ratings] == ["model-02", "model-01", "model-00"]
    assert abs(sum(r.elo for r in reduction.ratings) / 3 - 1000) <= 0.05  # ratings are rounded to 0.1
    best_vs_worst = next(p for p in reduction.pairwise if {p.a, p.b} == {"model-00", "model-02"})
    assert (best_vs_worst.win_rate > 0.5) == (best_vs_worst.a == "model-02")


def test_non_assessable_runs_score_zero_and_are_charged_in_the_taxonomy(synthetic: Path) -> None:
    reduction, rows = reduce_run_dir(synthetic, samples=100)
    na = [r for r in rows if r.status == "non_assessable"]
    assert na and all(r.functional == 0.0 and r.aesthetic == 0.0 for r in na)
    for c in reduction.candidates:
        mine = [r for r in rows if r.candidate_id == c.candidate_id]
        expected = sum(((r.functional or 0) + (r.aesthetic or 0)) / 2 for r in mine) / len(mine)
        assert c.overall is not None and abs(c.overall.mean - expected) < 1e-3
        if c.non_assessable:
            assert "non_assessable:no_code" in c.failure_costs
    slices = {(s.slice, s.value, s.candidate_id): s for s in reduction.slices}
    assert sum(s.n for (dim, _, cand), s in slices.items() if dim == "difficulty" and cand == "model-00") == 60


def test_two_judges_on_the_same_evidence_get_stats_and_kappa(tmp_path: Path, synthetic: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(synthetic, run)
    for path in list((run / "verdicts").glob("*.json"))[:80]:
        verdict = json.loads(path.read_text())
        verdict["verdict_key"] += "-b"
        verdict["judge"]["rubric_version"] = "other-judge"
        verdict["functional"] = min(8.0, verdict["functional"] + 0.5)
        (run / "verdicts" / f"{verdict['verdict_key']}.json").write_text(json.dumps(verdict))
    reduction, _ = reduce_run_dir(run, samples=100)
    judges = {j.judge for j in reduction.judges}
    assert judges == {"heuristic:heuristic-v1@synthetic", "heuristic:other-judge"}
    functional = next(a for a in reduction.judge_agreement if a.dimension == "functional")
    aesthetic = next(a for a in reduction.judge_agreement if a.dimension == "aesthetic")
    assert functional.n == aesthetic.n == 80
    assert aesthetic.kappa == pytest.approx(1.0)
    assert functional.kappa is not None and 0.5 < functional.kappa < 1.0


def test_human_ratings_are_correlated_per_judge_and_bad_files_are_clear_errors(tmp_path: Path,
                                                                              synthetic: Path) -> None:
    _, rows = reduce_run_dir(synthetic, samples=100)
    ratings = tmp_path / "humans.csv"
    lines = ["candidate_id,query_id,functional,aesthetic"]
    for r in rows[:50]:
        if r.status == "judged":
            lines.append(f"{r.candidate_id},{r.query_id},{r.functional},{min(8.0, (r.aesthetic or 0) + 1)}")
    ratings.write_text("\n".join(lines) + "\n")
    reduction, _ = reduce_run_dir(synthetic, samples=100, human_ratings=ratings)
    functional = next(a for a in reduction.human_agreement if a.dimension == "functional")
    assert functional.pearson == pytest.approx(1.0) and functional.kappa == pytest.approx(1.0)
    aesthetic = next(a for a in reduction.human_agreement if a.dimension == "aesthetic")
    assert aesthetic.spearman is not None and aesthetic.spearman > 0.9
    bad = tmp_path / "bad.csv"
    bad.write_text("candidate_id,query_id,functional\nmodel-00,q00001,nine\n")
    with pytest.raises(ConfigError, match="not a number"):
        reduce_run_dir(synthetic, samples=100, human_ratings=bad)
    with pytest.raises(ConfigError, match="does not exist"):
        reduce_run_dir(synthetic, samples=100, human_ratings=tmp_path / "missing.csv")


def test_exports_round_trip(tmp_path: Path, synthetic: Path) -> None:
    reduction, rows = reduce_run_dir(synthetic, samples=100)
    files = write_tables(tmp_path / "exports", rows, reduction)
    assert [f.name for f in files] == ["runs.parquet", "runs.csv", "runs.json", "reduction.json"]
    table = pq.read_table(tmp_path / "exports" / "runs.parquet")
    assert table.num_rows == len(rows) and "functional" in table.column_names
    assert (tmp_path / "exports" / "runs.csv").read_text().splitlines()[0].startswith("run_key,")
    assert json.loads((tmp_path / "exports" / "reduction.json").read_text())["sweep"] == "synthetic"


def test_not_a_run_directory_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="is it a run directory"):
        reduce_run_dir(tmp_path)


def test_a_candidate_with_no_scored_run_is_counted_but_not_compared_or_rated(tmp_path: Path, synthetic: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(synthetic, run)
    lines = []
    for line in (run / "results.jsonl").read_text().splitlines():
        outcome = json.loads(line)
        if outcome["candidate_id"] == "model-00":
            outcome.update(status="infra_error", reason={"code": "browser_crashed", "detail": "synthetic"},
                           functional=None, aesthetic=None, verdict_key=None, evidence_key=None, judge_label=None)
        lines.append(json.dumps(outcome))
    (run / "results.jsonl").write_text("\n".join(lines) + "\n")
    reduction, _ = reduce_run_dir(run, samples=100)
    lost = next(c for c in reduction.candidates if c.candidate_id == "model-00")
    assert lost.infra_error == 60 and lost.overall is None and lost.rank == 3
    assert {r.candidate_id for r in reduction.ratings} == {"model-01", "model-02"}
    assert all("model-00" not in (p.a, p.b) for p in reduction.pairwise)


def test_slices_carry_intervals_pass_rates_and_non_assessable_counts(synthetic: Path) -> None:
    reduction, rows = reduce_run_dir(synthetic, samples=300, pass_threshold=5.0)
    cells = [s for s in reduction.slices if s.slice == "kind" and s.candidate_id == "model-01"]
    assert sum(c.n for c in cells) == 60
    for cell in cells:
        mine = [r for r in rows if r.candidate_id == "model-01" and r.kind == cell.value]
        assert cell.functional_ci is not None and cell.aesthetic_ci is not None
        assert cell.functional_ci.low <= cell.functional <= cell.functional_ci.high
        expected = sum(((r.functional or 0) + (r.aesthetic or 0)) / 2 >= 5.0 for r in mine) / len(mine)
        assert cell.pass_rate == pytest.approx(expected, abs=1e-4)
        assert cell.non_assessable == sum(r.status == "non_assessable" for r in mine)
