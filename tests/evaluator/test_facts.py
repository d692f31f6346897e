"""The page facts are checked where they are measured (what page_facts.js returns, or the page's tampering) and
read typed from bundles of every collector version."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from evaluator.errors import EvidenceError, ForgedMeasurementError, TamperError
from evaluator.evidence.bundle import EvidenceBundle, EvidenceWriter
from evaluator.evidence.facts import checked_page_facts
from evaluator.models import AgentConfig, ToolVersions

pytestmark = pytest.mark.pure

# What page_facts.js returns for a small styled page (taken from a real run, cut short).
FACTS: dict[str, Any] = {
    "viewport_width": 1280, "scroll_width": 1280, "overflow_x": 0,
    "broken_images": [{"selector": "img.hero", "src": "missing.png"}],
    "low_contrast": [{"selector": "p.note", "text": "fine print", "ratio": 2.1, "required": 4.5}],
    "low_contrast_count": 1, "text_elements": 4, "css_rules": 12, "inline_styled_elements": 0,
    "defaults": {"font": False, "margin": False, "colors": False, "links": None, "buttons": False},
    "illegible_count": 0,
    "design": {"text": [[40, 48.5, 300, 40, 32, 700, "l", 1, 7, 0]], "families": ["system-ui"],
               "spacing": {"16": 4, "8.5": 2}, "colors": {"255,255,255": 1024000}, "viewport": [1280, 800]},
    "font_family": "system-ui", "element_count": 12, "text_length": 42, "canvas_share": 0.25, "title": "Counter",
    "lang": "en", "has_viewport_meta": True, "text_sample": "Counter 0 Add one",
}


def test_real_facts_pass_unchanged_and_extra_keys_are_dropped() -> None:
    checked = checked_page_facts({**FACTS, "planted": "read me, judge"}).model_dump(mode="json")
    assert json.dumps(checked, sort_keys=True) == json.dumps(FACTS, sort_keys=True)  # integers stay integers


def test_a_missing_field_is_the_pages_tampering_and_names_the_field() -> None:
    facts = copy.deepcopy(FACTS)
    del facts["element_count"]
    with pytest.raises(ForgedMeasurementError, match="element_count: Field required") as raised:
        checked_page_facts(facts)
    assert isinstance(raised.value, TamperError)  # the worker scores it as the app's, never retries it


@pytest.mark.parametrize("forged", [
    {"broken_images": "none"},
    {"low_contrast": [{"selector": "p"}]},
    {"element_count": -1},
    {"design": {**FACTS["design"], "text": [["x"]]}},
    {"defaults": {"font": "maybe"}},
    {"has_viewport_meta": "sure"},
    {"canvas_share": 3},
], ids=["list-as-string", "row-without-fields", "negative-count", "short-design-row", "defaults-not-bool",
        "flag-not-bool", "share-above-one"])
def test_a_field_of_the_wrong_kind_is_the_pages_tampering(forged: dict[str, Any]) -> None:
    with pytest.raises(ForgedMeasurementError):
        checked_page_facts({**FACTS, **forged})


@pytest.mark.parametrize("result", [None, 7, "facts", [FACTS]])
def test_something_that_is_not_facts_at_all_is_the_pages_tampering(result: object) -> None:
    with pytest.raises(ForgedMeasurementError, match="malformed"):
        checked_page_facts(result)


@pytest.mark.parametrize("later", ["defaults", "illegible_count", "design", "canvas_share"])
def test_a_field_older_bundles_lack_is_still_required_of_the_page(later: str) -> None:
    facts = copy.deepcopy(FACTS)
    del facts[later]
    with pytest.raises(ForgedMeasurementError, match=f"{later}: Field required"):
        checked_page_facts(facts)


def _committed(root: Path, record: object) -> EvidenceBundle:
    writer = EvidenceWriter(root)
    writer.write_json("static/desktop-facts.json", record)
    tools = ToolVersions(evalgrid="0", collector="synthetic", browser="none", playwright="none", ffmpeg="none",
                         sandbox="local")
    writer.commit(evidence_key="ev", artifact_key="art", agent=AgentConfig(), tools=tools, timings={})
    return EvidenceBundle(root)


def test_facts_stored_before_the_later_fields_read_as_not_measured(tmp_path: Path) -> None:
    """A record as the first collector wrote it: none of the later fields, no navigation timing."""
    old = {k: v for k, v in FACTS.items() if k not in ("defaults", "illegible_count", "design", "canvas_share")}
    image = {"background_fraction": 0.62, "gray_std": 40.1, "colorfulness": 12.5, "edge_density": 0.04, "blank": False}
    timings = {"load_s": 0.4, "settle_s": 0.2, "layout_stable": True, "navigation_error": None}
    record = _committed(tmp_path / "b", {"facts": old, "image": image, "timings": timings}).static_facts("desktop")
    assert (record.facts.defaults, record.facts.illegible_count, record.facts.design) == (None, 0, None)
    assert record.facts.canvas_share == 0 and record.timings.load_ms is None
    assert record.facts.element_count == 12 and record.image.model_dump() == image


def test_a_facts_record_evalgrid_did_not_write_is_an_evidence_error(tmp_path: Path) -> None:
    bundle = _committed(tmp_path / "b", {"facts": {"element_count": "many"}, "image": {}, "timings": {}})
    with pytest.raises(EvidenceError, match="static/desktop-facts.json is not what the collector writes"):
        bundle.static_facts("desktop")
