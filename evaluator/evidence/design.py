"""Measured design qualities of a styled page: alignment, type scale, spacing rhythm, palette, hierarchy and
whitespace.

Pure functions from the ``design`` record of the page facts (``scripts/page_facts.js``) and the desktop
screenshot to numbers; the rubric (``heuristic-v3`` and later, key ``aesthetic.qualities``) holds every
threshold and says how many points a quality is worth. Each measure follows a metric of the Aalto Interface
Metrics (AIM, github.com/aalto-ui/aim) or a typographic rule, named at its function. Thresholds come from the
principle the measure stands for, not from fitting scores: each is explained in the rubric.

A quality that cannot be measured (evidence collected before the design facts existed, no screenshot, too
few elements to judge) is reported as not measured and earns nothing.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import cv2
import numpy as np

from evaluator.evidence.facts import DesignFacts
from evaluator.package_data import YamlDocument

QUALITIES = ("alignment", "type_scale", "spacing_rhythm", "palette", "hierarchy", "whitespace")
"""The qualities in the order the verdict cites them."""


@dataclass(frozen=True)
class Quality:
    """One design quality as measured on one page."""

    name: str
    """The rubric's name for it (one of ``QUALITIES``)."""
    measured: bool
    """False when the evidence could not show it (old bundle, no screenshot, too few elements)."""
    passed: bool
    """The measured value meets the rubric's threshold."""
    value: float | None
    """The headline number (share, count or ratio; see ``detail``), None when not measured."""
    detail: str
    """The measured numbers and the threshold, in one sentence."""


class _Text(NamedTuple):
    """One row of ``design.text`` (see page_facts.js): a visible element with its own text."""

    left: float
    top: float
    width: float
    height: float
    size: float
    weight: float
    align: str
    box: int
    chars: int
    family: int

    @property
    def anchor(self) -> float:
        """The x the element's text lines up on: its left edge, centre or right edge, by its text-align."""
        return self.left + {"c": self.width / 2, "r": self.width}.get(self.align, 0.0)


def measure_qualities(design: DesignFacts | None, screenshot: bytes | None,
                      spec: YamlDocument) -> list[Quality]:
    """Every quality the rubric names (in ``QUALITIES`` order), measured from the facts and the screenshot."""
    texts = [_Text(*row) for row in design.text] if design is not None else []
    measures: dict[str, Callable[[YamlDocument], Quality]] = {
        "alignment": lambda s: _alignment(texts, design, s),
        "type_scale": lambda s: _type_scale(texts, design, s),
        "spacing_rhythm": lambda s: _spacing(design, s),
        "palette": lambda s: _palette(design, s),
        "hierarchy": lambda s: _hierarchy(texts, design, s),
        "whitespace": lambda s: _whitespace(screenshot, s),
    }
    return [measures[name](spec[name]) for name in QUALITIES if name in spec]


def _unmeasured(name: str, why: str) -> Quality:
    return Quality(name, measured=False, passed=False, value=None, detail=f"not measured: {why}")


_OLD_BUNDLE = "the evidence has no design facts (collected before them; recollect to measure)"


def _alignment(texts: list[_Text], design: DesignFacts | None, spec: YamlDocument) -> Quality:
    """Share of the first screen's text blocks that sit on an edge shared with another block.

    Follows AIM M21 "Grid quality", G2 (number of alignment points, 2 px tolerance; Miniukovich and De Angeli,
    CHI 2015): on a grid, elements share a few column edges. A block is aligned when its text edge (left,
    centre or right, by its text-align) is within the tolerance of another block's with the same alignment,
    or when it sits in a row with another block (same top or middle). Inline text runs inside a paragraph are
    not layout decisions and are left out.
    """
    if design is None:
        return _unmeasured("alignment", _OLD_BUNDLE)
    height = design.viewport[1]
    tol = spec["tolerance_px"]
    blocks = [t for t in texts if t.box and t.top < height and t.top + t.height > 0]
    if len(blocks) < spec["min_blocks"]:
        return _unmeasured("alignment", f"only {len(blocks)} text blocks on the first screen "
                                        f"(needs {spec['min_blocks']})")

    def aligned(t: _Text) -> bool:
        others = [o for o in blocks if o is not t]
        column = any(o.align == t.align and abs(o.anchor - t.anchor) <= tol for o in others)
        row = any(abs(o.anchor - t.anchor) > tol and (abs(o.top - t.top) <= tol or abs(
            (o.top + o.height / 2) - (t.top + t.height / 2)) <= tol) for o in others)
        return column or row

    share = sum(aligned(t) for t in blocks) / len(blocks)
    edges = _distinct([t.anchor for t in blocks], tol)
    passed = share >= spec["min_aligned_share"]
    return Quality("alignment", True, passed, round(share, 2),
                   f"{share:.0%} of {len(blocks)} text blocks on the first screen share an edge or a row with "
                   f"another ({edges} distinct column edges; needs {spec['min_aligned_share']:.0%})")


