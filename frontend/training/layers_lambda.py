"""`keras.layers.Lambda`: a Python function used as a layer, without weights.

As Keras's: `Lambda(function, output_shape=None, mask=None, arguments=None)` calls
`function(inputs, **arguments)`, passing `training=` (and `mask=`) only when the function
takes them; its inputs may be a tensor or a nested structure of them (numpy and Python
numbers in it become tensors). A Lambda holds no weights: a function that creates an
em.Variable raises ValueError (Keras's rule: write a Layer subclass instead), because the
variable would be made anew on every call. `output_shape` only informs
`compute_output_shape` (without it, the function is traced once on a placeholder to find
the shape): the result is never checked against it, as in Keras.
"""

from __future__ import annotations

import inspect

import numpy as np

from ember.frontend import nest
from ember.frontend.shape import TensorShape
from ember.frontend.tensor import Tensor, convert_to_tensor
from ember.frontend.training.layers_core import Layer
from ember.frontend import variables

__all__ = ["Lambda"]

_CONVERTED = (np.ndarray, np.generic, bool, int, float)


class Lambda(Layer):
    """Wraps `function` as a layer (keras.layers.Lambda), for Sequential and subclassed
    models, eager or inside em.function.

    Args:
      function: called as `function(inputs, **arguments)` (plus `training=`/`mask=` if it
        takes them).
      output_shape: the output shape without the batch dim (a tuple, or a nested structure
        of tuples for several outputs), or a function of the input shape; None: inferred.
      mask: a mask, or a function `(inputs, mask) -> mask` (`compute_mask`).
      arguments: a dict of keyword arguments for `function`.

    Raises:
      TypeError: `function` is not callable, `arguments` not a dict, or `output_shape` not
        a shape, a function or None.
      ValueError: (on a call) the function created an em.Variable.

    Example:
      >>> model = em.keras.Sequential([em.keras.layers.Dense(2),
      ...                              em.keras.layers.Lambda(lambda x: x ** 2)])
      >>> model(em.ones([3, 4])).shape
      TensorShape([3, 2])
      >>> scale = em.keras.layers.Lambda(lambda x, k: x * k, arguments={"k": 10.0})
      >>> scale(em.constant([1.0, 2.0])).numpy().tolist()
      [10.0, 20.0]
    """

    def __init__(self, function, output_shape=None, mask=None, arguments=None, **kwargs):
        super().__init__(**kwargs)
        if not callable(function):
            raise TypeError(f"Lambda '{self.name}': function must be callable (a lambda or a "
                            f"def taking the inputs), got {type(function).__name__} "
                            f"{function!r}")
        if arguments is not None and not isinstance(arguments, dict):
            raise TypeError(f"Lambda '{self.name}': arguments must be a dict of keyword "
                            f"arguments for the function, got {arguments!r}")
        if output_shape is not None and not callable(output_shape):
            _check_output_shape(output_shape, self.name)
        self.function = function
        self.arguments = dict(arguments or {})
        self.mask = mask
        self._output_shape = output_shape
        self._takes = _keywords(function)
        self.built = True

    def __call__(self, inputs, *args, **kwargs):
        # Keras converts numpy and Python numbers in the inputs, keeping their structure
        inputs = nest.map_structure(
            lambda x: convert_to_tensor(x) if isinstance(x, _CONVERTED) else x, inputs)
        return self.call(inputs, *args, **kwargs)

    def call(self, inputs, mask=None, training=None):
        kwargs = dict(self.arguments)
        if "mask" in self._takes:
            kwargs["mask"] = mask
        if "training" in self._takes:
            kwargs["training"] = training
        with variables.creations() as made:
            outputs = self.function(inputs, **kwargs)
        if made:
            names = ", ".join(v.name for v in made)
            raise ValueError(
                f"Lambda '{self.name}': its function created the variable(s) {names}, which a "
                "Lambda layer does not track: each call would create them anew and they "
                "would not be trained or saved. Lambda layers are not suited to state: "
                "write a subclass of em.keras.layers.Layer that creates them in build() "
                "with add_weight, or create them outside and pass them in `arguments`.")
        return outputs

    def compute_output_shape(self, input_shape):
        """The output shape for `input_shape` (Keras's rules: `output_shape` plus the
        batch dim of the input, or `output_shape(input_shape)`, or a trace of the
        function on a placeholder of the layer's dtype when output_shape is None)."""
        if self._output_shape is None:
            return _traced_shape(self, input_shape)
        if callable(self._output_shape):
            return _as_shapes(self._output_shape(input_shape))
        first = TensorShape(input_shape[0] if _shapes(input_shape) else input_shape)
        return _add_batch(self._output_shape, first[0] if first.rank else None)

    def compute_mask(self, inputs, mask=None):
        return self.mask(inputs, mask) if callable(self.mask) else self.mask


