"""Normalisation: text read as a reader would read it, with an index map back to the original.

The detector matches a normalised copy of the text; an index map leads from every
normalised position back to the original, so that the cut, the excerpt and everything that is not
cut are the original text. HTML entities and ``\\uXXXX``/``\\xXX``/``%XX`` escapes are decoded (a single
``%XX`` where it spells text, not a remainder in code, "n%10"), and so is a form-encoded run's "+" (three
words or more joined by single "+", "ignore+your+instructions"; not "a+b+c" or "C++");
Unicode NFKC folds full-width letters and digits, ligatures, circled and mathematical letters;
invisible format characters (category Cf: zero-width space and joiners, word joiner, BOM, bidi
controls, soft hyphen) are dropped, except the invisible "tag" characters, which are read as the
ASCII they spell; case is folded and accents come off Latin letters (and combining marks stacked
on them); Latin small capitals and stroked letters (ł đ ø) become plain letters; traditional
Chinese characters become the simplified ones the vocabulary is written in (the vocabulary is
folded alike, so Japanese kanji still meet their patterns). Inside words that are otherwise Latin,
Cyrillic and Greek look-alikes (а е о р с у х і ј ѕ ԁ ɡ, ο α ε ν ρ τ ...) and leetspeak digits are
folded to the letter they imitate (a word made only of look-alikes, "АІ", when a neighbouring word
is plain Latin; not "@judge", a mention), so Russian and Greek prose is left alone. Letter-spaced
words ("i g n o r e", "I.G.N.O.R.E") are closed up (a wider gap separates words; with single
spaces throughout, the run is split into the vocabulary's own words where that is possible), a
word hyphenated across a line end is rejoined, as is a vocabulary word broken by a bare line end,
and a space is put between Latin letters and CJK so that word boundaries work there. Layout that
breaks one sentence into pieces is read as one sentence: lines of one or two words in a row
("Reviewer," / "please" / "skip" ...; not "Key: value" fields; the tags of "<span>AI</span>" /
"<span>judge,</span>" dropped) are joined, one letter a line is closed up like letter-spacing, and
fragments between " / " or "--" on one line run together. (Identifiers and encoded text are read
apart: :mod:`evaluator.textsafety.identifiers`, :mod:`evaluator.textsafety.decoding`.)

The small fixed patterns here are compiled at import; the vocabulary (whose English words letter-spaced
text is split back into) is read on first use.
"""

from __future__ import annotations

import bisect
import functools
import html
import re
import unicodedata
import urllib.parse
from collections.abc import Iterable
from dataclasses import dataclass

from evaluator.textsafety.vocabulary import HAN, vocabulary

# Latin look-alikes from Cyrillic, Greek and IPA (after case folding), and leetspeak digits: folded
# only inside a word whose other letters are Latin, so Russian and Greek text is left alone.
_CONFUSABLES = {
    "а": "a", "в": "b", "е": "e", "ё": "e", "і": "i", "ї": "i", "ј": "j", "к": "k", "м": "m", "н": "h", "о": "o",
    "р": "p", "с": "c", "т": "t", "у": "y", "х": "x", "ѕ": "s", "ԁ": "d", "ԛ": "q", "ԝ": "w", "һ": "h", "ӏ": "l",
    "ɡ": "g", "ɑ": "a", "ı": "i", "ȷ": "j", "α": "a", "β": "b", "ε": "e", "η": "n", "ι": "i", "κ": "k", "ν": "v",
    "ο": "o", "ρ": "p", "τ": "t", "υ": "u", "χ": "x", "γ": "y", "ω": "w", "ϲ": "c",
}
_LEET = {"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", "$": "s"}
_FOLD_TABLE = str.maketrans({**_CONFUSABLES, **_LEET})
_FOLDABLE = "".join(_CONFUSABLES) + "013457@$"
_CONFUSABLE_CLASS = "".join(_CONFUSABLES)
# (Each scanner below begins with a character class, so the engine skips to candidates in C.)
_FOLD_HIT = re.compile(rf"[{_FOLDABLE}](?:(?<=[a-z].)|(?=[a-z])|(?<=[^\w@$][{_CONFUSABLE_CLASS}])"
                       rf"(?=[{_CONFUSABLE_CLASS}]+(?![\w@$])))")
