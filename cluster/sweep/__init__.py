"""What to evaluate: sweep files, validated and planned lazily, and their inputs packed as one
content-addressed archive for sweeps that run where their files are not.

- ``spec``: the sweep file (:class:`SweepSpec`), its loaded form (:class:`Sweep`), the plan a run directory records;
- ``inputs``: the packed inputs (``s3://…/inputs/<sha256>.tar.gz``) a cluster's driver and workers fetch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evaluator import lazy_exports

if TYPE_CHECKING:
    from cluster.sweep.inputs import InputsRef, fetch_inputs, pack_inputs, resolve_inputs, unpack_inputs, upload_inputs
    from cluster.sweep.spec import RecordedPlan, SandboxSpec, Sweep, SweepSpec, load_sweep

_WHERE = {
    "SweepSpec": "cluster.sweep.spec",
    "SandboxSpec": "cluster.sweep.spec",
    "Sweep": "cluster.sweep.spec",
    "RecordedPlan": "cluster.sweep.spec",
    "load_sweep": "cluster.sweep.spec",
    "InputsRef": "cluster.sweep.inputs",
    "pack_inputs": "cluster.sweep.inputs",
    "unpack_inputs": "cluster.sweep.inputs",
    "upload_inputs": "cluster.sweep.inputs",
    "fetch_inputs": "cluster.sweep.inputs",
    "resolve_inputs": "cluster.sweep.inputs",
}

__all__ = [
    "InputsRef",
    "RecordedPlan",
    "SandboxSpec",
    "Sweep",
    "SweepSpec",
    "fetch_inputs",
    "load_sweep",
    "pack_inputs",
    "resolve_inputs",
    "unpack_inputs",
    "upload_inputs",
]

__getattr__, __dir__ = lazy_exports(__name__, _WHERE, __all__)
