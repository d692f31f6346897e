"""Which language a page's text is in, coarsely: enough to catch a page that ignores the brief's."""

from __future__ import annotations

import re

_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_KANA = re.compile(r"[\u3040-\u30ff]")
_HANGUL = re.compile(r"[\uac00-\ud7af]")
_WORD = re.compile(r"[a-zàâäçéèêëîïôöùûüÿñáíóúßœæ]+", re.I)
_STOPWORDS = {
    "en": {"the", "and", "of", "to", "your", "with", "for", "is", "you", "this", "add", "all", "new", "are"},
    "es": {"el", "la", "de", "que", "los", "las", "del", "con", "para", "una", "por", "tu", "es", "y"},
    "fr": {"le", "la", "les", "des", "du", "et", "pour", "une", "est", "avec", "vous", "au", "sur", "de"},
    "de": {"der", "die", "das", "und", "mit", "für", "ist", "ein", "eine", "den", "von", "zu", "im", "nicht"},
}


def language_matches(text: str, target: str) -> bool | None:
    """Whether ``text`` is in language ``target`` (BCP-47); ``None`` when there is too little text to tell."""
    primary = target.split("-")[0]
    letters = [c for c in text if c.isalpha()]
    if len(letters) < 40:
        return None
    cjk = len(_CJK.findall(text)) / len(letters)
    if primary in ("zh", "ja", "ko"):
        if primary == "ja" and _KANA.search(text):
            return True
        if primary == "ko" and _HANGUL.search(text):
            return True
        return cjk >= 0.15
    if cjk >= 0.3:
        return False
    if primary not in _STOPWORDS:
        return None
    words = [w.lower() for w in _WORD.findall(text)]
    hits = {lang: sum(w in stop for w in words) for lang, stop in _STOPWORDS.items()}
    best = max(hits, key=lambda lang: hits[lang])
    if hits[best] < 5:
        return None
    return hits[primary] * 2 >= hits[best]
