"""The static HTML report of a sweep: a leaderboard with plots, and one page per run with its evidence.

The site is plain files with relative links only (no external URL, no CDN), so it works opened from a
local folder (``file://``) as well as served from an object-store prefix. Run pages point at the
evidence bundles where they are (``run_dir/evidence/<key>/...``) by relative path; nothing is copied.

Everything that comes from data (candidate and query ids, briefs, model output, console text, judge
reasons) is untrusted and escaped with :func:`html.escape`; evidence files are linked only when they
exist inside their bundle. Plots are inline SVG drawn here, so the report needs no plotting library.
"""

from __future__ import annotations

import hashlib
import html
import json
import math
import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path, PurePosixPath
from string import Template
from typing import Any
from urllib.parse import quote

from pydantic import TypeAdapter, ValidationError

from cluster.calibration.calibrate import Calibration
from cluster.calibration.match import CalibrationMatch, find_calibration
from cluster.pairwise.summary import DimensionSummary, HumanComparison, PairwiseSummary, read_summaries
from cluster.reduce.records import (
    Agreement,
    CandidateSummary,
    Interval,
    Pairwise,
    Rating,
    Reduction,
    RunRow,
    SliceCell,
)
from cluster.repair.summary import LIFT_DIMENSIONS, DimensionLift, FixtureLift, RepairLiftSummary, read_lifts
from evaluator import EvidenceManifest, EvidenceRef, FailureAttribution, StagePaths, UxDimension, Verdict
from evaluator.agents import StepRecord
from evaluator.evidence import MANIFEST, PREVIEW_ROUNDS, BundleFile
from evaluator.preview import DEFAULT_CHECKS, PREVIEW_GUIDE

ASSET_FILES = ("style.css", "run.js")
"""Static assets copied to ``<out_dir>/assets``."""
SCORE_MAX = 8.0
"""Top of Cookie-Frame's scale."""
SLICE_ORDER = ("domain", "difficulty", "language_group", "kind", "leaf")
"""Slice dimensions in the order the heatmaps are shown (others follow alphabetically)."""
ERROR_CLASSES = ("uncaught", "error")
"""Console entry classes shown on run pages (the rest is noise)."""
COMPARE_COMMAND = "evalgrid compare RUN_DIR --judge heuristic"
"""What the report tells a user to run when a run directory has no pairwise judging."""
LIFT_COMMAND = ("evalgrid repair-lift RUN_DIR --judge ENDPOINT:MODEL --repairer ENDPOINT:MODEL "
                "--evaluator ENDPOINT:MODEL")
"""What the report tells a user to run when a run directory has no repair lift."""

_VALUE_ORDER = {
    "difficulty": ("easy", "medium", "hard"),
    "language_group": ("english", "chinese", "other"),
    "kind": ("static_presentation", "interactive_application"),
}
_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")
_LANG_TAG = re.compile(r"^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$")
_ACTIVE_SUFFIXES = (".html", ".htm", ".xhtml", ".svg", ".xml", ".js", ".mjs")
_IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp", ".gif")
_VIRIDIS = ((0.0, (68, 1, 84)), (0.25, (59, 82, 139)), (0.5, (33, 145, 140)), (0.75, (94, 201, 98)),
            (1.0, (253, 231, 37)))
_PALETTE = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
            "#9c755f", "#bab0ac")
_STEPS = TypeAdapter(list[StepRecord])
_TEXT_LIMIT = 2000
_UX_DIMENSIONS = frozenset(d.value for d in UxDimension)


# ------------------------------------------------------------------------------------ entry point


def write_report(run_dir: Path, reduction: Reduction, runs: list[RunRow], out_dir: Path) -> Path:
    """Write the report of ``run_dir`` into ``out_dir`` and return the path of its ``index.html``.

    ``reduction`` and ``runs`` are the reducer's output; evidence, verdicts, pairwise summaries
    (``pairwise/<judge>/summary.json``) and repair lifts (``repair-lift/<judge>/lift.json``) are read from
    ``run_dir``. Pages are ``index.html`` and ``runs/<run_key>.html``; assets go to ``assets/``.
    """
    run_dir = run_dir.resolve()
    out_dir = out_dir.resolve()
    (out_dir / "runs").mkdir(parents=True, exist_ok=True)
    (out_dir / "assets").mkdir(parents=True, exist_ok=True)
    for name in ASSET_FILES:
        _write(out_dir / "assets" / name, _asset(name))
    rank = {c.candidate_id: c.rank for c in reduction.candidates}
    ordered = sorted(runs, key=lambda r: (rank.get(r.candidate_id, 1 << 30), r.candidate_id, r.query_id, r.run_key))
    for row in ordered:
        page = out_dir / "runs" / run_page_name(row.run_key)
        _write(page, _run_page(run_dir, row, page.parent))
    index = out_dir / "index.html"
    _write(index, _index_page(reduction, ordered, find_calibration(run_dir), read_summaries(run_dir),
                              read_lifts(run_dir)))
    return index


def run_page_name(run_key: str) -> str:
    """File name of a run's page under ``runs/``: the run key when it is a safe name, else its hash."""
    if _SAFE_NAME.match(run_key) and not run_key.endswith("."):
        return f"{run_key}.html"
    return f"run-{hashlib.sha256(run_key.encode('utf-8')).hexdigest()[:24]}.html"


# --------------------------------------------------------------------------------------- helpers


def _e(value: object) -> str:
    """Escape for HTML text and attribute values."""
    return html.escape(str(value), quote=True)


def _asset(name: str) -> str:
    return resources.files("cluster.report").joinpath("assets", name).read_text(encoding="utf-8")


def _template(name: str) -> Template:
    return Template(_asset(name))


def _write(path: Path, text: str) -> None:
    """Write ``path`` so that readers see the old file or the new one, never half of it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def _url(target: Path, page_dir: Path) -> str:
    """Relative, percent-encoded, HTML-escaped URL of ``target`` seen from a page in ``page_dir``."""
    rel = PurePosixPath(Path(os.path.relpath(target, page_dir)).as_posix())
    return _e(quote(str(rel), safe="/"))


def _page(title: str, assets: str, body: str, scripts: Sequence[str] = ()) -> str:
    tags = "\n".join(f'<script src="{_e(assets)}/{_e(s)}"></script>' for s in scripts)
    return _template("page.html").substitute(title=_e(title), assets=_e(assets), body=body, scripts=tags)


def _num(value: float | None, digits: int = 2) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _ci(interval: Interval | None, digits: int = 2, bound_digits: int = 1) -> str:
    """``7.71 [7.4, 7.9]`` with the sample size as a tooltip."""
    if interval is None:
        return _NA
    return (f'<span class="ci" title="95% bootstrap interval, n={interval.n}">{interval.mean:.{digits}f} '
            f'<span class="bounds">[{interval.low:.{bound_digits}f}, {interval.high:.{bound_digits}f}]</span></span>')


def _clock(seconds: float) -> str:
    minutes = int(seconds // 60)
    return f"{minutes}:{seconds - 60 * minutes:05.2f}"


def _seek(seconds: float, label: str | None = None) -> str:
    """A button that seeks the run's video (wired by ``run.js``)."""
    text = label if label is not None else _clock(seconds)
    return (f'<button type="button" class="seek" data-seek="{seconds:.3f}" '
            f'title="show the video at {seconds:.3f} s">▶ {_e(text)}</button>')


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _is_heuristic(label: str) -> bool:
    return "heuristic" in label.lower()


def _judge_banner(labels: Sequence[str]) -> str:
    if not labels:
        return '<div class="judge-banner none"><strong>Judge:</strong> no verdict yet</div>'
    items = "".join(
        f'<li class="judge-label{" heuristic" if _is_heuristic(label) else ""}">{_e(label)}</li>' for label in labels)
    warn = ""
    if any(_is_heuristic(label) for label in labels):
        warn = ('<p class="judge-warning">Heuristic scores come from measured signals (console errors, dead '
                'controls, layout facts), not from a model or a person reading the app.</p>')
    return f'<div class="judge-banner"><strong>Judge</strong><ul>{items}</ul>{warn}</div>'


def _status_badge(status: str) -> str:
    return f'<span class="badge status-{_e(status.replace("_", "-"))}">{_e(status.replace("_", "-"))}</span>'


def _overall(row: RunRow) -> float | None:
    if row.functional is None or row.aesthetic is None:
        return None
    return (row.functional + row.aesthetic) / 2


def _table(table_id: str, caption: str, head: Sequence[str], rows: Iterable[str], empty: str) -> str:
    body = "".join(rows)
    if not body:
        return f'<p class="empty" id="{_e(table_id)}-empty">{_e(empty)}</p>'
    ths = "".join(f"<th>{h}</th>" for h in head)
    return (f'<div class="table-wrap"><table id="{_e(table_id)}"><caption>{caption}</caption>'
            f"<thead><tr>{ths}</tr></thead><tbody>{body}</tbody></table></div>")


# -------------------------------------------------------------------------------------- index page


