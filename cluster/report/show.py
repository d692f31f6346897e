"""One run in the terminal: outcome, verdict with its attributions, and the interaction's steps."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.console import Group, RenderableType
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table

from evaluator import EvidenceError, Outcome, StagePaths, Verdict
from evaluator.evidence import BundleFile, EvidenceBundle, read_manifest


def run_panel(run_dir: Path, outcome: Outcome) -> RenderableType:
    """Everything recorded about ``outcome``'s run, from its stored stage outputs."""
    header = Table.grid(padding=(0, 2))
    header.add_column(style="bold")
    header.add_column()
    header.add_row("run", outcome.run_key)
    header.add_row("candidate × query", f"{outcome.candidate_id} × {outcome.query_id}")
    header.add_row("outcome", f"{outcome.status.value} ({outcome.reason.code.value}) after {outcome.attempts} "
                              f"attempt(s), {outcome.duration_s:.1f} s")
    if outcome.reason.detail:
        header.add_row("reason", escape(outcome.reason.detail[:400]))
    parts: list[RenderableType] = [header]
    bundle = StagePaths(run_dir).evidence(outcome.evidence_key) if outcome.evidence_key else None
    if bundle is not None:
        query = _json(bundle / BundleFile.QUERY) or {}
        header.add_row("brief", escape(str(query.get("brief", ""))))
        video = bundle / BundleFile.VIDEO
        header.add_row("video", str(video) if video.is_file() else "none")
        try:
            manifest = read_manifest(bundle)
        except EvidenceError as exc:
            manifest = None
            header.add_row("evidence", escape(str(exc)[:300]))
        if manifest is not None and manifest.incomplete is not None:
            cut = manifest.incomplete
            last = f"; last screenshot {cut.last_screenshot}" if cut.last_screenshot else ""
            header.add_row("evidence", f"[bold]incomplete[/]: the app's {cut.failure.value} during "
                                       f"{escape(cut.phase)} after {cut.steps} step(s){escape(last)}")
    if outcome.verdict_key:
        verdict = Verdict.model_validate_json(StagePaths(run_dir).verdict(outcome.verdict_key).read_text())
        header.add_row("scores", f"functional {verdict.functional:.1f} / 8, aesthetic {verdict.aesthetic:.1f} / 8")
        header.add_row("judge", escape(verdict.label))
        parts.append(_attributions(verdict))
    if bundle is not None:
        parts.append(_steps(bundle))
    return Panel(Group(*parts), title="evalgrid run", expand=False)


def _attributions(verdict: Verdict) -> Table:
    table = Table(title="failure attributions", title_justify="left")
    for column in ("dimension", "category", "severity", "−points", "what", "evidence"):
        table.add_column(column)
    for a in verdict.attributions:
        refs = "; ".join(
            ", ".join(x for x in (f"step {e.step}" if e.step is not None else "",
                                  f"video {e.video_time_s:.1f}s" if e.video_time_s is not None else "",
                                  e.file or "") if x)
            for e in a.evidence
        )
        table.add_row(a.dimension.value, a.category, a.severity.value, f"{a.deduction:.1f}",
                      escape(a.description), escape(refs))
    if not verdict.attributions:
        table.add_row("—", "no deduction", "", "", "", "")
    return table


def _steps(bundle: Path) -> RenderableType:
    """The interaction's steps, when the bundle was committed (a bundle the app cut short shows its steps so far)."""
    try:
        trace = EvidenceBundle(bundle, allow_incomplete=True).trace()
    except EvidenceError as exc:
        return f"interaction: {escape(str(exc)[:300])}"
    table = Table(title="interaction", title_justify="left")
    for column in ("step", "video", "action", "target", "result"):
        table.add_column(column)
    for step in trace:
        result = step.result
        detail = result.status + (f": {result.detail}" if result.detail else "")
        if result.errors:
            detail += f" [{len(result.errors)} error(s)]"
        table.add_row(str(step.step), f"{step.action_start_s:.1f}s", step.action.kind, escape(step.control[:50]),
                      escape(detail[:120]))
    return table


def _json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