def _keywords(function) -> frozenset:
    try:
        params = inspect.signature(function).parameters
    except (TypeError, ValueError):
        return frozenset()
    return frozenset(n for n in ("mask", "training") if n in params)


def _is_shape(value) -> bool:
    return isinstance(value, (tuple, list)) and all(
        d is None or (isinstance(d, (int, np.integer)) and not isinstance(d, bool) and d >= 0)
        for d in value)


def _shapes(value) -> bool:
    """Whether `value` is a list of several inputs' shapes (not one shape)."""
    return isinstance(value, (tuple, list)) and bool(value) and all(
        isinstance(s, (TensorShape, tuple, list)) for s in value)


def _check_output_shape(output_shape, name: str) -> None:
    if _is_shape(output_shape) or (isinstance(output_shape, (tuple, list)) and output_shape
                                   and all(_is_shape(s) for s in output_shape)):
        return
    raise TypeError(f"Lambda '{name}': output_shape must be a shape without the batch dim "
                    "(a tuple such as (4,), None for an unknown dim), a list of them for "
                    "several outputs, or a function of the input shape; got "
                    f"{output_shape!r}")


def _as_shapes(value):
    """A shape as a TensorShape, several (a list or tuple of shapes) as a list of them."""
    if value is None or isinstance(value, TensorShape) or _is_shape(value):
        return TensorShape(value)
    return [_as_shapes(v) for v in value]


def _add_batch(output_shape, batch):
    if _is_shape(output_shape):
        return TensorShape([batch, *output_shape])
    return [TensorShape([batch, *s]) for s in output_shape]


def _traced_shape(layer: Lambda, input_shape):
    """The output shape(s) of the function traced on placeholders of `input_shape`."""
    from ember.dialects.ember.types import TensorType
    from ember.frontend.tracing import FuncGraph
    from ember.frontend.trace_scope import graph_scope
    graph = FuncGraph(f"{layer.name}_output_shape")
    shapes = input_shape if _shapes(input_shape) else None
    try:
        with graph_scope(graph):
            if shapes is None:
                placeholder = _placeholder(graph, input_shape, layer.dtype, TensorType)
            else:
                placeholder = [_placeholder(graph, s, layer.dtype, TensorType) for s in shapes]
            outputs = layer.call(placeholder)
    except Exception as e:
        raise NotImplementedError(
            f"Lambda '{layer.name}': could not infer the shape of its output by tracing the "
            f"function on a {layer.dtype.name} placeholder of shape {input_shape} ({e}). "
            "Give the layer output_shape=...") from e
    finally:
        graph.finalized = True
    return nest.map_structure(lambda t: TensorShape(t.shape) if isinstance(t, Tensor) else t,
                              outputs)


def _placeholder(graph, shape, dtype, tensor_type):
    dims = TensorShape(shape).as_list()
    return graph.placeholder(tensor_type(dtype, None if dims is None else tuple(dims)), "x")
