"""Redaction: every passage of a text that addresses the evaluator, replaced by a marker before any model reads it.

Each cut is a whole passage of the original text, found by :mod:`evaluator.textsafety.detector` on the
normalised text, and replaced by "[evalgrid removed N characters addressed to the evaluator]"; what was
cut comes back as :class:`Finding` records, so that the run can be flagged.
"""

from __future__ import annotations

from dataclasses import dataclass

from evaluator.textsafety.detector import cut_spans


@dataclass(frozen=True)
class Finding:
    """One passage that addresses the evaluator."""

    source: str
    """Where it was found (a bundle file, ``page text``, ``console`` ...)."""
    excerpt: str
    """The passage, shortened."""


def redact(text: str, source: str) -> tuple[str, list[Finding]]:
    """``text`` with every sentence that addresses the evaluator replaced by a marker, and what was cut.

    Clean text comes back unchanged. Each cut is a whole sentence of the original text (found on
    the normalised text, see :mod:`evaluator.textsafety.detector`) and gives one :class:`Finding` whose
    excerpt is the original passage with its whitespace collapsed.
    """
    spans = cut_spans(text)
    if not spans:
        return text, []
    findings: list[Finding] = []
    pieces: list[str] = []
    position = 0
    for start, end in spans:
        findings.append(Finding(source=source, excerpt=" ".join(text[start:end].split())[:200]))
        pieces.append(text[position:start])
        pieces.append(f"[evalgrid removed {end - start} characters addressed to the evaluator]")
        position = end
    pieces.append(text[position:])
    return "".join(pieces), findings
