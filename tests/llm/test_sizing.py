"""How many images a request may carry under a server's limits, and which keyframes stay when fewer fit."""

from __future__ import annotations

import pytest

from evaluator.llm.sizing import Fitted, ServerLimits, image_room, spread

pytestmark = pytest.mark.pure


def test_the_room_is_the_tighter_of_the_image_limit_and_what_the_context_leaves() -> None:
    assert image_room(ServerLimits(), text_tokens=10**6, max_tokens=10**6) is None  # nothing known: no limit here
    assert image_room(ServerLimits(images=9), text_tokens=5000, max_tokens=3000) == 9
    # 16384 - 3000 answer - 5000 text = 8384 left: 5 images of 1400 tokens, 34 of 240.
    assert image_room(ServerLimits(context_tokens=16384), text_tokens=5000, max_tokens=3000) == 5
    assert image_room(ServerLimits(images=9, context_tokens=16384, image_tokens=240), text_tokens=5000,
                      max_tokens=3000) == 9
    assert image_room(ServerLimits(images=9, context_tokens=16384), text_tokens=5000, max_tokens=3000) == 5
    assert image_room(ServerLimits(context_tokens=4096), text_tokens=5000, max_tokens=3000) == 0  # text over it


def test_fewer_keyframes_still_span_the_recording_from_its_first() -> None:
    frames = list(range(8))
    assert spread(frames, 8) == spread(frames, 20) == frames
    assert spread(frames, 4) == [0, 2, 4, 6]
    assert spread(frames, 3) == [0, 2, 5]
    assert spread(frames, 1) == [0] and spread(frames, 0) == spread(frames, -1) == []


def test_the_note_says_how_many_of_how_many_and_under_which_limits() -> None:
    note = Fitted("dynamic_scoring", wanted=13, shown=5,
                  limits=ServerLimits(images=9, context_tokens=16384, image_tokens=1400)).note()
    assert note == ("dynamic_scoring: 8 of 13 images left out to fit the server (at most 9 images per prompt and a "
                    "context of 16384 tokens at about 1400 per image)")
