"""Where a sweep's outcomes and stage outputs live.

- ``layout``: the names of a run directory's files and folders (:class:`RunFile`), the only place they are spelled;
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
    from cluster.store.layout import RunFile
    from cluster.store.ledger import Ledger
    from cluster.store.object_store import S3Store, StoreLocation, StoreSettings, is_store_url
    from cluster.store.outcomes import LocalOutcomes, ObjectStoreOutcomes, OutcomeStore, open_outcomes
    from cluster.store.remote import RunStore
    from cluster.store.results_log import ResultsLog

_WHERE = {
    "is_store_url": "cluster.store.object_store",
    "Ledger": "cluster.store.ledger",
    "LocalOutcomes": "cluster.store.outcomes",
    "ObjectStoreOutcomes": "cluster.store.outcomes",
    "open_outcomes": "cluster.store.outcomes",
    "OutcomeStore": "cluster.store.outcomes",
    "ResultsLog": "cluster.store.results_log",
    "RunFile": "cluster.store.layout",
    "RunStore": "cluster.store.remote",
    "S3Store": "cluster.store.object_store",
    "StoreLocation": "cluster.store.object_store",
    "StoreSettings": "cluster.store.object_store",
}

__all__ = [
    "Ledger",
    "LocalOutcomes",
    "ObjectStoreOutcomes",
    "OutcomeStore",
    "ResultsLog",
    "RunFile",
    "RunStore",
    "S3Store",
    "StoreLocation",
    "StoreSettings",
    "is_store_url",
    "open_outcomes",
]

__getattr__, __dir__ = lazy_exports(__name__, _WHERE, __all__)
