"""Fencing: a piece of evidence between DATA markers no page can forge.

The markers carry a digest of the content, so text inside cannot close the fence early; the prompts say
that fenced text is evidence, never instructions.
"""

from __future__ import annotations

import hashlib


def fence(label: str, text: str) -> str:
    """``text`` between DATA markers that carry a digest of it: a page cannot close the fence early."""
    tag = hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:12]
    body = text.replace("<<<", "‹‹‹").replace(">>>", "›››")
    return f"<<<DATA {label} #{tag}>>>\n{body}\n<<<END DATA #{tag}>>>"