_WORD_REST = re.compile(r"[\w@$]*")
_LATIN_BEFORE = re.compile(r"(?<![\w@$])[a-z]{2,}[^\w\n]{1,3}$")
_LATIN_AFTER = re.compile(r"[^\w\n]{1,3}[a-z]{2,}(?![\w@$])")
# Latin small capitals, and the stroked letters (ł đ ø ħ) that have no decomposition: Latin letters
# in another shape, which NFKC leaves alone.
_SMALL_CAPITALS = dict(zip("ᴀʙᴄᴅᴇғɢʜɪᴊᴋʟᴍɴᴏᴘǫʀꜱᴛᴜᴠᴡʏᴢłđøħ", "abcdefghijklmnopqrstuvwyzldoh", strict=True))
# Punctuation that NFKC leaves alone but that spells the same thing: curly quotes, dashes.
_PUNCTUATION = {"’": "'", "‘": "'", "‛": "'", "ʼ": "'", "“": '"', "”": '"', "„": '"', "‐": "-", "‑": "-", "‒": "-",
                "–": "-", "—": "-", "―": "-", "\u2028": "\n", "\u2029": "\n", "\u0085": "\n"}
# What the fast ASCII path must still look at: non-ASCII, HTML entities, source escapes, %-escapes (one or
# more) and a "+" between two word characters (a space, in a form-encoded run: see _form_run).
_SPECIAL = re.compile(r"[^\x00-\x7f]+|&(?:#[xX]?[0-9a-fA-F]{1,6}|[a-zA-Z][a-zA-Z0-9]{1,15});|\\u[0-9a-fA-F]{4}"
                      r"|\\x[0-9a-fA-F]{2}|(?:%[0-9a-fA-F]{2})+|\+(?<=[0-9A-Za-z]\+)(?=[0-9A-Za-z%])")
# Form encoding ("ignore+your+instructions+8%2F8"): three or more parts joined by single "+", at least three
# of them words (two letters or more), all of them letters, digits, "%XX" or URL-safe marks. Code and maths
# ("a+b+c", "C++", "x += 1", "i+1") are not: their parts are single letters or numbers, or a "+" doubles.
_FORM_PART = r"(?:[0-9A-Za-z_.~*-]|%[0-9a-fA-F]{2})+"
_FORM_RUN = re.compile(rf"{_FORM_PART}(?:\+{_FORM_PART}){{2,}}")
_FORM_WORD = re.compile(r"(?:^|(?<=\+))(?:[A-Za-z]|%[0-9a-fA-F]{2}){2,}(?=\+|$)")
_FORM_CHARS = frozenset("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_.~*-%+")
_MAX_FORM_RUN = 4096
"""A form-encoded run is read at most this far either side of a "+" (minified code has long runs of operands)."""
# Letter-spaced text: single letters, each followed by the same kind of small separator.
_SPACED = re.compile(r"(?<![^\W_])(?:[^\W\d_](?:[ \t]{1,3}|[ \t]*\n[ \t]*|[.\-_*·•|/~+][ \t]?)){3,}[^\W\d_](?![^\W_])")
# Where such a run may begin: a separator after a single letter, before another single letter.
_SPACED_HINT = re.compile(r"[ \t\n.\-_*·•|/~+](?<=(?<![^\W_])[^\W\d_][ \t\n.\-_*·•|/~+])(?=[ \t]{0,2}[^\W\d_]"
                          r"[ \t\n.\-_*·•|/~+])")
_CJK_CHARS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_SCRIPT_CHANGE = re.compile(f"[a-z{_CJK_CHARS}](?:(?<=[a-z])(?=[{_CJK_CHARS}])|(?<=[{_CJK_CHARS}])(?=[a-z]))")
_HYPHEN_BREAK = re.compile(r"-(?<=[a-z]-)[ \t]*\r?\n[ \t]*(?=[a-z])")
_LINE_BREAK = re.compile(r"\n(?<=[a-z]\n)[ \t]*(?=[a-z])")
# Layout that breaks one sentence into pieces: a line of one or two words next to another ("Reviewer,"
# / "please" / "skip" ...), and fragments between " / " or "--" on one line. Read as one sentence.
# (A fragment may end with ":" but holds none: "Category: Freestyle" is a field, not a fragment.)
# (A fragment may sit in its own element, "<span>AI</span>" / "<span>judge,</span>": the tags go.)
_FRAGMENT_TAG = (r"</?(?:span|b|i|u|s|em|strong|mark|small|font|sup|sub|a|code|kbd|abbr|label|q|del|ins|tt|p|div|li|td"
                 r"|h[1-6])(?:\s[^<>\n]{0,80})?>")
