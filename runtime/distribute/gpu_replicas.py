"""`MirroredStrategy` replicas on GPUs (tf.distribute's MirroredStrategy(["GPU:0", "GPU:1"])).

Which devices: `MirroredStrategy()` takes every GPU of `em.config.list_physical_devices("GPU")`
when there is one (as TF), else the logical CPUs; `MirroredStrategy(["GPU:0", "GPU:1"])`
names them. A GPU the process does not have is an `em.errors.GpuUnavailableError` naming
the GPUs it has. One strategy's devices are all GPUs or all CPUs: Ember compiles each
em.function for one backend (`backend="cuda"` or `"cpu"`), so one replica function could not
target both kinds; a mixed list is a ValueError saying so (TF allows it).

How replicas use their GPU (strategy.py runs replica i on its thread inside
`em.device(devices[i])`):
- compiled code: a function made with `em.function(..., backend="cuda")` runs on the
  replica's GPU and keeps its results there (runtime/devices.py, backends/cuda/runtime.py);
  a `backend="cpu"` function still runs on the host, reading the device arrays (managed
  memory) in place;
- input: `experimental_distribute_dataset` and `distribute_datasets_from_function` copy each
  replica's batch to its GPU (`place_pieces`), and so does
  `experimental_distribute_values_from_function` with the tensors of each replica's value,
  so `strategy.run` gets device tensors;
- mirrored variables made under `scope()` hold one copy on each replica's GPU, and stay
  there when written eagerly (`keep_on_devices`);
- all-reduce (`ReplicaContext.all_reduce`, the gradients summed by `apply_gradients`):
  through the host: each replica's value is copied to the host (device to host), summed
  there in numpy, and the sum copied to each replica's GPU (host to device). CUDA peer
  copies (cuMemcpyPeer) are not used: the emulated GPUs below could not test them;
- results: `strategy.run` and `experimental_local_results` give the replicas' device
  tensors (`.device` names the GPU, `.numpy()` copies to the host); `strategy.reduce` in the
  cross-replica context gives a host tensor, as TF's reduce to the current device (the CPU
  unless inside `em.device("gpu:N")`).

Compiled code and the all-reduce: inside an em.function, `all_reduce` and `apply_gradients`
meet the other replicas through a host call, which the CUDA backend does not compile: such
a function runs on the interpreter (on the host). On GPUs, compute the loss and gradients
in a `backend="cuda"` function and call `optimizer.apply_gradients` in the replica function
itself (eagerly: a merge_call summing the gradients once). `strategy.run` inside an
em.function compiles one function for every replica (traced_run.py): it runs where that
function's backend runs, not on the replicas' GPUs; the mirrored variable copies it
writes go back to their GPUs when the next `strategy.run` starts (`restore`).

Without a GPU, `EMBER_CUDA_EMULATED_GPUS=2` (backends/cuda/emulated_device.py) gives the
process two emulated GPUs, on which all of the above runs (the tests use it).
"""

from __future__ import annotations

import weakref

from ember.frontend.object_identity import WeakIdentitySet
from ember.runtime.devices import full_name, parse

# strategy -> its MirroredVariables (on GPUs), by identity: a Variable cannot be hashed
_tracked = weakref.WeakKeyDictionary()


def _gpus() -> list:
    """The DeviceInfos of this process's GPUs (none without a driver or a GPU)."""
    from ember.backends.cuda import driver
    if not driver.available():
        return []
    return list(driver.probe()[1])


def _describe(gpus: list) -> str:
    return ", ".join(f"GPU:{g.ordinal} ({g.name})" for g in gpus) or "none"


def default_devices() -> list[str]:
    """Every GPU's full name (TF's MirroredStrategy() default); [] without GPUs."""
    return [full_name("GPU", g.ordinal) for g in _gpus()]


