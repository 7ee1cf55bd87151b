"""`em.GradientTape`: records the ops run on watched values and computes their gradients.

Eagerly a tape records each op's reference-kernel call; inside `em.function` it records the
traced ops, and `gradient` emits the backward ops into the same function, so the passes
optimise forward and backward together. Only ops that read a watched value (or a value
computed from one) are recorded, as in TensorFlow. Trainable Variables read while the tape
records are watched unless `watch_accessed_variables=False`.
"""

from __future__ import annotations

import enum
import warnings
from typing import Callable

from ember.frontend import nest
from ember.frontend.autodiff import recording, registry
from ember.frontend.tensor import Tensor, convert_to_tensor
from ember.frontend.user_code import user_stacklevel


class UnconnectedGradients(enum.Enum):
    """What `gradient` returns for a source the target does not depend on."""
    NONE = "none"
    ZERO = "zero"


class Entry:
    """One recorded computation: `backward(cts)` maps the cotangents of `outputs` (None where
    there is none) to those of `inputs` (tensors or Variables)."""

    __slots__ = ("inputs", "outputs", "backward")

    def __init__(self, inputs, outputs, backward: Callable):
        self.inputs = list(inputs)
        self.outputs = list(outputs)
        self.backward = backward


def differentiable(value) -> bool:
    dtype = getattr(value, "dtype", None)
    return dtype is not None and (dtype.is_floating or dtype.is_complex)


def _is_variable(value) -> bool:
    return hasattr(value, "_handle") and hasattr(value, "assign")


class GradientTape:
    """Records operations for automatic differentiation (tf.GradientTape).

    Example:
      >>> import ember as em
      >>> x = em.constant(3.0)
      >>> with em.GradientTape() as tape:
      ...     tape.watch(x)
      ...     y = x * x
      >>> tape.gradient(y, x)
      <ember.Tensor: shape=(), dtype=float32, numpy=6.0>
    """

    def __init__(self, persistent: bool = False, watch_accessed_variables: bool = True):
        self._persistent = bool(persistent)
        self._watch_accessed_variables = bool(watch_accessed_variables)
        self._entries: list[Entry] = []
        self._live: dict[int, object] = {}  # id -> watched value or one computed from it
        self._variables: dict[int, object] = {}  # watched Variables, in watch order
        self._used = False
        self._recording = False

    # -- recording ---------------------------------------------------------------------------

    def __enter__(self) -> "GradientTape":
        if self._recording:
            raise ValueError("this GradientTape is already recording: it cannot be entered "
                             "twice at once")
        recording.push(self)
        self._recording = True
        return self

    def __exit__(self, *exc) -> None:
        recording.pop(self)
        self._recording = False

    def watch(self, tensor) -> None:
        """Ensures `tensor` (a tensor, Variable, or a structure of them) is traced; an
        integer or bool one has no gradient (a warning says so, as TensorFlow's log does)."""
        self._watch(tensor, warn=True)

    def _watch(self, tensor, warn: bool = False) -> None:
        for leaf in nest.flatten(tensor):
            if _is_variable(leaf):
                self._watch_variable(leaf)
            elif isinstance(leaf, Tensor):
                if differentiable(leaf):
                    self._live[id(leaf)] = leaf
                elif warn:
                    warnings.warn(f"GradientTape.watch: {leaf!r} has dtype {leaf.dtype.name}, "
                                  "which has no gradient (the gradient with respect to it is "
                                  "None); watch a floating-point tensor (em.cast it first)",
                                  stacklevel=user_stacklevel())
            elif hasattr(leaf, "_as_tensor"):
                self._watch(leaf._as_tensor(), warn)
            else:
                raise ValueError(f"GradientTape.watch takes tensors and Variables, got "
                                 f"{leaf!r}; convert it first (em.convert_to_tensor)")

    def _watch_variable(self, variable) -> None:
        if differentiable(variable) and id(variable) not in self._variables:
            self._variables[id(variable)] = variable
            self._live[id(variable)] = variable

    def watched_variables(self) -> tuple:
        """The Variables this tape watches, in the order it first watched them."""
        return tuple(self._variables.values())

    def stop_recording(self):
        """A context in which this tape records nothing (other tapes still do)."""
        if not self._recording:
            raise ValueError("GradientTape.stop_recording needs the tape to be recording "
                             "(use it inside the tape's `with` block)")
        return recording.without(self)

    def reset(self) -> None:
        """Forgets everything recorded and watched, as a new tape would."""
        self._entries.clear()
        self._live.clear()
        self._variables.clear()
        self._used = False

    def _record_op(self, spec, operands, attrs, outputs) -> None:
        live = self._live
        if not any(id(t) in live for t in operands):
            return
        if registry.is_non_differentiable(spec):
            return
        rule = registry.rule_for(spec)
        self._add(Entry(operands, outputs, _op_backward(spec, rule, operands, attrs, outputs)))

    def _accessed(self, variable) -> bool:
        """`variable` is read: watches it if the tape watches accessed trainable Variables;
        whether the tape watches it."""
        if id(variable) not in self._live and self._watch_accessed_variables and \
                getattr(variable, "trainable", False):
            self._watch_variable(variable)
        return id(variable) in self._live

    def _record_read(self, variable, value) -> None:
        if self._accessed(variable):
            self._add(Entry([variable], [value], lambda cts: cts))

    def _add(self, entry: Entry) -> None:
        """Records `entry`; its differentiable outputs become live."""
        self._entries.append(entry)
        for out in entry.outputs:
            if out is not None and differentiable(out):
                self._live[id(out)] = out

    def _connected(self, value) -> bool:
        return id(value) in self._live

    # -- gradients ---------------------------------------------------------------------------

    def gradient(self, target, sources, output_gradients=None,
                 unconnected_gradients=UnconnectedGradients.NONE):
        """The gradient of `target` (summed over its elements and leaves) with respect to
        each of `sources`, in the structure of `sources`."""
        self._check_usable("gradient")
        unconnected = UnconnectedGradients(unconnected_gradients)
        targets = [_as_target(t) for t in nest.flatten(target)]
        flat_sources = nest.flatten(sources)
        for s in flat_sources:
            if not (_is_variable(s) or isinstance(s, Tensor)):
                raise ValueError(f"GradientTape.gradient: a source must be a tensor or a "
                                 f"Variable, got {s!r}")
        seeds = None
        if output_gradients is not None:
            seeds = [None if g is None else convert_to_tensor(g)
                     for g in nest.flatten(output_gradients)]
            if len(seeds) != len(targets):
                raise ValueError(f"GradientTape.gradient: output_gradients has {len(seeds)} "
                                 f"tensors for {len(targets)} targets")
        with recording.without(self):
            grads = backprop(self._entries, targets, seeds, flat_sources)
        self._used_once()
        out = []
        for s, g in zip(flat_sources, grads):
            if g is None and unconnected is UnconnectedGradients.ZERO:
                g = _zeros_like(s)
            out.append(g)
        return nest.pack_sequence_as(sources, out)

    def _check_usable(self, what: str) -> None:
        if self._used and not self._persistent:
            raise RuntimeError(f"A non-persistent GradientTape can only be used to compute one "
                               f"set of gradients (or jacobians); create it with "
                               f"em.GradientTape(persistent=True) to call {what} again")

    def _used_once(self) -> None:
        """A non-persistent tape is spent after one gradient: what it recorded is freed."""
        if not self._persistent:
            self._used = True
            self._entries = []
            self._live = {}

    def jacobian(self, target, sources, unconnected_gradients=UnconnectedGradients.NONE,
                 parallel_iterations=None, experimental_use_pfor=True):
        """d target[i...] / d source[j...], shaped `target.shape + source.shape`."""
        from ember.frontend.autodiff.jacobians import jacobian
        del parallel_iterations, experimental_use_pfor
        return jacobian(self, target, sources, UnconnectedGradients(unconnected_gradients))

    def batch_jacobian(self, target, source, unconnected_gradients=UnconnectedGradients.NONE,
                       parallel_iterations=None, experimental_use_pfor=True):
        """d target[b, i...] / d source[b, j...] for each b (rows independent across b)."""
        from ember.frontend.autodiff.jacobians import batch_jacobian
        del parallel_iterations, experimental_use_pfor
        return batch_jacobian(self, target, source,
                              UnconnectedGradients(unconnected_gradients))


