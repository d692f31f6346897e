"""Units: the sentences (or slices of a long line) of a normalised text, each given its signals by the detector.

A sentence ends at . ! ? before a space, a closing tag, a non-ASCII character or the end (not inside
"8.0" or "console.log"), at 。 or at a line end; a line longer than :data:`UNIT` characters (minified
code) is cut into slices, so that signals far apart in one line do not combine. Sentences without a
blank line between them are one paragraph.
"""

from __future__ import annotations

import re

MAX_SPAN = 400
"""The most characters one unit (sentence or slice of a long line) may span, as before."""
UNIT = 300
"""A line longer than this (minified code) is cut into slices this long, so that signals far apart
in one line do not combine."""
_BLANK_LINE = re.compile(r"\n[ \t]*\n")

# A sentence ends at . ! ? before a space, a closing tag, a non-ASCII character or the end (not inside "8.0" or
# "console.log"), at 。 or at a line end.
SENTENCE_END = re.compile(r"[.!?]+(?=[\s\"')\]]|</|$|[^\x00-\x7f])|[。\n]")


def split_units(text: str) -> list[tuple[int, int]]:
    """Sentences of the normalised text, whitespace trimmed, long ones cut into slices."""
    units: list[tuple[int, int]] = []
    position = 0
    ends = [m.end() for m in SENTENCE_END.finditer(text)]
    for end in [*ends, len(text)]:
        start = position
        position = end
        segment = text[start:end]
        stripped = segment.strip()
        if not stripped:
            continue
        start += len(segment) - len(segment.lstrip())
        stop = start + len(stripped)
        while stop - start > UNIT:
            cut = text.rfind(" ", start + UNIT // 2, start + UNIT)
            cut = cut + 1 if cut > 0 else start + UNIT
            units.append((start, cut))
            start = cut
        if stop > start:
            units.append((start, stop))
    return units


def runs(indices: list[int]) -> list[tuple[int, int]]:
    """Sorted unit indices as runs of consecutive ones, (first, last)."""
    grouped: list[tuple[int, int]] = []
    for k in indices:
        if grouped and grouped[-1][1] == k - 1:
            grouped[-1] = (grouped[-1][0], k)
        else:
            grouped.append((k, k))
    return grouped


def same_paragraph(text: str, first: tuple[int, int], second: tuple[int, int]) -> bool:
    """Whether two units (in order) are in one paragraph: no blank line between them."""
    return _BLANK_LINE.search(text, first[1], second[0]) is None


def sentence_around(text: str, start: int, end: int) -> tuple[int, int]:
    """The sentence of the original text around an encoded run (bounded, but never less than the run)."""
    floor = max(0, start - MAX_SPAN // 2)
    ends = [m.end() for m in SENTENCE_END.finditer(text, floor, start)]
    begin = ends[-1] if ends else floor
    while begin < start and text[begin].isspace():
        begin += 1
    found = SENTENCE_END.search(text, end, min(len(text), end + MAX_SPAN // 2))
    return begin, found.end() if found else min(len(text), end + MAX_SPAN // 2)
