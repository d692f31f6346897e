"""The UX fixture set (``fixtures/ux``): apps with planted UX flaws, their fixed twins and the flaw sidecars.

Each sidecar ``flaws/<query_id>.yaml`` lists the flaws planted in ``flawed/<query_id>.html``; each flaw
carries exact find/replace edits that undo it. Applying every flaw's edits to the flawed file yields
``original/<query_id>.html`` byte for byte, and any subset of flaws can be fixed on its own.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator

UX_ROOT: Path = Path(__file__).resolve().parent.parent / "fixtures" / "ux"
"""The fixture set's directory: ``queries.yaml``, ``sweep.yaml``, ``original/``, ``flawed/`` and ``flaws/``."""

UxDimension = Literal[
    "goal_state_clarity",
    "navigation_scent",
    "action_feedback",
    "flow_efficiency",
    "error_recovery",
    "trust_transparency",
    "scanability_accessibility",
]
"""The seven UX dimensions a planted flaw belongs to."""

Severity = Literal["critical", "major", "minor"]
"""How badly a flaw hurts the user."""


class Patch(BaseModel):
    """One exact edit: ``find`` occurs exactly once in the flawed text and becomes ``replace``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    find: str = Field(min_length=1)
    """Text of the flawed file, unique in it."""
    replace: str
    """What the original file has in its place."""


class PlantedFlaw(BaseModel):
    """A UX flaw planted in a flawed app, with the edits that remove it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$")
    """Kebab-case identifier, unique within its sidecar."""
    dimension: UxDimension
    """The UX dimension the flaw hurts."""
    severity: Severity
    """How badly it hurts."""
    description: str = Field(min_length=1)
    """What the user experiences."""
    fix: str = Field(min_length=1)
    """What the original does instead."""
    patch: list[Patch] = Field(min_length=1)
    """The edits that fix it, applied in order (a single mapping in the file is one edit)."""

    @field_validator("patch", mode="before")
    @classmethod
    def _single_patch(cls, value: Any) -> Any:
        return [value] if isinstance(value, dict) else value


class UxFixture(BaseModel):
    """One sidecar: the flaws planted in ``flawed/<query>.html``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    query: str = Field(pattern=r"^ux-[a-z0-9-]+$")
    """The query id (also the file stem of both twins)."""
    flaws: list[PlantedFlaw] = Field(min_length=1)
    """The planted flaws, in the order their edits apply."""

    @field_validator("flaws")
    @classmethod
    def _unique_ids(cls, flaws: list[PlantedFlaw]) -> list[PlantedFlaw]:
        ids = [f.id for f in flaws]
        duplicates = sorted({i for i in ids if ids.count(i) > 1})
        if duplicates:
            raise ValueError(f"flaw ids must be unique within a sidecar; repeated: {duplicates}")
        return flaws


def load_fixtures(root: Path = UX_ROOT) -> dict[str, UxFixture]:
    """Every sidecar under ``root/flaws``, validated, keyed by query id."""
    fixtures: dict[str, UxFixture] = {}
    for path in sorted((root / "flaws").glob("*.yaml")):
        fixture = UxFixture.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))
        if fixture.query != path.stem:
            raise ValueError(f"{path}: sidecar names query {fixture.query!r}, but the file is {path.name}")
        fixtures[fixture.query] = fixture
    return fixtures


def apply_fixes(text: str, fixture: UxFixture, flaw_ids: Iterable[str]) -> str:
    """Apply the edits of the named flaws to ``text``, in sidecar order.

    Raises ``ValueError`` naming the flaw when an id is unknown or an edit's ``find`` does not occur
    exactly once in the current text.
    """
    wanted = set(flaw_ids)
    unknown = wanted - {f.id for f in fixture.flaws}
    if unknown:
        raise ValueError(f"{fixture.query}: no planted flaw named {sorted(unknown)}")
    for flaw in fixture.flaws:
        if flaw.id not in wanted:
            continue
        for n, patch in enumerate(flaw.patch, start=1):
            count = text.count(patch.find)
            if count != 1:
                raise ValueError(
                    f"{fixture.query}: flaw {flaw.id!r}, edit {n}: the text to find occurs {count} times "
                    f"(expected exactly once): {patch.find[:80]!r}"
                )
            text = text.replace(patch.find, patch.replace, 1)
    return text


def remaining_flaws(text: str, fixture: UxFixture) -> list[PlantedFlaw]:
    """The flaws still present in ``text``: those whose first edit's ``find`` text still occurs in it."""
    return [flaw for flaw in fixture.flaws if flaw.patch[0].find in text]