_FRAGMENT_WORD = r"[^\s<>{}()\[\]=;:\"'`*#|]{1,24}"
_FRAGMENT = (rf"[ \t]*(?:{_FRAGMENT_TAG})*(?:{_FRAGMENT_WORD}[ \t]+)?(?:{_FRAGMENT_WORD}:?"
             rf"|:)(?:{_FRAGMENT_TAG})*[ \t]*")
_FRAGMENT_BREAK = re.compile(rf"(?m)^(?={_FRAGMENT}\n)[^\n]*(\n)(?={_FRAGMENT}(?:\n|$))")
_SEPARATOR = re.compile(r"(?<![ \t])[ \t]++(?:(?:/|-{2,}(?!>))[ \t]++)+")  # (possessive: linear on long blanks)
_FRAGMENT_TAGS = re.compile(_FRAGMENT_TAG)
_WORD_END = re.compile(r"[a-z]+\Z")
_WORD = re.compile(r"[a-z]+")


@functools.lru_cache(maxsize=8192)
def _fold_char(char: str) -> str:
    """One non-ASCII character, normalised: "" for an invisible format character."""
    if char in _PUNCTUATION:
        return _PUNCTUATION[char]
    if char in _SMALL_CAPITALS:
        return _SMALL_CAPITALS[char]
    if "\U000e0020" <= char <= "\U000e007e":
        return chr(ord(char) - 0xE0000).lower()  # "tag" characters: invisible ASCII, read as what they spell
    if unicodedata.category(char) == "Cf":
        return ""
    folded = unicodedata.normalize("NFKC", char).casefold().translate(HAN)
    if folded.isascii():
        return folded
    # Accents come off Latin letters only (Cyrillic й, Japanese dakuten and Hangul stay whole).
    kept: list[str] = []
    for part in unicodedata.normalize("NFD", folded):
        if unicodedata.combining(part) and kept and kept[-1].isascii():
            continue
        kept.append(part)
    return unicodedata.normalize("NFC", "".join(kept))


class _FoldedTable(dict[int, str]):
    """``str.translate`` table of :func:`_fold_char`, filled as characters are met."""

    def __missing__(self, key: int) -> str:
        self[key] = value = _fold_char(chr(key))
        return value


class _IrregularTable(dict[int, str]):
    """``str.translate`` table: "" for a character that folds to exactly one, "x" for the others."""

    def __missing__(self, key: int) -> str:
        char = chr(key)
        self[key] = value = "" if len(_fold_char(char)) == 1 and not unicodedata.combining(char) else "x"
        return value


_FOLDED = _FoldedTable()
_IRREGULAR = _IrregularTable()


def _decode_escape(token: str) -> str | None:
    """What an escape token spells, or None where it is no escape: a "%XX" that is not text ("n%10" in code
    is a remainder; three or more in a row are always read, as a URL writes them) and a "+" outside a
    form-encoded run (the caller says which: see :func:`_form_run`)."""
    if token.startswith("&"):
        return html.unescape(token)
    if token.startswith("%"):
        try:
            decoded = urllib.parse.unquote_to_bytes(token).decode("utf-8")
        except UnicodeDecodeError:
            decoded = None
        if decoded is None or any(c < " " and c not in "\n\t\r" or c == "\x7f" for c in decoded):
            return urllib.parse.unquote(token) if len(token) >= 9 else None
        return decoded
    return chr(int(token[2:], 16))


def _form_run(text: str, at: int) -> tuple[int, int, bool]:
    """The run of URL characters around the "+" at ``at``: (start, end, whether it is form-encoded text)."""
    start = at
    while start > 0 and at - start < _MAX_FORM_RUN and text[start - 1] in _FORM_CHARS:
        start -= 1
    end = at + 1
    while end < len(text) and end - at < _MAX_FORM_RUN and text[end] in _FORM_CHARS:
        end += 1
    # (a run ends at a word's edge: "msg=ignore+your+instructions" starts after the "=")
    while start < at and text[start] in "+-.":
        start += 1
    while end > at + 1 and text[end - 1] in "+.-":
        end -= 1
    form = _FORM_RUN.fullmatch(text, start, end) is not None and len(_FORM_WORD.findall(text[start:end])) >= 3
    return start, end, form


