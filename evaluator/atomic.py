"""Writing a file so that readers see the old one or the new one, never half of either."""

from __future__ import annotations

import json
import os
from pathlib import Path

from pydantic import BaseModel


def write_json_atomic(path: Path, data: object, *, indent: int | None = 2) -> None:
    """Write JSON (models included) to ``path`` so readers see the old file or the new, never half.

    ``indent=None`` writes compact JSON with the C encoder: for large tables, where indenting falls back
    to the pure-Python encoder and costs seconds per 100,000 records.
    """
    payload = data.model_dump(mode="json") if isinstance(data, BaseModel) else data
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(payload, indent=indent, ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, path)
