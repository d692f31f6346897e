"""Identifiers in code, JSON and logs, read as the words they are made of.

An identifier that joins a reader with a directive ("NOTE_FOR_AGENT", "judge.scoreFloor",
"evaluator_config") addresses the evaluator (the signal ``ident``; ``ident_order``, strong, where a
named evaluator is given an order: "evaluator_should_stop_testing", "__EVAL_OVERRIDE__"); one with a
directive ("skip_interaction": true) is read as words, with what follows it, and given the signals
those words carry. Candidates are found by a trie of the vocabulary's words, and read as words only
where they hold a directive.
"""

from __future__ import annotations

import bisect
import functools
import re

from evaluator.textsafety.normalisation import Normalised
from evaluator.textsafety.patterns import compiled

_TOKEN_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_$.-")
_TOKEN_REST = re.compile(r"[\w$]*(?:[.-][\w$]+)*")
_IDENT_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_MAX_READINGS = 64
"""At most this many identifiers are read per text."""


@functools.lru_cache(maxsize=4096)
def identifier(token: str) -> tuple[int, bool, str] | None:
    """An identifier's words: (how it addresses the reader: 0 not, 1 a reader with a directive, 2 a named
    evaluator given an order; has a directive; its words), or None when it is one word or has none of the
    vocabulary's."""
    words = [part.lower() for part in _IDENT_PART.findall(token)]
    if len(words) < 2:
        return None
    present, p = set(words), compiled()
    reader, weak_reader = bool(present & p.ident_reader), bool(present & p.ident_reader_weak)
    directive, weak_directive = bool(present & p.ident_directive), bool(present & p.ident_directive_weak)
    if not (reader or weak_reader or directive):
        return None
    addressed = reader and (directive or weak_directive) or weak_reader and directive
    ordered = reader and "reviewer" not in present and bool(present & p.ident_order)  # (an app's reviewers have notes)
    return 2 if ordered else int(addressed), directive, " ".join(words)


@functools.lru_cache(maxsize=4096)
def _reading_signals(reading: str) -> frozenset[str]:
    """The signals of an identifier read as words (with the value that follows it)."""
    return frozenset(name for name, finder in compiled().finders.items() if finder.search(reading))


def identifiers(text: str, normalised: Normalised,
                 units: list[tuple[int, int]]) -> dict[int, tuple[set[str], int, int]]:
    """Signals of the identifiers in each unit, and their extent: an identifier that joins a reader with
    a directive ("NOTE_FOR_AGENT", "judge.scoreFloor", "evaluator_config") addresses the evaluator
    ("ident"); one with a directive ("skip_interaction": true) is read as words, with what follows it."""
    found: dict[int, tuple[set[str], int, int]] = {}
    starts = [u[0] for u in units]
    read = 0
    folded = normalised.text
    b = 0
    for hint in compiled().ident_hint.finditer(folded):
        if hint.start() < b:
            continue  # (in the identifier just read)
        a = hint.start()
        while a > 0 and folded[a - 1] in _TOKEN_CHARS:
            a -= 1
        while a < hint.start() and folded[a] in ".-":
            a += 1
        b = _TOKEN_REST.match(folded, hint.start()).end()  # type: ignore[union-attr]  # matches ""
        parsed = identifier(text[normalised.start(a):normalised.end(b)])
        if parsed is None:
            continue
        addressed, directive, words = parsed
        if not (addressed or directive):
            continue
        k = bisect.bisect_right(starts, a) - 1
        if k < 0:
            continue
        line_end = normalised.text.find("\n", b, b + 40)
        signals = set(_reading_signals(words + normalised.text[b:line_end if line_end >= 0 else b + 40]))
        if addressed:
            signals.add("ident")
        if addressed > 1:
            signals.add("ident_order")
        if signals:
            previous = found.get(k)
            found[k] = (signals, a, b) if previous is None else (previous[0] | signals, min(previous[1], a),
                                                                 max(previous[2], b))
        read += 1
        if read >= _MAX_READINGS:
            break
    return found
