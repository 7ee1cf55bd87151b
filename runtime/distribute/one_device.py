"""`OneDeviceStrategy` (tf.distribute.OneDeviceStrategy): the strategy API on one device.

It is a one-replica MirroredStrategy (strategy.py), so `reduce`, the distributed datasets
(input.py: one replica takes the dataset as it is, as TF), `experimental_local_results`,
`gather`, strategy.run inside an em.function (traced_run.py) and Keras's `fit` (dispatch.py)
are MirroredStrategy's. What differs, as TF's:
  - it takes one device name (`"/cpu:0"`, `"gpu:0"`, a full name);
  - `run` calls the function on the calling thread (no replica thread), under
    `em.device(device)` and a ReplicaContext of replica 0: a GradientTape or `em.device`
    of the caller's sees what the function does;
  - variables made under `scope()` are ordinary em.Variables placed on the device
    (mirrored.py's creator asks `_one_device`), and `optimizer.apply_gradients` in `run`
    applies the gradients as they are (one replica: nothing to sum);
  - `extended` has the device as its only worker and parameter device.
"""

from __future__ import annotations

from ember.frontend.tracing import current_graph
from ember.runtime.devices import device, full_name, parse
from ember.runtime.distribute import strategy as _strategy
from ember.runtime.distribute.strategy import (MirroredStrategy, ReplicaContext, _device_names,
                                               _select)


class OneDeviceExtended:
    """`strategy.extended` of a OneDeviceStrategy (TF's OneDeviceExtended): the one device
    holds the variables and runs the computation; this process saves and initialises."""

    def __init__(self, strategy: "OneDeviceStrategy"):
        self._strategy = strategy

    @property
    def worker_devices(self) -> tuple:
        return (self._strategy._one_device,)

    @property
    def parameter_devices(self) -> tuple:
        return (self._strategy._one_device,)

    should_checkpoint = should_save_summary = should_init = property(lambda self: True)


class OneDeviceStrategy(MirroredStrategy):
    """tf.distribute.OneDeviceStrategy: everything in its scope runs on `device`, as one
    replica (`num_replicas_in_sync == 1`).

    Args:
      device: a device name: "/cpu:0", "cpu:1" (a logical CPU), "/gpu:0", or TF's full
        spelling "/job:localhost/replica:0/task:0/device:CPU:0".

    Raises:
      TypeError: `device` is not one device name (a list: use MirroredStrategy).
      ValueError: `device` names no device of this process.

    Example:
      >>> import ember as em
      >>> strategy = em.distribute.OneDeviceStrategy("/cpu:0")
      >>> with strategy.scope():
      ...     v = em.Variable(1.0)
      >>> v.device
      '/job:localhost/replica:0/task:0/device:CPU:0'
      >>> sum(strategy.run(lambda x: x * 2, args=(i,)) for i in range(10))
      90
    """

    cluster_resolver = None  # one process (TF's OneDeviceStrategy has none either)

    def __init__(self, device):
        if not isinstance(device, str):
            raise TypeError(
                "OneDeviceStrategy takes one device name, such as '/cpu:0' or '/gpu:0', got "
                f"{device!r}" + ("; to replicate over several devices use "
                                 "em.distribute.MirroredStrategy(devices)"
                                 if isinstance(device, (list, tuple)) else ""))
        try:
            kind, index = parse(device)
        except ValueError as e:
            raise ValueError(f"OneDeviceStrategy: {e}") from None
        # (not MirroredStrategy.__init__: `run` needs no replica threads)
        self._devices = tuple(_device_names([full_name(kind, index)], "OneDeviceStrategy"))
        self._one_device = self._devices[0]
        self.extended = OneDeviceExtended(self)

    def run(self, fn, args=(), kwargs=None):
        """`fn(*args, **kwargs)` on the device, on this thread, as replica 0; its result as
        it is (one replica: no PerReplica). A PerReplica argument (of one value, from
        `experimental_distribute_values_from_function`) gives its value."""
        if not callable(fn):
            raise TypeError(f"OneDeviceStrategy.run: fn must be callable, got {fn!r}")
        local = _strategy._local
        if getattr(local, "replica", None) is not None:
            raise RuntimeError("OneDeviceStrategy.run: called inside a replica (in a function "
                               "strategy.run runs); call it from the cross-replica context")
        if current_graph() is not None:  # inside an em.function: traced_run, as Mirrored
            return super().run(fn, args, kwargs)
        local.replica = ReplicaContext(self, 0, self._new_group(1))
        try:
            with device(self._one_device):
                return fn(*_select(args, 0, 1), **_select(dict(kwargs or {}), 0, 1))
        finally:
            local.replica = None

    def __repr__(self) -> str:
        return f"OneDeviceStrategy(device={self._one_device!r})"
