"""The leaderboard: per-candidate means over a sweep's outcomes.

Scoring rule: a judged run counts with its scores; a non-assessable run (no answer, no code,
garbage) counts as 0.0 on both dimensions, because producing nothing runnable is the candidate's
failure. Infrastructure errors and timeouts are excluded from the means and shown as counts, so
the evaluator's failures never move a model's score silently.
"""

from __future__ import annotations

from collections.abc import Iterable
from statistics import fmean

from pydantic import BaseModel, ConfigDict
from rich.table import Table

from evaluator.models import Outcome, OutcomeStatus

SCORING_NOTE = ("Means over judged runs, with non-assessable runs scored 0.0; "
                "infra errors and timeouts are excluded and counted.")


class LeaderboardRow(BaseModel):
    """One candidate's line."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    rank: int
    """1 is best, by overall mean."""
    candidate_id: str
    """The candidate."""
    runs: int
    """Runs with an outcome."""
    judged: int
    """Runs with a verdict."""
    non_assessable: int
    """Runs whose answer held nothing runnable (scored 0.0)."""
    infra_error: int
    """Runs lost to the infrastructure (excluded)."""
    timeout: int
    """Runs that hit the time limit (excluded)."""
    functional: float | None
    """Mean functional score, 0.0-8.0."""
    aesthetic: float | None
    """Mean aesthetic score, 0.0-8.0."""
    overall: float | None
    """Mean of the two."""


class Leaderboard(BaseModel):
    """The ranking of a sweep."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    version: int = 1
    """Format version."""
    sweep: str
    """Sweep name."""
    judge_labels: list[str]
    """Labels of the judges behind the scores (says heuristic when it is)."""
    scoring_note: str = SCORING_NOTE
    """How the means are computed."""
    rows: list[LeaderboardRow]
    """Candidates, best first."""


def build_leaderboard(sweep_name: str, candidate_ids: Iterable[str], outcomes: Iterable[Outcome]) -> Leaderboard:
    """Rank candidates by the mean of their functional and aesthetic means."""
    by_candidate: dict[str, list[Outcome]] = {c: [] for c in candidate_ids}
    labels: set[str] = set()
    for outcome in outcomes:
        by_candidate.setdefault(outcome.candidate_id, []).append(outcome)
        if outcome.judge_label:
            labels.add(outcome.judge_label)
    rows = []
    for candidate, items in by_candidate.items():
        scored = [o for o in items if o.status in (OutcomeStatus.JUDGED, OutcomeStatus.NON_ASSESSABLE)]
        functional = [o.functional or 0.0 for o in scored]
        aesthetic = [o.aesthetic or 0.0 for o in scored]
        count = {s: sum(o.status is s for o in items) for s in OutcomeStatus}
        rows.append(LeaderboardRow(
            rank=0, candidate_id=candidate, runs=len(items), judged=count[OutcomeStatus.JUDGED],
            non_assessable=count[OutcomeStatus.NON_ASSESSABLE], infra_error=count[OutcomeStatus.INFRA_ERROR],
            timeout=count[OutcomeStatus.TIMEOUT],
            functional=round(fmean(functional), 3) if scored else None,
            aesthetic=round(fmean(aesthetic), 3) if scored else None,
            overall=round((fmean(functional) + fmean(aesthetic)) / 2, 3) if scored else None,
        ))
    rows.sort(key=lambda r: (r.overall is None, -(r.overall or 0.0), r.candidate_id))
    ranked = [row.model_copy(update={"rank": i + 1}) for i, row in enumerate(rows)]
    return Leaderboard(sweep=sweep_name, judge_labels=sorted(labels), rows=ranked)


def leaderboard_table(board: Leaderboard) -> Table:
    """The leaderboard as a terminal table."""
    judges = "; ".join(board.judge_labels) or "no verdict yet"
    table = Table(title=f"evalgrid leaderboard — {board.sweep}", caption=f"Judge: {judges}\n{board.scoring_note}")
    for column, justify in (("#", "right"), ("candidate", "left"), ("functional", "right"),
                            ("aesthetic", "right"), ("overall", "right"), ("judged", "right"),
                            ("non-assessable", "right"), ("infra err", "right"), ("timeout", "right")):
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    for r in board.rows:
        table.add_row(str(r.rank), r.candidate_id, _fmt(r.functional), _fmt(r.aesthetic), _fmt(r.overall),
                      str(r.judged), str(r.non_assessable), str(r.infra_error), str(r.timeout))
    return table


def leaderboard_markdown(board: Leaderboard) -> str:
    """The leaderboard as a Markdown table."""
    lines = [f"# evalgrid leaderboard — {board.sweep}", "",
             f"Judge: {'; '.join(board.judge_labels) or 'no verdict yet'}", "", board.scoring_note, "",
             "| # | candidate | functional | aesthetic | overall | judged | non-assessable | infra err | timeout |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in board.rows:
        lines.append(f"| {r.rank} | {r.candidate_id} | {_fmt(r.functional)} | {_fmt(r.aesthetic)} | "
                     f"{_fmt(r.overall)} | {r.judged} | {r.non_assessable} | {r.infra_error} | {r.timeout} |")
    return "\n".join(lines) + "\n"


def _fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"
