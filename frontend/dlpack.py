"""The array protocols of `em.Tensor` (`__array__`, `__dlpack__`) and
`em.experimental.dlpack.from_dlpack` / `to_dlpack`, TensorFlow's names.

An eager tensor is a numpy array on the CPU, so DLPack exchange is zero-copy: the consumer
gets the tensor's own buffer. Tensors are immutable, so the buffer is exported read-only,
which DLPack can only say from version 1.0 on (numpy >= 2.1 asks for it; so do current
array libraries); a consumer that only speaks the older protocol gets a private copy instead
(or a BufferError if it asked for `copy=False`). The other way, `from_dlpack` wraps the
producer's CPU buffer without copying (as TensorFlow's): writing to the producer's array
later changes the tensor too. numpy cannot export bfloat16 or strings through DLPack.
"""

from __future__ import annotations

import numpy as np

from ember.dialects.ember import dtypes


def as_array(tensor, dtype=None, copy=None) -> np.ndarray:
    """`np.asarray(tensor)` (numpy 2's `__array__(dtype, copy)`): a read-only view when no
    copy is asked for, a fresh array for `copy=True`; converting to another dtype needs a
    copy, a ValueError when `copy=False` forbids one (numpy's rule)."""
    value = tensor._value
    if dtype is not None and np.dtype(dtype) != value.dtype:
        if copy is False:
            raise ValueError(f"converting a {tensor.dtype.name} tensor to {np.dtype(dtype)} "
                             "needs a copy, but copy=False was given")
        return value.astype(dtype)
    return value.copy() if copy else tensor._numpy_array()  # never a writable alias


def export(tensor, *, stream=None, max_version=None, dl_device=None, copy=None):
    """`tensor.__dlpack__(...)`: a capsule of the tensor's (read-only) buffer; see the module
    docstring for consumers of DLPack < 1.0."""
    del stream  # CPU only: there is no stream to synchronise with
    if tensor._value is None:  # a symbolic tensor inside a trace
        tensor._no_value("DLPack export (__dlpack__)")
    if device(tensor)[0] != 1:
        return _export_gpu(tensor, max_version, dl_device, copy)
    if tensor.dtype in (dtypes.string, dtypes.bfloat16):
        raise BufferError(f"a {tensor.dtype.name} tensor cannot be exported through DLPack "
                          "(numpy has no DLPack code for it); cast it first, e.g. "
                          "em.cast(t, em.float32)")
    kwargs = {"max_version": max_version, "dl_device": dl_device, "copy": copy}
    if copy:
        return tensor._value.copy().__dlpack__(**kwargs)
    if max_version is not None and tuple(max_version) >= (1, 0):
        return tensor._numpy_array().__dlpack__(**kwargs)
    if copy is False:
        raise BufferError("a zero-copy DLPack export of an (immutable) em.Tensor must be "
                          "marked read-only, which needs DLPack >= 1.0; the consumer asked "
                          f"for max_version={max_version}. Allow a copy or update the consumer")
    return tensor._value.copy().__dlpack__(**kwargs)


def device(tensor):
    """`tensor.__dlpack_device__()`: (kDLCPU, 0), or (kDLCUDA, N) for a tensor on GPU N."""
    from ember.frontend.device_memory import device_of
    name = device_of(tensor._value) if tensor._value is not None else None
    if name is not None and ":GPU:" in name:
        return (2, int(name.rsplit(":", 1)[1]))
    return (1, 0)


def _export_gpu(tensor, max_version, dl_device, copy):
    """A kDLCUDA capsule over a GPU tensor's memory, without a copy (Ember's work on it is
    finished: every GPU call waits for its stream). A consumer of DLPack < 1.0 cannot be
    told the buffer is read-only: it must not write to it. `dl_device=(kDLCPU, 0)` gets a
    host copy."""
    from ember.frontend.dlpack_structs import dl_dtype, export_capsule
    if dl_device is not None and tuple(dl_device)[0] == 1:
        return tensor._numpy_array().__dlpack__(max_version=max_version)
    if copy:
        raise BufferError(f"copy=True: Ember cannot copy a tensor on {tensor.device} for "
                          "DLPack; copy it on the consumer's side")
    if dl_device is not None and tuple(dl_device) != device(tensor):
        raise BufferError(f"the tensor is on {tensor.device}, not on DLPack device "
                          f"{tuple(dl_device)}")
    value = tensor._value
    return export_capsule(tensor, value.ctypes.data, value.shape,
                          dl_dtype(value.dtype, tensor.dtype.name), device(tensor),
                          versioned=max_version is not None and tuple(max_version) >= (1, 0))


def to_dlpack(tf_tensor):
    """A DLPack 1.0 capsule ("dltensor_versioned") of the tensor's buffer, read-only and
    zero-copy. Libraries that take the tensor itself (`torch.from_dlpack(t)`,
    `np.from_dlpack(t)`) negotiate the version; prefer that."""
    from ember.frontend.tensor import convert_to_tensor
    return export(convert_to_tensor(tf_tensor), max_version=(1, 0))


class _Capsule:
    """Presents a bare DLPack capsule through the `__dlpack__` protocol numpy consumes."""

    def __init__(self, capsule):
        self._capsule = capsule

    def __dlpack__(self, **_):
        return self._capsule

    def __dlpack_device__(self):
        return (1, 0)  # numpy checks the device recorded in the capsule itself


def from_dlpack(dlcapsule):
    """An em.Tensor sharing the buffer of a DLPack capsule or of any object with
    `__dlpack__` (numpy, torch, jax, ... arrays on the CPU), without a copy when the buffer
    is C-contiguous and aligned (em.Tensor's layout; otherwise one copy).

    Raises:
      TypeError: for an object that is neither.
      BufferError: for a buffer not on the CPU, or of a dtype numpy cannot read.
    """
    from ember.frontend.tensor import Tensor
    if type(dlcapsule).__name__ == "PyCapsule":
        source = _Capsule(dlcapsule)
    elif hasattr(dlcapsule, "__dlpack__"):
        source = dlcapsule
    else:
        raise TypeError("em.experimental.dlpack.from_dlpack takes a DLPack capsule or an "
                        f"object with __dlpack__, got {type(dlcapsule).__name__}")
    try:
        array = np.from_dlpack(source)
    except (BufferError, RuntimeError, ValueError) as error:
        raise BufferError(f"em.experimental.dlpack.from_dlpack: cannot read this buffer "
                          f"({error}); Ember tensors live in CPU memory: move it there first "
                          "(e.g. .cpu() in torch)") from error
    return Tensor(array)
