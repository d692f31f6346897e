"""The design qualities (``evaluator/evidence/design.py``), one measure at a time, on hand-written facts and images.

``design_facts()`` and ``design_screenshot()`` describe a page that meets every quality of heuristic-v3; each
test changes one thing and asserts the measured value and the verdict of that quality alone. Expected numbers
are literals worked out by hand from the facts, not recomputed by the code under test.
"""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np
import pytest

from evaluator.evidence.design import QUALITIES, Quality, measure_qualities
from evaluator.evidence.facts import DesignFacts
from evaluator.judges.heuristic import load_rubric

SPEC = load_rubric("heuristic-v3")["aesthetic"]["qualities"]
BG = (250, 247, 245)  # BGR of the page background (#f5f7fa)


def design_facts() -> dict[str, Any]:
    """A tidy page: ten text blocks on one column edge or in rows, three sizes in one typeface, spacing
    on the 4 px grid, neutrals and one blue."""
    row = ["l", 1]
    text = [
        [160, 48, 200, 24, 20, 700, *row, 6, 0],       # brand
        [900, 50, 50, 19, 16, 400, *row, 6, 0],        # nav: three links in a row
        [980, 50, 50, 19, 16, 400, *row, 6, 0],
        [1060, 50, 60, 19, 16, 400, *row, 6, 0],
        [160, 120, 480, 48, 40, 700, *row, 22, 0],     # h1
        [160, 188, 600, 56, 20, 400, *row, 86, 0],     # lead
        [160, 260, 600, 48, 16, 400, *row, 120, 0],    # two paragraphs
        [160, 330, 600, 48, 16, 400, *row, 120, 0],
        [160, 400, 120, 40, 16, 600, "c", 1, 11, 0],   # two buttons in a row
        [300, 400, 120, 40, 16, 600, "c", 1, 11, 0],
        [200, 300, 40, 19, 16, 400, "l", 0, 8, 0],     # an inline link inside a paragraph: not a block
    ]
    return {
        "text": text, "families": ["dejavu sans"], "viewport": [1280, 800],
        "spacing": {"8": 10, "16": 12, "24": 8, "48": 4},
        "colors": {"245,247,250": 800000, "255,255,255": 150000, "31,41,51": 30000, "82,96,109": 20000,
                   "29,78,216": 8000},
    }


def _png(image: np.ndarray) -> bytes:
    ok, data = cv2.imencode(".png", image)
    assert ok
    return bytes(data)


def _busy(image: np.ndarray, x0: int, x1: int, y0: int, y1: int) -> None:
    """Fill a region with one-pixel stripes: every 16 px tile inside it has detail (is not empty)."""
    image[y0:y1:2, x0:x1] = 40


def design_screenshot(*, x0: int = 160, x1: int = 1120, bands: int = 6) -> bytes:
    """1280x800 with ``bands`` content bands of three tile rows (48 px) between x0 and x1, on tile edges."""
    image = np.full((800, 1280, 3), BG, np.uint8)
    for band in range(bands):
        y0 = 48 + band * 80
        _busy(image, x0, x1, y0, y0 + 48)
    return _png(image)


def _design(facts: dict[str, Any]) -> DesignFacts:
    return DesignFacts.model_validate(facts)


def _measure(name: str, facts: dict[str, Any] | None = None, shot: bytes | None = None) -> Quality:
    by_name = {q.name: q for q in measure_qualities(None if facts is None else _design(facts), shot, SPEC)}
    return by_name[name]


def test_the_tidy_page_meets_every_quality_in_order() -> None:
    measured = measure_qualities(_design(design_facts()), design_screenshot(), SPEC)
    assert [q.name for q in measured] == list(QUALITIES)
    assert all(q.measured and q.passed for q in measured), [q.detail for q in measured]


# ------------------------------------------------------------------------------------------ alignment


def test_alignment_counts_blocks_on_a_shared_edge_or_row() -> None:
    quality = _measure("alignment", design_facts())
    assert (quality.value, quality.passed) == (1.0, True)
    assert quality.detail.startswith("100% of 10 text blocks")  # the inline link is not a block
    assert "6 distinct column edges" in quality.detail  # 160, 220 (centre), 370 (centre), 900, 980, 1060


def test_ragged_left_edges_fail_alignment() -> None:
    facts = design_facts()
    for row, left in zip(facts["text"][4:8], (137, 171, 149, 193), strict=True):
        row[0] = left  # h1, lead and both paragraphs each start somewhere else
    quality = _measure("alignment", facts)
    assert (quality.value, quality.passed) == (0.6, False)  # nav, buttons and brand (in the nav's row): 6 of 10
    assert "needs 80%" in quality.detail


