"""`em.function(experimental_follow_type_hints=True)`: arguments annotated `em.Tensor` are
converted to tensors before their trace type is taken (tf.function's option of that name).

Without it, a Python number is traced by value, so `f(1)`, `f(2)`, `f(3)` trace three times.
With it, a parameter annotated exactly `em.Tensor` (TF compares the annotation to `tf.Tensor`
with `==`, so `Optional[em.Tensor]` or a subclass does not count) receives
`em.convert_to_tensor(value)`: the calls above share one trace of an int32 scalar. As in TF:
  - only the arguments the caller passes are converted (a default value stays Python);
  - `*args: em.Tensor` converts each extra positional argument, `**kwargs: em.Tensor` each
    extra keyword argument;
  - tensors and TensorSpecs are left as they are, and an em.Variable is read (TF's
    `convert_to_tensor` of a variable: the function gets its value, not the variable);
  - with an `input_signature` the hints are ignored (the signature fixes the types).
numpy arrays and scalars are left as they are: they are traced as tensors already, and
unconverted they keep the call on the fast path (fast_path.py).
Annotations written as strings (`from __future__ import annotations`) are evaluated in the
function's globals; one that cannot be evaluated is not a hint (TF would ignore it too).
"""

from __future__ import annotations

import inspect
from typing import Callable

import numpy as np

from ember.dialects.ember.errors import EmberError
from ember.frontend.shape import TensorSpec
from ember.frontend.tensor import Tensor, convert_to_tensor


class TypeHintError(EmberError, TypeError):
    """An argument annotated em.Tensor that em.convert_to_tensor cannot convert."""


def tensor_parameters(python_function: Callable) -> frozenset[str]:
    """The names of `python_function`'s parameters annotated exactly `em.Tensor`."""
    try:
        signature = inspect.signature(python_function, eval_str=True)
    except Exception:  # a string annotation naming something undefined: evaluate one by one
        signature = inspect.signature(python_function)
        globals_ = getattr(inspect.unwrap(python_function), "__globals__", {})
        return frozenset(name for name, p in signature.parameters.items()
                         if _evaluated(p.annotation, globals_) is Tensor)
    return frozenset(name for name, p in signature.parameters.items()
                     if p.annotation is Tensor)


def convert_hinted(bound: inspect.BoundArguments, hinted: frozenset[str], name: str,
                   definition: tuple[str, int] | None) -> None:
    """Converts, in place, the arguments of `bound` (before its defaults are applied) whose
    parameters are in `hinted` (see tensor_parameters)."""
    for param_name, value in list(bound.arguments.items()):
        if param_name not in hinted:
            continue
        kind = bound.signature.parameters[param_name].kind
        if kind is inspect.Parameter.VAR_POSITIONAL:
            converted = tuple(_converted(v, f"{param_name}[{i}]", name, definition)
                              for i, v in enumerate(value))
        elif kind is inspect.Parameter.VAR_KEYWORD:
            converted = {k: _converted(v, f"{param_name}[{k!r}]", name, definition)
                         for k, v in value.items()}
        else:
            converted = _converted(value, param_name, name, definition)
        bound.arguments[param_name] = converted


def _converted(value, where: str, name: str, definition: tuple[str, int] | None):
    if isinstance(value, (Tensor, TensorSpec, np.ndarray, np.generic)):
        return value
    try:
        return convert_to_tensor(value)
    except (TypeError, ValueError) as e:
        site = f" (defined at {definition[0]}:{definition[1]})" if definition else ""
        raise TypeHintError(
            f"em.function '{name}'{site}: argument {where} is annotated em.Tensor and "
            "experimental_follow_type_hints=True, so it is converted to a tensor, but "
            f"{type(value).__name__} value {_short(value)} cannot be: {e}. Pass a tensor or "
            "a value em.convert_to_tensor accepts (numbers, nested lists of them, numpy "
            "arrays), or remove the em.Tensor annotation to trace it as a Python value."
        ) from None


def _evaluated(annotation, globals_: dict):
    if not isinstance(annotation, str):
        return annotation
    try:
        return eval(annotation, globals_)  # what inspect.signature(eval_str=True) does
    except Exception:
        return None


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
