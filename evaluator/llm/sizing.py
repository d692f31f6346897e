"""Requests sized to the server: how many images one prompt may carry, and what was left out to fit.

A vision-language server refuses a prompt with more images than it takes (vLLM's ``--limit-mm-per-prompt``) or
more tokens than its context (``--max-model-len``), and every image costs prompt tokens by its model's processor
(Qwen2-VL: one token per 28x28 pixels, 1,334 for a 1280x800 screenshot; Idefics3: a fixed count per tile).
So a model caller (the judges, the agent) asks its client's ``image_room`` (this module's :func:`image_room` on the
server's limits) before it sends a request with images, and shows
fewer (keyframes first) instead of sending one the server will refuse; :class:`Fitted` says what it left out.

The per-image cost is the endpoint's ``image_tokens``, a stated estimate: the served model's processor is not
known from the endpoint, and a request that still does not fit is refused with a message the client recognises
(:class:`~evaluator.errors.RequestTooLargeError`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

_T = TypeVar("_T")

IMAGE_TOKENS = 1400
"""What one image is taken to cost in prompt tokens unless the endpoint says (``image_tokens``): it covers Qwen2-VL's
1,334 for a 1280x800 screenshot."""


@dataclass(frozen=True)
class ServerLimits:
    """What one server takes in one prompt (``None``: not known, so not limited here)."""

    images: int | None = None
    """Images per prompt."""
    context_tokens: int | None = None
    """The context length: prompt and answer together."""
    image_tokens: int = IMAGE_TOKENS
    """What one image is taken to cost in prompt tokens."""

    def describe(self) -> str:
        """The limits in words, for a note on what was left out."""
        parts = []
        if self.images is not None:
            parts.append(f"at most {self.images} images per prompt")
        if self.context_tokens is not None:
            parts.append(f"a context of {self.context_tokens} tokens at about {self.image_tokens} per image")
        return " and ".join(parts) or "no known limit"


def image_room(limits: ServerLimits, *, text_tokens: int, max_tokens: int) -> int | None:
    """How many images a prompt of ``text_tokens`` (an estimate) answered in up to ``max_tokens`` may carry under
    ``limits``; ``None`` when nothing limits it."""
    rooms = []
    if limits.images is not None:
        rooms.append(limits.images)
    if limits.context_tokens is not None:
        left = limits.context_tokens - max_tokens - text_tokens
        rooms.append(max(0, left // limits.image_tokens))
    return min(rooms) if rooms else None


def spread(items: Sequence[_T], most: int) -> list[_T]:
    """At most ``most`` of ``items``, spread evenly over them in their order (the first always kept): fewer
    keyframes that still span the whole recording."""
    count = len(items)
    if most >= count:
        return list(items)
    if most <= 0:
        return []
    return [items[i * count // most] for i in range(most)]


@dataclass(frozen=True)
class Fitted:
    """Images a request left out to fit its server."""

    call: str
    """Which request (``dynamic_scoring``, ``pairwise`` ...)."""
    wanted: int
    """Images it would have shown."""
    shown: int
    """Images it showed."""
    limits: ServerLimits

    def note(self) -> str:
        """What was left out and why, for a person reading the record."""
        return (f"{self.call}: {self.wanted - self.shown} of {self.wanted} images left out to fit the server "
                f"({self.limits.describe()})")