def test_alignment_threshold_is_four_in_five() -> None:
    facts = design_facts()
    facts["text"][6][0], facts["text"][7][0] = 171, 149  # the two paragraphs off the edge: 8 of 10
    assert (_measure("alignment", facts).value, _measure("alignment", facts).passed) == (0.8, True)
    facts["text"][5][0] = 193  # and the lead: 7 of 10
    assert (_measure("alignment", facts).value, _measure("alignment", facts).passed) == (0.7, False)


def test_alignment_within_two_pixels_is_aligned() -> None:
    facts = design_facts()
    facts["text"][6][0], facts["text"][7][0] = 162, 158
    assert _measure("alignment", facts).value == 1.0
    facts["text"][6][0], facts["text"][7][0] = 163, 157
    assert _measure("alignment", facts).value == 0.8


def test_alignment_needs_six_blocks_on_the_first_screen() -> None:
    facts = design_facts()
    for row in facts["text"][5:]:
        row[1] += 800  # below the first screen
    quality = _measure("alignment", facts)
    assert (quality.measured, quality.passed, quality.value) == (False, False, None)
    assert quality.detail == "not measured: only 5 text blocks on the first screen (needs 6)"


# ------------------------------------------------------------------------------------------ type scale


def test_type_scale_counts_sizes_and_typefaces() -> None:
    quality = _measure("type_scale", design_facts())
    assert (quality.value, quality.passed) == (3.0, True)
    assert quality.detail == "3 font sizes (16, 20, 40 px; at most 6) in 1 typeface (at most 2)"


def test_seven_font_sizes_fail_the_type_scale() -> None:
    facts = design_facts()
    for row, size in zip(facts["text"][:4], (31, 13, 15, 17), strict=True):
        row[4] = size  # brand and nav: 13, 15, 16, 17, 20, 31, 40
    quality = _measure("type_scale", facts)
    assert (quality.value, quality.passed) == (7.0, False)
    facts["text"][1][4] = 16  # back to six
    assert _measure("type_scale", facts).passed


def test_three_typefaces_fail_the_type_scale() -> None:
    facts = design_facts()
    facts["families"] += ["georgia", "impact"]
    facts["text"][0][9], facts["text"][4][9] = 1, 2
    quality = _measure("type_scale", facts)
    assert (quality.value, quality.passed) == (3.0, False)
    assert "in 3 typefaces (at most 2)" in quality.detail


# ------------------------------------------------------------------------------------------ spacing


def test_spacing_on_the_four_pixel_grid() -> None:
    quality = _measure("spacing_rhythm", design_facts())
    assert (quality.value, quality.passed) == (1.0, True)
    assert quality.detail == "100% of 34 margins, paddings and gaps are multiples of 4 px (needs 75%)"


def test_spacing_off_the_grid_fails_and_names_the_values() -> None:
    facts = design_facts()
    facts["spacing"] = {"8": 10, "16": 5, "7": 5, "13": 4, "21.4": 1}  # 15 of 25 on the grid
    quality = _measure("spacing_rhythm", facts)
    assert (quality.value, quality.passed) == (0.6, False)
    assert quality.detail.endswith("off it, e.g. 7, 13, 21.4 px")


def test_spacing_threshold_and_subpixel_tolerance() -> None:
    facts = design_facts()
    facts["spacing"] = {"8": 6, "12.5": 3, "14.6": 1}  # 12.5 is within 0.5 px of 12; 14.6 is 1.4 px off 16
    assert (_measure("spacing_rhythm", facts).value, _measure("spacing_rhythm", facts).passed) == (0.9, True)
    facts["spacing"] = {"8": 3, "10": 1}  # 3 of 4 = 75%, but only 4 values
    assert _measure("spacing_rhythm", facts).detail == "not measured: only 4 spacing values (needs 8)"
    facts["spacing"] = {"8": 6, "10": 2}
    assert (_measure("spacing_rhythm", facts).value, _measure("spacing_rhythm", facts).passed) == (0.75, True)


# ------------------------------------------------------------------------------------------ palette


def test_neutrals_and_one_hue_are_a_coherent_palette() -> None:
    quality = _measure("palette", design_facts())
    # the page background and white are one cluster (ΔE 3.2); two text greys and the blue are three more
    assert (quality.value, quality.passed) == (4.0, True)
    assert quality.detail == "4 colour clusters (at most 8) in 1 hue family (at most 3)"


def test_four_hue_families_fail_the_palette() -> None:
    facts = design_facts()
    facts["colors"] |= {"220,38,38": 8000, "22,163,74": 8000, "202,138,4": 8000}  # red, green, amber
    quality = _measure("palette", facts)
    assert (quality.value, quality.passed) == (7.0, False)
    assert "in 4 hue families (at most 3)" in quality.detail


