"""`em.debug`: tools for finding compiler bugs (`em.debugging` is tf.debugging's checks).

`find_miscompile(fn, *args)` finds the first pass, or the lowering and codegen step, after
which `fn` computes something else than its trace does on the reference interpreter: the
pipeline runs one pass at a time and the module is evaluated after each (see
ember/runtime/repro_bisect.py for what counts as a step and how results are compared).
`ember-opt FILE -p PIPELINE --bisect-against-interpreter` is the same on a `.mlir` file.
"""

from __future__ import annotations

import warnings

import numpy as np

from ember.frontend import nest
from ember.frontend.shape import TensorSpec
from ember.runtime.concrete import ConcreteFunction
from ember.runtime.function import Function
from ember.runtime.repro_bisect import BisectError, Miscompile, bisect

__all__ = ["BisectError", "Miscompile", "find_miscompile"]


def find_miscompile(fn, *args, pipeline: str | None = None, rtol: float = 1e-5,
                    atol: float = 1e-6, seed: int = 0, compiled: bool = True,
                    **kwargs) -> Miscompile | None:
    """The first pass or stage whose output differs from the traced function's.

    Args:
      fn: an `em.function` (traced for `args`) or a ConcreteFunction.
      *args, **kwargs: the call's arguments; where they are TensorSpecs (or none are given
        for a ConcreteFunction), seeded random inputs of the traced types are used.
      pipeline: the textual pipeline to bisect; default: the function's own
        (`ember-optimize` unless it was given another).
      rtol, atol: how close floating-point results must be (numpy.allclose).
      seed: the seed of random inputs.
      compiled: also compile the pipeline's output with the CPU backend and compare it.

    Returns:
      None when every step agrees with the trace, else a Miscompile naming the step
      (`.pass_name`), with the IR `.before` and `.after` it, the `.reproducer` file and the
      `.command` that re-runs the bisection on it. Steps that could not be checked are
      reported as a warning.

    Raises:
      BisectError: the function calls Python (em.py_function, printing to a stream), or
        the interpreter cannot run its trace.

    Example:
      >>> import ember as em
      >>> import numpy as np
      >>> @em.function
      ... def f(x):
      ...     return x * 2.0 + 1.0
      >>> print(em.debug.find_miscompile(f, np.ones(3, np.float32), compiled=False))
      None
    """
    concrete = fn if isinstance(fn, ConcreteFunction) else None
    if concrete is None:
        if not isinstance(fn, Function):
            raise TypeError(f"find_miscompile takes an em.function or a ConcreteFunction, "
                            f"not {type(fn).__name__}")
        concrete = fn.get_concrete_function(*args, **kwargs)
    graph = concrete._graph
    if graph.callbacks:
        raise BisectError(f"'{concrete.name}' calls Python (em.py_function or printing to a "
                          "stream), which the bisection cannot replay; bisect the function "
                          "without that call")
    inputs = _inputs(concrete, args, kwargs)
    if pipeline is None:
        pipeline = str(concrete._pipeline) if concrete._pipeline is not None else ""
    text = graph.module.operation.get_asm(enable_debug_info=True)
    found, notes = bisect(text, pipeline, graph.symbol, inputs, rtol=rtol, atol=atol,
                          seed=seed, compiled=compiled)
    if found is None and notes:
        warnings.warn("find_miscompile: " + "; ".join(notes), stacklevel=2)
    return found


def _inputs(concrete: ConcreteFunction, args: tuple, kwargs: dict) -> list | None:
    """The flat input arrays of the call (variables' and captured constants' values
    last), or None for random ones."""
    if not args and not kwargs or any(isinstance(leaf, TensorSpec)
                                      for leaf in nest.flatten((args, kwargs))):
        return None
    flat = concrete._flat_inputs(concrete.call_arguments(args, kwargs))
    arrays = [np.asarray(t._value) for t in flat]
    for kind, obj in concrete._graph.extra_args:
        arrays.append(np.asarray(obj.handle.value if kind == "variable" else obj._value))
    return arrays
