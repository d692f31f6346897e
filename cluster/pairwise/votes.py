"""Human pairwise votes, Arena-style, read from CSV: one row per vote, ``query,a,b,winner``.

``winner`` is ``a``'s id, ``b``'s id, or ``tie`` (``both_bad`` and ``tie (bothbad)``, as Arena exports
write it, are ties too). A header row is required; extra columns are ignored. A file with a wrong row
is refused with its line number: a silently dropped vote would bias the agreement.
"""

from __future__ import annotations

import csv
from pathlib import Path

from cluster.pairwise.summary import HumanVote
from evaluator import ConfigError

_COLUMNS = ("query", "a", "b", "winner")
_TIES = {"tie", "both_bad", "tie (bothbad)", "bothbad"}


def read_votes(path: Path, candidates: list[str]) -> list[HumanVote]:
    """The votes in ``path``; a :class:`ConfigError` naming the line of the first wrong row."""
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle)
            missing = [c for c in _COLUMNS if c not in (reader.fieldnames or [])]
            if missing:
                raise ConfigError(f"{path}: the header needs the columns {', '.join(_COLUMNS)} "
                                  f"(missing {', '.join(missing)})")
            return [_vote(path, reader.line_num, row, candidates) for row in reader]
    except OSError as exc:
        raise ConfigError(f"cannot read the human votes {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path} is not UTF-8 text; export the votes as UTF-8 CSV") from None


def _vote(path: Path, line: int, row: dict[str, str], candidates: list[str]) -> HumanVote:
    query, a, b, winner = (str(row.get(c) or "").strip() for c in _COLUMNS)
    where = f"{path}:{line}"
    if not query:
        raise ConfigError(f"{where}: the vote names no query")
    for side in (a, b):
        if side not in candidates:
            raise ConfigError(f"{where}: {side!r} is not a candidate of this sweep ({', '.join(candidates)})")
    if a == b:
        raise ConfigError(f"{where}: a vote compares two different candidates, not {a!r} with itself")
    if winner.lower() in _TIES:
        return HumanVote(query, a, b, None)
    if winner not in (a, b):
        raise ConfigError(f"{where}: winner {winner!r} is neither {a!r}, {b!r} nor tie")
    return HumanVote(query, a, b, winner)
