"""The leaderboard: per-candidate means over a sweep's outcomes, with what the models cost.

Scoring rule: a judged run counts with its scores; a non-assessable run (no answer, no code,
garbage) counts as 0.0 on both dimensions, because producing nothing runnable is the candidate's
failure; an app that hung or crashed the run is judged too (functional 0.0, aesthetic from the Static
Perception before it: see :mod:`evaluator.judges.failure_policy`), else a model whose apps freeze would rank
above one whose apps render badly. Only the machinery's failures (infrastructure errors, timeouts the
hang probe did not pin on the app) are excluded from the means; they are counted, and their rate per
candidate is shown with a warning when it differs between candidates by more than
:data:`EXCLUSION_SPREAD_WARN` (an exclusion that falls unevenly biases the ranking). When a sweep draws several samples
per (candidate, query, variant) cell, the cell's scores are first reduced to one (their mean, or
the best of n, as the sweep says), so each cell counts once.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict, Field
from rich.markup import escape
from rich.table import Table

from cluster.reduce.scoring import OutcomeCounts, SampleReduce, candidate_means, cell_score, run_scores
from evaluator import ModelUsage, Outcome, OutcomeStatus, ReasonCode

SCORING_NOTE = ("Means over judged runs, with non-assessable runs scored 0.0 and app hangs and crashes scored "
                "functional 0.0; only the machinery's failures (infra errors, machinery timeouts) are excluded "
                "and counted.")
EXCLUSION_SPREAD_WARN = 0.05
"""Excluded-run rates that differ between candidates by more than this (5 percentage points) get a warning."""


class LeaderboardRow(OutcomeCounts):
    """One candidate's line."""

    functional: float | None
    """Mean functional score, 0.0-8.0."""
    aesthetic: float | None
    """Mean aesthetic score, 0.0-8.0."""
    overall: float | None
    """Mean of the two."""
    cost_usd: float = 0.0
    """Model spending on this candidate's runs (generation, agent and judges)."""
    tokens: int = 0
    """Prompt and completion tokens of those calls."""


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
    sample_reduce: SampleReduce = "mean"
    """How several samples of one (candidate, query, variant) cell were reduced."""
    usage: list[ModelUsage] = Field(default_factory=list)
    """Model calls of the whole sweep per role (generation, agent, judge), endpoint and model."""
    exclusion_warning: str | None = None
    """Set when the candidates' infra-error rates differ by more than 5 percentage points."""


def infra_error_rate(runs: int, infra_error: int, timeout: int) -> float | None:
    """Share of ``runs`` excluded as the machinery's failures; ``None`` without runs."""
    return round((infra_error + timeout) / runs, 4) if runs else None


def exclusion_warning(rates: dict[str, float | None]) -> str | None:
    """A warning when the candidates' infra-error rates differ by more than 5 percentage points, else ``None``.

    Excluded runs are dropped from a candidate's means: when they fall unevenly, the candidates are
    ranked on different subsets of the queries.
    """
    known = {c: r for c, r in rates.items() if r is not None}
    if len(known) < 2:
        return None
    high = max(known, key=lambda c: (known[c], c))
    low = min(known, key=lambda c: (known[c], c))
    # Compared in whole hundredths of a point: 5.0 points is not more than 5.
    spread = round(100 * (known[high] - known[low]), 2)
    if spread <= round(100 * EXCLUSION_SPREAD_WARN, 2):
        return None
    return (f"Biased exclusion: infra-error rates differ by {spread:.1f} percentage points ({high} "
            f"{100 * known[high]:.1f}%, {low} {100 * known[low]:.1f}%); the excluded runs are left out of the "
            "means unevenly, so the ranking compares different subsets. Find the cause of the infra errors "
            "(`evalgrid show RUN_KEY --run-dir RUN_DIR` on them) before trusting the ranking.")


def build_leaderboard(sweep_name: str, candidate_ids: Iterable[str], outcomes: Iterable[Outcome], *,
                      sample_reduce: SampleReduce = "mean") -> Leaderboard:
    """Rank candidates by the mean of their functional and aesthetic means (over cells)."""
    by_candidate: dict[str, list[Outcome]] = {c: [] for c in candidate_ids}
    labels: set[str] = set()
    for outcome in outcomes:
        by_candidate.setdefault(outcome.candidate_id, []).append(outcome)
        if outcome.judge_label:
            labels.add(outcome.judge_label)
    rows = []
    for candidate, items in by_candidate.items():
        scores = cell_scores(items, sample_reduce)
        means = candidate_means(scores) if scores else (None, None, None)
        count = {s: sum(o.status is s for o in items) for s in OutcomeStatus}
        spent = [u for o in items for u in o.usage]
        failed = {code: sum(o.status is OutcomeStatus.JUDGED and o.reason.code is code for o in items)
                  for code in (ReasonCode.APP_HANG, ReasonCode.APP_CRASH)}
        rows.append(LeaderboardRow(
            rank=0, candidate_id=candidate, runs=len(items), judged=count[OutcomeStatus.JUDGED],
            non_assessable=count[OutcomeStatus.NON_ASSESSABLE], infra_error=count[OutcomeStatus.INFRA_ERROR],
            timeout=count[OutcomeStatus.TIMEOUT], hang=failed[ReasonCode.APP_HANG],
            crash=failed[ReasonCode.APP_CRASH],
            infra_error_rate=infra_error_rate(len(items), count[OutcomeStatus.INFRA_ERROR],
                                              count[OutcomeStatus.TIMEOUT]),
            functional=means[0], aesthetic=means[1], overall=means[2],
            cost_usd=round(sum(u.cost_usd for u in spent), 6),
            tokens=sum(u.prompt_tokens + u.completion_tokens for u in spent),
        ))
    rows.sort(key=lambda r: (r.overall is None, -(r.overall or 0.0), r.candidate_id))
    ranked = [row.model_copy(update={"rank": i + 1}) for i, row in enumerate(rows)]
    return Leaderboard(sweep=sweep_name, judge_labels=sorted(labels), rows=ranked, sample_reduce=sample_reduce,
                       usage=usage_totals(u for items in by_candidate.values() for o in items for u in o.usage),
                       exclusion_warning=exclusion_warning({r.candidate_id: r.infra_error_rate for r in ranked}))