def _index_page(reduction: Reduction, runs: Sequence[RunRow], calibration: CalibrationMatch,
                pairwise: Sequence[PairwiseSummary] = (), lifts: Sequence[RepairLiftSummary] = ()) -> str:
    cands = reduction.candidates
    body = _template("index-body.html").substitute(
        sweep=_e(reduction.sweep),
        judge_banner=_judge_banner(reduction.judge_labels),
        summary=_e(f"{len(cands)} candidates · {len(runs)} runs · pass threshold {reduction.pass_threshold:g} "
                   f"overall · intervals are 95% bootstrap intervals ({reduction.bootstrap_samples} resamples "
                   "of the queries)"),
        leaderboard=_exclusion_warning(reduction) + _leaderboard_table(reduction) + _recovery_table(reduction),
        calibration=_calibration_section(calibration),
        plot_overall=_plot_overall(cands, reduction.pass_threshold),
        heatmaps=_heatmaps(reduction),
        plot_failures=_plot_failures(cands),
        pairwise=_pairwise_table(reduction),
        ratings=_ratings_table(reduction),
        judges=_judges_section(reduction),
        pairwise_judging=_pairwise_judging_section(pairwise, reduction.ratings),
        repair_lift=_repair_lift_section(lifts),
        runs=_runs_table(runs),
    )
    return _page(f"evalgrid report — {reduction.sweep}", "assets", body)


def _leaderboard_table(reduction: Reduction) -> str:
    rows = []
    for c in reduction.candidates:
        access = '<span class="na">—</span>'
        if c.accessibility is not None:
            a = c.accessibility
            tip = (f"axe-core over {a.artifacts} artifacts: {a.mean_defects:.2f} defects per artifact, "
                   f"{a.clean_rate:.0f}% clean, {a.defects_per_100_elements:.2f} defects per 100 elements")
            access = f'<span title="{_e(tip)}">{a.score}</span>'
        rate = '<span class="na">—</span>' if c.pass_rate is None else f"{100 * c.pass_rate:.0f}%"
        rows.append(
            f'<tr data-candidate="{_e(c.candidate_id)}"><td class="num">{c.rank}</td>'
            f'<th scope="row" class="candidate">{_e(c.candidate_id)}</th>'
            f'<td class="num">{_ci(c.functional)}</td><td class="num">{_ci(c.aesthetic)}</td>'
            f'<td class="num overall">{_ci(c.overall)}</td><td class="num">{rate}</td>'
            f'<td class="num">{c.runs}</td><td class="num">{c.judged}</td><td class="num">{c.non_assessable}</td>'
            f'<td class="num">{c.hang}</td><td class="num">{c.crash}</td>'
            f'<td class="num">{c.infra_error}</td><td class="num">{c.timeout}</td>'
            f'<td class="num infra-rate">{_percent(c.infra_error_rate)}</td><td class="num">{access}</td></tr>')
    head = ["#", "candidate", "functional", "aesthetic", "overall", "pass rate", "runs", "judged",
            "non-assessable", "hang", "crash", "infra error", "timeout", "infra-error rate", "accessibility"]
    caption = ("Means on the 0–8 scale with 95% intervals. Non-assessable runs count as 0.0; an app's hang or "
               "crash is judged with functional 0.0 (aesthetic from the Static Perception before it). Only the "
               "machinery's failures (infra errors, machinery timeouts) are excluded and counted; the infra-error "
               f"rate is their share of the runs. Pass: overall ≥ {reduction.pass_threshold:g}.")
    return _table("leaderboard", _e(caption), head, rows, "No candidate has an outcome yet.")


def _recovery_table(reduction: Reduction) -> str:
    """Agentic candidates' use of the preview tool; nothing for a sweep without them."""
    if not reduction.recovery:
        return ""
    rows = []
    for r in reduction.recovery:
        reported = r.runs - r.never_called - r.first_unknown
        rows.append(
            f'<tr data-candidate="{_e(r.candidate_id)}"><th scope="row" class="candidate">{_e(r.candidate_id)}</th>'
            f'<td class="num">{r.runs}</td><td class="num">{r.never_called}</td>'
            f'<td class="num first-unknown">{r.first_unknown}</td>'
            f'<td class="num first-errors">{r.first_errors} of {reported} ({_percent(r.first_errors_rate)})</td>'
            f'<td class="num final-unknown">{r.final_unknown}</td>'
            f'<td class="num recovered">{r.recovered} of {r.first_errors - r.final_unknown}</td>'
            f'<td class="num recovery-rate">{_wilson(r.recovery_rate)}</td><td class="num">{_num(r.mean_rounds)}</td>'
            f'<td>{_e(r.base) if r.base else _NA}</td><td class="num gain">{_ci(r.gain) if r.gain else _NA}</td></tr>')
    head = ["candidate", "runs", "never called the tool", "first preview unknown", "first preview had errors",
            "of those, final unknown", "recovered", "recovery rate", "mean previews", "base (one turn)",
            "overall gain over it"]
    checks = ", ".join(check.replace("_", " ") for check in DEFAULT_CHECKS)
    caption = (f"Agentic candidates and the preview tool, which in this version of evalgrid looks for {checks} "
               f"(its default checks, explained to the model as {PREVIEW_GUIDE} says) and always reports an app it "
               "could not build, serve or see. First preview had errors: the share of the runs whose first round "
               "has a report. Recovery rate: of the runs whose first preview had errors and whose final answer's "
               "preview status is known, the share that previews clean, with its 95% Wilson score interval. "
               "Unknown statuses (a preview that timed out or broke, a call without files, a final answer that is "
               "no app) are counted apart and in no rate, as are runs that never called the tool. Gain: overall "
               "score minus the base's, averaged per query over its variants, with a 95% bootstrap interval over "
               "queries.")
    return _table("recovery", _e(caption), head, rows, "")


def _wilson(interval: Interval | None) -> str:
    """A recovery rate as ``67% [30%, 90%]``, its Wilson interval's ``n`` as a tooltip."""
    if interval is None:
        return _NA
    return (f'<span class="ci" title="95% Wilson score interval, n={interval.n}">{100 * interval.mean:.0f}% '
            f'<span class="bounds">[{100 * interval.low:.0f}%, {100 * interval.high:.0f}%]</span></span>')


_NA = '<span class="na">—</span>'


def _percent(value: float | None) -> str:
    return _NA if value is None else f"{100 * value:.1f}%"


def _exclusion_warning(reduction: Reduction) -> str:
    if not reduction.exclusion_warning:
        return ""
    return (f'<p class="exclusion-warning" id="exclusion-warning" role="alert"><strong>Warning:</strong> '
            f"{_e(reduction.exclusion_warning)}</p>")


def _calibration_section(match: CalibrationMatch) -> str:
    """The calibrations of this sweep's judge and agent beside the leaderboard, one table per suite (with its
    halves' measures where it has them), or a line saying there is none."""
    if not match.calibrations:
        return f'<p class="empty" id="calibration-none">{_e(match.note)}</p>'
    return "".join(_calibration_table(c, note, first=i == 0) for i, (c, note) in enumerate(match.calibrations))


def _calibration_table(c: Calibration, note: str, *, first: bool) -> str:
    rows = [("functional pairwise accuracy (twin strictly below its original)",
             _num(c.functional_pairwise_accuracy, 3)),
            ("AUC, working apps vs functional twins", _num(c.auc, 3)),
            ("aesthetic twin accuracy", _num(c.aesthetic_twin_accuracy, 3)),
            ("largest functional drift on aesthetic twins", _num(c.functional_drift_max, 2)),
            ("working apps", str(c.apps)),
            *((f"{half} half: functional pairwise accuracy / AUC / aesthetic twin accuracy",
               " / ".join((_num(g.functional_accuracy, 3), _num(g.auc, 3), _num(g.aesthetic_accuracy, 3))))
              for half, g in sorted(c.groups.items()) if "/" not in half),
            *((f"pairs left out: {reason}", str(count)) for reason, count in c.excluded.items())]
    body = "".join(f'<tr><th scope="row">{_e(name)}</th><td class="num">{value}</td></tr>' for name, value in rows)
    # the first table keeps the id pages and tests have always found it by
    table_id = "calibration" if first else f"calibration-{_e(c.suite)}-{_e(c.split)}"
    return (f'<div class="table-wrap"><table id="{table_id}" data-key="{_e(c.key)}" data-suite="{_e(c.suite)}">'
            f"<caption>{_e(note)}</caption><tbody>{body}</tbody></table></div>")