def test_analogous_hues_are_one_family_and_traces_are_not_the_scheme() -> None:
    facts = design_facts()
    facts["colors"] |= {"37,99,235": 8000, "79,70,229": 8000}  # two more blues, a blue-violet: analogous
    facts["colors"] |= {"220,38,38": 900}  # a red painting 0.09% of the page: a trace
    quality = _measure("palette", facts)
    assert quality.passed
    assert "in 1 hue family" in quality.detail


def test_nine_colour_clusters_fail_the_palette() -> None:
    facts = design_facts()
    greys = ("0,0,0", "60,60,60", "120,120,120", "160,160,160", "200,200,200")
    facts["colors"] |= {grey: 5000 for grey in greys}
    quality = _measure("palette", facts)
    assert (quality.value, quality.passed) == (9.0, False)


# ------------------------------------------------------------------------------------------ hierarchy


def test_hierarchy_is_the_largest_text_over_the_body_text() -> None:
    quality = _measure("hierarchy", design_facts())
    assert (quality.value, quality.passed) == (2.5, True)
    assert quality.detail.startswith("largest text 40 px (weight 700) over body 16 px (weight 400): 2.50x")


def test_a_flat_page_fails_hierarchy_and_a_bold_step_passes() -> None:
    facts = design_facts()
    for row in (facts["text"][0], facts["text"][4], facts["text"][5]):
        row[4], row[5] = 18, 400  # brand, h1 and lead all at 18 px regular over 16 px body
    quality = _measure("hierarchy", facts)
    assert (quality.value, quality.passed) == (1.12, False)
    facts["text"][4][4], facts["text"][4][5] = 20, 700  # h1 one step up (1.25x) and bold against 400
    assert (_measure("hierarchy", facts).value, _measure("hierarchy", facts).passed) == (1.25, True)
    facts["text"][4][5] = 600  # only 200 heavier: a 1.25x step alone is not a level
    assert not _measure("hierarchy", facts).passed


# ------------------------------------------------------------------------------------------ whitespace


def test_whitespace_share_and_equilibrium_from_the_screenshot() -> None:
    quality = _measure("whitespace", design_facts(), design_screenshot())
    # 6 bands x 3 tile rows x 60 tile columns = 1080 of 4000 tiles busy
    assert (quality.value, quality.passed) == (0.73, True)
    assert quality.detail == ("73% of the first screen is empty (band 34%-95%); content spans 160-1120 px, "
                              "equilibrium 1.00 (needs 0.9)")


def test_content_hugging_the_left_fails_equilibrium() -> None:
    quality = _measure("whitespace", design_facts(), design_screenshot(x0=0, x1=640))
    assert not quality.passed
    assert "content spans 0-640 px, equilibrium 0.50" in quality.detail
    assert _measure("whitespace", None, design_screenshot(x0=96, x1=1120)).passed  # 0.95: within 5%


def test_whitespace_band_runs_from_cramped_to_almost_empty() -> None:
    cramped = _measure("whitespace", None, design_screenshot(x0=0, x1=1280, bands=10))
    assert (cramped.value, cramped.passed) == (0.42, True)  # 29 of 50 rows busy (the screen cuts the last band)
    full = np.full((800, 1280, 3), BG, np.uint8)
    _busy(full, 0, 1280, 0, 800)
    assert (_measure("whitespace", None, _png(full)).value, _measure("whitespace", None, _png(full)).passed) == (
        0.0, False)
    sparse = _measure("whitespace", None, design_screenshot(x0=608, x1=672, bands=1))
    assert (sparse.value, sparse.passed) == (1.0, False)  # 12 busy tiles of 4000: 99.7% empty


def test_whitespace_is_not_measured_without_a_screenshot_or_any_content() -> None:
    assert _measure("whitespace", design_facts(), None).detail == (
        "not measured: no desktop screenshot in the evidence")
    blank = _png(np.full((800, 1280, 3), BG, np.uint8))
    assert not _measure("whitespace", None, blank).measured


# ------------------------------------------------------------------------------------------ old bundles


@pytest.mark.parametrize("name", ["alignment", "type_scale", "spacing_rhythm", "palette", "hierarchy"])
def test_evidence_without_design_facts_is_not_measured(name: str) -> None:
    quality = _measure(name, None, design_screenshot())
    assert (quality.measured, quality.passed, quality.value) == (False, False, None)
    assert "no design facts" in quality.detail


def test_measures_are_deterministic() -> None:
    facts, shot = _design(design_facts()), design_screenshot(x0=96, x1=1000)
    assert measure_qualities(facts, shot, SPEC) == measure_qualities(facts, shot, SPEC)
