"""Where a sweep's outcomes and stage outputs live.

- ``outcomes``: the one interface the driver records outcomes in (:class:`OutcomeStore`), with its two
  backends, a local run directory and one in an object store (:func:`open_outcomes` picks);
- ``results_log``: one JSON line per finished run, the log people and the reducer read;
- ``ledger``: the SQLite record beside it that makes resume fast at 100,000 runs, and what is in flight;
- ``remote``: a run directory in an object store (``s3://``): stage outputs, bundles and outcomes;
- ``object_store``: the S3-compatible bytes layer under it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evaluator import lazy_exports

if TYPE_CHECKING:
    from cluster.store.ledger import Ledger
    from cluster.store.object_store import S3Store, StoreLocation, StoreSettings, is_store_url
    from cluster.store.outcomes import RESULTS_FILE, LocalOutcomes, ObjectStoreOutcomes, OutcomeStore, open_outcomes
    from cluster.store.remote import RunStore
    from cluster.store.results_log import ResultsLog

_WHERE = {
    "OutcomeStore": "cluster.store.outcomes",
    "LocalOutcomes": "cluster.store.outcomes",
    "ObjectStoreOutcomes": "cluster.store.outcomes",
    "open_outcomes": "cluster.store.outcomes",
    "RESULTS_FILE": "cluster.store.outcomes",
    "ResultsLog": "cluster.store.results_log",
    "Ledger": "cluster.store.ledger",
    "RunStore": "cluster.store.remote",
    "S3Store": "cluster.store.object_store",
    "StoreLocation": "cluster.store.object_store",
    "StoreSettings": "cluster.store.object_store",
    "is_store_url": "cluster.store.object_store",
}

__all__ = [
    "Ledger",
    "LocalOutcomes",
    "ObjectStoreOutcomes",
    "OutcomeStore",
    "RESULTS_FILE",
    "ResultsLog",
    "RunStore",
    "S3Store",
    "StoreLocation",
    "StoreSettings",
    "is_store_url",
    "open_outcomes",
]

__getattr__, __dir__ = lazy_exports(__name__, _WHERE, __all__)