def _plot_overall(cands: Sequence[CandidateSummary], threshold: float) -> str:
    if not cands:
        return '<p class="empty">No candidate to plot.</p>'
    left, right, top, row_h, axis_h, plot_w = 170, 140, 12, 30, 34, 440
    width, height = left + plot_w + right, top + row_h * len(cands) + axis_h

    def x(v: float) -> float:
        return left + plot_w * min(max(v, 0.0), SCORE_MAX) / SCORE_MAX

    parts = [_svg_open("plot-overall", "plot", width, height,
                       "Overall score per candidate with its 95% bootstrap interval")]
    parts.append(_x_axis(x, top, top + row_h * len(cands), range(0, 9), "overall score (0–8)"))
    tx = x(threshold)
    parts.append(f'<line class="threshold" x1="{tx:.1f}" x2="{tx:.1f}" y1="{top}" '
                 f'y2="{top + row_h * len(cands)}" stroke="#b45309" stroke-dasharray="4 3"/>'
                 f'<text x="{tx + 3:.1f}" y="{top + 9}" font-size="10" fill="#b45309">pass {threshold:g}</text>')
    for i, c in enumerate(cands):
        cy = top + row_h * i + row_h / 2
        parts.append(f'<text x="{left - 8}" y="{cy + 4:.1f}" text-anchor="end" font-size="12">'
                     f"<title>{_e(c.candidate_id)}</title>{_e(_shorten(c.candidate_id, 24))}</text>")
        iv = c.overall
        if iv is None:
            parts.append(f'<text x="{left + 4}" y="{cy + 4:.1f}" font-size="11" fill="#6b7280">no scored run</text>')
            continue
        lo, hi, mid = x(iv.low), x(iv.high), x(iv.mean)
        parts.append(
            f'<g class="ci-row"><title>{_e(c.candidate_id)}: {iv.mean:.2f} [{iv.low:.2f}, {iv.high:.2f}], '
            f'n={iv.n}</title>'
            f'<line x1="{lo:.1f}" x2="{hi:.1f}" y1="{cy:.1f}" y2="{cy:.1f}" stroke="#1f2937" stroke-width="2"/>'
            f'<line x1="{lo:.1f}" x2="{lo:.1f}" y1="{cy - 6:.1f}" y2="{cy + 6:.1f}" stroke="#1f2937" stroke-width="2"/>'
            f'<line x1="{hi:.1f}" x2="{hi:.1f}" y1="{cy - 6:.1f}" y2="{cy + 6:.1f}" stroke="#1f2937" stroke-width="2"/>'
            f'<circle cx="{mid:.1f}" cy="{cy:.1f}" r="5.5" fill="#2563eb" stroke="#fff" stroke-width="1.5"/></g>'
            f'<text x="{left + plot_w + 10}" y="{cy + 4:.1f}" font-size="12">{iv.mean:.2f} '
            f'[{iv.low:.1f}, {iv.high:.1f}]</text>')
    parts.append("</svg>")
    return "".join(parts)


def _svg_open(svg_id: str | None, cls: str, width: float, height: float, title: str, extra: str = "") -> str:
    ident = f' id="{_e(svg_id)}"' if svg_id else ""
    return (f'<svg{ident}{extra} class="{_e(cls)}" xmlns="http://www.w3.org/2000/svg" role="img" width="{width:.0f}" '
            f'height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}" font-family="system-ui, sans-serif">'
            f"<title>{_e(title)}</title>")


def _x_axis(x: Callable[[float], float], y_top: float, y_bottom: float, ticks: Iterable[float], label: str) -> str:
    parts = []
    for t in ticks:
        px = x(t)
        parts.append(f'<line x1="{px:.1f}" x2="{px:.1f}" y1="{y_top}" y2="{y_bottom}" stroke="#e5e7eb"/>'
                     f'<text x="{px:.1f}" y="{y_bottom + 14}" text-anchor="middle" font-size="10" '
                     f'fill="#4b5563">{t:g}</text>')
    mid = (x(0) + x(SCORE_MAX)) / 2 if label else 0
    parts.append(f'<line x1="{x(0):.1f}" x2="{x(0):.1f}" y1="{y_top}" y2="{y_bottom}" stroke="#9ca3af"/>')
    if label:
        parts.append(f'<text x="{mid:.1f}" y="{y_bottom + 29}" text-anchor="middle" font-size="11" '
                     f'fill="#374151">{_e(label)}</text>')
    return "".join(parts)


