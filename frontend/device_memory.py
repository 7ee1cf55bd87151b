"""Which device holds an em.Tensor's value: the CPU, or a GPU when the numpy array lies over
memory of Ember's CUDA runtime (backends/cuda/runtime.py: its DeviceBuffer owns the array's
memory and says `ember_device`). The frontend reads that by duck typing, below the
backends in the layering, so a CPU-only process never imports the CUDA runtime."""

from __future__ import annotations

import numpy as np

CPU = "/job:localhost/replica:0/task:0/device:CPU:0"


def owner_of(value: np.ndarray):
    """The object owning a GPU array's memory (it has `ember_device`, `pointer` and
    `host_copy(array)`), or None for host memory."""
    base = value.base
    while type(base) is np.ndarray:
        base = base.base
    return base if base is not None and hasattr(base, "ember_device") else None


def device_of(value: np.ndarray) -> str | None:
    """The GPU holding `value` ('/job:localhost/replica:0/task:0/device:GPU:N'), or None."""
    owner = owner_of(value) if value is not None and value.base is not None else None
    return owner.ember_device if owner is not None else None
