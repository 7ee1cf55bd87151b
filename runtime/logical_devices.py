"""Logical devices as tf.config names them: `em.config.set_logical_device_configuration`
splits the CPU into several logical CPUs (for `em.distribute.MirroredStrategy` replicas),
`em.config.list_logical_devices` and `em.config.get_logical_device_configuration`.

As in TensorFlow, the configuration must be set before the devices are used: once
`list_logical_devices`, `em.device("cpu:N")` or a distribution strategy has used them it is
fixed, and setting it raises RuntimeError("Virtual devices cannot be modified after being
initialized"). Only the CPU can be split: Ember's GPUs have no virtual devices.
"""

from __future__ import annotations

import threading
from typing import NamedTuple, Optional

from ember.runtime.devices import PhysicalDevice, full_name, list_physical_devices

_lock = threading.Lock()
_cpu_config: Optional[list] = None  # the LogicalDeviceConfigurations of the CPU, or None
_initialized = False


class LogicalDevice(NamedTuple):
    """tf.config.LogicalDevice: LogicalDevice(name='/job:localhost/replica:0/task:0/device:
    CPU:0', device_type='CPU')."""
    name: str
    device_type: str


class LogicalDeviceConfiguration(NamedTuple):
    """tf.config.LogicalDeviceConfiguration: one logical device of a physical device
    (`memory_limit` in MB and the `experimental_*` fields are kept as given)."""
    memory_limit: Optional[int] = None
    experimental_priority: Optional[int] = None
    experimental_device_ordinal: Optional[int] = None


def _check_physical(device, where: str) -> None:
    if not isinstance(device, PhysicalDevice):
        raise TypeError(f"{where}: device must be a PhysicalDevice from "
                        f"em.config.list_physical_devices(), got {device!r}")
    if device not in list_physical_devices():
        raise ValueError(f"{where}: {device.name} is not a physical device of this process; "
                         f"it has {[d.name for d in list_physical_devices()]}")


def set_logical_device_configuration(device, logical_devices) -> None:
    """Splits the physical `device` (only the CPU) into `len(logical_devices)` logical
    devices; None goes back to one. Before any use of the devices only (see the module).

    Example:
      >>> import ember as em
      >>> cpu = em.config.list_physical_devices("CPU")[0]
      >>> em.config.get_logical_device_configuration(cpu) is None
      True
    """
    global _cpu_config
    where = "em.config.set_logical_device_configuration"
    _check_physical(device, where)
    if device.device_type != "CPU":
        raise ValueError(f"{where}: only the CPU can be split into logical devices, not "
                         f"{device.name}")
    if logical_devices is not None:
        if not isinstance(logical_devices, (list, tuple)) or not logical_devices or not all(
                isinstance(c, LogicalDeviceConfiguration) for c in logical_devices):
            raise ValueError(f"{where}: logical_devices must be a non-empty list of "
                             "em.config.LogicalDeviceConfiguration() (one per logical device)"
                             f", got {logical_devices!r}")
        logical_devices = list(logical_devices)
    with _lock:
        if _initialized:
            raise RuntimeError("Virtual devices cannot be modified after being initialized")
        _cpu_config = logical_devices


def get_logical_device_configuration(device) -> Optional[list]:
    """The LogicalDeviceConfigurations set for the physical `device`, or None if unsplit."""
    _check_physical(device, "em.config.get_logical_device_configuration")
    if device.device_type != "CPU":
        return None
    with _lock:
        return None if _cpu_config is None else list(_cpu_config)


def initialize() -> None:
    """Fixes the configuration (the devices are in use): later changes raise RuntimeError."""
    global _initialized
    with _lock:
        _initialized = True


def cpu_count() -> int:
    """The number of logical CPUs (fixes the configuration, as their first use)."""
    initialize()
    return 1 if _cpu_config is None else len(_cpu_config)


def list_logical_devices(device_type: Optional[str] = None) -> list[LogicalDevice]:
    """The logical devices of `device_type` ("CPU" or "GPU"; None: all), as
    tf.config.list_logical_devices (this uses the devices: their configuration is fixed).

    Example:
      >>> import ember as em
      >>> em.config.list_logical_devices("CPU")[0]
      LogicalDevice(name='/job:localhost/replica:0/task:0/device:CPU:0', device_type='CPU')
    """
    physical = list_physical_devices(device_type)  # checks device_type
    found = []
    for device in physical:
        kind, index = device.device_type, int(device.name.rsplit(":", 1)[1])
        if kind == "CPU":
            found += [LogicalDevice(full_name("CPU", i), "CPU") for i in range(cpu_count())]
        else:
            found.append(LogicalDevice(full_name(kind, index), kind))
    return found