def _colour(value: float) -> tuple[str, str]:
    """Fill (viridis over 0-8) and a readable text colour for a score."""
    t = min(max(value / SCORE_MAX, 0.0), 1.0) if math.isfinite(value) else 0.0
    (t0, c0), (t1, c1) = next((lo, hi) for lo, hi in zip(_VIRIDIS, _VIRIDIS[1:], strict=False) if t <= hi[0])
    f = (t - t0) / (t1 - t0)
    r, g, b = (round(a + (z - a) * f) for a, z in zip(c0, c1, strict=True))
    luminance = (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255
    return f"#{r:02x}{g:02x}{b:02x}", ("#111827" if luminance > 0.45 else "#ffffff")


def _slice_dimensions(cells: Sequence[SliceCell]) -> list[str]:
    present = {c.slice for c in cells}
    return [d for d in SLICE_ORDER if d in present] + sorted(present - set(SLICE_ORDER))


def _slice_values(dimension: str, cells: Sequence[SliceCell]) -> list[str]:
    values = {c.value for c in cells if c.slice == dimension}
    order = _VALUE_ORDER.get(dimension, ())
    return [v for v in order if v in values] + sorted(values - set(order))


def _heatmaps(reduction: Reduction) -> str:
    if not reduction.slices:
        return '<p class="empty">No slice has a scored run.</p>'
    candidates = [c.candidate_id for c in reduction.candidates]
    candidates += sorted({c.candidate_id for c in reduction.slices} - set(candidates))
    figures = []
    for dimension in _slice_dimensions(reduction.slices):
        svg = _heatmap(dimension, candidates, reduction.slices)
        figures.append(f'<figure class="heatmap-figure"><figcaption>by {_e(dimension.replace("_", " "))}'
                       f'</figcaption><div class="scroll">{svg}</div></figure>')
    return "".join(figures)


def _heatmap(dimension: str, candidates: Sequence[str], cells: Sequence[SliceCell]) -> str:
    values = _slice_values(dimension, cells)
    by_key = {(c.candidate_id, c.value): c for c in cells if c.slice == dimension}
    cell_w, cell_h, left = 66, 28, 170
    longest = max((len(_shorten(v, 28)) for v in values), default=4)
    top = int(16 + min(longest, 28) * 6.2 * 0.62)
    width = max(left + cell_w * len(values) + 20, 380)
    height = top + cell_h * len(candidates) + 58
    parts = [_svg_open(None, "plot heatmap", width, height,
                       f"Mean overall score per candidate and {dimension.replace('_', ' ')} (0–8)",
                       extra=f' data-slice="{_e(dimension)}"')]
    for j, value in enumerate(values):
        cx = left + cell_w * j + cell_w / 2
        parts.append(f'<text transform="translate({cx:.1f},{top - 6}) rotate(-38)" font-size="11" fill="#374151">'
                     f"<title>{_e(value)}</title>{_e(_shorten(value, 28))}</text>")
    for i, candidate in enumerate(candidates):
        y = top + cell_h * i
        parts.append(f'<text x="{left - 8}" y="{y + cell_h / 2 + 4:.1f}" text-anchor="end" font-size="12">'
                     f"<title>{_e(candidate)}</title>{_e(_shorten(candidate, 24))}</text>")
        for j, value in enumerate(values):
            x = left + cell_w * j
            cell = by_key.get((candidate, value))
            if cell is None:
                parts.append(f'<g class="cell empty"><title>{_e(candidate)} · {_e(value)}: no scored run</title>'
                             f'<rect x="{x}" y="{y}" width="{cell_w - 2}" height="{cell_h - 2}" fill="#f3f4f6"/>'
                             f'<text x="{x + cell_w / 2 - 1:.1f}" y="{y + cell_h / 2 + 3:.1f}" text-anchor="middle" '
                             f'font-size="11" fill="#9ca3af">—</text></g>')
                continue
            fill, ink = _colour(cell.overall)
            parts.append(
                f'<g class="cell"><title>{_e(candidate)} · {_e(value)}: overall {cell.overall:.2f} (functional '
                f"{cell.functional:.2f}, aesthetic {cell.aesthetic:.2f}), n={cell.n}</title>"
                f'<rect x="{x}" y="{y}" width="{cell_w - 2}" height="{cell_h - 2}" fill="{fill}"/>'
                f'<text x="{x + cell_w / 2 - 1:.1f}" y="{y + cell_h / 2 + 3:.1f}" text-anchor="middle" '
                f'font-size="11" fill="{ink}">{cell.overall:.1f}</text></g>')
    parts.append(_colour_legend(left, top + cell_h * len(candidates) + 18, f"legend-{dimension}"))
    parts.append("</svg>")
    return "".join(parts)


def _colour_legend(x: float, y: float, gradient_id: str) -> str:
    gid = "g" + hashlib.sha256(gradient_id.encode("utf-8")).hexdigest()[:10]
    stops = "".join(f'<stop offset="{t:.2f}" stop-color="{_colour(t * SCORE_MAX)[0]}"/>' for t, _ in _VIRIDIS)
    width = 200
    ticks = "".join(f'<text x="{x + width * v / SCORE_MAX:.1f}" y="{y + 24}" text-anchor="middle" font-size="10" '
                    f'fill="#4b5563">{v}</text>' for v in (0, 2, 4, 6, 8))
    return (f'<defs><linearGradient id="{gid}">{stops}</linearGradient></defs>'
            f'<rect x="{x}" y="{y}" width="{width}" height="10" fill="url(#{gid})"/>{ticks}'
            f'<text x="{x + width + 8}" y="{y + 9}" font-size="10" fill="#4b5563">mean overall score</text>')


def _plot_failures(cands: Sequence[CandidateSummary]) -> str:
    totals: dict[str, float] = {}
    for c in cands:
        for category, cost in c.failure_costs.items():
            totals[category] = totals.get(category, 0.0) + cost
    categories = [k for k, v in sorted(totals.items(), key=lambda kv: (-kv[1], kv[0])) if v > 0]
    if not cands or not categories:
        return '<p class="empty" id="plot-failures-empty">No deduction recorded.</p>'
    colour = {k: _PALETTE[i % len(_PALETTE)] for i, k in enumerate(categories)}
    left, right, top, row_h, plot_w, item_w = 170, 70, 12, 30, 440, 200
    largest = max(sum(max(v, 0.0) for v in c.failure_costs.values()) for c in cands)
    scale_max = max(1.0, math.ceil(largest * 2) / 2)
    per_row = max(1, (left + plot_w + right - left) // item_w)
    legend_rows = math.ceil(len(categories) / per_row)
    width = left + plot_w + right
    axis_bottom = top + row_h * len(cands)
    height = axis_bottom + 40 + 18 * legend_rows

    def x(v: float) -> float:
        return left + plot_w * v / scale_max

    step = 0.5 if scale_max <= 3 else 1.0 if scale_max <= 8 else math.ceil(scale_max / 8)
    ticks = [step * i for i in range(int(scale_max / step) + 1)]
    parts = [_svg_open("plot-failures", "plot", width, height,
                       "Points lost per scored run, by failure category and candidate")]
    parts.append(_x_axis(x, top, axis_bottom, ticks, ""))
    for i, c in enumerate(cands):
        y = top + row_h * i
        parts.append(f'<text x="{left - 8}" y="{y + row_h / 2 + 4:.1f}" text-anchor="end" font-size="12">'
                     f"<title>{_e(c.candidate_id)}</title>{_e(_shorten(c.candidate_id, 24))}</text>")
        acc = 0.0
        for category in categories:
            cost = c.failure_costs.get(category, 0.0)
            if cost <= 0:
                continue
            parts.append(f'<rect class="segment" x="{x(acc):.1f}" y="{y + 5}" width="{x(acc + cost) - x(acc):.1f}" '
                         f'height="{row_h - 10}" fill="{colour[category]}"><title>{_e(c.candidate_id)} · '
                         f"{_e(category)}: {cost:.2f} points per scored run</title></rect>")
            acc += cost
        parts.append(f'<text x="{x(acc) + 6:.1f}" y="{y + row_h / 2 + 4:.1f}" font-size="11" fill="#374151">'
                     f"−{acc:.2f}</text>")
    parts.append(f'<text x="{left + plot_w / 2:.1f}" y="{axis_bottom + 29}" text-anchor="middle" font-size="11" '
                 f'fill="#374151">points lost per scored run (functional + aesthetic)</text>')
    for k, category in enumerate(categories):
        lx = left + item_w * (k % per_row)
        ly = axis_bottom + 40 + 18 * (k // per_row)
        parts.append(f'<rect x="{lx}" y="{ly}" width="11" height="11" fill="{colour[category]}"/>'
                     f'<text x="{lx + 16}" y="{ly + 10}" font-size="11"><title>{_e(category)}</title>'
                     f"{_e(_shorten(category, 28))}</text>")
    parts.append("</svg>")
    return "".join(parts)


def _both_ways(items: Iterable[Pairwise]) -> dict[tuple[str, str], Pairwise]:
    """Head-to-head records keyed both ways: ``(a, b)`` as given and ``(b, a)`` mirrored."""
    pairs: dict[tuple[str, str], Pairwise] = {}
    for p in items:
        pairs[(p.a, p.b)] = p
    for p in list(pairs.values()):
        if (p.b, p.a) not in pairs:
            n = p.wins + p.losses + p.ties
            pairs[(p.b, p.a)] = Pairwise(a=p.b, b=p.a, wins=p.losses, losses=p.wins, ties=p.ties,
                                         win_rate=(1.0 - p.win_rate) if n else 0.0)
    return pairs


def _matrix_rows(names: Sequence[str], pairs: dict[tuple[str, str], Pairwise], unit: str) -> list[str]:
    """Rows of a row-vs-column win-rate grid; ``unit`` names what was counted (queries, votes)."""
    rows = []
    for a in names:
        cells = [f'<th scope="row">{_e(a)}</th>']
        for b in names:
            pair = pairs.get((a, b))
            if a == b or pair is None:
                cells.append('<td class="na">—</td>')
                continue
            n = pair.wins + pair.losses + pair.ties
            cls = "win" if pair.win_rate > 0.55 else "loss" if pair.win_rate < 0.45 else "even"
            cells.append(f'<td class="num {cls}" title="{_e(a)} vs {_e(b)}: {pair.wins} wins, {pair.losses} '
                         f'losses, {pair.ties} ties over {n} {_e(unit)}">{100 * pair.win_rate:.0f}%'
                         f'<span class="wlt">{pair.wins}–{pair.losses}–{pair.ties}</span></td>')
        rows.append(f"<tr>{''.join(cells)}</tr>")
    return rows


def _pairwise_table(reduction: Reduction) -> str:
    pairs = _both_ways(reduction.pairwise)
    if not pairs:
        return '<p class="empty" id="pairwise-empty">No pair of candidates was scored on the same query.</p>'
    names = [c.candidate_id for c in reduction.candidates]
    names += sorted({a for a, _ in pairs} - set(names))
    head = ["row vs column"] + [_e(n) for n in names]
    caption = "Win rate of the row candidate over the column candidate on the queries both were scored on " \
              "(wins + ties/2); wins–losses–ties below."
    return _table("pairwise", _e(caption), head, _matrix_rows(names, pairs, "queries"), "")


def _ratings_table(reduction: Reduction) -> str:
    rows = [f'<tr><td class="num">{i}</td><th scope="row">{_e(r.candidate_id)}</th>'
            f'<td class="num">{r.elo:.0f} <span class="bounds">[{r.low:.0f}, {r.high:.0f}]</span></td></tr>'
            for i, r in enumerate(reduction.ratings, start=1)]
    caption = "Bradley–Terry ratings on the Elo scale (mean 1000) with 95% bootstrap intervals."
    return _table("ratings", _e(caption), ["#", "candidate", "rating [95% interval]"], rows,
                  "No rating: fewer than two candidates were compared.")


def _agreement_rows(items: Sequence[Agreement]) -> list[str]:
    return [f"<tr><td>{_e(a.rater_a)}</td><td>{_e(a.rater_b)}</td><td>{_e(a.dimension)}</td>"
            f'<td class="num">{a.n}</td><td class="num">{_num(a.kappa)}</td><td class="num">{_num(a.pearson)}</td>'
            f'<td class="num">{_num(a.spearman)}</td><td class="num">{_num(a.kendall)}</td></tr>' for a in items]


def _judges_section(reduction: Reduction) -> str:
    stats = [f"<tr><td>{_e(j.judge)}</td><td>{_e(j.dimension)}</td><td class=\"num\">{j.n}</td>"
             f'<td class="num">{j.mean:.2f}</td><td class="num">{j.variance:.2f}</td></tr>' for j in reduction.judges]
    parts = [_table("judges", "Scores per judge.", ["judge", "dimension", "verdicts", "mean", "variance"], stats,
                    "No verdict yet.")]
    head = ["rater A", "rater B", "dimension", "n", "weighted κ", "Pearson", "Spearman", "Kendall"]
    if reduction.judge_agreement:
        parts.append(_table("judge-agreement", "Agreement between judges (quadratic-weighted Cohen's κ).", head,
                            _agreement_rows(reduction.judge_agreement), ""))
    if reduction.human_agreement:
        parts.append(_table("human-agreement", "Agreement between each judge and human ratings.", head,
                            _agreement_rows(reduction.human_agreement), ""))
    return "".join(parts)


def _runs_table(runs: Sequence[RunRow]) -> str:
    rows = []
    for r in runs:
        href = _e("runs/" + quote(run_page_name(r.run_key)))
        reason = "" if r.status == "judged" else f"{r.reason_code}: {r.reason_detail}"
        rows.append(
            f'<tr data-run="{_e(r.run_key)}" data-status="{_e(r.status)}"><td>{_e(r.candidate_id)}</td>'
            f'<td><a href="{href}" title="{_e(_shorten(r.brief, 500))}">{_e(r.query_id)}</a></td>'
            f"<td>{_e(r.domain)}</td><td>{_e(r.difficulty)}</td><td>{_e(r.language)}</td>"
            f"<td>{_status_badge(r.status)}</td><td class=\"num\">{_num(r.functional, 1)}</td>"
            f'<td class="num">{_num(r.aesthetic, 1)}</td><td class="num">{_num(_overall(r), 2)}</td>'
            f'<td class="reason">{_e(_shorten(reason, 160))}</td></tr>')
    head = ["candidate", "query", "domain", "difficulty", "language", "status", "functional", "aesthetic",
            "overall", "reason"]
    return _table("runs", "Every run; the query links to the run's page with its evidence.", head, rows,
                  "No run has an outcome yet.")


# -------------------------------------------------------------------- pairwise judging, repair lift


def _class_table(cls: str, caption: str, head: Sequence[str], rows: Iterable[str]) -> str:
    """A table known by its class, as a page shows one per judge; ``caption`` and ``head`` are HTML."""
    ths = "".join(f'<th scope="col">{h}</th>' for h in head)
    thead = f"<thead><tr>{ths}</tr></thead>" if head else ""
    return (f'<div class="table-wrap"><table class="{_e(cls)}"><caption>{caption}</caption>'
            f"{thead}<tbody>{''.join(rows)}</tbody></table></div>")


def _empty_with_command(element_id: str, what: str, command: str) -> str:
    return (f'<p class="empty" id="{_e(element_id)}">{_e(what)} Make it with <code class="command">{_e(command)}'
            "</code>.</p>")


def _elo(rating: Rating | None) -> str:
    if rating is None:
        return '<span class="na">—</span>'
    return f'{rating.elo:.0f} <span class="bounds">[{rating.low:.0f}, {rating.high:.0f}]</span>'


def _summary_dimension(summary: PairwiseSummary, name: str) -> DimensionSummary | None:
    return next((d for d in summary.dimensions if d.dimension == name), None)


def _pairwise_judging_section(summaries: Sequence[PairwiseSummary], absolute: Sequence[Rating]) -> str:
    """One block per pairwise judge (``pairwise/<judge>/summary.json``), or the command that makes one."""
    if not summaries:
        return _empty_with_command("pairwise-judging-empty", "No pairwise judging in this run directory.",
                                   COMPARE_COMMAND)
    return "".join(_pairwise_judge(s, absolute) for s in summaries)


def _pairwise_judge(summary: PairwiseSummary, absolute: Sequence[Rating]) -> str:
    overall = _summary_dimension(summary, "overall")
    known = " › ".join(summary.known_order)
    meta = (f"selection <code>{_e(summary.selection)}</code> · {summary.pairs} pairs, each judged in both orders · "
            f"{len(summary.candidates)} candidates · known order (best first): "
            f"{_e(known) if known else 'none'} · judge version <code>{_e(summary.judge_version)}</code>")
    cls = " heuristic" if _is_heuristic(summary.judge) else ""
    ratings = _pairwise_ratings(overall.ratings if overall else [], absolute, summary.human)
    matrix = _judge_matrix(overall.head_to_head if overall else [], summary.candidates, "pairwise-matrix", "pairs")
    parts = [f'<h3 class="pairwise-judge-label{cls}">{_e(summary.judge)}</h3>',
             f'<p class="hint pairwise-meta">{meta}</p>',
             _side_by_side(("Position consistency", _position_table(summary.dimensions)),
                           ("Order effects", _order_table(summary.dimensions))),
             _side_by_side(("Bradley–Terry ratings, pairwise beside absolute", ratings),
                           ("Human votes", _human_votes(summary.human))),
             _tau_line(summary),
             _side_by_side(("Head to head (overall)", matrix),
                           ("Head to head, human votes", _human_matrix(summary.human, summary.candidates))),
             _pairwise_counts(summary)]
    return f'<div class="pairwise-judge" data-judge="{_e(summary.judge)}">{"".join(parts)}</div>'


def _side_by_side(*blocks: tuple[str, str]) -> str:
    """Titled blocks in a row that wraps on a narrow screen; a block with no content is left out."""
    shown = "".join(f"<div><h4>{_e(title)}</h4>{content}</div>" for title, content in blocks if content)
    return f'<div class="side-by-side">{shown}</div>'


def _ordered_dimensions(dimensions: Sequence[DimensionSummary]) -> list[DimensionSummary]:
    order = {"functional": 0, "aesthetic": 1, "overall": 2}
    return sorted(dimensions, key=lambda d: order.get(d.dimension, 3))


def _position_table(dimensions: Sequence[DimensionSummary]) -> str:
    if all(d.known is None for d in dimensions):
        return ('<p class="empty position-none">There are no pairs with a known better app, so position '
                "consistency (FA, SA, AA, CA) is not measured; the order effects below need no known order.</p>")
    rows = []
    for d in _ordered_dimensions(dimensions):
        k = d.known
        head = f'<tr data-dimension="{_e(d.dimension)}"><th scope="row">{_e(d.dimension)}</th>'
        if k is None:
            rows.append(f'{head}<td class="na" colspan="5">no pairs with a known better app</td></tr>')
            continue
        cells = "".join(f'<td class="num {name}">{_percent(v)}</td>'
                        for name, v in (("fa", k.fa), ("sa", k.sa), ("aa", k.aa), ("ca", k.ca)))
        rows.append(f'{head}<td class="num pairs">{k.pairs}</td>{cells}</tr>')
    caption = ("On pairs whose better app is known, each judged in both orders: FA is the accuracy with the better "
               "app shown first, SA with it shown second, AA their mean, CA the better app chosen in both orders "
               "(a tie or a dropped choice is not correct). CA by chance: 25 %.")
    return _class_table("position-consistency", _e(caption), ["dimension", "pairs", "FA", "SA", "AA", "CA"], rows)


def _order_table(dimensions: Sequence[DimensionSummary]) -> str:
    rows = [f'<tr data-dimension="{_e(d.dimension)}"><th scope="row">{_e(d.dimension)}</th>'
            f'<td class="num pairs">{d.unknown.pairs}</td>'
            f'<td class="num consistency">{_percent(d.unknown.consistency)}</td>'
            f'<td class="num first-position">{_percent(d.unknown.first_position)}</td></tr>'
            for d in _ordered_dimensions(dimensions)]
    caption = ("On pairs with no known better app: consistency is how often both orders chose the same app (or "
               "both tied); first position is the share of decided verdicts that chose the app shown first "
               "(50% is unbiased).")
    return _class_table("order-effects", _e(caption), ["dimension", "pairs", "consistency", "first position"], rows)


def _pairwise_ratings(judged: Sequence[Rating], absolute: Sequence[Rating], human: HumanComparison | None) -> str:
    """The judge's pairwise Bradley-Terry ratings beside the leaderboard's (and the human votes')."""
    mine = {r.candidate_id: r for r in judged}
    theirs = {r.candidate_id: r for r in absolute}
    people = {r.candidate_id: r for r in human.ratings} if human is not None else {}
    names = list(dict.fromkeys([*mine, *theirs, *people]))
    if not names:
        return '<p class="empty pairwise-ratings-none">No rating: fewer than two candidates were compared.</p>'
    rows = []
    for name in names:
        extra = f'<td class="num human-elo">{_elo(people.get(name))}</td>' if human is not None else ""
        rows.append(f'<tr data-candidate="{_e(name)}"><th scope="row">{_e(name)}</th>'
                    f'<td class="num pairwise-elo">{_elo(mine.get(name))}</td>'
                    f'<td class="num absolute-elo">{_elo(theirs.get(name))}</td>{extra}</tr>')
    head = ["candidate", "pairwise Elo [95% interval]", "absolute Elo [95% interval]"]
    if human is not None:
        head.append("human votes Elo [95% interval]")
    caption = ("Bradley–Terry ratings on the Elo scale (mean 1000), overall: from this judge's pairs (an "
               "order-inconsistent pair counts as a tie), and from the absolute scores of the leaderboard.")
    return _class_table("pairwise-ratings", _e(caption), head, rows)


def _human_votes(human: HumanComparison | None) -> str:
    if human is None:
        return ""
    rows = [("votes read", str(human.votes)),
            ("votes on a pair this judge compared in both orders", str(human.matched)),
            ("agreement: the judge's overall choice equals the human's", _percent(human.agreement))]
    body = [f'<tr><th scope="row">{_e(name)}</th><td class="num">{value}</td></tr>' for name, value in rows]
    return _class_table("human-votes", "Imported human votes (Arena-style) beside this judge.", [], body)


def _judge_matrix(head_to_head: Sequence[Pairwise], candidates: Sequence[str], cls: str, unit: str) -> str:
    pairs = _both_ways(head_to_head)
    if not pairs:
        return f'<p class="empty {_e(cls)}-none">No pair of candidates was compared.</p>'
    met = {a for a, _ in pairs}
    names = [c for c in candidates if c in met] + sorted(met - set(candidates))
    caption = (f"Win rate of the row candidate over the column candidate over the {unit} compared (wins + ties/2; "
               "an order-inconsistent pair is a tie); wins–losses–ties below.")
    head = ["row vs column"] + [_e(n) for n in names]
    return _class_table(cls, _e(caption), head, _matrix_rows(names, pairs, unit))


def _human_matrix(human: HumanComparison | None, candidates: Sequence[str]) -> str:
    if human is None or not human.head_to_head:
        return ""
    return _judge_matrix(human.head_to_head, candidates, "human-matrix", "votes")


def _tau_line(summary: PairwiseSummary) -> str:
    taus = " · ".join(f'{_e(d.dimension)} <strong class="tau-{_e(d.dimension)}">{_num(d.kendall_tau)}</strong>'
                      for d in _ordered_dimensions(summary.dimensions))
    return (f'<p class="kendall-tau">Kendall τ of the pairwise ratings against the absolute ranking: {taus} '
            f'<span class="hint">({_e(summary.tau_note)})</span></p>')


def _pairwise_counts(summary: PairwiseSummary) -> str:
    skipped = ", ".join(f"{_e(reason)}: {n}" for reason, n in sorted(summary.skipped.items())) or "none"
    failed = ""
    if summary.failed:
        items = "".join(f"<li>{_e(_shorten(f, 300))}</li>" for f in summary.failed[:50])
        more = f"<li>… and {len(summary.failed) - 50} more</li>" if len(summary.failed) > 50 else ""
        failed = f"<details><summary>why</summary><ul>{items}{more}</ul></details>"
    return (f'<ul class="pairwise-counts"><li class="skipped">pairs skipped: {skipped}</li>'
            f'<li class="dropped">choices dropped for want of evidence: {summary.dropped_choices}</li>'
            f'<li class="failed">comparisons failed: {len(summary.failed)}{failed}</li></ul>')


def _signed(value: float, digits: int = 2) -> str:
    """``+0.75``, ``−0.25`` or ``±0.00``: the sign is in the text, not only in the colour."""
    if round(value, digits) == 0:
        return f"±{0:.{digits}f}"
    return f"{'+' if value > 0 else '−'}{abs(value):.{digits}f}"


def _lift_class(value: float, digits: int = 2) -> str:
    return "neutral" if round(value, digits) == 0 else "positive" if value > 0 else "negative"


def _dimension_label(dimension: str) -> str:
    return dimension.replace("_", " ")


def _repair_lift_section(lifts: Sequence[RepairLiftSummary]) -> str:
    """One block per measured judge (``repair-lift/<judge>/lift.json``), or the command that makes one."""
    if not lifts:
        return _empty_with_command("repair-lift-empty", "No repair lift measured in this run directory.",
                                   LIFT_COMMAND)
    return _lift_comparison(lifts) + "".join(_repair_lift(s) for s in lifts)


def _ux_mean_lift(summary: RepairLiftSummary) -> float | None:
    """The mean of the lifts on the UX dimensions (not functional and aesthetic)."""
    ux = [d.lift.mean for d in summary.dimensions if d.dimension in _UX_DIMENSIONS]
    return sum(ux) / len(ux) if ux else None


def _lift_comparison(lifts: Sequence[RepairLiftSummary]) -> str:
    scored = sorted(((m, s.judge) for s in lifts if (m := _ux_mean_lift(s)) is not None), key=lambda t: -t[0])
    if len(scored) < 2:
        return ""
    (best, judge), rest = scored[0], scored[1:]
    others = ", ".join(f"{_e(j)} ({_signed(m)})" for m, j in rest)
    verdict = (f"Largest mean lift on the UX dimensions: <strong>{_e(judge)}</strong> ({_signed(best)})"
               if round(best, 2) > round(rest[0][0], 2) else
               f"No single largest mean lift on the UX dimensions: {_e(judge)} ({_signed(best)}) ties")
    return (f'<p class="lift-comparison" id="lift-comparison">{verdict}; then {others}. Each is the mean of the '
            "judge's lifts over the UX dimensions, with the same repairer and evaluator.</p>")


def _repair_lift(summary: RepairLiftSummary) -> str:
    skipped = ", ".join(f"{_e(reason)}: {n}" for reason, n in sorted(summary.skipped.items())) or "none"
    facts = [("repairer", _e(summary.repairer)), ("evaluator (UX dimensions)", _e(summary.evaluator)),
             ("absolute judge (functional, aesthetic)", _e(summary.absolute_judge)),
             ("fixtures repaired", str(summary.fixtures)),
             ("findings dropped for want of evidence", str(summary.dropped_findings)),
             ("fixtures skipped", skipped), ("judge version", f"<code>{_e(summary.judge_version)}</code>")]
    meta = "".join(f"<dt>{_e(k)}</dt><dd>{v}</dd>" for k, v in facts)
    cls = " heuristic" if _is_heuristic(summary.judge) else ""
    return (f'<div class="repair-lift" data-judge="{_e(summary.judge)}">'
            f'<h3 class="repair-lift-label{cls}">{_e(summary.judge)}</h3><dl class="meta">{meta}</dl>'
            f"{_lift_dimensions(summary.dimensions)}{_lift_fixtures(summary.per_fixture)}</div>")


def _mean_cell(iv: Interval) -> str:
    return f'<td class="num">{iv.mean:.2f} <span class="bounds">[{iv.low:.2f}, {iv.high:.2f}]</span></td>'


def _lift_dimensions(dimensions: Sequence[DimensionLift]) -> str:
    if not dimensions:
        return '<p class="empty lift-dimensions-none">No fixture was scored both before and after repair.</p>'
    rows = []
    for d in dimensions:
        kind = "ux" if d.dimension in _UX_DIMENSIONS else "score"
        lift = d.lift
        rows.append(f'<tr data-dimension="{_e(d.dimension)}" class="{kind}"><th scope="row">'
                    f'{_e(_dimension_label(d.dimension))}</th><td class="num">{_e(d.scale)}</td>'
                    f'<td class="num">{d.fixtures}</td>{_mean_cell(d.original)}{_mean_cell(d.repaired)}'
                    f'<td class="num lift {_lift_class(lift.mean)}">{_signed(lift.mean)} <span class="bounds">'
                    f"[{_signed(lift.low)}, {_signed(lift.high)}]</span></td></tr>")
    caption = ("Mean scores of the original and the repaired apps and the lift (repaired minus original, paired "
               "per fixture), with 95% bootstrap intervals over fixtures. UX dimensions are on 1–5, functional "
               "and aesthetic on 0–8.")
    head = ["dimension", "scale", "fixtures", "original", "repaired", "lift"]
    return _class_table("lift-dimensions", _e(caption), head, rows)


def _abbreviation(dimension: str) -> str:
    words = dimension.split("_")
    return "".join(w[0] for w in words).upper() if len(words) > 1 else dimension[:4]


def _fixture_lift(lift: dict[str, float]) -> str:
    order = [d for d in LIFT_DIMENSIONS if d in lift] + sorted(set(lift) - set(LIFT_DIMENSIONS))
    items = "".join(f'<span class="lift-item"><abbr title="{_e(_dimension_label(d))}">{_e(_abbreviation(d))}</abbr> '
                    f'<span class="lift {_lift_class(lift[d], 1)}">{_signed(lift[d], 1)}</span></span>' for d in order)
    return f'<div class="lift-list">{items}</div>'


def _lift_fixtures(fixtures: Sequence[FixtureLift]) -> str:
    if not fixtures:
        return '<p class="empty lift-fixtures-none">No fixture.</p>'
    rows = []
    for f in fixtures:
        if f.lift is not None:
            cell = _fixture_lift(f.lift)
        else:
            cell = f'<span class="detail">{_e(_shorten(f.detail or f.status.replace("_", " "), 300))}</span>'
        rows.append(f'<tr data-query="{_e(f.query_id)}" data-status="{_e(f.status)}"><th scope="row">'
                    f"{_e(f.query_id)}</th><td>{_e(f.candidate)}</td><td>{_status_badge(f.status)}</td>"
                    f'<td class="num">{f.findings}</td><td class="fixture-lift">{cell}</td></tr>')
    legend = ", ".join(f"{_abbreviation(d)} {_dimension_label(d)}" for d in LIFT_DIMENSIONS)
    caption = f"Per fixture: the lift per dimension, or why there is no repaired score. {legend}."
    return _class_table("lift-fixtures", _e(caption), ["query", "candidate", "status", "findings", "lift"], rows)


# ---------------------------------------------------------------------------------------- run page


@dataclass(frozen=True)
class _Bundle:
    """An evidence bundle seen from a run page: only files that exist inside it are linked."""

    root: Path
    page_dir: Path

    def path(self, rel: str) -> Path | None:
        """The bundle file ``rel`` when it is a plain relative path to an existing file inside the bundle."""
        if not rel or "\\" in rel or "\x00" in rel:
            return None
        pure = PurePosixPath(rel)
        if pure.is_absolute() or ".." in pure.parts:
            return None
        target = (self.root / pure).resolve()
        if not target.is_relative_to(self.root) or not target.is_file():
            return None
        return target

    def url(self, rel: str) -> str | None:
        """Relative URL of bundle file ``rel`` from the page, or ``None`` when it is not there."""
        target = self.path(rel)
        return None if target is None else _url(target, self.page_dir)

    def link(self, rel: str, text: str | None = None) -> str:
        """A link to bundle file ``rel`` (active content is offered as a download), or its name marked missing."""
        label = _e(text if text is not None else rel)
        url = self.url(rel)
        if url is None:
            return f'<span class="missing" title="not in the bundle">{label}</span>'
        if rel.lower().endswith(_ACTIVE_SUFFIXES):
            return (f'<a href="{url}" download class="untrusted" title="written by the model or the page: '
                    f'not opened in the report">{label}</a>')
        return f'<a href="{url}">{label}</a>'

    def json(self, rel: str) -> tuple[Any, str | None]:
        """Parsed JSON of ``rel``, or ``None`` with the problem."""
        target = self.path(rel)
        if target is None:
            return None, f"{rel} is missing"
        try:
            return json.loads(target.read_text(encoding="utf-8")), None
        except (OSError, ValueError) as exc:
            return None, f"{rel} could not be read: {exc}"


def _run_page(run_dir: Path, row: RunRow, page_dir: Path) -> str:
    notes: list[str] = []
    bundle: _Bundle | None = None
    if row.evidence_key:
        root = StagePaths(run_dir).evidence(row.evidence_key).resolve()
        if not _SAFE_NAME.match(row.evidence_key) or not root.is_relative_to(run_dir):
            notes.append(f"evidence key {row.evidence_key!r} is not a plain name; not followed")
        elif not root.is_dir():
            notes.append(f"evidence bundle evidence/{row.evidence_key} is not in the run directory")
        else:
            bundle = _Bundle(root, page_dir)
    verdict = _load_verdict(run_dir, row, notes)
    label = verdict.label if verdict is not None else (row.judge or "")

    title = f"{row.candidate_id} × {row.query_id} — evalgrid"
    header = _run_header(row, label)
    if bundle is None:
        main = (f'<section id="no-evidence"><h2>No evidence</h2><p class="reason"><code>{_e(row.reason_code)}'
                f"</code> {_e(row.reason_detail) or 'no detail recorded'}</p>"
                "<p>Nothing was run in the browser for this answer, so there is no video, trace or screenshot."
                "</p></section>")
        if verdict is not None:
            main += _verdict_section(verdict, None, set())
        body = _template("run-body.html").substitute(header=header, notes=_notes(notes), layout="run-single",
                                                     player="", main=main)
        return _page(title, "../assets", body)

    notes.extend(_incomplete_note(bundle))
    steps = _load_steps(bundle, notes)
    step_numbers = {s.step for s in steps}
    cited = {ref.step for a in (verdict.attributions if verdict else []) for ref in a.evidence if ref.step is not None}
    main = "".join([
        _verdict_section(verdict, bundle, step_numbers) if verdict is not None else
        '<section id="verdict"><h2>Verdict</h2><p class="empty">No verdict for this run.</p></section>',
        _timeline(steps, bundle, cited),
        _console_section(bundle, notes),
        _rounds_section(bundle),
        _agent_section(bundle),
        _static_section(bundle),
        _files_section(bundle),
    ])
    body = _template("run-body.html").substitute(header=header, notes=_notes(notes), layout="run-grid",
                                                 player=f'<aside class="player">{_player(bundle)}</aside>', main=main)
    return _page(title, "../assets", body, ["run.js"])


def _incomplete_note(bundle: _Bundle) -> list[str]:
    """A bundle the app cut short says so (manifests before version 2 have no such field: complete)."""
    data, problem = bundle.json(MANIFEST)
    if problem:
        return [problem]
    try:
        cut = EvidenceManifest.model_validate(data).incomplete
    except ValidationError as exc:
        return [f"{MANIFEST} does not match the manifest format: {_shorten(str(exc), 300)}"]
    if cut is None:
        return []
    last = f"; the last screenshot is {cut.last_screenshot}" if cut.last_screenshot else ""
    return [f"Incomplete evidence: the app's {cut.failure.value} during {cut.phase} after {cut.steps} step(s) "
            f"stopped the run{last}. It is scored by the failure policy (functional 0)."]


def _notes(notes: Sequence[str]) -> str:
    if not notes:
        return ""
    return '<ul class="notes">' + "".join(f"<li>{_e(n)}</li>" for n in notes) + "</ul>"


def _load_verdict(run_dir: Path, row: RunRow, notes: list[str]) -> Verdict | None:
    if not row.verdict_key:
        return None
    if not _SAFE_NAME.match(row.verdict_key):
        notes.append(f"verdict key {row.verdict_key!r} is not a plain name; not followed")
        return None
    path = StagePaths(run_dir).verdict(row.verdict_key)
    try:
        return Verdict.model_validate_json(path.read_bytes())
    except FileNotFoundError:
        notes.append(f"verdict verdicts/{row.verdict_key}.json is missing")
    except (OSError, ValidationError) as exc:
        notes.append(f"verdict verdicts/{row.verdict_key}.json could not be read: {_shorten(str(exc), 300)}")
    return None


def _load_steps(bundle: _Bundle, notes: list[str]) -> list[StepRecord]:
    data, problem = bundle.json(BundleFile.TRACE)
    if problem:
        notes.append(problem)
        return []
    try:
        return _STEPS.validate_python(data)
    except ValidationError as exc:
        notes.append(f"{BundleFile.TRACE} does not match the trace format: {_shorten(str(exc), 300)}")
        return []


def _run_header(row: RunRow, label: str) -> str:
    lang = f' lang="{_e(row.language)}"' if _LANG_TAG.match(row.language) else ""
    meta = [
        ("status", _status_badge(row.status)),
        ("reason", f"<code>{_e(row.reason_code)}</code> {_e(row.reason_detail)}"),
        ("query", f"{_e(row.query_id)} · {_e(row.domain)} / {_e(row.leaf)} · {_e(row.difficulty)} · "
                  f"{_e(row.language)} ({_e(row.language_group)}) · {_e(row.kind.replace('_', ' '))}"),
        ("run key", f"<code>{_e(row.run_key)}</code>"),
    ]
    if row.evidence_key:
        meta.append(("evidence", f"<code>{_e(row.evidence_key)}</code>"))
    if row.axe_violations is not None:
        meta.append(("axe-core", f"{row.axe_violations} violations over {row.dom_elements or 0} elements"))
    dl = "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in meta)
    judge = ""
    if label:
        cls = " heuristic" if _is_heuristic(label) else ""
        judge = f'<p class="judge-label{cls}" id="judge-label"><strong>Judge:</strong> {_e(label)}</p>'
    return (f'<header class="run-header"><h1><span class="candidate">{_e(row.candidate_id)}</span> × '
            f'<span class="query">{_e(row.query_id)}</span></h1>'
            f'<blockquote class="brief" id="brief"{lang}>{_e(row.brief)}</blockquote>'
            f'<div class="scores">{_score_box("functional", row.functional)}{_score_box("aesthetic", row.aesthetic)}'
            f'{_score_box("overall", _overall(row))}</div>{judge}<dl class="meta">{dl}</dl></header>')


def _score_box(name: str, value: float | None) -> str:
    shown = "—" if value is None else f"{value:.1f}" if name != "overall" else f"{value:.2f}"
    return (f'<div class="score score-{_e(name)}"><span class="value">{shown}</span>'
            f'<span class="of">/ 8</span><span class="name">{_e(name)}</span></div>')


def _player(bundle: _Bundle) -> str:
    video = bundle.url(BundleFile.VIDEO)
    if video is None:
        return '<p class="empty" id="no-video">No screen video in this bundle.</p>'
    return (f'<video controls id="video" preload="auto" playsinline src="{video}"></video>'
            '<p class="hint">Buttons marked ▶ show the video at that moment. The video is the agent\'s '
            "interaction; while the agent decided, the page was frozen, so it stands still in those stretches.</p>")


def _ref(ref: EvidenceRef, bundle: _Bundle | None, steps: set[int]) -> str:
    parts = []
    if ref.video_time_s is not None:
        parts.append(_seek(ref.video_time_s) if bundle is not None and bundle.path(BundleFile.VIDEO)
                     else f'<span class="time">{_clock(ref.video_time_s)}</span>')
    if ref.step is not None:
        parts.append(f'<a class="step-ref" href="#step-{ref.step}">step {ref.step}</a>' if ref.step in steps
                     else f'<span class="missing">step {ref.step}</span>')
    if ref.file is not None:
        parts.append(bundle.link(ref.file) if bundle is not None else f'<span class="missing">{_e(ref.file)}</span>')
    if ref.detail:
        parts.append(f'<code class="detail">{_e(_shorten(ref.detail, 300))}</code>')
    return f'<li class="evidence-ref">{" ".join(parts)}</li>'


def _attribution(a: FailureAttribution, bundle: _Bundle | None, steps: set[int]) -> str:
    refs = "".join(_ref(r, bundle, steps) for r in a.evidence)
    return (f'<tr class="attribution severity-{_e(a.severity.value)}"><td><code>{_e(a.category)}</code></td>'
            f"<td>{_e(a.dimension.value)}</td><td><span class=\"badge sev-{_e(a.severity.value)}\">"
            f'{_e(a.severity.value)}</span></td><td class="num deduction">−{a.deduction:.1f}</td>'
            f'<td>{_e(a.description)}</td><td><ul class="refs">{refs}</ul></td></tr>')


def _verdict_section(verdict: Verdict, bundle: _Bundle | None, steps: set[int]) -> str:
    cls = " heuristic" if _is_heuristic(verdict.label) else ""
    reasons = (f'<div class="reasons"><div><h3>Functional {verdict.functional:.1f} / 8</h3>'
               f'<p class="reason">{_e(verdict.functional_reason)}</p></div>'
               f'<div><h3>Aesthetic {verdict.aesthetic:.1f} / 8</h3>'
               f'<p class="reason">{_e(verdict.aesthetic_reason)}</p></div></div>')
    criteria = ""
    if verdict.criteria:
        items = "".join(f"<li><code>{_e(c.criterion)}</code> ({_e(c.dimension.value)}): {_e(c.reason)}</li>"
                        for c in verdict.criteria)
        criteria = f'<details class="criteria"><summary>Criteria ({len(verdict.criteria)})</summary><ul>{items}</ul>' \
                   "</details>"
    rows = [_attribution(a, bundle, steps) for a in verdict.attributions]
    table = _table("attributions", "Every deduction with where to see it.",
                   ["category", "dimension", "severity", "deduction", "what went wrong", "evidence"], rows,
                   "No deduction.")
    judge = verdict.judge
    who = f"{judge.name} ({judge.kind}, {judge.rubric_version}{', ' + judge.model_id if judge.model_id else ''})"
    return (f'<section id="verdict"><h2>Verdict</h2><p class="judge-label{cls}">{_e(verdict.label)}</p>'
            f'<p class="judge-id">Judge {_e(who)} · verdict <code>{_e(verdict.verdict_key)}</code></p>'
            f"{reasons}{criteria}<h3>Failure attribution</h3>{table}</section>")


def _action_text(step: StepRecord) -> str:
    a = step.action
    parts = [f'<span class="kind">{_e(a.kind.value)}</span>']
    if a.text is not None:
        parts.append(f"<code>{_e(_shorten(a.text, 200))}</code>")
    if a.amount is not None:
        parts.append(f'<span class="amount">{a.amount:g}</span>')
    if a.reason:
        parts.append(f'<span class="why">{_e(_shorten(a.reason, 200))}</span>')
    return " ".join(parts)


def _timeline(steps: Sequence[StepRecord], bundle: _Bundle, cited: set[int]) -> str:
    has_video = bundle.path(BundleFile.VIDEO) is not None
    rows = []
    for s in steps:
        target = "—"
        if s.target is not None:
            label = _e(_shorten(s.target.label, 120)) or f"&lt;{_e(s.target.tag)}&gt;"
            target = f'<span class="label">{label}</span><code class="selector">{_e(s.target.selector)}</code>'
        errors = ""
        if s.result.errors:
            errors = '<ul class="errors">' + "".join(
                f"<li>{_e(_shorten(err, 500))}</li>" for err in s.result.errors) + "</ul>"
        shot = "—"
        shot_url = bundle.url(s.screenshot)
        if shot_url is not None:
            shot = (f'<a href="{shot_url}"><img class="thumb" loading="lazy" src="{shot_url}" '
                    f'alt="screenshot at step {s.step}"></a>')
        when = _seek(s.action_start_s) if has_video else _clock(s.action_start_s)
        status = s.result.status.value
        cls = f"step status-{_e(status.replace('_', '-'))}" + (" cited" if s.step in cited else "")
        rows.append(
            f'<tr id="step-{s.step}" class="{cls}" data-start="{s.observed_at_s:.3f}" data-end="{s.action_end_s:.3f}">'
            f'<td class="num">{s.step}</td><td class="time" title="observed {s.observed_at_s:.3f} s, action '
            f'{s.action_start_s:.3f}–{s.action_end_s:.3f} s">{when}</td><td>{_action_text(s)}</td>'
            f'<td class="target">{target}</td><td><span class="badge result-{_e(status.replace("_", "-"))}">'
            f'{_e(status.replace("_", " "))}</span> {_e(_shorten(s.result.detail, 300))}</td>'
            f"<td>{errors}</td><td>{shot}</td></tr>")
    table = _table("steps", "Each step of the agent: what it did, what happened, and the screen it saw.",
                   ["step", "video", "action", "target", "result", "errors", "screenshot"], rows,
                   "The agent took no step.")
    return f'<section id="timeline"><h2>Interaction timeline</h2>{table}</section>'


def _console_section(bundle: _Bundle, notes: list[str]) -> str:
    data, problem = bundle.json(BundleFile.CONSOLE)
    if problem:
        notes.append(problem)
        return ""
    entries = [e for e in data if isinstance(e, dict)] if isinstance(data, list) else []
    shown = [e for e in entries if e.get("class") in ERROR_CLASSES]
    has_video = bundle.path(BundleFile.VIDEO) is not None
    rows = []
    for e in shown:
        t = e.get("video_time_s")
        if isinstance(t, int | float) and not isinstance(t, bool) and math.isfinite(t) and t >= 0:
            when = _seek(float(t)) if has_video else _clock(float(t))
        else:
            when = f'<span class="phase" title="before the video started">{_e(e.get("phase", "—"))}</span>'
        url = str(e.get("url") or "")
        source = f'<code class="url">{_e(_shorten(url, 300))}</code>' if url else ""
        rows.append(f'<tr class="console-{_e(e.get("class"))}"><td class="time">{when}</td>'
                    f'<td><span class="badge">{_e(e.get("class"))}</span></td>'
                    f'<td><pre class="message">{_e(_shorten(str(e.get("text", "")), _TEXT_LIMIT))}</pre>'
                    f"{source}</td></tr>")
    hidden = len(entries) - len(shown)
    note = (f'<p class="hint">{hidden} other console entries (noise: fonts, favicon, CDN; warnings and logs) '
            f"are in {bundle.link(BundleFile.CONSOLE)}.</p>" if hidden else "")
    table = _table("console-errors", "Uncaught exceptions and console errors, at their time in the video.",
                   ["video", "class", "message"], rows, "No console error.")
    return f'<section id="console"><h2>Console errors</h2>{table}{note}</section>'


def _rounds_section(bundle: _Bundle) -> str:
    """An agentic answer's previews, in order: what the model sent and what the tool told it."""
    rounds, problem = bundle.json(PREVIEW_ROUNDS)
    if problem is not None or not isinstance(rounds, list) or not rounds:
        return ""
    items = []
    for entry in rounds:
        if not isinstance(entry, dict):
            continue
        report = entry.get("report") if isinstance(entry.get("report"), dict) else None
        status = str(report.get("status")) if report else f"no report: {entry.get('error') or 'none'}"
        sent = entry.get("files")
        files: list[Any] = sent if isinstance(sent, list) else []
        told = []
        for found in (report.get("problems") or [] if report else [])[:10]:
            if isinstance(found, dict):
                where = f" {found.get('file')}:{found.get('line')}" if found.get("file") else ""
                told.append(f"<li><code>{_e(found.get('kind'))}</code>{_e(where)} "
                            f"{_e(_shorten(str(found.get('message', '')), 300))}</li>")
        items.append(f'<li class="round"><strong>round {_e(entry.get("round"))}</strong>: '
                     f'<span class="round-status">{_e(_shorten(status, 300))}</span>; '
                     f'{len(files)} file(s): {_e(_shorten(", ".join(map(str, files)), 300))}'
                     f'{"<ul>" + "".join(told) + "</ul>" if told else ""}</li>')
    return (f'<section id="preview-rounds"><h2>Preview rounds (agentic generation)</h2>'
            f'<ol class="rounds">{"".join(items)}</ol></section>')


def _agent_section(bundle: _Bundle) -> str:
    summary, problem = bundle.json(BundleFile.AGENT_SUMMARY)
    result, _ = bundle.json(BundleFile.RESULT)
    parts = []
    if problem is None and isinstance(summary, dict):
        parts.append(f'<p class="overall">{_e(summary.get("overall_observation", ""))}</p>')
        observations = summary.get("observations")
        if isinstance(observations, list) and observations:
            parts.append("<ul>" + "".join(f"<li>{_e(_shorten(str(o), 500))}</li>" for o in observations) + "</ul>")
    if isinstance(result, dict):
        coverage = result.get("coverage")
        cov: dict[str, Any] = coverage if isinstance(coverage, dict) else {}
        facts = [("ended by", result.get("ended_by")), ("steps", result.get("steps")),
                 ("video", f"{result.get('video_duration_s')} s, {result.get('frames')} frames"),
                 ("coverage", f"{cov.get('exercised')} of {cov.get('salient')} salient controls exercised")]
        if result.get("error"):
            facts.append(("error", result.get("error")))
        parts.append('<dl class="meta">' + "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in facts) + "</dl>")
    if not parts:
        return ""
    return f'<section id="agent"><h2>Agent summary</h2>{"".join(parts)}</section>'


def _static_section(bundle: _Bundle) -> str:
    shots = []
    for view in ("desktop", "mobile"):
        url = bundle.url(BundleFile.screenshot(view))
        if url is None:
            continue
        full = bundle.link(BundleFile.screenshot(view, full=True), "full page")
        shots.append(f'<figure><a href="{url}"><img class="shot" loading="lazy" src="{url}" alt="{view} viewport">'
                     f"</a><figcaption>{view} viewport · {full}</figcaption></figure>")
    if not shots:
        return ""
    return f'<section id="static"><h2>Static perception</h2><div class="shots">{"".join(shots)}</div></section>'


def _files_section(bundle: _Bundle) -> str:
    manifest, problem = bundle.json(MANIFEST)
    names: list[str] = []
    if problem is None and isinstance(manifest, dict) and isinstance(manifest.get("files"), list):
        names = [str(f.get("path")) for f in manifest["files"] if isinstance(f, dict) and f.get("path")]
    if not names:
        return ""
    items = "".join(f"<li>{bundle.link(n)}</li>" for n in names)
    return (f'<section id="files"><details><summary>Evidence bundle files ({len(names)})</summary>'
            f'<p class="hint">Files written by the model or its page (HTML, scripts) are offered as downloads, '
            f'never opened by the report.</p><ul class="files">{items}</ul>'
            f"<p>{bundle.link(MANIFEST)}</p></details></section>")
