"""The page's facts, checked at the boundary: what ``scripts/page_facts.js`` measured, or the page's tampering.

Also the record a bundle keeps of them, ``static/<viewport>-facts.json`` (:class:`StaticFacts`: the facts, the
screenshot's image probe and the load timings), which judges read typed. Fields measured since the first collector
(the browser defaults, illegible text, the design record, the canvas share) read from older bundles as "not
measured"; what the page returns now must have every one (:class:`MeasuredPageFacts`).

The script runs in an isolated world (:func:`~evaluator.evidence.probes.page_facts`), out of the page's reach;
what comes back is validated all the same before anything stores or reads it, as the one check that does not
depend on that isolation holding: a missing field, or a field of the wrong kind, is not a crash of the judge
later on (which would leave the app unscored) but the app's tampering, raised as
:class:`~evaluator.errors.ForgedMeasurementError` while the app is in play.
"""

from __future__ import annotations

from typing import TypeVar

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
    """Overflow, broken images, contrast, author styling, design and text of a page as a bundle recorded them."""

    viewport_width: Number
    scroll_width: Number
    overflow_x: Number
    broken_images: list[BrokenImage]
    low_contrast: list[LowContrast] = Field(max_length=20)
    low_contrast_count: int = _Count
    text_elements: int = _Count
    css_rules: int = _Count
    inline_styled_elements: int = _Count
    defaults: BrowserDefaults | None = None
    illegible_count: int = Field(default=0, ge=0)
    design: DesignFacts | None = None
    font_family: str
    element_count: int = _Count
    text_length: int = _Count
    canvas_share: Number = Field(default=0, ge=0, le=1)
    """The share of the first screen that visible canvases cover."""
    title: str
    lang: str
    has_viewport_meta: bool
    text_sample: str = Field(max_length=2000)


class MeasuredPageFacts(PageFacts):
    """The facts as the script returns them today: the later fields too, none missing."""

    defaults: BrowserDefaults | None
    illegible_count: int = _Count
    design: DesignFacts
    canvas_share: Number = Field(ge=0, le=1)


class ImageProbe(_Fact):
    """What a screenshot looks like, measured (:func:`~evaluator.evidence.probes.probe_image`)."""

    model_config = ConfigDict(frozen=True)

    background_fraction: float
    """Share of pixels within a small distance of the dominant colour."""
    gray_std: float
    """Standard deviation of the grayscale image."""
    colorfulness: float
    """Hasler and Süsstrunk's colourfulness metric."""
    edge_density: float
    """Share of Canny edge pixels."""
    blank: bool
    """Nothing but background: a blank render."""


class LoadTimings(_Fact):
    """How the page loaded and settled (:func:`~evaluator.evidence.perception.load`)."""

    load_s: float
    settle_s: float
    layout_stable: bool
    navigation_error: str | None = None
    """Why navigation did not finish (a page that never loads is evidence, not a crash); ``None`` when it did."""
    dom_content_loaded_ms: Number | None = None
    load_ms: Number | None = None
    """The navigation's own timing, ``None`` when the page gave none (it crashed or navigated away)."""


class StaticFacts(_Fact):
    """One viewport's record of Static Perception in a bundle (``static/<viewport>-facts.json``)."""

    facts: PageFacts
    image: ImageProbe
    timings: LoadTimings


class EffectFacts(_Fact):
    """What an action may have changed, as ``scripts/effect_facts.js`` measures it before and after the action."""

    markup: str
    """Fingerprint of the body's markup, field values left out."""
    items: int = _Count
    """List items, table rows and options in the body."""
    url: str
    text: str
    """The body's visible text (its first 20,000 characters)."""
    outside: str | None = None
    """Given a control acted on that is small enough to be one: fingerprint of the markup outside its own
    attributes; ``None`` otherwise, as are the two below."""
    own: dict[str, float] | None = None
    """The control's box in CSS pixels (``x``, ``y``, ``width``, ``height``)."""
    values: str | None = None
    """Fingerprint of the form fields' values other than the control's."""


_ModelT = TypeVar("_ModelT", bound=BaseModel)


def _checked(model: type[_ModelT], raw: object, what: str) -> _ModelT:
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        wrong = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'the result'}: {e['msg']}" for e in exc.errors()[:5])
        raise ForgedMeasurementError(f"the page's {what} came back malformed ({exc.error_count()} problem(s): "
                                     f"{wrong}); the page rewrote evalgrid's measurement") from None


def checked_page_facts(raw: object) -> MeasuredPageFacts:
    """``raw`` as the page-facts script returns it, validated: the facts, or the page's tampering.

    Raises :class:`~evaluator.errors.ForgedMeasurementError` naming the first fields that were wrong.
    """
    return _checked(MeasuredPageFacts, raw, "facts")


def checked_effect_facts(raw: object) -> EffectFacts:
    """``raw`` as the effect-facts script returns it, validated (as :func:`checked_page_facts`)."""
    return _checked(EffectFacts, raw, "effect facts")
