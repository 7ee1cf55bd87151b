"""Nested element structures for `em.data`: tuples (and namedtuples) and dicts of tensors,
as tf.data's `tf.nest` sees them (a Python list is a value, converted to one tensor)."""

import numpy as np

from ember.frontend.shape import TensorSpec
from ember.frontend.tensor import Tensor, constant, convert_to_tensor


def flatten(structure):
    """The leaves of `structure`, in order (dict keys sorted, as tf.nest)."""
    if isinstance(structure, tuple):
        return [leaf for item in structure for leaf in flatten(item)]
    if isinstance(structure, dict):
        return [leaf for key in sorted(structure) for leaf in flatten(structure[key])]
    return [structure]


def pack_as(structure, leaves):
    """`leaves` (a flat list) shaped as `structure`."""
    iterator = iter(leaves)

    def build(node):
        if isinstance(node, tuple):
            items = [build(item) for item in node]
            return type(node)(*items) if hasattr(node, "_fields") else tuple(items)
        if isinstance(node, dict):
            built = {key: build(node[key]) for key in sorted(node)}
            return {key: built[key] for key in node}
        return next(iterator)

    return build(structure)


def map_structure(fn, structure):
    return pack_as(structure, [fn(leaf) for leaf in flatten(structure)])


def to_tensors(structure, where: str):
    """`structure` with every leaf converted to an `em.Tensor` (lists become tensors);
    a clear TypeError naming `where` for a leaf that is not a tensor-like value."""
    if isinstance(structure, list):
        structure = _convert(structure, where)
    def convert(leaf):
        return _convert(leaf, where)
    return map_structure(convert, structure)


def _convert(value, where):
    if isinstance(value, Tensor):
        return value
    if value is None or callable(value) or isinstance(value, (set, frozenset)):
        raise TypeError(f"{where}: {type(value).__name__} {value!r} is not a tensor or a "
                        "nested structure (tuple, dict) of tensors; return or pass tensors, "
                        "numpy arrays or Python numbers")
    try:
        if isinstance(value, np.ndarray) or np.isscalar(value):
            return constant(value)
        return convert_to_tensor(value)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{where}: cannot convert {type(value).__name__} {value!r} to a "
                        f"tensor ({e}); use tensors, numpy arrays or Python numbers, in "
                        "tuples or dicts") from None


def with_outer(spec, outer):
    """`spec` (a TensorSpec) batched: `outer` in front of its dimensions; a spec of unknown
    rank stays of unknown rank (tf.data's TensorSpec(shape=<unknown>))."""
    if spec.shape.rank is None:
        return TensorSpec(None, spec.dtype)
    return TensorSpec((outer,) + tuple(spec.shape.dims), spec.dtype)


def without_outer(spec, outer=()):
    """`spec` with its first dimension dropped (and `outer`, a tuple, put in its place);
    unknown rank stays unknown."""
    if spec.shape.rank is None:
        return TensorSpec(None, spec.dtype)
    return TensorSpec(tuple(outer) + tuple(spec.shape.dims[1:]), spec.dtype)


def spec_of(element):
    """The `em.TensorSpec` structure of an element."""
    return map_structure(TensorSpec.from_tensor, element)


def to_numpy(element):
    """Numpy values as tf.data's `as_numpy_iterator`: scalars as numpy scalars, the rest as
    (writable) arrays."""
    def value(t):
        array = np.array(t._numpy_array())
        return array[()] if array.ndim == 0 else array
    return map_structure(value, element)
