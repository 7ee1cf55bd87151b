"""Ember: a tracing compiler for Python tensor programs, built on MLIR end to end.

`import ember as em` gives TensorFlow-shaped names: `em.constant`, `em.add`, `em.Tensor`,
`em.float32`, ... This module only re-exports; the code lives in the layers
(`ember.frontend`, `ember.dialects`, ...).

Importing it makes ~23,000 objects that live as long as the process (modules, classes,
the MLIR context). The cyclic garbage collector is paused while they are made and they are
then moved to its permanent generation (`gc.freeze`, runtime/startup.py): its collections
no longer walk them, neither during the import (~6% of it) nor in the first full
collection after it (10-30 ms, wherever the program next allocates enough).
"""

__version__ = "0.1.0"

# em.data and em.distribute (tf.data's pipelines, tf.distribute's strategies) and em.debug
# (miscompile bisection) are imported on first use: nothing else in ember needs them, and
# they are ~10% of `import ember`.
_LAZY_SUBMODULES = ("data", "debug", "distribute")
_LAZY_SUBMODULES += ("keras",)  # em.keras: Keras's training API (imports em.data, em.distribute)
_LAZY_SUBMODULES += ("transform",)  # em.transform (tf.Transform), also imported on first use
# Training (em.optimizers, em.layers, em.losses, em.train, em.Module, em.Sequential), em.aot
# and em.experimental (DLPack): no traced or eager op needs them, so they load on first use.
_LAZY_SUBMODULES += ("aot", "experimental", "layers", "losses", "optimizers", "train")
_LAZY_ATTRIBUTES = {"Module": "ember.frontend.training.module",
                    "Sequential": "ember.frontend.training.layers_core"}


def __getattr__(name: str):
    import importlib
    if name in _LAZY_SUBMODULES:
        return importlib.import_module(f"ember.{name}")  # binds the attribute, too
    if name in _LAZY_ATTRIBUTES:
        value = getattr(importlib.import_module(_LAZY_ATTRIBUTES[name]), name)
        globals()[name] = value  # later look-ups find it without this hook
        return value
    raise AttributeError(f"module 'ember' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY_SUBMODULES) | set(_LAZY_ATTRIBUTES))


from ember.runtime import startup as _startup  # (imports nothing)

_collecting = _startup.pause_collector()
try:
    from ember.dialects.ember.base import (InvalidArgumentError, OpAttributeError, OpError,
                                           OpShapeError, OpTypeError)
    from ember.dialects.ember.dtypes import (DType, as_dtype, bfloat16, bool_, float16, float32,
                                             float64, int8, int16, int32, int64, string, uint8)
    from ember import config, debugging, errors, linalg, math, nn, passes, types
    from ember import random
    from ember.dialects.ember.dtypes import complex64, complex128
    from ember import bitwise, signal
    from ember.frontend.complex_ops import complex  # noqa: A004 - tf.complex
    from ember.frontend import autograph
    from ember.frontend.control_flow import ControlFlowError, cond
    from ember.frontend.while_loop import while_loop
    from ember.frontend.effects import print, py_function
    from ember.frontend.numpy_function import numpy_function
    from ember.frontend.ops import (abs, add, argmax, argmin, avg_pool2d, broadcast_to, cast,
                                    ceil, concat, conv2d, cos, divide, equal, exp, expand_dims,
                                    expm1, fill, floor, floordiv, floormod, gather, greater,
                                    greater_equal, identity, is_finite, is_nan, less, less_equal,
                                    log, log1p, log_softmax, logical_and, logical_not, logical_or,
                                    logical_xor,
                                    matmul, max_pool2d, maximum, minimum, mod, multiply, negative,
                                    not_equal, one_hot, ones, ones_like, pad, pow, range,
                                    rank, reduce_all, reduce_any, reduce_max, reduce_mean,
                                    reduce_min, reduce_prod, reduce_sum, relu, reshape, round,
                                    rsqrt, shape, sigmoid, sign, sin, size, slice, softmax, sqrt,
                                    square,
                                    squeeze, stack, stateless_random_normal,
                                    stateless_random_uniform, strided_slice, subtract, tanh,
                                    transpose, truediv, where, zeros, zeros_like)
    from ember.frontend.ops import (acos, acosh, asin, asinh, atan, atan2, atanh, cosh, sinh,
                                    tan)  # TensorFlow's top-level names too
    from ember.frontend.shape import TensorShape, TensorSpec
    from ember.frontend.tensor import Tensor, constant, convert_to_tensor
    from ember.frontend.tensor_array import TensorArray
    from ember.frontend.functional_ops import foldl, foldr, map_fn, scan
    from ember.frontend.array_composites import (eye, linspace, meshgrid, repeat, reverse, roll,
                                                 split, tile, unstack)
    from ember.frontend.math_composites import clip_by_norm, clip_by_value
    from ember.frontend.einsum import einsum, tensordot
    from ember.frontend.scatter_ops import (boolean_mask, gather_nd, scatter_nd,  # noqa: F811
                                           tensor_scatter_nd_add, tensor_scatter_nd_max,
                                           tensor_scatter_nd_min, tensor_scatter_nd_sub,
                                           tensor_scatter_nd_update, where)
    from ember.frontend.scan_ops import cumprod, cumsum, searchsorted
    from ember.frontend.sort_ops import argsort, sort, unique
    from ember.frontend.tracing import OutOfScopeError, init_scope
    from ember.frontend.norms import norm
    from ember.frontend.misc_composites import (add_n, clip_by_global_norm, sequence_mask,
                                                unique_with_counts)
    from ember.frontend.tensor_like import is_tensor
    from ember.frontend.switch_case import case, switch_case
    from ember.frontend.variables import Variable
    from ember.frontend.autodiff import (GradientTape, UnconnectedGradients, custom_gradient,
                                         recompute_grad, stop_gradient)
    from ember.runtime.concrete import ConcreteFunction
    from ember.runtime.executor import InterpreterFallbackError, InterpreterFallbackWarning
    from ember.runtime.decorator import function
    from ember.runtime.function import Function
    from ember.runtime.devices import device
    from ember.runtime.input_signature import InputSignatureError
    from ember.runtime.retracing import RetracingWarning
    from ember.runtime.tiers import TierWarning
    _startup.prepare()
    from ember.frontend.ensure_shape import ensure_shape
    from ember import nest
    from ember.frontend.effects import control_dependencies
    from ember.frontend.functional_ops import vectorized_map
    from ember.frontend.math_extras import (histogram_fixed_width, histogram_fixed_width_bins,
                                            unravel_index)
except BaseException:
    _startup.resume_collector(_collecting, freeze=False)
    raise
_startup.resume_collector(_collecting, freeze=True)
del _startup, _collecting

bool = bool_  # noqa: A001 - TensorFlow spells it tf.bool
newaxis = None
