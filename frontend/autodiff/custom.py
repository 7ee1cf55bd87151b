"""`em.stop_gradient`, `em.custom_gradient` and `em.recompute_grad`."""

from __future__ import annotations

import functools

from ember.frontend import nest, tracing
from ember.frontend.autodiff import recording
from ember.frontend.autodiff.tape import Entry, GradientTape, _is_variable, differentiable
from ember.frontend.tensor import Tensor, convert_to_tensor


def stop_gradient(input, name=None):  # noqa: A002 - TensorFlow's name
    """`input`, with no gradient flowing through it to any tape (tf.stop_gradient)."""
    del name
    x = convert_to_tensor(input)
    if isinstance(x, tracing.SymbolicTensor):
        return x.graph.wrap(x._ir, "stop_gradient", x._ttype)
    return Tensor(x._value, x.dtype)


def custom_gradient(f=None):
    """Decorator: `f(*x)` returns `(y, grad_fn)`; tapes see `y` as a function of `x` whose
    gradient is `grad_fn(*dy)` (tf.custom_gradient). If `f` reads Variables, `grad_fn`
    takes `variables=` (those Variables) and returns `(input_grads, variable_grads)`.

    Example:
      >>> import ember as em
      >>> @em.custom_gradient
      ... def clip_grad(x):
      ...     return em.identity(x), lambda dy: em.clip_by_value(dy, -1.0, 1.0)
      >>> x = em.constant(2.0)
      >>> with em.GradientTape() as t:
      ...     t.watch(x)
      ...     y = clip_grad(x * 10.0)
      >>> t.gradient(y, x)
      <ember.Tensor: shape=(), dtype=float32, numpy=10.0>
    """
    if f is None:
        return custom_gradient

    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        fn = _converted(f)
        tapes = recording.tapes()
        if not tapes:
            return fn(*args, **kwargs)[0]
        # a Variable passed as an argument is an input (its gradient is grad_fn's to
        # return in order), not one of the `variables=` it reads, as in TensorFlow
        inputs = [a for a in nest.flatten((args, kwargs))
                  if isinstance(a, Tensor) or _is_variable(a)]
        with recording.reads(_VariableReads()) as reads, recording.paused():
            y, grad_fn = fn(*args, **kwargs)
        outputs = [o for o in nest.flatten(y) if isinstance(o, Tensor)]
        variables = [v for v in reads.variables if not any(v is a for a in inputs)]
        fresh = [_fresh(o) for o in outputs]  # values of their own, recorded as outputs
        by_id = {id(o): n for o, n in zip(outputs, fresh)}
        y = nest.map_structure(lambda v: by_id.get(id(v), v), y)

        def backward(cts):
            cts = [c if c is not None else _zeros(o) for c, o in zip(cts, fresh)]
            if variables:
                grads, var_grads = grad_fn(*cts, variables=variables)
            else:
                grads, var_grads = grad_fn(*cts), []
            grads = list(grads) if isinstance(grads, (list, tuple)) else [grads]
            if len(grads) != len(inputs):
                raise ValueError(f"the gradient function of {f.__name__} returned "
                                 f"{len(grads)} gradients for {len(inputs)} tensor inputs")
            return [None if g is None else convert_to_tensor(g) for g in grads] + \
                list(var_grads)
        for tape in tapes:
            for v in variables:  # watched, as reading it under the tape would (f ran paused):
                tape._accessed(v)  # a loop or branch around the call sees it read
            tape._add(Entry(inputs + variables, fresh, backward))
        return y
    wrapper.__ag_do_not_convert__ = True  # f itself is converted when it runs traced
    return wrapper


def _converted(f):
    """`f` converted by AutoGraph while tracing (as the function calling it was)."""
    if tracing.current_graph() is None:
        return f
    from ember.frontend.autograph.conversion import convert
    return convert(f)


def recompute_grad(f):
    """`f` whose intermediate values are not kept for the gradient: the gradient runs `f`
    again (tf.recompute_grad), trading compute for memory."""
    @functools.wraps(f)
    def wrapper(*args):
        @custom_gradient
        def inner(*xs):
            y = _converted(f)(*xs)

            def grad(*dy, variables=None):
                with GradientTape(watch_accessed_variables=False) as tape:
                    tape._watch([x for x in xs if isinstance(x, Tensor)])
                    if variables:
                        tape._watch(variables)
                    again = _converted(f)(*xs)
                sources = [x for x in xs if isinstance(x, Tensor)]
                g = tape.gradient(again, sources + list(variables or []), output_gradients=
                                  list(dy))
                if variables:
                    return g[:len(sources)], g[len(sources):]
                return g
            return y, grad
        return inner(*args)
    wrapper.__ag_do_not_convert__ = True
    return wrapper


class _VariableReads:
    """Collects the trainable Variables read in a block (they get a custom gradient too)."""

    def __init__(self):
        self.variables = []

    def _record_read(self, variable, value):
        if getattr(variable, "trainable", False) and differentiable(variable) and \
                not any(v is variable for v in self.variables) and _is_variable(variable):
            self.variables.append(variable)


def _fresh(t: Tensor) -> Tensor:
    return stop_gradient(t)


def _zeros(t: Tensor) -> Tensor:
    from ember.frontend.creation_ops import zeros_like
    return zeros_like(t)
