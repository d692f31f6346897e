"""The page's facts, checked at the boundary: what ``scripts/page_facts.js`` measured, or the page's tampering.

The script runs in an isolated world (:func:`~evaluator.evidence.probes.page_facts`), out of the page's reach;
what comes back is validated all the same before anything stores or reads it, as the one check that does not
depend on that isolation holding: a missing field, or a field of the wrong kind, is not a crash of the judge
later on (which would leave the app unscored) but the app's tampering, raised as
:class:`~evaluator.errors.ForgedMeasurementError` while the app is in play.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evaluator.errors import ForgedMeasurementError

_Count = Field(ge=0)
Number = int | float
"""A measurement as JSON gives it: an integer stays one (the stored facts read as the script wrote them)."""


class _Fact(BaseModel):
    # Extra keys are dropped: only what evalgrid measures is kept. Types are checked as JSON gives them (a list for a
    # tuple); a value that cannot be what its field says, or a missing one, is the failure.
    model_config = ConfigDict(extra="ignore")


class BrokenImage(_Fact):
    """An image whose source did not load."""

    selector: str
    src: str


class LowContrast(_Fact):
    """Text whose contrast with its background is below what WCAG asks for its size."""

    selector: str
    text: str
    ratio: Number
    required: Number


class BrowserDefaults(_Fact):
    """Which parts of the page show the browser's default styles (links and buttons: ``None`` when there are none)."""

    font: bool
    margin: bool
    colors: bool
    links: bool | None
    buttons: bool | None


class DesignFacts(_Fact):
    """Raw design measurements (their meaning: :mod:`evaluator.evidence.design`)."""

    text: list[tuple[Number, Number, Number, Number, Number, Number, str, int, int, int]] = Field(max_length=200)
    families: list[str]
    spacing: dict[str, Number]
    colors: dict[str, Number]
    viewport: tuple[Number, Number]


class PageFacts(_Fact):
    """Overflow, broken images, contrast, author styling, design and text of a page as it was measured."""

    viewport_width: Number
    scroll_width: Number
    overflow_x: Number
    broken_images: list[BrokenImage]
    low_contrast: list[LowContrast] = Field(max_length=20)
    low_contrast_count: int = _Count
    text_elements: int = _Count
    css_rules: int = _Count
    inline_styled_elements: int = _Count
    defaults: BrowserDefaults | None
    illegible_count: int = _Count
    design: DesignFacts
    font_family: str
    element_count: int = _Count
    text_length: int = _Count
    canvas_share: Number = Field(ge=0, le=1)
    """The share of the first screen that visible canvases cover (the judge reads facts stored before it as 0)."""
    title: str
    lang: str
    has_viewport_meta: bool
    text_sample: str = Field(max_length=2000)


def checked_page_facts(raw: object) -> dict[str, Any]:
    """``raw`` as the page-facts script returns it, validated: the facts as JSON, or the page's tampering.

    Raises :class:`~evaluator.errors.ForgedMeasurementError` naming the first fields that were wrong.
    """
    try:
        facts = PageFacts.model_validate(raw)
    except ValidationError as exc:
        wrong = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'the result'}: {e['msg']}" for e in exc.errors()[:5])
        raise ForgedMeasurementError(f"the page's facts came back malformed ({exc.error_count()} problem(s): "
                                     f"{wrong}); the page rewrote evalgrid's measurement") from None
    return facts.model_dump(mode="json")
