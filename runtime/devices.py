"""Devices as TensorFlow names them: `em.device(...)` (tf.device) and
`em.config.list_physical_devices(...)` (tf.config.list_physical_devices).

A device name is TF's, in any of its spellings: "cpu", "gpu:1", "/GPU:0", "/device:GPU:0",
"/job:localhost/replica:0/task:0/device:GPU:0" (the kind in any case). Entering
`with em.device("gpu:N")` needs GPU N: without one it raises `em.errors.GpuUnavailableError`
there (TensorFlow's soft placement would quietly use the CPU; Ember says so instead).
Inside it, `em.constant` makes tensors on GPU N, and functions compiled with
`backend="cuda"` run on GPU N and keep their results in its memory (tensors whose
`.device` names it; `.numpy()` copies to the host); outside, they run on GPU 0 and copy
their results to the host, unless an argument already lives on the GPU. Eager ops compute
on the CPU, reading GPU tensors in place (Ember's GPU memory is managed memory, which the
host may read): their results are CPU tensors. `with em.device("cpu:0")` and
`with em.device(None)` leave a GPU scope.
"""

from __future__ import annotations

import functools
import re
from typing import NamedTuple

from ember.frontend import device_memory

_NAME = re.compile(r"^(?:/job:localhost)?(?:/replica:0)?(?:/task:0)?/?(?:device:)?"
                   r"(?P<kind>cpu|gpu)(?::(?P<index>\d+))?$", re.IGNORECASE)


def parse(name) -> tuple[str, int]:
    """("CPU" or "GPU", index) of a device name; ValueError for anything else."""
    match = _NAME.match(name) if isinstance(name, str) else None
    if match is None:
        raise ValueError(f"em.device: {name!r} is not a device name; use 'cpu:0', 'gpu:0', "
                         "'/GPU:0' or '/job:localhost/replica:0/task:0/device:GPU:0'")
    return match["kind"].upper(), int(match["index"] or 0)


def full_name(kind: str, index: int) -> str:
    """TF's full spelling: '/job:localhost/replica:0/task:0/device:GPU:0'."""
    return f"/job:localhost/replica:0/task:0/device:{kind}:{index}"


class device:  # noqa: N801 -- tf.device's name
    """`with em.device("gpu:0"):` runs CUDA functions on that GPU and keeps their results
    there (see the module docstring); the name is checked at once, the GPU on entering.

    Example:
      >>> import ember as em
      >>> with em.device("cpu:0"):
      ...     print(em.constant([1.0]).device)
      /job:localhost/replica:0/task:0/device:CPU:0
    """

    def __init__(self, device_name: str | None):
        if device_name is None:  # tf.device(None): no device constraint (a GPU scope ends)
            self.kind, self.index, self.name = None, 0, None
        else:
            self.kind, self.index = parse(device_name)
            self.name = full_name(self.kind, self.index)
        self._previous: list = []

    def __enter__(self) -> "device":
        from ember.backends.cuda import runtime
        placer = None
        if self.kind == "CPU" and self.index != 0:
            from ember.runtime.logical_devices import cpu_count
            if self.index >= cpu_count():
                raise ValueError(f"em.device: there is no CPU:{self.index}: this process sees "
                                 f"{cpu_count()} CPU device(s), CPU:0..CPU:{cpu_count() - 1} "
                                 "(em.config.set_logical_device_configuration adds more)")
        if self.kind == "GPU":
            gpu = runtime.require_device(self.index)  # GpuUnavailableError / no such GPU
            placer = functools.partial(runtime.to_device, device=gpu)
            placer.ember_device = gpu.name  # device_memory.scope_device()
        self._previous.append((runtime.set_scope_device(
            self.index if self.kind == "GPU" else None), device_memory.set_placer(placer)))
        return self

    def __exit__(self, *exc) -> None:
        from ember.backends.cuda import runtime
        ordinal, placer = self._previous.pop()
        runtime.set_scope_device(ordinal)
        device_memory.set_placer(placer)

    def __repr__(self) -> str:
        return f"em.device({self.name!r})"


class PhysicalDevice(NamedTuple):
    """tf.config.PhysicalDevice: PhysicalDevice(name='/physical_device:GPU:0',
    device_type='GPU')."""
    name: str
    device_type: str


def list_physical_devices(device_type: str | None = None) -> list[PhysicalDevice]:
    """The devices of this process of `device_type` ("CPU" or "GPU", any case; None: all),
    as tf.config.list_physical_devices: the CPU, then each GPU the CUDA driver sees (none
    without cuda-bindings, a driver or a GPU).

    Example:
      >>> import ember as em
      >>> em.config.list_physical_devices("CPU")
      [PhysicalDevice(name='/physical_device:CPU:0', device_type='CPU')]
    """
    if device_type is not None and (not isinstance(device_type, str)
                                    or device_type.upper() not in ("CPU", "GPU")):
        raise ValueError(f"list_physical_devices: device_type {device_type!r} is not 'CPU' "
                         "or 'GPU'")
    wanted = device_type.upper() if device_type else None
    found = [PhysicalDevice("/physical_device:CPU:0", "CPU")]
    if wanted != "CPU":
        from ember.backends.cuda import driver
        if driver.available():
            found += [PhysicalDevice(f"/physical_device:GPU:{d.ordinal}", "GPU")
                      for d in driver.probe()[1]]
    return [d for d in found if wanted is None or d.device_type == wanted]
