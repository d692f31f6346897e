"""Pairwise judging and repair lift end to end on ``fixtures/ux``: real sweeps, scripted models.

A slice of the UX fixtures (original and flawed twins) is run once for the module through the full
regime (real Chromium, local backend). On its stored evidence:

- ``evalgrid compare`` with the heuristic judge's pairwise mode prints FA/SA/AA/CA and ratings;
- scripted pairwise judges: one that always picks the app shown first gets CA = 0, one that decides by
  the apps and not their order gets CA = AA;
- ``repair-lift`` with a scripted judge that names the planted flaws, one that names none, a scripted
  repairer that fixes exactly the flaws a report names (from the fixtures' sidecar patches), and a scripted
  evaluator that scores each UX dimension by the planted flaws still in the app: the naming judge's lift
  is higher, and the repaired apps run the whole regime again.

The models are scripted (no model could be run here that reads apps); everything else is real: the HTTP
client, the stores, the sweeps of the repaired apps, Chromium.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from cluster.cli import main
from cluster.pairwise.stage import CompareOptions, compare
from cluster.repair.lift import LiftOptions, repair_lift
from cluster.scheduling.runner import run_sweep
from cluster.sweep.spec import load_sweep
from evaluator.answer.repair import RepairOptions
from evaluator.judges.ux_report import UxJudgeOptions
from evaluator.llm.budget import SpendingCap
from evaluator.llm.client import Endpoint
from evaluator.models import JudgeConfig, UxDimension
from tests.llm.scripted_server import Turn, scripted_server
from tests.ux_fixtures import UX_ROOT, UxFixture, apply_fixes, load_fixtures, remaining_flaws

pytestmark = [pytest.mark.browser, pytest.mark.slow]

QUERIES = ("ux-signup", "ux-cart", "ux-settings")
_CITE = {"file": "static/desktop-viewport.png"}


@pytest.fixture(scope="module")
def ux_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The originals and flawed twins of three UX fixtures, run once through the full regime."""
    root = tmp_path_factory.mktemp("ux")
    spec = yaml.safe_load((UX_ROOT / "sweep.yaml").read_text(encoding="utf-8"))
    spec["queries"] = str(UX_ROOT / spec["queries"])
    for candidate in spec["candidates"]:
        candidate["answers"] = str(UX_ROOT / candidate["answers"])
    spec |= {"only_queries": list(QUERIES), "sandbox": {"backend": "local"}, "concurrency": 2}
    # One step: no assertion reads how far the explorer got. The heuristic comparison checks pair counts and
    # CA == AA, and the lift is scored on the planted flaws left in the source the UX judge is shown.
    spec["agent"]["max_steps"] = 1
    (root / "sweep.yaml").write_text(yaml.safe_dump(spec), encoding="utf-8")
    run_dir = root / "run"
    asyncio.run(run_sweep(load_sweep(root / "sweep.yaml"), run_dir))
    return run_dir


def _text(body: dict[str, Any]) -> str:
    parts = []
    for message in body["messages"]:
        content = message["content"]
        parts += [content] if isinstance(content, str) else [p.get("text", "") for p in content]
    return "\n".join(parts)


