"""Kubernetes: reaching the API, and sweeps submitted as KubeRay ``RayJob`` s on the chart's RayCluster.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evaluator import lazy_exports

if TYPE_CHECKING:
    from cluster.k8s.api import api_client, current_namespace
    from cluster.k8s.submit import JobStatus, create_job, follow_job, job_status, list_jobs, rayjob_manifest

_WHERE = {
    "api_client": "cluster.k8s.api",
    "current_namespace": "cluster.k8s.api",
    "JobStatus": "cluster.k8s.submit",
    "rayjob_manifest": "cluster.k8s.submit",
    "create_job": "cluster.k8s.submit",
    "job_status": "cluster.k8s.submit",
    "list_jobs": "cluster.k8s.submit",
    "follow_job": "cluster.k8s.submit",
}

__all__ = [
    "JobStatus",
    "api_client",
    "create_job",
    "current_namespace",
    "follow_job",
    "job_status",
    "list_jobs",
    "rayjob_manifest",
]

__getattr__, __dir__ = lazy_exports(__name__, _WHERE, __all__)
