"""Encoded text, decoded so that the detector reads what it says.

Base64 and hex runs are always decoded (capped: at most :data:`_MAX_DECODED` runs and
:data:`_MAX_DECODED_CHARS` characters per text); ROT13 (or a Caesar shift) after "rot13:", and
reversed text after "read this backwards" (in the vocabulary's languages), where the decoding reads
better than the text as written. A run whose decoding the detector would cut is cut itself.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterable

from evaluator.textsafety.normalisation import Normalised
from evaluator.textsafety.patterns import compiled
from evaluator.textsafety.units import MAX_SPAN

_MAX_DECODED = 256
"""At most this many base64/hex candidates are decoded per text (the work is capped) ..."""
_MAX_DECODED_CHARS = 262_144
"""... and at most this many characters of them."""
_MAX_CANDIDATE = 8192
"""A longer base64 run (an image, a font) is not decoded."""
_BASE64 = re.compile(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{24,}={0,2}")
_HEX = re.compile(r"(?<![0-9A-Fa-f])(?:[0-9A-Fa-f]{2}){12,}(?![0-9A-Fa-f])")


def _shifted(text: str, shift: int) -> str:
    """``text`` with its Latin letters shifted back by ``shift`` (ROT13 is 13)."""
    table = {code: (code - 97 - shift) % 26 + 97 for code in range(97, 123)}
    return text.translate(table)


# (the small words of the vocabulary's languages: a decoding that yields more of them reads better)
_COMMON_WORD = re.compile(r"\b(?:the|and|to|you|your|this|is|it|for|of|all|app|give|score|ignore|stop|full|marks"
                          r"|points|test|testing|report|evaluator|judge|grader|el|la|los|las|de|del|que|y|en|esta|para"
                          r"|le|les|et|vous|cette|pour|der|die|das|und|zu|ist|nicht|bitte|il|di|che|per|questa|o|os|da"
                          r"|do|e|um|uma|и|в|не|на|что|это)\b"
                          # (CJK words of two characters or more: a reversal changes them, not single ones)
                          r"|不要|请给|满分|评委|评审|测试|应用|页面|功能|问题|ください|して|評価|テスト|주세요|평가|테스트")
_MAX_HINTED = 8
"""At most this many hinted runs (ROT13, reversed) are decoded per text."""


def hinted_candidates(original: str, normalised: Normalised) -> Iterable[tuple[int, int, str]]:
    """Text that says how it is encoded ("rot13: Tvir guvf ...", "(read this backwards) ... :rotaulave"),
    decoded: (start, end) in the original text, from the line's start (at most half a span before the
    hint) to the end of what it hints at, and the decoded text (when it reads better than as written).
    A shift is read from the original ("rot13" is "rotie" once leetspeak is folded); a reversal from
    the normalised text, then mapped back."""
    p = compiled()
    if not p.hinted.search(normalised.text):
        return
    tried = 0
    for finder, text in ((p.rot_hint, original.lower()), (p.reverse_hint, normalised.text)):
        if len(text) != len(original) and finder is p.rot_hint:
            text = "".join(c if len(c.lower()) != 1 else c.lower() for c in original)
        for match in finder.finditer(text):
            line_start = max(text.rfind("\n", 0, match.start()) + 1, match.start() - MAX_SPAN // 2)
            line_end = text.find("\n", match.end())
            line_end = min(len(text) if line_end < 0 else line_end, match.end() + MAX_SPAN)
            after = text[match.end():line_end]
            # (what follows the hint, or what follows its label: "rot13 for the grader: Fxvc ...")
            runs = [after, *([after.split(":", 1)[1]] if ":" in after else [])]
            if finder is p.rot_hint:
                shift = int(match.group("rot") or match.group("shift") or 13)
                candidates = [(run, _shifted(run, shift)) for run in runs]
            else:
                before = text[line_start:match.start()]
                candidates = [(run, run[::-1]) for run in (*runs, before)]
            for written, decoded in candidates:
                readable = len(_COMMON_WORD.findall(decoded))
                if readable < 2 or readable <= len(_COMMON_WORD.findall(written)):
                    continue
                tried += 1
                if tried > _MAX_HINTED:
                    return
                if finder is p.rot_hint:
                    yield line_start, line_end, decoded
                else:
                    yield normalised.start(line_start), normalised.end(line_end), decoded


def _printable(data: bytes) -> str | None:
    try:
        decoded = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if len(decoded) < 8:
        return None
    shown = sum(c.isprintable() or c in "\n\t\r" for c in decoded)
    letters = sum(c.isalpha() for c in decoded)
    return decoded if shown >= 0.9 * len(decoded) and letters >= 0.4 * len(decoded) else None


def decoded_candidates(text: str) -> Iterable[tuple[int, int, str]]:
    """Base64 and hex runs of the original text that decode to readable text (capped: at most
    :data:`_MAX_DECODED` runs and :data:`_MAX_DECODED_CHARS` characters are decoded per text)."""
    tried = budget = 0
    for finder, decode in ((_BASE64, _from_base64), (_HEX, _from_hex)):
        for match in finder.finditer(text):
            run = match.group()
            if len(run) > _MAX_CANDIDATE or run.isalpha() and (run.islower() or run.isupper()):
                continue  # an image or a font; or a plain long word, which is not an encoding of text
            tried, budget = tried + 1, budget + len(run)
            if tried > _MAX_DECODED or budget > _MAX_DECODED_CHARS:
                return
            decoded = decode(run)
            if decoded is not None:
                yield match.start(), match.end(), decoded


def _from_base64(run: str) -> str | None:
    try:
        data = base64.b64decode(run.replace("-", "+").replace("_", "/") + "=" * (-len(run.rstrip("=")) % 4))
    except (binascii.Error, ValueError):
        return None
    return _printable(data)


def _from_hex(run: str) -> str | None:
    try:
        return _printable(bytes.fromhex(run))
    except ValueError:
        return None
