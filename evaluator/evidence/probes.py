"""Measurements of a rendered page: in-page scripts (package data) and OpenCV on screenshots."""

from __future__ import annotations

import asyncio
import functools
import time
from dataclasses import dataclass

import cv2
import numpy as np
from playwright.async_api import Page

from evaluator.agents.observation import ElementInfo
from evaluator.browser.isolated import evaluate, world
from evaluator.evidence.facts import (
    EffectFacts,
    ImageProbe,
    MeasuredPageFacts,
    checked_effect_facts,
    checked_page_facts,
)
from evaluator.package_data import package_text


@functools.cache
def page_script(name: str) -> str:
    """Source of the in-page script ``scripts/<name>.js``."""
    return package_text("scripts", f"{name}.js")


async def page_facts(page: Page) -> MeasuredPageFacts:
    """Overflow, broken images, contrast, author styling and text of the page as it is now.

    Measured in the page's isolated world, like every probe here: the page's scripts cannot rewrite the result (a
    hooked ``eval``) nor break the measurement by accident (a library that patches ``Array.from``). What comes back
    is validated all the same (:func:`~evaluator.evidence.facts.checked_page_facts`: malformed facts raise the
    page's tampering).
    """
    return checked_page_facts(await evaluate(page, page_script("page_facts"), page_script("css_path")))


async def interactive_elements(page: Page) -> list[ElementInfo]:
    """Visible interactive elements with selector, label, geometry and kind, each indexed by its place."""
    elements = await world(page).call(page_script("interactive_elements"), page_script("css_path"), marks=True)
    return [ElementInfo.model_validate({**element, "index": index}) for index, element in enumerate(elements)]


async def state_signature(page: Page) -> str:
    """Fingerprint of the user-visible state (markup, form values, scroll, URL)."""
    return str(await evaluate(page, page_script("state_signature")))


@dataclass(frozen=True)
class SettleResult:
    """How the render wait ended."""

    stable: bool
    seconds: float


async def wait_for_render(
    page: Page, *, timeout_s: float = 5.0, interval_s: float = 0.05, stable_polls: int = 2
) -> SettleResult:
    """Wait until the document is loaded, fonts are ready and the layout stops changing.

    Polls a layout fingerprint rather than sleeping a fixed time: a static page settles in a few
    hundred milliseconds, a page that keeps changing is given up on after ``timeout_s``.
    """
    start = time.monotonic()
    last, same = "", 0
    while time.monotonic() - start < timeout_s:
        try:
            signature = await evaluate(page, page_script("layout_signature"))
        except Exception:  # noqa: BLE001 - navigation in progress destroys the context; poll again
            signature, same = "", 0
        if signature and signature == last and signature.startswith("complete"):
            same += 1
            if same >= stable_polls:
                return SettleResult(True, time.monotonic() - start)
        else:
            same = 0
        last = signature
        await asyncio.sleep(interval_s)
    return SettleResult(False, time.monotonic() - start)


def probe_image(png: bytes) -> ImageProbe:
    """Measure a screenshot: how much of it is background, how colourful, how busy."""
    image = cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_COLOR) if png else None
    if image is None:
        return ImageProbe(background_fraction=1.0, gray_std=0.0, colorfulness=0.0, edge_density=0.0, blank=True)
    small = cv2.resize(image, (320, max(1, image.shape[0] * 320 // image.shape[1])), interpolation=cv2.INTER_AREA)
    quantized = (small // 8).reshape(-1, 3).astype(np.int32)
    packed = (quantized[:, 0] << 10) | (quantized[:, 1] << 5) | quantized[:, 2]
    code = int(np.bincount(packed, minlength=1 << 15).argmax())
    dominant = np.array([code >> 10, (code >> 5) & 31, code & 31], dtype=np.int32) * 8 + 4
    distance = np.abs(small.reshape(-1, 3).astype(np.int32) - dominant).max(axis=1)
    background = float((distance <= 12).mean())
    gray = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY)
    b, g, r = (small[..., i].astype(np.float64) for i in range(3))
    rg, yb = np.abs(r - g), np.abs(0.5 * (r + g) - b)
    colorfulness = float(np.hypot(rg.std(), yb.std()) + 0.3 * np.hypot(rg.mean(), yb.mean()))
    edges = float((cv2.Canny(gray, 80, 160) > 0).mean())
    gray_std = float(gray.std())
    blank = background > 0.995 or gray_std < 1.5
    # Rounded as the bundle keeps them: the judge reads the stored probe, never this one.
    return ImageProbe(background_fraction=round(background, 4), gray_std=round(gray_std, 4),
                      colorfulness=round(colorfulness, 4), edge_density=round(edges, 4), blank=blank)


VISUAL_CHANGE_THRESHOLD = 0.0008
"""Share of changed pixels above which two screenshots differ by more than anti-aliasing noise."""
_RING_PX = 6
"""How far past a control's box its own focus ring or pressed look may paint."""


def changed_fraction(before_png: bytes, after_png: bytes, *, outside: dict[str, float] | None = None) -> float:
    """Share of pixels that differ clearly between two screenshots (1.0 when they cannot be compared); with
    ``outside`` (a box in CSS pixels, the screenshots being at scale 1), pixels in that box do not count."""
    a = cv2.imdecode(np.frombuffer(before_png, np.uint8), cv2.IMREAD_GRAYSCALE) if before_png else None
    b = cv2.imdecode(np.frombuffer(after_png, np.uint8), cv2.IMREAD_GRAYSCALE) if after_png else None
    if a is None or b is None or a.shape != b.shape:
        return 1.0
    changed = np.abs(a.astype(np.int16) - b.astype(np.int16)) > 24
    if outside is not None:
        # a focus ring or a pressed look reaches a few pixels past the control's box
        x0, y0 = max(int(outside["x"]) - _RING_PX, 0), max(int(outside["y"]) - _RING_PX, 0)
        # (an end above or left of the screen stays 0: a negative slice end would count from the far edge)
        x1 = max(int(outside["x"] + outside["width"]) + _RING_PX, 0)
        y1 = max(int(outside["y"] + outside["height"]) + _RING_PX, 0)
        changed[y0:y1, x0:x1] = False
    return float(changed.mean())


def visual_change(before_png: bytes, after_png: bytes, *, threshold: float = VISUAL_CHANGE_THRESHOLD) -> bool:
    """Whether two screenshots differ by more than anti-aliasing noise."""
    return changed_fraction(before_png, after_png) > threshold


async def keyboard_driven(page: Page) -> str:
    """Why the page seems driven by keys pressed anywhere on it (``listener``, ``canvas``, ``text``), or ``""``."""
    return str(await world(page).call(page_script("keyboard_driven"), marks=True) or "")


async def effect_facts(page: Page, own: str | None = None) -> EffectFacts:
    """Markup fingerprint (field values left out), list item count and visible text: what an action changed.

    With ``own`` (the selector of a control acted on), also the fingerprint of the markup outside the control's
    own attributes (``outside``) and the control's box (``own``), when the control is small enough to be one.
    """
    return checked_effect_facts(await evaluate(page, page_script("effect_facts"), own))


async def settle_transitions(page: Page, *, limit_ms: int = 250) -> None:
    """Let finite CSS transitions and animations (hover effects) finish, up to ``limit_ms``."""
    await evaluate(page, page_script("settle_transitions"), limit_ms)