def test_compare_with_the_heuristic_judge_prints_position_metrics_and_ratings(
        ux_run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", str(ux_run), "--judge", "heuristic", "--better", "original,flawed"]) == 0
    out = capsys.readouterr().out
    for needle in ("FA", "SA", "AA", "CA", "Bradley–Terry", "original", "flawed"):
        assert needle in out
    [summary] = list((ux_run / "pairwise").glob("heuristic-*-all-*/summary.json"))
    data = json.loads(summary.read_text(encoding="utf-8"))
    overall = next(d for d in data["dimensions"] if d["dimension"] == "overall")
    assert overall["known"]["pairs"] == len(QUERIES)
    assert overall["known"]["ca"] == overall["known"]["aa"]  # compared scores cannot depend on the order


def _pairwise_answer(pick: str) -> Turn:
    choice = {"functional": {"choice": pick, "reason": "scripted", "first_cite": _CITE, "second_cite": _CITE},
              "aesthetic": {"choice": pick, "reason": "scripted", "first_cite": _CITE, "second_cite": _CITE}}
    return Turn(content=json.dumps(choice))


def _by_content(body: dict[str, Any]) -> Turn:
    """A judge that decides by what the two apps are, never by where they are shown: it prefers the app whose
    section hashes higher, so swapping the order swaps its answer."""
    first, second = _sections(_text(body))
    return _pairwise_answer("first" if _digest(first) > _digest(second) else "second")


def _sections(text: str) -> tuple[str, str]:
    # Both sections cut the same way (heading to heading, heading to the closing paragraph), so a swap of the
    # order swaps exactly the two texts compared.
    match = re.search(r"(?s)## App shown FIRST(.*?)\n## App shown SECOND(.*?)\nDecide the functional", text)
    assert match, "the pairwise request names the app shown first and the app shown second"
    return match.group(1), match.group(2)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def test_a_judge_that_picks_by_position_gets_ca_zero_and_one_that_does_not_gets_ca_equal_to_aa(
        ux_run: Path) -> None:
    options = CompareOptions(known_order=["original", "flawed"])
    with scripted_server(responder=lambda body: _pairwise_answer("first")) as server:
        endpoints = {"j": Endpoint(base_url=server.url, backoff_s=0.01)}
        biased = asyncio.run(compare(ux_run, JudgeConfig(name="llm", options={"endpoint": "j", "model": "biased"}),
                                     options, endpoints=endpoints)).summary
        asked = len(server.requests)
        assert asked == 2 * len(QUERIES)  # every pair, in both orders
        asyncio.run(compare(ux_run, JudgeConfig(name="llm", options={"endpoint": "j", "model": "biased"}),
                            options, endpoints=endpoints))
        assert len(server.requests) == asked  # stored under their keys: nothing is asked twice
    known = biased.dimension("overall").known
    assert known is not None and (known.fa, known.sa, known.aa, known.ca) == (1.0, 0.0, 0.5, 0.0)
    with scripted_server(responder=_by_content) as server:
        endpoints = {"j": Endpoint(base_url=server.url, backoff_s=0.01)}
        fair = asyncio.run(compare(ux_run, JudgeConfig(name="llm", options={"endpoint": "j", "model": "fair"}),
                                   options, endpoints=endpoints)).summary
    known = fair.dimension("overall").known
    assert known is not None and known.ca == known.aa and known.fa == known.sa


def _fixture_of(text: str, fixtures: dict[str, UxFixture], briefs: dict[str, str]) -> UxFixture:
    [query] = [q for q, brief in briefs.items() if brief[:80] in text]
    return fixtures[query]


def _ux_answer(scores: dict[str, int], findings: list[dict[str, Any]]) -> Turn:
    return Turn(content=json.dumps({"scores": scores, "findings": findings}))


class _Models:
    """The scripted models of a repair-lift, told apart by the model id each request names."""

    def __init__(self) -> None:
        self.fixtures = load_fixtures()
        raw = yaml.safe_load((UX_ROOT / "queries.yaml").read_text(encoding="utf-8"))
        self.briefs = {q["id"]: q["brief"] for q in raw["queries"]}

    def __call__(self, body: dict[str, Any]) -> Turn:
        text = _text(body)
        fixture = _fixture_of(text, self.fixtures, self.briefs)
        model = body["model"]
        if model == "repairer":
            named = [f.id for f in fixture.flaws if f"[{f.id}]" in text]
            html = (UX_ROOT / "flawed" / f"{fixture.query}.html").read_text(encoding="utf-8")
            return Turn(content=f"index.html\n```html\n{apply_fixes(html, fixture, named)}\n```\n")
        left = remaining_flaws(text, fixture)
        if model == "evaluator":
            scores = {d.value: max(1, 5 - sum(f.dimension == d.value for f in left)) for d in UxDimension}
            return _ux_answer(scores, [])
        findings = [{"dimension": f.dimension, "severity": f.severity, "description": f"[{f.id}] {f.description}",
                     "cite": _CITE, "suggestion": f.fix} for f in left] if model == "namer" else []
        return _ux_answer({d.value: 3 for d in UxDimension}, findings)


def test_a_report_that_names_the_flaws_lifts_more_than_one_that_names_none(
        ux_run: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with scripted_server(responder=_Models()) as server:
        endpoints = {"j": Endpoint(base_url=server.url, backoff_s=0.01)}

        def lift(judge: str, run_dir: Path) -> Any:
            options = LiftOptions(judge=UxJudgeOptions.model_validate({"endpoint": "j", "model": judge}),
                                  repairer=RepairOptions.model_validate({"endpoint": "j", "model": "repairer"}),
                                  evaluator=UxJudgeOptions.model_validate({"endpoint": "j", "model": "evaluator"}),
                                  candidates=["flawed"])
            return asyncio.run(repair_lift(run_dir, options, endpoints=endpoints))

        namer = lift("namer", ux_run)
        monkeypatch.chdir(ux_run.parent)  # a run directory given relative, as on the command line
        silent = lift("silent", Path(ux_run.name))
    for result in (namer, silent):
        assert [f.status for f in result.summary.per_fixture] == ["repaired"] * len(QUERIES)
        assert (result.out_dir / "lift.json").is_file()
    ux = {d.value for d in UxDimension}

    def mean_lift(result: Any) -> float:
        lifts = [d.lift.mean for d in result.summary.dimensions if d.dimension in ux]
        return sum(lifts) / len(lifts)

    print(f"mean UX lift: naming judge {mean_lift(namer):+.2f}, silent judge {mean_lift(silent):+.2f}; per dimension "
          f"{ {d.dimension: d.lift.mean for d in namer.summary.dimensions} }")
    assert mean_lift(namer) > 0.3 and mean_lift(silent) == 0.0
    assert all(sum(f.lift[d] for d in ux) > 0 for f in namer.summary.per_fixture if f.lift)
    # The repaired apps ran the full regime: functional and aesthetic were judged again.
    assert {"functional", "aesthetic"} <= {d.dimension for d in namer.summary.dimensions}
    assert namer.summary.per_fixture[0].findings > 0 and silent.summary.per_fixture[0].findings == 0


def test_the_budget_stops_comparisons_before_they_are_sent_and_counts_the_pairs(ux_run: Path) -> None:
    with scripted_server(responder=lambda body: _pairwise_answer("first")) as server:
        endpoint = Endpoint(base_url=server.url, backoff_s=0.01, input_usd_per_mtok=5.0, output_usd_per_mtok=15.0)
        result = asyncio.run(compare(ux_run, JudgeConfig(name="llm", options={"endpoint": "j", "model": "capped"}),
                                     CompareOptions(known_order=["original", "flawed"]), endpoints={"j": endpoint},
                                     budget=SpendingCap(0.0001)))
        assert server.requests == []
    summary = result.summary
    assert summary.pairs == 0 and summary.skipped == {"budget": len(QUERIES)} and summary.failed == []
    assert summary.dimension("overall").known is None
