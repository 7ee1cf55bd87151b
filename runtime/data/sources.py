"""`Dataset.from_generator` and `Dataset.list_files`: datasets from Python and from file names.

`from_generator` converts each yielded element to its `output_signature` and checks it, as
tf.data's generator op does: a value that does not fit (wrong structure, an incompatible
shape, a dtype that does not convert) is `em.errors.InvalidArgumentError` naming the
element's index. Stricter than tf.data, which truncates 2.5 to 2 for an int32 spec: a lossy
conversion (float to int, an int that overflows) is an error too, never a wrong tensor.
"""

import glob
import os

import numpy as np

from ember.dialects.ember import dtypes
from ember.dialects.ember.base import InvalidArgumentError
from ember.frontend.shape import TensorShape, TensorSpec
from ember.frontend.tensor import Tensor, constant

from ember.runtime.data import structure
from ember.runtime.data.dataset import UNKNOWN_CARDINALITY, Dataset


def file_names(value, where: str) -> list:
    """File names from a string, bytes, a list of them or a string tensor (as `str`)."""
    if isinstance(value, Tensor) and value.dtype.is_string and value.shape.rank in (0, 1):
        value = value._numpy_array().reshape(-1).tolist()
    names = [value] if isinstance(value, (str, bytes, os.PathLike)) else value
    if not isinstance(names, (list, tuple)) or not all(
            isinstance(n, (str, bytes, os.PathLike)) for n in names):
        raise TypeError(f"{where} must be a string, a list of strings or a string tensor, "
                        f"got {type(value).__name__} {value!r}")
    return [os.fsdecode(n) for n in names]


def string_tensor(names):
    """A 1-D `em.string` tensor of `names` (as bytes, as tf.data's file names are)."""
    return constant(np.array([os.fsencode(n) for n in names], dtype=object).reshape(-1),
                    dtype=dtypes.string)


def list_files(file_pattern, shuffle, seed):
    patterns = file_names(file_pattern, "Dataset.list_files: file_pattern")
    matches = []
    for pattern in patterns:
        matches.extend(sorted(glob.glob(pattern)))
    if not matches:
        raise InvalidArgumentError("MatchingFiles", "No files matched pattern: "
                                   + ", ".join(patterns))
    dataset = Dataset.from_tensor_slices(string_tensor(matches))
    if shuffle is None or shuffle:
        dataset = dataset.shuffle(len(matches), seed=seed)
    return dataset


def _signature(output_types, output_shapes, output_signature):
    if output_signature is not None:
        if output_types is not None or output_shapes is not None:
            raise TypeError("Dataset.from_generator: `output_types` and `output_shapes` "
                            "cannot be used together with `output_signature`")
        spec = _tuples(output_signature)
        for leaf in structure.flatten(spec):
            if not isinstance(leaf, TensorSpec):
                raise TypeError("Dataset.from_generator: output_signature must be an "
                                "em.TensorSpec or a nested structure (tuples, dicts) of them, "
                                f"found {type(leaf).__name__} {leaf!r}")
        return spec
    if output_types is None:
        raise TypeError("Dataset.from_generator: give output_signature, the em.TensorSpec "
                        "(or a tuple or dict of them) of each element, e.g. "
                        "output_signature=em.TensorSpec(shape=(None,), dtype=em.float32)")
    types = _tuples(output_types)
    shapes = _tuples(output_shapes) if output_shapes is not None else structure.map_structure(
        lambda _: None, types)
    flat_shapes = structure.flatten(shapes) if isinstance(types, (tuple, dict)) else [shapes]
    flat_types = structure.flatten(types)
    if len(flat_shapes) != len(flat_types):
        raise ValueError(f"Dataset.from_generator: output_shapes {output_shapes!r} does not "
                         f"match the structure of output_types {output_types!r}")
    return structure.pack_as(types, [TensorSpec(s, t) for s, t in zip(flat_shapes, flat_types)])


def _tuples(value):
    if isinstance(value, list) and not all(isinstance(v, (int, type(None))) for v in value):
        return tuple(_tuples(v) for v in value)
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(_tuples(v) for v in value)
    if isinstance(value, dict):
        return {k: _tuples(v) for k, v in value.items()}
    return value