def _distinct(points: Sequence[float], tolerance: float) -> int:
    """Points more than ``tolerance`` apart, counted along the sorted axis (AIM M21's count of alignment points)."""
    kept: list[float] = []
    for point in sorted(points):
        if not kept or point - kept[-1] > tolerance:
            kept.append(point)
    return len(kept)


def _type_scale(texts: list[_Text], design: DesignFacts | None, spec: YamlDocument) -> Quality:
    """Distinct font sizes and typefaces in the page's text.

    Follows the counting of AIM M21 G3/G5 (number of distinct block sizes: fewer sizes, a more proportional
    grid) applied to type: a modular type scale uses a handful of steps, and the typographer's rule is at
    most two typefaces (code set in a monospace face does not count as another).
    """
    if design is None:
        return _unmeasured("type_scale", _OLD_BUNDLE)
    if len(texts) < spec["min_texts"]:
        return _unmeasured("type_scale", f"only {len(texts)} text elements (needs {spec['min_texts']})")
    sizes = sorted({round(t.size * 2) / 2 for t in texts})
    families = len({t.family for t in texts})
    passed = len(sizes) <= spec["max_sizes"] and families <= spec["max_families"]
    shown = ", ".join(f"{s:g}" for s in sizes[:10]) + (" ..." if len(sizes) > 10 else "")
    return Quality("type_scale", True, passed, float(len(sizes)),
                   f"{len(sizes)} font sizes ({shown} px; at most {spec['max_sizes']}) in {families} "
                   f"typeface{'s' if families != 1 else ''} (at most {spec['max_families']})")


def _spacing(design: DesignFacts | None, spec: YamlDocument) -> Quality:
    """Share of vertical margins, paddings and gaps that are whole multiples of the base unit.

    No AIM metric measures spacing from the layout; this follows the baseline-grid rule of design systems
    (Material Design's 4 dp grid): spacing on a common unit gives the page a rhythm.
    """
    if design is None:
        return _unmeasured("spacing_rhythm", _OLD_BUNDLE)
    counts = {float(px): int(n) for px, n in design.spacing.items()}
    total = sum(counts.values())
    if total < spec["min_values"]:
        return _unmeasured("spacing_rhythm", f"only {total} spacing values (needs {spec['min_values']})")
    base = spec["base_px"]
    on_grid = sum(n for px, n in counts.items() if abs(px - base * round(px / base)) <= spec["tolerance_px"])
    share = on_grid / total
    off = sorted((px for px in counts if abs(px - base * round(px / base)) > spec["tolerance_px"]),
                 key=lambda px: -counts[px])[:4]
    example = f"; off it, e.g. {', '.join(f'{px:g}' for px in off)} px" if off else ""
    return Quality("spacing_rhythm", True, share >= spec["min_on_grid_share"], round(share, 2),
                   f"{share:.0%} of {total} margins, paddings and gaps are multiples of {base} px "
                   f"(needs {spec['min_on_grid_share']:.0%}){example}")


def _palette(design: DesignFacts | None, spec: YamlDocument) -> Quality:
    """Distinct colour clusters and hue families among the page's painted colours.

    Follows AIM M12 "Dynamic clusters" (colours united within a distance, clusters counted) and M20 "Color
    harmony" (Cohen-Or et al. 2006: a harmonious scheme sits in few hue sectors), on the computed colours of
    backgrounds, text and borders rather than on pixels, so photographs and anti-aliasing do not count.
    Colours within ``merge_delta_e`` (CIELAB, ΔE*76) are one cluster; a cluster of chroma at least
    ``min_chroma`` has a hue, and hues within ``hue_gap_deg`` of a neighbour are one family (analogous).
    """
    if design is None:
        return _unmeasured("palette", _OLD_BUNDLE)
    painted = {tuple(int(v) for v in key.split(",")): float(w) for key, w in design.colors.items()}
    total = sum(painted.values())
    if not painted or total <= 0:
        return _unmeasured("palette", "no painted colour")
    clusters: list[tuple[tuple[float, float, float], float]] = []
    for rgb, weight in sorted(painted.items(), key=lambda item: (-item[1], item[0])):
        if weight < spec["min_weight_share"] * total:
            continue  # a hairline or a single glyph in a colour is not part of the scheme
        lab = _lab(rgb)
        for i, (seed, w) in enumerate(clusters):
            if math.dist(seed, lab) <= spec["merge_delta_e"]:
                clusters[i] = (seed, w + weight)
                break
        else:
            clusters.append((lab, weight))
    hues = sorted(math.degrees(math.atan2(b, a)) % 360 for (_, a, b), _ in clusters
                  if math.hypot(a, b) >= spec["min_chroma"])
    families = _hue_families(hues, spec["hue_gap_deg"])
    passed = len(clusters) <= spec["max_colors"] and families <= spec["max_hues"]
    return Quality("palette", True, passed, float(len(clusters)),
                   f"{len(clusters)} colour clusters (at most {spec['max_colors']}) in {families} hue "
                   f"famil{'ies' if families != 1 else 'y'} (at most {spec['max_hues']})")


