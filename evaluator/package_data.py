"""evalgrid's package data (``rubrics/``, ``prompts/``, ``scripts/``), read once per process.

Their bytes enter judge versions and so keys: every module reads them through here, so a missing file is
the same clear error everywhere.
"""

from __future__ import annotations

import functools
from importlib import resources
from typing import Any, TypeAlias

from evaluator.errors import ConfigError

YamlDocument: TypeAlias = dict[str, Any]
"""A rubric, policy or guide as its YAML file gives it. Kept a mapping on purpose: a versioned rubric's rows carry
the flags of the version that added them and old versions stay readable byte for byte, so readers look a row's
keys up instead of validating one schema that every version would have to fit."""


@functools.cache
def package_text(kind: str, name: str) -> str:
    """The text of ``<kind>/<name>`` in the ``evaluator`` package (e.g. ``"prompts", "repair-v1.md"``)."""
    path = resources.files("evaluator").joinpath(f"{kind}/{name}")
    if not path.is_file():
        raise ConfigError(f"no {kind[:-1]} {name!r} in evalgrid's package data; reinstall evalgrid (`make setup`)")
    return path.read_text(encoding="utf-8")


def yaml_document(text: str, name: str) -> YamlDocument:
    """``text`` (the file ``name``) parsed as a YAML mapping; anything else is a :class:`ConfigError`."""
    import yaml  # here, not at import: the text-safety package reads package data and must not load a parser

    document = yaml.safe_load(text)
    if not isinstance(document, dict):
        raise ConfigError(f"{name} is not a YAML mapping; reinstall evalgrid (`make setup`)")
    return document


def package_yaml(kind: str, name: str) -> YamlDocument:
    """The YAML mapping ``<kind>/<name>`` of the ``evaluator`` package."""
    return yaml_document(package_text(kind, name), f"{kind}/{name}")
