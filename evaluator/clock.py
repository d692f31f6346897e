"""The one clock evalgrid's records are stamped with."""

from __future__ import annotations

import datetime as dt


def utc_now() -> str:
    """Current UTC time, ISO 8601 with milliseconds."""
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds")
