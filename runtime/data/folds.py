"""tf.data's transformations that carry a state through the elements: `Dataset.reduce`,
`Dataset.scan`, and `Dataset.get_single_element`; attached to `Dataset` here (dataset.py
holds the others).

The function is traced and compiled as `map`'s is (mapping.trace_map_function, AutoGraph
included), over `(state, element)`. As tf.data, the state keeps its structure and dtypes;
a dimension that changes from one step to the next is relaxed to None and the function
traced again, until the state's spec is stable.

`reduce` and `get_single_element` run eagerly, when called: inside `em.function` they
raise (loop `for x in ds:` there instead; AutoGraph stages it).
"""

from ember.dialects.ember.base import InvalidArgumentError

from ember.runtime.data import structure
from ember.runtime.data.combine import _common_shape, _skeleton
from ember.runtime.data.dataset import Dataset
from ember.runtime.data.mapping import _name, trace_map_function
from ember.runtime.data.transforms import _Unary

# A state's dims can only relax (to None, then to an unknown rank): this bounds the retraces.
_MAX_TRACES = 8


def _eager_only(where: str) -> None:
    from ember.frontend.tracing import current_graph
    if current_graph() is not None:
        raise TypeError(f"{where} runs eagerly, not inside em.function: call it outside the "
                        "function and pass the result in, or loop `for x in dataset:` in "
                        "the function (AutoGraph stages the loop)")


def _state_of(initial_state, where):
    return structure.to_tensors(initial_state, f"{where}: initial_state")


def trace_state_function(fn, state_spec, element_spec, where: str, what: str, pair: bool):
    """`fn(state, element)` traced to a stable state spec: (call, output spec, state spec).
    With `pair`, `fn` returns `(new_state, output)` (scan); else the new state (reduce)."""
    from ember.frontend.shape import TensorSpec
    if not callable(fn):
        raise TypeError(f"{where}: {what} must be callable, got {type(fn).__name__}")
    for _ in range(_MAX_TRACES):
        call, out = trace_map_function(fn, (state_spec, element_spec), where)
        if pair and not (isinstance(out, tuple) and len(out) == 2):
            raise TypeError(f"{where}: {what} ({_name(fn)}) must return a pair (new_state, "
                            f"output_element), got {out}")
        new_spec = out[0] if pair else out
        if _skeleton(new_spec) != _skeleton(state_spec):
            raise TypeError(f"{where}: the new state's structure and dtypes must match the "
                            f"initial state's. Expected {_skeleton(state_spec)}; got "
                            f"{_skeleton(new_spec)} (from {_name(fn)})")
        relaxed = structure.pack_as(state_spec, [
            TensorSpec(_common_shape(a.shape, b.shape), a.dtype) for a, b in
            zip(structure.flatten(state_spec), structure.flatten(new_spec))])
        if relaxed == state_spec:
            return call, out, state_spec
        state_spec = relaxed
    raise ValueError(f"{where}: the state's shape of {_name(fn)} did not settle after "
                     f"{_MAX_TRACES} traces")


def reduce(self, initial_state, reduce_func):
    """Reduces the elements to one value: `state = reduce_func(state, element)` from
    `initial_state`, as tf.data (the function traced and compiled; the state keeps its
    structure and dtypes, its dims relax where they change).

    Example:
      >>> import ember as em, numpy as np
      >>> print(em.data.Dataset.range(5).reduce(np.int64(0), lambda x, _: x + 1).numpy())
      5
      >>> print(em.data.Dataset.range(5).reduce(np.int64(0), lambda x, y: x + y).numpy())
      10
    """
    _eager_only("Dataset.reduce")
    state = _state_of(initial_state, "Dataset.reduce")
    call, _, _ = trace_state_function(reduce_func, structure.spec_of(state),
                                      self.element_spec, "Dataset.reduce", "reduce_func",
                                      pair=False)
    from ember.runtime.data.iterator import Iterator
    for element in Iterator(self):
        state = call((state, element))
    return state


def get_single_element(self, name=None):
    """The dataset's only element; `em.errors.InvalidArgumentError` if it has none or more
    than one (tf.data's).

    Example:
      >>> import ember as em
      >>> em.data.Dataset.from_tensors(em.constant([1, 2])).get_single_element().numpy()
      array([1, 2], dtype=int32)
    """
    del name
    _eager_only("Dataset.get_single_element")
    from ember.runtime.data.iterator import Iterator
    elements = Iterator(self)
    first = next(elements, None)
    if first is None:
        raise InvalidArgumentError("DatasetToSingleElement", "Dataset was empty.")
    if next(elements, None) is not None:
        raise InvalidArgumentError("DatasetToSingleElement",
                                   "Dataset had more than one element.")
    return first


class ScanDataset(_Unary):
    def __init__(self, source, initial_state, scan_func):
        super().__init__(source)
        self._state = _state_of(initial_state, "Dataset.scan")
        self._call, out, _ = trace_state_function(
            scan_func, structure.spec_of(self._state), source.element_spec, "Dataset.scan",
            "scan_func", pair=True)
        self._spec = out[1]

    @property
    def element_spec(self):
        return self._spec

    def _iterate(self):
        state = self._state
        for element in self._source._iterate():
            state, output = self._call((state, element))
            yield output


def scan(self, initial_state, scan_func, name=None):
    """A running state over the elements: `scan_func(state, element)` returns
    `(new_state, output_element)`; the dataset holds the outputs (tf.data's scan).

    Example:
      >>> import ember as em
      >>> ds = em.data.Dataset.range(10).scan(
      ...     initial_state=em.constant(0, dtype=em.int64),
      ...     scan_func=lambda state, i: (state + i, state + i))
      >>> [int(x) for x in ds.as_numpy_iterator()]
      [0, 1, 3, 6, 10, 15, 21, 28, 36, 45]
    """
    del name
    return ScanDataset(self, initial_state, scan_func)


Dataset.reduce = reduce
Dataset.get_single_element = get_single_element
Dataset.scan = scan