def _as_target(t):
    if _is_variable(t) or hasattr(t, "_as_tensor"):
        return t._as_tensor()
    if not isinstance(t, Tensor):
        raise ValueError(f"GradientTape.gradient: the target must be tensors, got {t!r}")
    return t


def _zeros_like(source):
    from ember.frontend.ops import zeros
    from ember.frontend.creation_ops import zeros_like
    if _is_variable(source):
        return zeros(source.shape, source.dtype) if source.shape.is_fully_defined() \
            else zeros_like(source.read_value())
    return zeros_like(source)


def _op_backward(spec, rule, operands, attrs, outputs):
    def backward(cts):
        if rule is None:
            raise registry.missing_rule_error(spec)
        ct = tuple(cts) if len(outputs) > 1 else cts[0]
        out = tuple(outputs) if len(outputs) > 1 else outputs[0]
        grads = rule(ct, *operands, out=out, **attrs)
        if len(operands) == 1 and not spec.variadic:
            grads = (grads,)
        return list(grads)
    return backward


def backprop(entries: list[Entry], targets: list, seeds, sources: list) -> list:
    """The cotangents of `sources` given those of `targets` (`seeds`; ones where None)."""
    from ember.frontend.math_ops import add
    reach = {id(s) for s in sources}
    relevant = []
    for e in entries:  # which entries lie on a path from a source
        if any(id(i) in reach for i in e.inputs if i is not None):
            relevant.append(e)
            reach.update(id(o) for o in e.outputs if o is not None and differentiable(o))
    cts: dict[int, Tensor] = {}

    def accumulate(key: int, value) -> None:
        cts[key] = value if key not in cts else add(cts[key], value)
    for i, t in enumerate(targets):
        if not differentiable(t):
            continue
        seed = seeds[i] if seeds is not None and seeds[i] is not None else _ones(t)
        accumulate(id(t), seed)
    for e in reversed(relevant):
        out_cts = [cts.get(id(o)) if o is not None else None for o in e.outputs]
        if all(c is None for c in out_cts):
            continue
        in_cts = e.backward(out_cts)
        for i, g in zip(e.inputs, in_cts):
            if g is not None and i is not None and id(i) in reach:
                accumulate(id(i), g)
    return [cts.get(id(s)) for s in sources]


def _ones(t: Tensor) -> Tensor:
    """The default seed: ones shaped like `t` (a constant when its shape is static, so the
    forward value itself is not kept alive for its shape)."""
    from ember.frontend.creation_ops import ones, ones_like
    return ones(list(t.shape.dims), t.dtype) if t.shape.is_fully_defined() else ones_like(t)