class _Map:
    """Pieces of a derived string, each from a span of its source: where a derived position came from."""

    def __init__(self) -> None:
        self.dst: list[int] = []
        self.src: list[int] = []
        self.dst_len: list[int] = []
        self.src_len: list[int] = []
        self.size = 0

    def add(self, length: int, src: int, src_len: int) -> None:
        """A piece of ``length`` derived characters from ``src_len`` source characters at ``src``."""
        if length == 0:
            return
        if (self.dst and length == src_len and self.dst_len[-1] == self.src_len[-1]
                and self.src[-1] + self.src_len[-1] == src):
            self.dst_len[-1] += length
            self.src_len[-1] += src_len
        else:
            self.dst.append(self.size)
            self.src.append(src)
            self.dst_len.append(length)
            self.src_len.append(src_len)
        self.size += length

    def start(self, at: int) -> int:
        """The source position where the derived character at ``at`` begins."""
        if not self.dst:
            return 0
        k = max(0, bisect.bisect_right(self.dst, at) - 1)
        offset = at - self.dst[k]
        if offset >= self.dst_len[k]:
            return self.src[k] + self.src_len[k]
        return self.src[k] + offset if self.dst_len[k] == self.src_len[k] else self.src[k]

    def end(self, at: int) -> int:
        """The source position where the derived text ending (exclusively) at ``at`` ends."""
        if at <= 0 or not self.dst:
            return 0
        k = max(0, bisect.bisect_right(self.dst, at - 1) - 1)
        offset = at - self.dst[k]
        if self.dst_len[k] == self.src_len[k]:
            return self.src[k] + min(offset, self.dst_len[k])
        return self.src[k] + self.src_len[k]


def _fold_characters(text: str) -> tuple[str, _Map]:
    """Stage 1: escapes decoded, NFKC, format characters dropped, case folded, Latin accents off."""
    mapping = _Map()
    if text.isascii() and not _SPECIAL.search(text):
        mapping.add(len(text), 0, len(text))
        return text.lower(), mapping
    out: list[str] = []
    position = 0
    previous_ascii_letter = False
    form = (0, 0, False)  # the last form-encoded run looked at (one look for all its "+")
    for match in _SPECIAL.finditer(text):
        if match.start() > position:
            chunk = text[position:match.start()]
            out.append(chunk.lower())
            mapping.add(len(chunk), position, len(chunk))
            previous_ascii_letter = chunk[-1].isalpha()
        token = match.group()
        position = match.end()
        if not token.isascii():
            if not token.translate(_IRREGULAR):  # every character folds to exactly one (CJK, accents, full-width)
                folded = token.translate(_FOLDED)
                out.append(folded)
                mapping.add(len(token), match.start(), len(token))
                previous_ascii_letter = folded[-1].isascii() and folded[-1].isalpha()
                continue
            for offset, char in enumerate(token, match.start()):
                if unicodedata.combining(char) and previous_ascii_letter:
                    continue  # a combining accent on a Latin letter, or "zalgo" marks
                folded = _fold_char(char)
                if folded:
                    out.append(folded)
                    mapping.add(len(folded), offset, 1)
                    previous_ascii_letter = folded[-1].isascii() and folded[-1].isalpha()
            continue
        if token == "+":
            if match.start() >= form[1]:
                form = _form_run(text, match.start())
            decoded = " " if form[2] else None
        else:
            decoded = _decode_escape(token)
        if decoded is None:  # not an escape: the text as written
            out.append(token.lower())
            mapping.add(len(token), match.start(), len(token))
            previous_ascii_letter = token[-1].isalpha()
            continue
        folded = "".join(_fold_char(c) if not c.isascii() else c.lower() for c in decoded)
        if folded:
            out.append(folded)
            mapping.add(len(folded), match.start(), len(token))
            previous_ascii_letter = folded[-1].isascii() and folded[-1].isalpha()
    if position < len(text):
        chunk = text[position:]
        out.append(chunk.lower())
        mapping.add(len(chunk), position, len(chunk))
    return "".join(out), mapping