def check_devices(names: list[str], where: str) -> None:
    """Checks a strategy's devices (full names): the GPUs exist and CPUs and GPUs are not
    mixed; GpuUnavailableError or ValueError saying what to use instead."""
    kinds = [parse(name) for name in names]
    wanted = [index for kind, index in kinds if kind == "GPU"]
    if not wanted:
        return
    if len(wanted) != len(kinds):
        raise ValueError(f"{where}: devices {names} mix CPUs and GPUs; Ember compiles each "
                         "em.function for one backend, so a replica function cannot run on "
                         "both: give only GPUs (e.g. ['GPU:0', 'GPU:1']) or only logical "
                         "CPUs")
    from ember.backends.cuda.driver import GpuUnavailableError, probe
    try:
        gpus = probe()[1]
    except GpuUnavailableError as error:
        raise GpuUnavailableError(f"{where}: devices {names} name GPUs, but {error}") from None
    missing = [i for i in wanted if i >= len(gpus)]
    if missing:
        raise GpuUnavailableError(
            f"{where}: there is no GPU:{missing[0]}: this process has {len(gpus)} GPU(s): "
            f"{_describe(gpus)}; name those (em.config.list_physical_devices('GPU') lists "
            "them), or call MirroredStrategy() for all of them")


def gpu_ordinal(name: str) -> int | None:
    """The GPU index of a device name, None for a CPU."""
    kind, index = parse(name)
    return index if kind == "GPU" else None


def has_gpus(strategy) -> bool:
    """Whether `strategy`'s replicas are GPUs (strategies without `_devices`, as
    ParameterServerStrategy's CPU workers, have none)."""
    return any(gpu_ordinal(name) is not None for name in getattr(strategy, "_devices", ()))


def _to_gpu(array, ordinal: int):
    """A device array on GPU `ordinal` holding `array` (itself if already there)."""
    from ember.backends.cuda import driver, runtime
    device = driver.device(ordinal)
    buffer = runtime.buffer_of(array)
    if buffer is not None and buffer.device is device and array.flags.c_contiguous:
        return array
    if buffer is not None:  # on another GPU: through the host
        array = buffer.host_copy(array)
    return runtime.to_device(array, device)


def _placeable(array) -> bool:
    return array.dtype.kind in "biufc"  # strings stay on the host, as TF's string tensors


def place_tensor(value, ordinal: int):
    """An em.Tensor (or array-like) as an em.Tensor on GPU `ordinal`."""
    from ember.frontend.tensor import Tensor, convert_to_tensor
    tensor = value if isinstance(value, Tensor) else convert_to_tensor(value)
    if not _placeable(tensor._value):
        return tensor
    return Tensor(_to_gpu(tensor._value, ordinal), tensor.dtype)


def place_pieces(strategy, pieces: list) -> list:
    """Each local replica's value (a nested structure: its em.Tensors) on its device: the
    GPU replicas' tensors copied to their GPUs, the rest as they are."""
    if not has_gpus(strategy) or len(pieces) != len(strategy._devices):
        return pieces
    from ember.frontend import nest
    from ember.frontend.tensor import Tensor
    placed = []
    for name, piece in zip(strategy._devices, pieces):
        ordinal = gpu_ordinal(name)
        placed.append(piece if ordinal is None else nest.map_structure(
            lambda t, o=ordinal: place_tensor(t, o) if isinstance(t, Tensor) else t, piece))
    return placed


def keep_on_devices(variable, replica: int | None = None) -> None:
    """Puts each copy of a MirroredVariable (mirrored.py), or only replica `replica`'s (the
    other replicas' threads write theirs), back on its replica's GPU after an eager write
    left its new value on the host (or places the copies first)."""
    strategy = variable._strategy
    for i, (name, copy) in enumerate(zip(strategy._devices, variable.values)):
        if replica is not None and i != replica:
            continue
        ordinal = gpu_ordinal(name)
        value = copy._handle.value
        if ordinal is not None and value is not None and _placeable(value):
            copy._handle.value = _to_gpu(value, ordinal)


def place_copies(variable) -> None:
    """A new MirroredVariable's copies on their replicas' GPUs, the variable remembered for
    `restore` (nothing for a strategy on CPUs)."""
    if has_gpus(variable._strategy):
        _tracked.setdefault(variable._strategy, WeakIdentitySet()).add(variable)
        keep_on_devices(variable)


def restore(strategy) -> None:
    """Before the replicas of an eager `strategy.run` start: the copies of the strategy's
    mirrored variables that compiled code left elsewhere (a function running `strategy.run`
    inside, on its backend's device) back on their GPUs."""
    tracked = _tracked.get(strategy)
    for variable in list(tracked or ()):
        keep_on_devices(variable)
