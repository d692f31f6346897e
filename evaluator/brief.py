"""What a query's brief asks of the app, read from its words: the explorer orders its probes by it and the
heuristic judge weighs what it saw by it."""

from __future__ import annotations

import re

_KEYS = re.compile(r"\b(arrow keys?|arrows|keyboard|WASD|space ?bar|hot ?keys?|shortcuts?|key ?presses|"
                   r"keys? to (move|play|steer|control|navigate))\b", re.I)
_FOCUS = re.compile(r"\bfocus", re.I)
_CLAUSE_END = re.compile(r"(?<=[.;!?])\s+")


def asks_for_keys(brief: str, *, widget_keys: bool = True) -> bool:
    """The brief asks for keys pressed on the page (a game's arrows, a slideshow's, an editor's shortcuts).

    With ``widget_keys``, a sentence that gives the keys to a focused control ("the arrow keys on a focused
    knob", "with a tab focused") describes that widget's keyboard access, which page-wide presses neither reach
    nor refute; without it (the heuristic judge before v5), any mention counts.
    """
    if not widget_keys:
        return bool(_KEYS.search(brief))
    return any(_KEYS.search(part) and not _FOCUS.search(part) for part in _CLAUSE_END.split(brief))
