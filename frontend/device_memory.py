"""Which device holds an em.Tensor's value: the CPU, or a GPU when the numpy array lies over
memory of Ember's CUDA runtime (backends/cuda/runtime.py: its DeviceBuffer owns the array's
memory and says `ember_device`). The frontend reads that by duck typing, below the
backends in the layering, so a CPU-only process never imports the CUDA runtime.

`with em.device("gpu:N")` (runtime/devices.py) installs a placer for its thread: the
tensors `em.constant` makes inside it are copied to that GPU, as tf.constant's are.
"""

from __future__ import annotations

import functools
import threading

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


class _Placement(threading.local):
    placer = None  # array -> the same values on the scope's GPU; None: the CPU


_placement = _Placement()


def set_placer(placer):
    """Installs the calling thread's placer (None: tensors stay on the CPU); returns the
    previous one."""
    previous, _placement.placer = _placement.placer, placer
    return previous


def placed(make):
    """Wraps a function making an eager em.Tensor: inside a GPU scope the tensor is placed
    on that GPU."""
    @functools.wraps(make)
    def wrapper(*args, **kwargs):
        tensor = make(*args, **kwargs)
        place = _placement.placer
        if place is None or getattr(tensor, "_value", None) is None:
            return tensor
        return type(tensor)(place(tensor._value), tensor.dtype)
    return wrapper


def scope_device() -> str | None:
    """The GPU of the calling thread's `em.device` scope (its full name), None outside one
    (its placer says `ember_device`: runtime/devices.py)."""
    return getattr(_placement.placer, "ember_device", None)
