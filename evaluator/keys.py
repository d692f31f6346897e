"""Content keys: each stage output is addressed by the hash of exactly what it depends on."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from pydantic import BaseModel

COLLECTOR_VERSION = "collector-14"
"""Bump when evidence collection changes in a way that should invalidate stored evidence."""

_KEY_CHARS = 24


def _canonical(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    return value


def content_key(kind: str, *parts: Any) -> str:
    """Hash ``parts`` (models, dicts, strings) canonically into a short hex key prefixed by ``kind``."""
    payload = json.dumps([kind, *(_canonical(p) for p in parts)], sort_keys=True, ensure_ascii=False)
    return f"{kind}-{hashlib.sha256(payload.encode()).hexdigest()[:_KEY_CHARS]}"


def sha256_bytes(data: bytes) -> str:
    """Hex sha256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def run_key(candidate: object, query: object, agent: object, judge: object, judge_version: str, *,
            panel: tuple[tuple[object, str], ...] = (), cell: tuple[str | None, int] = (None, 0),
            replayed: tuple[str | None, ...] = ()) -> str:
    """The content key of a run; the axes a sweep may add (panel, the cell's variant and sample) enter it only
    when used, so plain sweeps keep their keys. A replay candidate's run is keyed by its answer too:
    ``replayed`` holds the stored answer's digest (``(None,)`` when there is none; empty for a live candidate),
    so an edited, added or removed answer is a new run."""
    variant, sample = cell
    extra: list[object] = []
    if replayed:
        extra.append({"answer": replayed[0]})
    if panel:
        extra.append({"panel": [[judge_doc, version] for judge_doc, version in panel]})
    if variant is not None or sample:
        extra.append({"variant": variant, "sample": sample})
    return content_key("run", candidate, query, agent, judge, judge_version, COLLECTOR_VERSION, *extra)


def judge_dir_name(judge: Any, version: str) -> str:
    """A folder name for one judge's outputs (rejudged, pairwise): its name and model, and a hash of its version.

    ``judge`` is a :class:`~evaluator.models.JudgeConfig` (typed loosely: this module imports no models).
    """
    model = str(judge.options.get("model", ""))
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "-", f"{judge.name}-{model}".strip("-"))[:60].strip("-")
    return f"{stem}-{sha256_bytes(version.encode())[:8]}"
