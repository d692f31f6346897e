"""Tests of the OpenCV screenshot probes in evaluator.evidence.probes: blank detection and visual change.

Screenshots are synthesised with numpy and encoded with ``cv2.imencode`` exactly as the collector's
PNG screenshots arrive (bytes); no browser is involved.
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from evaluator.evidence.probes import changed_fraction, probe_image, visual_change

W, H = 1280, 800


def _png(image: np.ndarray) -> bytes:
    ok, buf = cv2.imencode(".png", image)
    assert ok
    return buf.tobytes()


def _white() -> np.ndarray:
    return np.full((H, W, 3), 255, np.uint8)


def _card_page() -> np.ndarray:
    image = _white()
    cv2.putText(image, "Pricing plans for every team", (100, 120), cv2.FONT_HERSHEY_SIMPLEX, 1.5, (30, 30, 30), 3)
    cv2.rectangle(image, (340, 200), (940, 600), (200, 120, 40), -1)  # a blue card (BGR)
    cv2.putText(image, "Pro  $12/mo", (400, 420), cv2.FONT_HERSHEY_SIMPLEX, 2.0, (255, 255, 255), 4)
    cv2.rectangle(image, (420, 480), (860, 550), (60, 60, 230), -1)  # a red call-to-action button
    return image


def test_all_white_page_is_blank() -> None:
    probe = probe_image(_png(_white()))
    assert probe.blank is True
    assert probe.background_fraction == pytest.approx(1.0)
    assert probe.gray_std == pytest.approx(0.0)
    assert probe.edge_density == pytest.approx(0.0)


def test_uniform_dark_page_is_blank_too() -> None:
    assert probe_image(_png(np.full((H, W, 3), (40, 30, 20), np.uint8))).blank is True


def test_page_with_a_card_and_text_is_not_blank_and_richer() -> None:
    white = probe_image(_png(_white()))
    card = probe_image(_png(_card_page()))
    assert card.blank is False
    assert card.background_fraction < 0.9
    assert card.gray_std > white.gray_std + 10
    assert card.colorfulness > white.colorfulness + 10
    assert card.edge_density > white.edge_density
    assert card.edge_density > 0.001


def test_grayscale_text_page_is_not_colourful() -> None:
    image = _white()
    for row in range(6):
        cv2.putText(image, "Lorem ipsum dolor sit amet", (80, 120 + row * 90), cv2.FONT_HERSHEY_SIMPLEX, 1.4,
                    (0, 0, 0), 2)
    probe = probe_image(_png(image))
    assert probe.blank is False
    assert probe.colorfulness < 1.0
    assert probe.colorfulness < probe_image(_png(_card_page())).colorfulness


def test_the_probe_is_stored_plain_and_rounded() -> None:
    data = probe_image(_png(_card_page())).model_dump(mode="json")
    assert set(data) == {"background_fraction", "gray_std", "colorfulness", "edge_density", "blank"}
    assert data["blank"] is False
    for key in ("background_fraction", "gray_std", "colorfulness", "edge_density"):
        value = data[key]
        assert isinstance(value, float)
        assert round(value, 4) == value


def test_undecodable_screenshot_counts_as_blank() -> None:
    assert probe_image(b"not a png").blank is True


def test_identical_images_do_not_change() -> None:
    assert visual_change(_png(_card_page()), _png(_card_page())) is False


def test_one_pixel_difference_is_noise() -> None:
    after = _white()
    after[400, 640] = (0, 0, 0)
    assert visual_change(_png(_white()), _png(after)) is False


def test_small_faint_difference_is_noise() -> None:
    after = _white()
    after[100:140, 100:140] = (240, 240, 240)  # below the per-pixel threshold
    assert visual_change(_png(_white()), _png(after)) is False


def test_a_200x100_region_change_is_a_change() -> None:
    before = _card_page()
    after = before.copy()
    after[650:750, 100:300] = (40, 160, 40)  # e.g. a green "Saved!" toast appears
    assert visual_change(_png(before), _png(after)) is True


@pytest.mark.parametrize("size", [(720, W), (H, 1024), (H * 2, W)])
def test_different_sizes_count_as_changed(size: tuple[int, int]) -> None:
    other = np.full((*size, 3), 255, np.uint8)
    assert visual_change(_png(_white()), _png(other)) is True


def test_undecodable_input_counts_as_changed() -> None:
    assert visual_change(b"garbage", _png(_white())) is True
    assert visual_change(_png(_white()), b"\x89PNG\r\n\x1a\n truncated") is True


def test_empty_screenshot_bytes_are_handled_like_undecodable_ones() -> None:
    # Regression: cv2.imdecode raises on an empty buffer, which once crashed both probes.
    assert probe_image(b"").blank is True
    assert visual_change(b"", _png(_white())) is True


def test_a_change_inside_the_controls_box_does_not_count_outside_it() -> None:
    """The control's own look (pressed, a focus ring reaching 6 px past its box) is left out; a change elsewhere
    counts; a box scrolled above the screen masks nothing (a negative slice end would mask from the far edge)."""
    before, after = _white(), _white()
    after[300:340, 500:620] = 0  # the button itself turned dark
    button = {"x": 505.0, "y": 305.0, "width": 110.0, "height": 30.0}
    assert changed_fraction(_png(before), _png(after)) > 0.004
    assert changed_fraction(_png(before), _png(after), outside=button) == 0.0
    after[600:700, 100:300] = 0  # and the result below it
    assert changed_fraction(_png(before), _png(after), outside=button) == pytest.approx(200 * 100 / (W * H))
    above = {"x": 0.0, "y": -400.0, "width": 1280.0, "height": 100.0}
    assert changed_fraction(_png(before), _png(after), outside=above) == changed_fraction(_png(before), _png(after))
