"""evalgrid's package data (``rubrics/``, ``prompts/``, ``scripts/``), read once per process.

Their bytes enter judge versions and so keys: every module reads them through here, so a missing file is
the same clear error everywhere.
"""

from __future__ import annotations

import functools
from importlib import resources

from evaluator.errors import ConfigError


@functools.cache
def package_text(kind: str, name: str) -> str:
    """The text of ``<kind>/<name>`` in the ``evaluator`` package (e.g. ``"prompts", "repair-v1.md"``)."""
    path = resources.files("evaluator").joinpath(f"{kind}/{name}")
    if not path.is_file():
        raise ConfigError(f"no {kind[:-1]} {name!r} in evalgrid's package data; reinstall evalgrid (`make setup`)")
    return path.read_text(encoding="utf-8")
