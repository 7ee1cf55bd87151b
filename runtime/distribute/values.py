"""Distributed values as tf.distribute: `PerReplica` (one value per replica), `ReduceOp`,
`ValueContext`, and the numpy reductions `MirroredStrategy` uses."""

from __future__ import annotations

import enum
from typing import NamedTuple

import numpy as np

from ember.frontend.tensor import Tensor, constant


class ReduceOp(enum.Enum):
    """tf.distribute.ReduceOp: how values of the replicas combine."""
    SUM = "SUM"
    MEAN = "MEAN"


class ValueContext(NamedTuple):
    """tf.distribute.experimental.ValueContext: what the value function of
    `experimental_distribute_values_from_function` is told."""
    replica_id_in_sync_group: int = 0
    num_replicas_in_sync: int = 1


class PerReplica:
    """One value per replica (tf.distribute's PerReplica): an argument of `strategy.run`
    gives each replica its own; `strategy.experimental_local_results` lists them."""

    def __init__(self, values):
        self.values = tuple(values)

    def __len__(self) -> int:
        return len(self.values)

    # an argument or result of an em.function (staged.py): a container of its values
    def __tracing_type__(self, context):
        from ember.runtime.distribute.staged import PerReplicaTraceType
        return PerReplicaTraceType.of(self, context)

    def __ember_components__(self):
        return list(self.values)

    def __ember_rebuild__(self, parts):
        return PerReplica(parts)

    def __repr__(self) -> str:
        body = ",\n".join(f"  {i}: {v!r}" for i, v in enumerate(self.values))
        return "PerReplica:{\n" + body + "\n}"


def regroup(results: list):
    """The results of the replicas as one value, as TF's regroup: nested tuples, lists and
    dicts are regrouped inside, identical objects stay themselves, others become PerReplica."""
    first = results[0]
    if all(r is first for r in results):
        return first
    if isinstance(first, (tuple, list)) and all(
            type(r) is type(first) and len(r) == len(first) for r in results):
        items = [regroup([r[i] for r in results]) for i in range(len(first))]
        return type(first)(*items) if hasattr(first, "_fields") else type(first)(items)
    if isinstance(first, dict) and all(isinstance(r, dict) and r.keys() == first.keys()
                                       for r in results):
        return {k: regroup([r[k] for r in results]) for k in first}
    return PerReplica(results)


def as_array(value, where: str) -> np.ndarray:
    """The numpy value of an eager tensor or a Python/numpy value."""
    if isinstance(value, Tensor):
        try:
            return value._numpy_array()
        except Exception as err:
            raise TypeError(f"{where}: {value!r} has no value here (a traced tensor?); reduce "
                            "eager values, outside em.function") from err
    if isinstance(value, PerReplica):
        raise TypeError(f"{where}: got a PerReplica where one replica's value was needed")
    return np.asarray(value)


def reduce_op_of(op, where: str) -> ReduceOp:
    """`op` as a ReduceOp ("SUM"/"MEAN" strings too); ValueError for anything else."""
    if isinstance(op, ReduceOp):
        return op
    try:
        return ReduceOp(op.upper() if isinstance(op, str) else op)
    except ValueError:
        raise ValueError(f"{where}: reduce_op must be em.distribute.ReduceOp.SUM or .MEAN, "
                         f"got {op!r}") from None


