"""Joining a Ray cluster that wants a token (Ray's token authentication; the Helm chart turns it on).

Ray reads the token itself: ``$RAY_AUTH_TOKEN``, else the file ``$RAY_AUTH_TOKEN_PATH`` names, else
``~/.ray/auth_token``; and it sends it only under ``RAY_AUTH_MODE=token``. For an address named
explicitly Ray never turns that mode on by itself (so that a token is not sent to a cluster nobody
chose); for ``auto`` it does when a token is there. A cluster that refuses a connection for want of
a token makes ``ray.init`` retry for about 20 s and then report only that it could not connect.
:func:`join_ray` asks the cluster's GCS first, which answers a missing or wrong token at once, and
turns the refusal into a :class:`~evaluator.errors.ConfigError` that says what to set.

Inside the chart's pods every Ray process has ``RAY_AUTH_MODE`` and ``RAY_AUTH_TOKEN`` from the
token Secret, and a job's entrypoint inherits them from the head, so ``--ray-address auto`` there
needs nothing more.
"""

from __future__ import annotations

import contextlib
import os
import socket
from pathlib import Path
from typing import Any

import ray
from ray.exceptions import AuthenticationError

from evaluator import ConfigError

AUTH_MODE_ENV = "RAY_AUTH_MODE"
TOKEN_ENV = "RAY_AUTH_TOKEN"
TOKEN_PATH_ENV = "RAY_AUTH_TOKEN_PATH"
_PROBE_CONNECT_S = 2.0
_CHART_HINT = ("For the evalgrid Helm chart the token is in the Secret named by ray.auth.tokenSecret (default "
               "<release>-evalgrid-ray-token): export RAY_AUTH_TOKEN=\"$(kubectl get secret NAME -o "
               "jsonpath='{.data.auth_token}' | base64 -d)\".")


def default_token_path() -> Path:
    """The file Ray reads a token from when neither variable is set (``~/.ray/auth_token``)."""
    return Path.home() / ".ray" / "auth_token"


def token_source() -> str | None:
    """Where Ray would read this process's token from (a variable's name or a file), or ``None``.

    Raises :class:`ConfigError` when ``$RAY_AUTH_TOKEN_PATH`` names a file that cannot be read or
    is empty: Ray treats that as fatal and aborts the whole process instead of raising.
    """
    if os.environ.get(TOKEN_ENV, "").strip():
        return f"${TOKEN_ENV}"
    named = os.environ.get(TOKEN_PATH_ENV)
    if named:
        try:
            content = Path(named).read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"${TOKEN_PATH_ENV} names {named}, which cannot be read ({exc.strerror}): point it at "
                              f"the Ray cluster's token file, or unset it") from exc
        if not content.strip():
            raise ConfigError(f"${TOKEN_PATH_ENV} names {named}, which is empty: write the Ray cluster's token "
                              "into it, or unset it")
        return named
    default = default_token_path()
    with contextlib.suppress(OSError):
        if default.read_text(encoding="utf-8").strip():
            return str(default)
    return None


def token_mode_on() -> bool:
    """Whether this process runs with ``RAY_AUTH_MODE=token``."""
    return os.environ.get(AUTH_MODE_ENV, "").strip().lower() == "token"


def join_ray(address: str | None, **init_options: Any) -> None:
    """``ray.init(address=address, **init_options)``, refusing at once, with what to do, when the
    cluster wants a token this process does not send.

    ``address`` ``None`` starts a new local cluster (Ray makes and uses its own token); ``auto``
    or ``host:port`` joins a running one.
    """
    token_source()  # a bad $RAY_AUTH_TOKEN_PATH is a ConfigError here, not an abort inside Ray
    if address is not None:
        _refuse_without_token(address)
    try:
        ray.init(address=address, **init_options)
    except AuthenticationError as exc:
        raise ConfigError(_refusal(address or "local", str(exc))) from exc


def _refuse_without_token(address: str) -> None:
    """Ask the cluster's GCS whether it takes this process's credentials; a refusal is a ConfigError."""
    source = token_source()
    if address.startswith("ray://"):
        return  # the Ray client protocol: Ray's own client reports what it is refused
    if address == "auto" and source is not None and AUTH_MODE_ENV not in os.environ:
        return  # Ray turns token mode on by itself for a cluster it finds here, when a token exists
    gcs = _gcs_address(address)
    if gcs is None or not _reachable(gcs):
        return  # nothing answers there: ray.init says so in its own words
    try:
        # The client ray.init itself uses (compiled, so untyped); it fails at once on a refused token.
        from ray._raylet import GcsClient  # type: ignore[attr-defined]

        GcsClient(address=gcs)
    except AuthenticationError as exc:
        raise ConfigError(_refusal(address, str(exc))) from exc
    except Exception:  # noqa: BLE001 - the probe only diagnoses; ray.init reports anything else itself
        return


def _refusal(address: str, detail: str) -> str:
    """What to do when the cluster at ``address`` refused this process's credentials."""
    source = token_source()
    where = f"the Ray cluster at {address} requires token authentication"
    if source is None:
        return (f"{where}, and this process has no token: set {AUTH_MODE_ENV}=token and the cluster's token in "
                f"{TOKEN_ENV} (or in a file named by {TOKEN_PATH_ENV}). {_CHART_HINT}")
    if not token_mode_on():
        return (f"{where}: a token is set ({source}), but {AUTH_MODE_ENV} is not 'token', so Ray does not send it "
                f"to a cluster named explicitly: set {AUTH_MODE_ENV}=token.")
    return (f"{where}, and it refused the token from {source} ({detail.split('.')[0]}): set the cluster's own "
            f"token. {_CHART_HINT}")


def _gcs_address(address: str) -> str | None:
    """``host:port`` of the GCS ``address`` means (``auto``: the cluster found here), or ``None``."""
    try:
        from ray._private.services import canonicalize_bootstrap_address

        found = canonicalize_bootstrap_address(address)
    except Exception:  # noqa: BLE001 - no cluster found, or Ray's internals moved: skip the probe
        return None
    return str(found) if found else None


def _reachable(gcs: str) -> bool:
    """Whether something accepts TCP connections at ``host:port`` (the GCS client would wait ~40 s)."""
    host, _, port = gcs.rpartition(":")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=_PROBE_CONNECT_S):
            return True
    except (OSError, ValueError):
        return False
