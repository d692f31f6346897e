"""The UX fixture set keeps its promises: twins, sidecars and queries line up, every planted flaw's edits
turn the flawed app back into its original (all together and one at a time), the seven UX dimensions are
each planted in several apps, and the apps are small and reach for nothing outside the page."""

from __future__ import annotations

import itertools
import re
from collections import defaultdict
from pathlib import Path

import pytest
import yaml

from cluster.sweep.spec import load_sweep
from evaluator.models import QuerySet
from tests.ux_fixtures import UX_ROOT, UxDimension, UxFixture, apply_fixes, load_fixtures, remaining_flaws

pytestmark = pytest.mark.pure

DIMENSIONS: tuple[UxDimension, ...] = (
    "goal_state_clarity",
    "navigation_scent",
    "action_feedback",
    "flow_efficiency",
    "error_recovery",
    "trust_transparency",
    "scanability_accessibility",
)
MAX_APP_BYTES = 12 * 1024
SVG_NAMESPACE = "http://www.w3.org/2000/svg"

FIXTURES = load_fixtures()


def _text(kind: str, query_id: str) -> str:
    return (UX_ROOT / kind / f"{query_id}.html").read_text(encoding="utf-8")


def _stems(kind: str) -> set[str]:
    return {p.stem for p in (UX_ROOT / kind).glob("*.html")}


def _query_ids() -> set[str]:
    queries = QuerySet.model_validate(yaml.safe_load((UX_ROOT / "queries.yaml").read_text(encoding="utf-8")))
    return {q.id for q in queries.queries}


def test_there_are_at_least_twelve_apps() -> None:
    assert len(FIXTURES) >= 12


def test_queries_twins_and_sidecars_line_up() -> None:
    ids = _query_ids()
    assert all(re.fullmatch(r"ux-[a-z0-9-]+", i) for i in ids), ids
    assert ids == _stems("original") == _stems("flawed") == set(FIXTURES)
    assert not [p for p in (UX_ROOT / "flaws").iterdir() if p.suffix != ".yaml"]


def test_the_sweep_covers_both_twins_of_every_app() -> None:
    sweep = load_sweep(UX_ROOT / "sweep.yaml")
    assert [c.id for c in sweep.spec.candidates] == ["original", "flawed"]
    assert len(list(sweep.plan())) == 2 * len(FIXTURES)


@pytest.mark.parametrize("query_id", sorted(FIXTURES))
def test_each_app_has_two_or_three_flaws(query_id: str) -> None:
    assert 2 <= len(FIXTURES[query_id].flaws) <= 3


@pytest.mark.parametrize("query_id", sorted(FIXTURES))
def test_fixing_every_flaw_yields_the_original(query_id: str) -> None:
    fixture = FIXTURES[query_id]
    flawed, original = _text("flawed", query_id), _text("original", query_id)
    assert flawed != original
    assert remaining_flaws(flawed, fixture) == fixture.flaws
    assert remaining_flaws(original, fixture) == []
    assert apply_fixes(flawed, fixture, [f.id for f in fixture.flaws]) == original


@pytest.mark.parametrize("query_id", sorted(FIXTURES))
def test_each_flaw_can_be_fixed_alone(query_id: str) -> None:
    fixture = FIXTURES[query_id]
    flawed = _text("flawed", query_id)
    for flaw in fixture.flaws:
        fixed = apply_fixes(flawed, fixture, [flaw.id])
        assert fixed != flawed
        assert remaining_flaws(fixed, fixture) == [f for f in fixture.flaws if f.id != flaw.id], flaw.id


@pytest.mark.parametrize("query_id", sorted(FIXTURES))
def test_any_subset_of_flaws_can_be_fixed(query_id: str) -> None:
    fixture = FIXTURES[query_id]
    flawed = _text("flawed", query_id)
    ids = [f.id for f in fixture.flaws]
    for size in range(len(ids) + 1):
        for subset in itertools.combinations(ids, size):
            fixed = apply_fixes(flawed, fixture, subset)
            assert [f.id for f in remaining_flaws(fixed, fixture)] == [i for i in ids if i not in subset], subset


def test_apply_fixes_names_the_flaw_whose_edit_does_not_match() -> None:
    fixture = FIXTURES["ux-signup"]
    flaw = fixture.flaws[0]
    with pytest.raises(ValueError, match=flaw.id):
        apply_fixes(_text("original", "ux-signup"), fixture, [flaw.id])  # already fixed: nothing to find
    with pytest.raises(ValueError, match="no-such-flaw"):
        apply_fixes(_text("flawed", "ux-signup"), fixture, ["no-such-flaw"])


def test_a_single_patch_mapping_is_read_as_one_edit() -> None:
    fixture = UxFixture.model_validate({"query": "ux-x", "flaws": [{
        "id": "a-flaw", "dimension": "error_recovery", "severity": "minor", "description": "d", "fix": "f",
        "patch": {"find": "x", "replace": "y"}}]})
    assert len(fixture.flaws[0].patch) == 1


def test_every_dimension_is_planted_in_at_least_three_apps() -> None:
    apps: dict[str, set[str]] = defaultdict(set)
    for fixture in FIXTURES.values():
        for flaw in fixture.flaws:
            apps[flaw.dimension].add(fixture.query)
    assert {d: len(apps[d]) for d in DIMENSIONS if len(apps[d]) < 3} == {}


@pytest.mark.parametrize("kind", ["original", "flawed"])
def test_apps_are_small_complete_and_self_contained(kind: str) -> None:
    for path in sorted((UX_ROOT / kind).glob("*.html")):
        data = path.read_bytes()
        assert len(data) < MAX_APP_BYTES, f"{path.name}: {len(data)} bytes"
        text = data.decode("utf-8")
        assert text.lstrip().lower().startswith("<!doctype html>"), path.name
        assert text.rstrip().endswith("</html>"), path.name
        urls = [u for u in re.findall(r"https?://[^\s\"'<>)]*", text, re.IGNORECASE) if u != SVG_NAMESPACE]
        assert urls == [], f"{path.name}: {urls}"
        protocol_relative = re.search(r"""(?:src|href)\s*=\s*["']?//""", text, re.IGNORECASE)
        assert protocol_relative is None, f"{path.name}: protocol-relative URL"


def test_the_fixture_root_is_the_repository_folder() -> None:
    assert UX_ROOT == Path(__file__).resolve().parents[2] / "fixtures" / "ux"