def _is_word_char(char: str) -> bool:
    return char.isalnum() or char in "_@$"


def _fold_words(text: str) -> str:
    """Stage 2 (one character for one): look-alikes and leetspeak folded inside otherwise Latin words.

    A word made only of look-alikes ("АІ") is folded when a neighbouring word is plain Latin, so
    Russian and Greek prose is left alone.
    """
    if not _FOLD_HIT.search(text):
        return text
    pieces: list[str] = []
    position = 0
    search_from = 0
    while (match := _FOLD_HIT.search(text, search_from)) is not None:
        start = match.start()
        while start > 0 and match.start() - start <= 41 and _is_word_char(text[start - 1]):
            start -= 1
        end = _WORD_REST.match(text, match.start()).end()  # type: ignore[union-attr]  # matches ""
        search_from = max(end, match.end())
        if start < position:
            continue
        word = text[start:end]
        if len(word) > 40 or not all(c in _FOLDABLE or "a" <= c <= "z" for c in word):
            continue  # a Russian word, a hash, an identifier with other digits: not a disguise
        if word[0] == "@" and len(word) > 4 and word[1:].isalpha():
            continue  # a mention or a decorator ("@judge", "@click"), not leetspeak ("@pp", "m@rks")
        latin = sum("a" <= c <= "z" for c in word)
        if latin == 0:
            before = _LATIN_BEFORE.search(text, max(0, start - 24), start)
            after = _LATIN_AFTER.match(text, end)
            if before is None and after is None:
                continue
        elif latin < 2 and not any(c in _CONFUSABLES for c in word):
            continue
        pieces += [text[position:start], word.translate(_FOLD_TABLE)]
        position = end
    pieces.append(text[position:])
    return "".join(pieces)


_LEXICON_TABLES = ("reader", "reader_weak", "machine", "vocative", "ignore", "instructions", "prior", "top_score",
                   "give", "approved", "skip", "this", "evaluation")
"""The vocabulary's tables whose English words make the lexicon."""


@functools.cache
def _lexicon() -> frozenset[str]:
    """English words that letter-spaced text is split back into: the vocabulary's own and the small words."""
    tables = vocabulary()
    words = set(re.findall(r"[a-z]{2,}", " ".join(tables[name]["en"] for name in _LEXICON_TABLES)))
    words |= {word[:-1] for word in words if word.endswith("s")}
    words |= {"a", "i", "is", "it", "to", "of", "and", "the", "this", "that", "you", "your", "app", "all", "any", "be",
              "me", "my", "as", "at", "in", "on", "now", "its", "are", "was", "please", "just", "only", "score",
              "marks", "points", "eight", "ten", "out", "give", "new", "task", "ignore", "previous", "instructions"}
    return frozenset(words)


def _segment(letters: str) -> list[str] | None:
    """``letters`` split into lexicon words (fewest words), or None. (Linear: a page may hold a run
    of thousands of spaced letters.)"""
    lexicon = _lexicon()
    n = len(letters)
    count: list[int | None] = [None] * (n + 1)  # fewest words for letters[:end] ...
    back = [0] * (n + 1)  # ... and where the last of them begins
    count[0] = 0
    for end in range(1, n + 1):
        for start in range(max(0, end - 16), end):
            before = count[start]
            now = count[end]
            if before is not None and letters[start:end] in lexicon and (now is None or before + 1 < now):
                count[end], back[end] = before + 1, start
    if count[n] is None:
        return None
    words: list[str] = []
    end = n
    while end > 0:
        words.append(letters[back[end]:end])
        end = back[end]
    return words[::-1]


def _spaced_runs(text: str) -> Iterable[re.Match[str]]:
    """The letter-spaced runs of ``text``, sought only where a hint of one is."""
    position = 0
    for hint in _SPACED_HINT.finditer(text):
        if hint.start() < position:
            continue
        run = _SPACED.match(text, hint.start() - 1)
        if run is not None:
            position = run.end()
            yield run


