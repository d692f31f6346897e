"""Speed: what a pattern can begin with, read by the standard library's own regex parser.

Python's regex engine tries every branch of an alternation at every position. A lookahead for the
characters a branch can begin with (:func:`guard`) lets it skip most branches with one character test:
with ten languages per concept, this is most of the difference between milliseconds and tens of
milliseconds per page. The literal beginnings of a pattern (:func:`heads`), scanned as a trie
(:func:`trie`), are the detector's gate: one pass over the text finds the sentences worth the full
patterns (:mod:`evaluator.textsafety.patterns`).

The parser is private to the standard library (``re._parser``, ``re._constants``): where it is missing
or reads differently, there are no guards and no gate (every sentence is looked at), the same matches,
just slower.
"""

from __future__ import annotations

import functools
import importlib
import re
from collections.abc import Iterable
from typing import Any, TypeAlias


def _load_parser() -> tuple[Any, Any]:
    try:
        return importlib.import_module("re._parser").parse, importlib.import_module("re._constants")
    except Exception:  # noqa: BLE001  (ImportError, or a module without "parse")
        return None, None


PARSE, _SRE = _load_parser()


def _first(items: Iterable[Any]) -> tuple[set[str] | None, bool, bool]:
    """What a match of parsed ``items`` begins with: its possible first characters (None: any),
    whether it can be empty, and whether every match begins at a word boundary."""
    chars: set[str] = set()
    bounded = False  # a \b comes before anything is consumed (on the paths that skip optional parts)
    leak = False  # an optional part may begin a match away from a word boundary
    for op, av in items:
        if op is _SRE.AT:
            bounded = bounded or av is _SRE.AT_BOUNDARY
            continue
        if op in (_SRE.ASSERT, _SRE.ASSERT_NOT):
            continue
        if op is _SRE.LITERAL:
            return chars | {chr(av)}, False, bounded and not leak
        if op is _SRE.IN:
            for kind, value in av:
                if kind is _SRE.LITERAL:
                    chars.add(chr(value))
                elif kind is _SRE.RANGE and value[1] - value[0] < 512:
                    chars.update(map(chr, range(value[0], value[1] + 1)))
                else:
                    return None, False, False
            return chars, False, bounded and not leak
        if op in (_SRE.SUBPATTERN, _SRE.BRANCH, _SRE.MAX_REPEAT, _SRE.MIN_REPEAT):
            parts = av[1] if op is _SRE.BRANCH else [av[-1]]
            can_be_empty = op is not _SRE.BRANCH and op is not _SRE.SUBPATTERN and av[0] == 0
            all_bounded = True
            for part in parts:
                first, empty, part_bounded = _first(part)
                if first is None:
                    return None, False, False
                chars |= first
                can_be_empty = can_be_empty or empty
                all_bounded = all_bounded and part_bounded
            if not can_be_empty:
                return chars, False, (bounded or all_bounded) and not leak
            leak = leak or not (bounded or all_bounded)
            continue
        return None, False, False
    return chars, True, False


def guard(pattern: str) -> str:
    """``pattern`` behind a lookahead for the characters it can begin with (where those are known)."""
    first, empty, _ = _analyse(pattern)
    if first is None or empty or not first:
        return f"(?:{pattern})"
    escaped = "".join("\\" + c if c in "\\]^-[" else c for c in sorted(first))
    return f"(?=[{escaped}])(?:{pattern})"


@functools.cache
def _analyse(pattern: str) -> tuple[frozenset[str] | None, bool, bool]:
    try:
        first, empty, bounded = _first(PARSE(pattern))
    except Exception:  # noqa: BLE001  (any parser change: no guard, same matches, just slower)
        return None, True, False
    return (None if first is None else frozenset(first)), empty, bounded


def any_of(*branches: str) -> str:
    """An alternation of ``branches``: those that begin at a word boundary behind one shared ``\\b``
    (inside a word, one test rejects them all), each behind its first-character lookahead."""
    at_word = [branch for branch in branches if _analyse(branch)[2]]
    # Branches that can only begin with a non-ASCII character (CJK): one lookahead rejects them all
    # on ASCII text.
    wide = [branch for branch in branches if branch not in at_word and _non_ascii(branch)]
    elsewhere = [branch for branch in branches if branch not in at_word and branch not in wide]
    grouped = [r"\b(?:" + "|".join(guard(branch) for branch in at_word) + ")"] if at_word else []
    if wide:
        grouped.append(guard("|".join(guard(branch) for branch in wide)))
    return "|".join(grouped + [guard(branch) for branch in elsewhere])


