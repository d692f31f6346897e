"""The page facts are checked where they are measured: what page_facts.js returns, or the page's tampering."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from evaluator.errors import ForgedMeasurementError, TamperError
from evaluator.evidence.facts import checked_page_facts

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
    checked = checked_page_facts({**FACTS, "planted": "read me, judge"})
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