def _close_up(text: str) -> list[tuple[int, int, str]]:
    """Stage 3 edits (start, end, replacement): letter-spaced words closed up, broken words rejoined."""
    edits: list[tuple[int, int, str]] = []
    for match in _spaced_runs(text):
        run = match.group()
        letters_at = [i for i, c in enumerate(run) if c.isalpha()]
        gaps = [(letters_at[k] + 1, letters_at[k + 1]) for k in range(len(letters_at) - 1)]
        separators = [run[a:b] for a, b in gaps]
        usual = max(set(separators), key=separators.count)
        # A wider separator than the usual one ("i g n o r e  a l l") is the gap between words.
        wide = [len(sep) > len(usual) or ("/" in sep and "/" not in usual) for sep in separators]
        if not any(wide) and len(letters_at) > 6:
            words = _segment("".join(run[i] for i in letters_at))
            if words:  # single spaces everywhere: keep the gaps that fall between lexicon words
                cut, total = set(), 0
                for word in words[:-1]:
                    total += len(word)
                    cut.add(total - 1)
                wide = [k in cut for k in range(len(gaps))]
        base = match.start()
        for k, (a, b) in enumerate(gaps):
            if wide[k]:
                edits.append((base + a, base + a + 1, " "))
                if b - a > 1:
                    edits.append((base + a + 1, base + b, ""))
            else:
                edits.append((base + a, base + b, ""))
    for match in _HYPHEN_BREAK.finditer(text):
        edits.append((match.start(), match.end(), ""))
    lexicon = _lexicon()
    rejoined = set()
    for match in _LINE_BREAK.finditer(text):
        before = _WORD_END.search(text, max(0, match.start() - 16), match.start())
        after = _WORD.match(text, match.end())
        if before and after and len(before.group()) > 1 and len(after.group()) > 1 and (
                before.group() + after.group() in lexicon):
            edits.append((match.start(), match.end(), ""))
            rejoined.add(match.start())
    if "\n" in text:
        for m in _FRAGMENT_BREAK.finditer(text):
            if m.start(1) in rejoined:
                continue
            edits.append((m.start(1), m.end(1), " "))
            if "<" in text:  # the tags of the two lines it joins
                line_start = text.rfind("\n", 0, m.start(1)) + 1
                line_end = text.find("\n", m.end(1))
                line_end = len(text) if line_end < 0 else line_end
                edits += [(t.start(), t.end(), "") for t in _FRAGMENT_TAGS.finditer(text, line_start, line_end)
                          if t.start() != m.start(1)]
    edits += [(m.start(), m.end(), " ") for m in _SEPARATOR.finditer(text)
              if not (text[m.start() - 1:m.start()].isdigit() and text[m.end():m.end() + 1].isdigit())]  # "8 / 8"
    if not text.isascii():
        # A space between Latin letters and CJK, so that "给AI评委" has word boundaries around "ai".
        edits += [(m.start() + 1, m.start() + 1, " ") for m in _SCRIPT_CHANGE.finditer(text)]
    edits.sort()
    kept: list[tuple[int, int, str]] = []
    for edit in edits:
        if not kept or edit[0] >= kept[-1][1] and edit != kept[-1]:
            kept.append(edit)
    return kept


@dataclass(frozen=True)
class Normalised:
    """Text normalised for matching, and the way back from a normalised position to the original text."""

    text: str
    characters: _Map
    """From stage-2 positions to original positions."""
    closing: _Map
    """From final positions to stage-2 positions."""

    def start(self, at: int) -> int:
        """The original position where the normalised character at ``at`` begins."""
        return self.characters.start(self.closing.start(at))

    def end(self, at: int) -> int:
        """The original position where the normalised text ending (exclusively) at ``at`` ends."""
        return self.characters.end(self.closing.end(at))


def normalise(text: str) -> Normalised:
    """``text`` normalised (see the module docstring), with its index map back to ``text``."""
    folded, characters = _fold_characters(text)
    folded = _fold_words(folded)
    closing = _Map()
    out: list[str] = []
    position = 0
    for start, end, replacement in _close_up(folded):
        if start > position:
            out.append(folded[position:start])
            closing.add(start - position, position, start - position)
        if replacement:
            out.append(replacement)
            closing.add(len(replacement), start, end - start)
        position = end
    out.append(folded[position:])
    closing.add(len(folded) - position, position, len(folded) - position)
    return Normalised("".join(out), characters, closing)