def _non_ascii(pattern: str) -> bool:
    first = _analyse(pattern)[0]
    return bool(first) and not any(c.isascii() for c in first or ())


def alt(*tables: dict[str, str], only: Iterable[str] | None = None) -> str:
    """One alternation of every language (or of the languages ``only``) of every table."""
    return "(?:" + any_of(*(fragment for table in tables for language, fragment in table.items()
                           if only is None or language in only)) + ")"


_MAX_HEADS = 20_000


def heads(items: Iterable[Any], limit: int) -> set[tuple[str, bool, bool]] | None:
    """Literal beginnings of every match of parsed ``items``, as (text, open, at_boundary): ``open``
    when all of ``items`` was literal (a caller may extend it), ``at_boundary`` when a word boundary
    comes first. None: the items begin with something that is not a short list of literals."""
    done: set[tuple[str, bool]] = set()
    growing: set[tuple[str, bool]] = {("", False)}
    for op, av in items:
        if op is _SRE.AT:
            growing = {(text, bounded or (not text and av is _SRE.AT_BOUNDARY)) for text, bounded in growing}
            continue
        if op in (_SRE.ASSERT, _SRE.ASSERT_NOT):
            continue
        tails = _tails(op, av, limit)
        if tails is None:
            done |= growing
            growing = set()
            break
        extended: set[tuple[str, bool]] = set()
        for text, bounded in growing:
            for tail, is_open, tail_bounded in tails:
                joined, joined_bounded = text + tail, bounded or (not text and tail_bounded)
                if len(joined) >= limit or not is_open:
                    done.add((joined[:limit], joined_bounded))
                else:
                    extended.add((joined, joined_bounded))
        growing = extended
        if len(done) + len(growing) > _MAX_HEADS:
            return None
        if not growing:
            break
    return {(t, False, b) for t, b in done} | {(t, True, b) for t, b in growing}


def _tails(op: Any, av: Any, limit: int) -> set[tuple[str, bool, bool]] | None:
    """The heads of one parsed item (see :func:`heads`)."""
    if op is _SRE.LITERAL:
        return {(chr(av), True, False)}
    if op is _SRE.IN:
        chars: set[str] = set()
        for kind, value in av:
            if kind is _SRE.LITERAL:
                chars.add(chr(value))
            elif kind is _SRE.RANGE and value[1] - value[0] < 16:
                chars.update(map(chr, range(value[0], value[1] + 1)))
            else:
                return None
        return {(c, True, False) for c in chars}
    if op is _SRE.SUBPATTERN:
        return heads(av[-1], limit)
    if op is _SRE.BRANCH:
        union: set[tuple[str, bool, bool]] = set()
        for alternative in av[1]:
            found = heads(alternative, limit)
            if found is None:
                return None
            union |= found
        return union
    if op in (_SRE.MAX_REPEAT, _SRE.MIN_REPEAT):
        low, high, item = av
        once = heads(item, limit)
        if once is None:
            return None
        # After one repetition another may follow: only a "?" keeps the head open.
        result = once if high == 1 else {(t, False, b) for t, b in ((t, b) for t, _, b in once)}
        return result | {("", True, False)} if low == 0 else result
    return None


_Trie: TypeAlias = dict[str, "_Trie"]
"""A node of a word trie: each next character to its node; the empty key marks a word's end."""


def trie(words: Iterable[str]) -> str:
    """A regex matching any of ``words`` (or a longer text that begins with one), as a trie of literals."""
    root: _Trie = {}
    for word in words:
        node = root
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}

    def emit(node: _Trie) -> str:
        if "" in node:
            return ""  # a shorter head is enough: whatever follows it also begins with it
        branches = [re.escape(char) + emit(child) for char, child in sorted(node.items())]
        return branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
    return emit(root) if root else "(?!)"


def prefilter(*patterns: str) -> re.Pattern[str]:
    """A trie of the literal beginnings of ``patterns`` (found wherever they match, and faster than they
    are), or the patterns themselves where the private parser cannot read them."""
    try:
        beginnings = [heads(PARSE(pattern), 8) for pattern in patterns]
        if all(found and all(text for text, _, _ in found) for found in beginnings):
            return re.compile(trie(text for found in beginnings if found for text, _, _ in found))
    except Exception:  # noqa: BLE001  (a changed parser: the patterns themselves, slower)
        pass
    return re.compile("|".join(f"(?:{pattern})" for pattern in patterns))