def cell_scores(outcomes: Iterable[Outcome], how: SampleReduce) -> list[tuple[float, float]]:
    """(functional, aesthetic) per (candidate, query, variant) cell of the outcomes that count."""
    cells: dict[tuple[str, str, str | None], list[tuple[float, float]]] = defaultdict(list)
    for o in outcomes:
        scores = run_scores(o.status, o.functional, o.aesthetic)
        if scores is not None:
            cells[(o.candidate_id, o.query_id, o.variant)].append(scores)
    return [cell_score(samples, how) for samples in cells.values()]


def usage_totals(usage: Iterable[ModelUsage]) -> list[ModelUsage]:
    """Model calls, tokens and cost summed per (role, endpoint, model), in that order."""
    totals: dict[tuple[str, str, str], ModelUsage] = {}
    for u in usage:
        key = (u.role, u.endpoint, u.model)
        t = totals.get(key)
        totals[key] = u.model_copy() if t is None else t.model_copy(update={
            "calls": t.calls + u.calls, "cached_calls": t.cached_calls + u.cached_calls,
            "prompt_tokens": t.prompt_tokens + u.prompt_tokens,
            "completion_tokens": t.completion_tokens + u.completion_tokens,
            "cost_usd": round(t.cost_usd + u.cost_usd, 8)})
    return [totals[k] for k in sorted(totals)]


def leaderboard_table(board: Leaderboard) -> Table:
    """The leaderboard as a terminal table."""
    judges = "; ".join(board.judge_labels) or "no verdict yet"
    caption = f"Judge: {judges}\n{board.scoring_note}"
    if board.exclusion_warning:
        caption += f"\n[bold red]WARNING: {escape(board.exclusion_warning)}[/]"
    table = Table(title=f"evalgrid leaderboard — {board.sweep}", caption=caption)
    for column, justify in (("#", "right"), ("candidate", "left"), ("functional", "right"),
                            ("aesthetic", "right"), ("overall", "right"), ("judged", "right"),
                            ("non-assessable", "right"), ("hang", "right"), ("crash", "right"),
                            ("infra err", "right"), ("timeout", "right"), ("infra-error rate", "right")):
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    costed = bool(board.usage)
    if costed:
        table.add_column("cost $", justify="right")
        table.add_column("tokens", justify="right")
    for r in board.rows:
        cells = [str(r.rank), escape(r.candidate_id), _fmt(r.functional), _fmt(r.aesthetic), _fmt(r.overall),
                 str(r.judged), str(r.non_assessable), str(r.hang), str(r.crash), str(r.infra_error), str(r.timeout),
                 _rate(r.infra_error_rate)]
        table.add_row(*cells, *([f"{r.cost_usd:.4f}", f"{r.tokens:,}"] if costed else []))
    return table


def leaderboard_markdown(board: Leaderboard) -> str:
    """The leaderboard as a Markdown table."""
    lines = [f"# evalgrid leaderboard — {board.sweep}", "",
             f"Judge: {'; '.join(board.judge_labels) or 'no verdict yet'}", "", board.scoring_note, ""]
    if board.exclusion_warning:
        lines += [f"> **WARNING:** {board.exclusion_warning}", ""]
    lines += ["| # | candidate | functional | aesthetic | overall | judged | non-assessable | hang | crash | infra err "
              "| timeout | infra-error rate |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in board.rows:
        lines.append(f"| {r.rank} | {r.candidate_id} | {_fmt(r.functional)} | {_fmt(r.aesthetic)} | "
                     f"{_fmt(r.overall)} | {r.judged} | {r.non_assessable} | {r.hang} | {r.crash} | {r.infra_error} "
                     f"| {r.timeout} | {_rate(r.infra_error_rate)} |")
    if board.usage:
        lines += ["", "## Model usage", "", "| candidate | cost $ | tokens |", "|---|---|---|"]
        lines += [f"| {r.candidate_id} | {r.cost_usd:.4f} | {r.tokens} |" for r in board.rows]
        lines += ["", "| role | endpoint | model | calls | cached | prompt tokens | completion tokens | cost $ |",
                  "|---|---|---|---|---|---|---|---|"]
        lines += [f"| {u.role} | {u.endpoint} | {u.model} | {u.calls} | {u.cached_calls} | {u.prompt_tokens} | "
                  f"{u.completion_tokens} | {u.cost_usd:.4f} |" for u in board.usage]
    return "\n".join(lines) + "\n"


def _fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def _rate(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}%"
