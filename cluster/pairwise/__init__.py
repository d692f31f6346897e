"""Pairwise judging: two apps of one query compared on stored evidence, in both orders.

- ``pairs``: which pairs are compared (``all``, ``adjacent`` in the absolute ranking, ``sample:N``);
- ``stage``: the compare stage (``evalgrid compare``, a sweep's ``pairwise:``), its keys and files;
- ``votes``: Arena-style human votes read from CSV;
- ``summary``: position consistency (FA/SA/AA/CA), order effects, Bradley-Terry ratings, agreement.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evaluator import lazy_exports

if TYPE_CHECKING:
    from cluster.pairwise.pairs import Pair, Selection, select_pairs
    from cluster.pairwise.stage import CompareOptions, CompareResult, compare
    from cluster.pairwise.summary import Comparison, HumanVote, PairwiseSummary, read_summaries, summary_tables
    from cluster.pairwise.votes import read_votes

_WHERE = {
    "Pair": "cluster.pairwise.pairs",
    "Selection": "cluster.pairwise.pairs",
    "select_pairs": "cluster.pairwise.pairs",
    "CompareOptions": "cluster.pairwise.stage",
    "CompareResult": "cluster.pairwise.stage",
    "compare": "cluster.pairwise.stage",
    "Comparison": "cluster.pairwise.summary",
    "HumanVote": "cluster.pairwise.summary",
    "PairwiseSummary": "cluster.pairwise.summary",
    "read_summaries": "cluster.pairwise.summary",
    "summary_tables": "cluster.pairwise.summary",
    "read_votes": "cluster.pairwise.votes",
}

__all__ = [
    "CompareOptions",
    "CompareResult",
    "Comparison",
    "HumanVote",
    "Pair",
    "PairwiseSummary",
    "Selection",
    "compare",
    "read_summaries",
    "read_votes",
    "select_pairs",
    "summary_tables",
]

__getattr__, __dir__ = lazy_exports(__name__, _WHERE, __all__)