class GeneratorDataset(Dataset):
    def __init__(self, generator, output_types, output_shapes, args, output_signature):
        if not callable(generator):
            raise TypeError("Dataset.from_generator: `generator` must be a callable that "
                            "returns an iterable (e.g. a generator function), got "
                            f"{type(generator).__name__} {generator!r}")
        self._spec = _signature(output_types, output_shapes, output_signature)
        self._generator = generator
        args = () if args is None else tuple(args)
        self._args = [t._numpy_array() for t in
                      (structure.to_tensors(a, "Dataset.from_generator: args") for a in args)]

    def _iterate(self):
        for index, value in enumerate(self._generator(*self._args)):
            yield self._convert(value, index)

    def _convert(self, value, index):
        spec = self._spec
        if isinstance(spec, tuple) and isinstance(value, list):
            value = tuple(value)
        leaves = flatten_up_to(spec, value)
        if leaves is None:
            raise _bad_element("TypeError: `generator` yielded an element that did not match "
                               f"the expected structure (element {index}). The expected "
                               f"structure was {spec}, but the yielded element was "
                               f"{value!r}.")
        flat = [_component(leaf, s, index, i)
                for i, (leaf, s) in enumerate(zip(leaves, structure.flatten(spec)))]
        return structure.pack_as(spec, flat)

    def _cardinality(self):
        return UNKNOWN_CARDINALITY


def flatten_up_to(spec, value):
    """`value`'s parts at `spec`'s leaves (a list may stand for a tuple), or None if `value`
    is not structured as `spec`."""
    if isinstance(spec, tuple):
        if isinstance(value, list):
            value = tuple(value)
        if not isinstance(value, tuple) or len(value) != len(spec):
            return None
        parts = [flatten_up_to(s, v) for s, v in zip(spec, value)]
    elif isinstance(spec, dict):
        if not isinstance(value, dict) or set(value) != set(spec):
            return None
        parts = [flatten_up_to(spec[key], value[key]) for key in sorted(spec)]
    else:
        return [value]
    return None if any(p is None for p in parts) else [leaf for p in parts for leaf in p]


def _component(value, spec, index, component):
    where = f"(element {index}, component {component})"
    if isinstance(value, Tensor):
        value = value._numpy_array()
    target = spec.dtype
    if target.is_string:
        array = np.asarray(value, dtype=object)
        if not all(isinstance(v, (bytes, str)) for v in array.reshape(-1)):
            raise _bad_element("TypeError: `generator` yielded an element that could not be "
                               f"converted to the expected type {where}. The expected type "
                               f"was string, but the yielded element was {value!r}.")
    else:
        try:
            array = np.asarray(value)
        except (TypeError, ValueError) as e:
            raise _bad_element("TypeError: `generator` yielded an element that could not be "
                               f"converted to the expected type {where}: {e}") from None
        if array.dtype.kind in "USOV" or not np.can_cast(array.dtype, target.np_dtype,
                                                         casting="same_kind"):
            raise _bad_element(f"TypeError: `generator` yielded an element of type "
                               f"{_type_name(array)} where an element of type {target.name} "
                               f"was expected {where}")
        converted = array.astype(target.np_dtype)
        if array.dtype.kind in "iub" and not np.array_equal(converted, array):
            raise _bad_element(f"ValueError: `generator` yielded an element {value!r} that "
                               f"does not fit in {target.name} {where}")
        array = converted
    if not spec.shape.is_compatible_with(array.shape):
        raise _bad_element(f"TypeError: `generator` yielded an element of shape "
                           f"{TensorShape(array.shape)} where an element of shape {spec.shape} "
                           f"was expected {where}")
    return constant(array, dtype=target)


def _bad_element(message):
    """As tf.data: the generator's checks fail inside its op, so the iterator raises
    InvalidArgumentError carrying the Python error's kind and message."""
    return InvalidArgumentError("GeneratorDataset", message)


def _type_name(array):
    if array.dtype.kind in "USO":
        return "string"
    try:
        return dtypes.as_dtype(array.dtype).name
    except TypeError:
        return str(array.dtype)
