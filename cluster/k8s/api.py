"""Reaching the Kubernetes API: in-cluster credentials inside a pod, else the current kube context."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any, TypeAlias

from kubernetes import client as k8s
from kubernetes import config as k8s_config

from evaluator import ConfigError

_SERVICE_ACCOUNT_NAMESPACE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")

KubeObject: TypeAlias = dict[str, Any]
"""A Kubernetes object (a pod or job manifest, a RayCluster, a status) as the API takes and returns it: the
API's own schema, read only where evalgrid needs a field, so a mapping rather than a model of every kind."""


def _kubeconfig() -> str | None:
    """``$KUBECONFIG`` as it is now (the client reads it once, when it is imported)."""
    return os.environ.get("KUBECONFIG") or None


def api_client() -> k8s.ApiClient:
    """A client for the cluster this process runs in, or for the current kube context."""
    try:
        k8s_config.load_incluster_config()  # type: ignore[no-untyped-call]
    except k8s_config.ConfigException:
        try:
            k8s_config.load_kube_config(_kubeconfig())  # type: ignore[no-untyped-call]
        except (k8s_config.ConfigException, OSError) as exc:
            raise ConfigError("no Kubernetes cluster: not inside a pod and no usable kubeconfig "
                              f"({exc}); set KUBECONFIG or run inside the cluster") from exc
    return k8s.ApiClient()


def current_namespace() -> str:
    """The kube context's namespace, else this pod's, else ``default``."""
    with contextlib.suppress(Exception):
        _, context = k8s_config.list_kube_config_contexts(_kubeconfig())  # type: ignore[no-untyped-call]
        namespace = context.get("context", {}).get("namespace")
        if namespace:
            return str(namespace)
    with contextlib.suppress(OSError):
        return _SERVICE_ACCOUNT_NAMESPACE.read_text().strip()
    return "default"