def combine(op, arrays: list, where: str, axis=None):
    """`op` (ReduceOp) over the replicas' arrays; with `axis`, within each array along it
    first (MEAN then divides by the total count, as TF). Returns an em.Tensor."""
    op = reduce_op_of(op, where)
    dtype = arrays[0].dtype
    check_agree(arrays, where, same_shape=axis is None)
    count = len(arrays)
    if axis is not None:
        try:
            count = sum(a.shape[axis] for a in arrays)
            arrays = [a.sum(axis=axis, dtype=dtype) for a in arrays]
        except (IndexError, np.exceptions.AxisError, TypeError):
            raise ValueError(f"{where}: axis {axis!r} is out of range for values of shape "
                             f"{list(arrays[0].shape)}") from None
    total = np.sum(np.stack(arrays), axis=0, dtype=dtype)
    if op is ReduceOp.MEAN:
        total = (total / count) if dtype.kind in "fc" else (total // count)
    return constant(np.asarray(total, dtype=dtype))


def check_agree(arrays: list, where: str, same_shape: bool = True) -> None:
    """ValueError unless the replicas' arrays have one dtype (and one shape)."""
    first = arrays[0]
    for i, a in enumerate(arrays):
        if a.dtype != first.dtype or (same_shape and a.shape != first.shape):
            raise ValueError(f"{where}: replica {i} has a {a.dtype} value of shape "
                             f"{list(a.shape)}, replica 0 a {first.dtype} one of shape "
                             f"{list(first.shape)}: they must agree")


def reduce_share(op: ReduceOp, arrays: list, out: np.ndarray, share: int, shares: int) -> None:
    """Writes share `share` of `shares` (a contiguous range of elements) of `op` over the
    replicas' `arrays` into `out`: the replicas in order, as `combine` sums them."""
    flat = out.reshape(-1)
    size = flat.size
    lo, hi = size * share // shares, size * (share + 1) // shares
    if lo == hi:
        return
    parts = [np.asarray(a).reshape(-1)[lo:hi] for a in arrays]
    target = flat[lo:hi]
    if len(parts) == 1:
        target[...] = parts[0]
    else:
        np.add(parts[0], parts[1], out=target, dtype=out.dtype)
        for part in parts[2:]:
            np.add(target, part, out=target, dtype=out.dtype)
    if op is ReduceOp.MEAN:
        if out.dtype.kind in "fc":
            np.divide(target, len(parts), out=target)
        else:  # as combine: integer division, cast back (bools too)
            target[...] = target // len(parts)


class PerReplicaSpec:
    """The spec of a PerReplica value (tf.distribute's PerReplicaSpec): one spec per replica,
    as `DistributedDataset.element_spec` gives for each component."""

    def __init__(self, *value_specs):
        self._value_specs = tuple(value_specs)

    @property
    def value_specs(self) -> tuple:
        return self._value_specs

    # in an em.function's input_signature (staged.py): the spec of a PerReplica argument
    def __tracing_type__(self, context):
        from ember.runtime.distribute.staged import PerReplicaTraceType
        return PerReplicaTraceType.of_specs(self._value_specs, context)

    def __ember_components__(self):
        return list(self._value_specs)

    def __ember_rebuild__(self, parts):
        return PerReplicaSpec(*parts)

    def _ember_fits(self, value, fits) -> bool:
        return isinstance(value, PerReplica) and len(value) == len(self._value_specs) \
            and all(fits(v, s) for v, s in zip(value.values, self._value_specs))

    def __eq__(self, other) -> bool:
        return isinstance(other, PerReplicaSpec) and other._value_specs == self._value_specs

    def __hash__(self) -> int:
        return hash(self._value_specs)

    def __repr__(self) -> str:
        return f"PerReplicaSpec({', '.join(repr(s) for s in self._value_specs)})"


def local_results(value, n: int) -> tuple:
    """The n replicas' values of a (nested) distributed value, as a tuple."""
    if isinstance(value, PerReplica):
        return value.values
    local = getattr(value, "_local_values", None)  # a MirroredVariable's copies
    if local is not None:
        return tuple(local)
    if not _distributed(value):
        return (value,)
    if isinstance(value, dict):
        parts = {k: _repeated(v, n) for k, v in value.items()}
        return tuple({k: parts[k][i] for k in value} for i in range(n))
    columns = zip(*[_repeated(v, n) for v in value])
    return tuple(type(value)(*c) if hasattr(value, "_fields") else type(value)(c)
                 for c in columns)


def _repeated(value, n: int) -> tuple:
    return local_results(value, n) if _distributed(value) else (value,) * n


def _distributed(value) -> bool:
    """Whether `value` is or holds (in tuples, lists, dicts) a distributed value."""
    if isinstance(value, PerReplica) or getattr(value, "_local_values", None) is not None:
        return True
    if isinstance(value, dict):
        return any(_distributed(v) for v in value.values())
    return isinstance(value, (tuple, list)) and any(_distributed(v) for v in value)


def gather(values: tuple, axis: int):
    """The values concatenated along `axis` (an em.Tensor)."""
    arrays = [as_array(v, "Strategy.gather") for v in values]
    try:
        return constant(np.concatenate(arrays, axis=axis))
    except (ValueError, np.exceptions.AxisError) as err:
        raise ValueError(f"Strategy.gather: cannot concatenate the replicas' values of shapes "
                         f"{[list(a.shape) for a in arrays]} along axis {axis}: {err}") from None
