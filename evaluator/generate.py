"""The generate stage. For now: the replay provider, which reads stored raw model answers.

Layout: ``<answers_dir>/<query_id>.md`` (or ``.html``, ``.txt``, ``.markdown``); exactly the text
the model returned. Live generation through model endpoints comes with the LLM issue.
"""

from __future__ import annotations

from pathlib import Path

ANSWER_SUFFIXES = (".md", ".markdown", ".html", ".htm", ".txt")


def find_answer(answers_dir: Path, query_id: str) -> Path | None:
    """The stored answer to ``query_id``, or ``None`` when the candidate gave none."""
    for suffix in ANSWER_SUFFIXES:
        path = answers_dir / f"{query_id}{suffix}"
        if path.is_file():
            return path
    return None


def read_answer(answers_dir: Path, query_id: str) -> bytes | None:
    """Raw bytes of the stored answer to ``query_id``, or ``None`` when there is none."""
    path = find_answer(answers_dir, query_id)
    return path.read_bytes() if path is not None else None