def _lab(rgb: tuple[int, ...]) -> tuple[float, float, float]:
    """sRGB (0-255) to CIELAB under D65."""
    def linear(v: int) -> float:
        c = v / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (linear(v) for v in rgb[:3])
    x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047
    y = 0.2126 * r + 0.7152 * g + 0.0722 * b
    z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883

    def f(t: float) -> float:
        return t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116

    return 116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))


def _hue_families(hues: list[float], gap: float) -> int:
    """Groups of hue angles (sorted, degrees) whose neighbours are within ``gap``, around the colour wheel."""
    if not hues:
        return 0
    gaps = [b - a for a, b in zip(hues, hues[1:], strict=False)] + [hues[0] + 360 - hues[-1]]
    return max(1, sum(g > gap for g in gaps))


def _hierarchy(texts: list[_Text], design: DesignFacts | None, spec: YamlDocument) -> Quality:
    """Size (and weight) contrast between the largest text and the body text (the size most characters use).

    No AIM metric reads type; this follows the typographic scale: a top heading two steps above the body on
    a major-third or perfect-fourth scale is 1.5x or more, and a smaller step carries a level only when the
    heading is also bold against regular body text.
    """
    if design is None:
        return _unmeasured("hierarchy", _OLD_BUNDLE)
    if len(texts) < 2:
        return _unmeasured("hierarchy", "fewer than two text elements")
    chars: dict[float, int] = {}
    for t in texts:
        chars[t.size] = chars.get(t.size, 0) + t.chars
    body = min(chars, key=lambda size: (-chars[size], size))
    body_weight = max((t for t in texts if t.size == body), key=lambda t: t.chars).weight
    top = max(t.size for t in texts)
    top_weight = max(t.weight for t in texts if t.size == top)
    ratio = top / body
    bold = top_weight - body_weight >= spec["min_weight_step"]
    passed = ratio >= spec["min_size_ratio"] or (ratio >= spec["min_bold_size_ratio"] and bold)
    return Quality("hierarchy", True, passed, round(ratio, 2),
                   f"largest text {top:g} px (weight {top_weight:g}) over body {body:g} px (weight {body_weight:g}): "
                   f"{ratio:.2f}x (needs {spec['min_size_ratio']}x, or {spec['min_bold_size_ratio']}x "
                   f"and {spec['min_weight_step']} heavier)")


def _whitespace(screenshot: bytes | None, spec: YamlDocument) -> Quality:
    """Share of empty space on the first screen, and how well the content is centred left to right.

    Whitespace follows AIM M22 "White space" (share of the GUI not covered by elements; Miniukovich and De
    Angeli, CHI 2015), measured on the screenshot: a tile of uniform colour is empty, whether page background
    or the padding of a card. Balance follows Ngo et al.'s equilibrium (Information Sciences 2003; AIM's
    legacy PF6 quadtree "balance, symmetry and equilibrium"): the centre of the content's extent against the
    centre of the frame. Only left/right is scored: a web page flows top to bottom, and the empty space under
    a short page is its end, not a lopsided composition. Extent, not mass: a left-aligned text column in a
    centred container is the norm of web layout, where a page hugging one side of a wide screen is not.
    """
    image = cv2.imdecode(np.frombuffer(screenshot, np.uint8), cv2.IMREAD_COLOR) if screenshot else None
    if image is None:
        return _unmeasured("whitespace", "no desktop screenshot in the evidence")
    tile = spec["tile_px"]
    rows, cols = image.shape[0] // tile, image.shape[1] // tile
    if rows == 0 or cols == 0:
        return _unmeasured("whitespace", "the screenshot is smaller than one tile")
    tiles = image[:rows * tile, :cols * tile].astype(np.int16).reshape(rows, tile, cols, tile, 3)
    spread = (tiles.max(axis=(1, 3)) - tiles.min(axis=(1, 3))).max(axis=2)
    busy = spread > spec["uniform_range"]
    if not busy.any():
        return _unmeasured("whitespace", "nothing but uniform colour on the first screen")
    empty = 1.0 - float(busy.mean())
    columns = np.flatnonzero(busy.any(axis=0))
    left, right = int(columns[0]) * tile, (cols - 1 - int(columns[-1])) * tile
    equilibrium = 1.0 - abs(left - right) / (cols * tile)
    low, high = spec["min_share"], spec["max_share"]
    passed = low <= empty <= high and equilibrium >= spec["min_equilibrium"]
    return Quality("whitespace", True, passed, round(empty, 2),
                   f"{empty:.0%} of the first screen is empty (band {low:.0%}-{high:.0%}); content spans "
                   f"{left}-{cols * tile - right} px, equilibrium {equilibrium:.2f} (needs {spec['min_equilibrium']})")
