"""`em.function`: the decorator that makes a `Function` (runtime/function.py)."""

from __future__ import annotations

from typing import Callable, Optional

from ember import backends
from ember.runtime.function import DEFAULT_PIPELINE, Function
from ember.runtime.traceback_filter import filtered


def function(func: Callable = None, *, input_signature=None, autograph: bool = True,
             reduce_retracing: bool = False, backend: str = "cpu", jit_compile: bool = True,
             pipeline: Optional[str] = DEFAULT_PIPELINE,
             experimental_relax_shapes: Optional[bool] = None,
             experimental_follow_type_hints: Optional[bool] = None):
    """Compiles `func` into a polymorphic `Function` (decorator or call, as tf.function).

    Args:
      func: the Python function (or method) to trace.
      input_signature: a list of em.TensorSpec fixing the tensor arguments' types.
      autograph: convert Python control flow on tensors (AutoGraph; the guide's rules).
      reduce_retracing: relax shapes to serve more calls with one trace.
      backend: where compiled code runs: "cpu", or "interpreter" (nothing compiled); the
        registry is ember.backends, and other names are a ValueError listing it.
      jit_compile: compile traces to native code when the backend supports it.
      pipeline: the textual pass pipeline run on each trace (default "ember-optimize";
        "" or None runs none), e.g. "builtin.module(ember-canonicalize,ember-cse)".
      experimental_follow_type_hints: convert arguments annotated `em.Tensor` to tensors
        before tracing, so Python numbers passed there share one trace (type_hints.py).

    Example:
      >>> import ember as em
      >>> @em.function
      ... def f(x):
      ...     return x * 2
      >>> f(em.constant([1, 2]))
      <ember.Tensor: shape=(2,), dtype=int32, numpy=array([2, 4], dtype=int32)>
    """
    if experimental_relax_shapes is not None:
        reduce_retracing = reduce_retracing or experimental_relax_shapes
    backends.check_backend(backend, jit_compile)  # here too: `@em.function(backend=)` fails now

    def decorate(fn):
        try:
            return Function(fn, input_signature=input_signature, autograph=autograph,
                            reduce_retracing=reduce_retracing, backend=backend,
                            jit_compile=jit_compile, pipeline=pipeline,
                            follow_type_hints=bool(experimental_follow_type_hints))
        except Exception as error:  # (a bad signature or pipeline: the user's frames)
            raise filtered(error)
    return decorate if func is None else decorate(func)

