"""`em.Variable`: mutable state shared by eager code and traced functions.

A Variable owns a `VariableHandle` (its current numpy value). Traced code never copies the
value: reading or writing a variable inside an em.function captures the handle as a
`!ember.resource` argument and emits `ember.read_variable` / `ember.assign_variable`, so every
call sees the current value and writes through (as TensorFlow's resource variables).

A variable created inside a trace from a symbolic value (the guide's
`state.append(em.Variable(2.0 * x))`) is initialised by the function itself, once: the trace
emits `if not initialized: assign(...)`, as TensorFlow lifts such initialisers.

`==` and `!=` compare the value elementwise, as a Tensor's (TensorFlow 2's Tensor
equality), so a Variable cannot be hashed: `v.ref()` keys a dict or a set, and Ember's own
code keeps Variables by `id()` (object_identity.py for weak containers).
"""

from __future__ import annotations

import contextlib
import itertools
import threading
from typing import Optional

import numpy as np

from ember.dialects.ember import dtypes, state
from ember.dialects.ember.base import OpError
from ember.dialects.ember.types import TensorType
from ember.frontend import tracing
from ember.frontend.shape import TensorShape
from ember.frontend.autodiff import recording
from ember.frontend.device_memory import CPU as _CPU, device_of as _device_of, scope_device
from ember.frontend.object_identity import TensorRef
from ember.frontend.tensor import Tensor, _value_text, convert_to_tensor
from ember.frontend.trace_types import VariableTraceType
from ember.frontend.user_code import user_located, user_location
from ember.frontend.variable_slices import sliced

_ids = itertools.count(1)


class VariableHandle:
    """The storage of a variable: what the interpreter and compiled code read and write.
    `lock` makes a read-modify-write atomic (an eager assign_add, a compiled call that
    writes the variable): re-entrant, for a py_function that writes it during such a call."""

    __slots__ = ("value", "id", "lock", "__weakref__")

    def __init__(self, value: Optional[np.ndarray]):
        self.value = value
        self.id = next(_ids)
        self.lock = threading.RLock()


# em.distribute's variable creator (set by ember.runtime.distribute.mirrored): called with the
# arguments of `em.Variable(...)`, it returns the variable to use (a MirroredVariable under a
# strategy's scope) or None for an ordinary one (TF's variable_creator_scope).
variable_creator = None


class _Creations(threading.local):
    def __init__(self):
        self.logs: list[list] = []  # the lists of `creations()` open on this thread


_creations = _Creations()


@contextlib.contextmanager
def creations():
    """`with creations() as made:` lists the em.Variables created on this thread in its
    body (what keras's Lambda checks with TF's variable_creator_scope)."""
    made: list = []
    _creations.logs.append(made)
    try:
        yield made
    finally:
        _creations.logs.remove(made)


class _VariableMeta(type):
    """Lets `variable_creator` make the variable (TF's VariableMetaclass)."""

    def __call__(cls, *args, **kwargs):
        creator = variable_creator
        made = None
        if creator is not None and cls is Variable:
            made = creator(args, kwargs)
        if made is None:
            made = super().__call__(*args, **kwargs)
        for log in _creations.logs:
            log.append(made)
        return made


class Variable(metaclass=_VariableMeta):
    """A mutable tensor-valued variable (tf.Variable).

    Example:
      >>> import ember as em
      >>> v = em.Variable(1.0)
      >>> _ = v.assign_add(2.0)
      >>> v.numpy()
      np.float32(3.0)
    """

    # numpy defers `ndarray * Variable` (any operator) to the Variable's reflected operator,
    # as it does for Tensor: the result is an Ember tensor, also inside a trace
    __array_priority__ = 100

    def __init__(self, initial_value=None, trainable: bool = True, name: Optional[str] = None,
                 dtype=None, shape=None):
        graph = tracing.current_graph()
        if graph is not None and not graph.allow_variable_creation:
            raise _creation_error(graph)
        if initial_value is None:
            raise ValueError("em.Variable needs an initial_value")
        if callable(initial_value):
            initial_value = initial_value()
        self.trainable = trainable
        self._name = name or "Variable"
        want = dtypes.as_dtype(dtype) if dtype is not None else None
        if isinstance(initial_value, tracing.SymbolicTensor):
            if want is not None and initial_value.dtype is not want:
                raise TypeError(f"initial value of dtype {initial_value.dtype.name} does not "
                                f"match dtype {want.name}")
            init = initial_value
            self._type = TensorType(init.dtype, _shape(init.shape, shape))
            self._handle = VariableHandle(None)
            self._initialized = Variable(False, trainable=False, name=f"{self._name}/initialized")
            graph.created_variables.append(self)
            _initialize_in_graph(self, init)
            return
        value = convert_to_tensor(initial_value, dtype=want)._value
        self._device = scope_device()  # TF's: the device it was created under (None: CPU)
        self._type = TensorType(dtypes.as_dtype(value.dtype), _shape(value.shape, shape))
        self._handle = VariableHandle(np.array(value, copy=True))
        self._initialized = None
        if graph is not None:
            graph.created_variables.append(self)

    # -- properties ---------------------------------------------------------------------------

    @property
    def dtype(self):
        return self._type.dtype

    @property
    def shape(self) -> TensorShape:
        return TensorShape(self._type.shape)

    @property
    def name(self) -> str:
        return f"{self._name}:0"

    @property
    def handle(self) -> VariableHandle:
        return self._handle

    @property
    def device(self) -> str:
        """The device of the variable, as TensorFlow names it:
        '/job:localhost/replica:0/task:0/device:CPU:0', or GPU:N for a value on a GPU (made
        inside `with em.device("gpu:N")`); a MirroredVariable's copy names its replica's."""
        placed = getattr(self, "_device", None)
        if placed is not None:
            return placed
        value = self._handle.value
        return (_device_of(value) if value is not None else None) or _CPU

    def _ember_trace_type(self):
        return VariableTraceType(self._handle.id, self.dtype, self._type.shape)

    # -- reading ------------------------------------------------------------------------------

    def read_value(self) -> Tensor:
        """The current value (symbolic inside a trace: read on every call)."""
        graph = tracing.current_graph()
        replayed = recording.replayed_read(self) if graph is not None else None
        if replayed is not None:  # a gradient's replay of a region that wrote it
            return replayed
        if graph is not None:
            resource = graph.capture_variable(self)
            value = graph.apply_on_values(state.ReadVariableOp, [resource], {})
        elif self._handle.value is None:
            raise ValueError(f"{self.name} is not initialised yet: its initial value is "
                             "computed by the em.function that created it, on its first call")
        else:
            value = Tensor(self._handle.value, self.dtype)
        if recording.recording():
            recording.record_read(self, value)
        return value

    value = read_value

    def numpy(self):
        """The value, as Tensor.numpy(): a numpy scalar (bytes for a string) if 0-d."""
        return self.read_value().numpy()

    def _numpy_array(self) -> np.ndarray:
        return self.read_value()._numpy_array()

    def _as_tensor(self) -> Tensor:
        return self.read_value()

    def __array__(self, dtype=None, copy=None):
        return self.read_value().__array__(dtype, copy)  # numpy 2's copy rules, as Tensor

    # -- writing ------------------------------------------------------------------------------

    def _write(self, spec, value):
        value = convert_to_tensor(value, dtype_hint=self.dtype)
        graph = tracing.current_graph()
        if graph is not None and recording.replaying_now():
            # a gradient's replay of a region: the forward trace wrote it already
            recording.replayed_write(self, _written(spec, self, value))
            return self
        if graph is not None:
            resource = graph.capture_variable(self)
            graph.apply_on_values(spec, [resource, graph.resolve(value)], {})
            graph.replay_log.written[id(self)] = self
            recording.record_write(self)
            return self
        if isinstance(value, tracing.SymbolicTensor):
            raise tracing.eager_use_error(value)
        types = (_resource_type(self), TensorType(value.dtype, tuple(value._value.shape)))
        try:
            spec.infer_types(types, {})
        except OpError as e:  # at the user's line, as in a trace and in compiled code
            raise user_located(e) from None
        handle = self._handle
        with handle.lock, np.errstate(all="ignore"):
            new = np.asarray(spec.reference(handle.value, value._value), self.dtype.np_dtype)
            handle.value = np.array(new, copy=True)
        return self

    def assign(self, value, read_value: bool = True):
        """Replaces the value; returns the variable."""
        return self._write(state.AssignVariableOp, value)

    def assign_add(self, delta, read_value: bool = True):
        """Adds `delta` in place; returns the variable."""
        return self._write(state.AssignAddVariableOp, delta)

    def assign_sub(self, delta, read_value: bool = True):
        """Subtracts `delta` in place; returns the variable."""
        return self._write(state.AssignSubVariableOp, delta)

    def __getitem__(self, key):
        """`self.read_value()[key]`, which `.assign(value)` writes back into the variable
        (tf.Variable's sliced assignment: `v[1:3].assign(x)`, `v[i, 0].assign(2.0)`)."""
        return sliced(self, key, self.read_value()[key])

    def _scatter(self, how: str, indices, updates):
        from ember.frontend import scatter_ops
        return self.assign(getattr(scatter_ops, f"tensor_scatter_nd_{how}")(
            self.read_value(), indices, updates))

    def scatter_nd_update(self, indices, updates, name=None):
        """Writes `updates` at `indices` (em.tensor_scatter_nd_update's); returns self."""
        return self._scatter("update", indices, updates)

    def scatter_nd_add(self, indices, updates, name=None):
        """Adds `updates` at `indices` (em.tensor_scatter_nd_add's); returns self."""
        return self._scatter("add", indices, updates)

    def scatter_nd_sub(self, indices, updates, name=None):
        """Subtracts `updates` at `indices` (em.tensor_scatter_nd_sub's); returns self."""
        return self._scatter("sub", indices, updates)

    def scatter_nd_max(self, indices, updates, name=None):
        """The maximum of the value and `updates` at `indices`; returns self."""
        return self._scatter("max", indices, updates)

    def scatter_nd_min(self, indices, updates, name=None):
        """The minimum of the value and `updates` at `indices`; returns self."""
        return self._scatter("min", indices, updates)

    def __repr__(self) -> str:
        if tracing.current_graph() is not None or self._handle.value is None:
            return f"<ember.Variable '{self.name}' shape={self.shape} dtype={self.dtype.name}>"
        text = _value_text(self._handle.value, repr)  # as a Tensor shows its value
        sep = "\n" if "\n" in text else ""
        return (f"<ember.Variable '{self.name}' shape={self.shape} dtype={self.dtype.name}, "
                f"numpy={sep}{text}>")

    # -- equality (tf.Variable's with Tensor equality on, TF2's default) ------------------

    def __eq__(self, other):
        """Elementwise `==` of the value, as a Tensor's (a bool tensor; False for None, an
        object that is not a tensor, or a dtype or shape that cannot be compared). Inside
        an em.function it is read when the function runs: `while v != 0:` is a loop.

        Example:
          >>> v = em.Variable([1, 2, 3])
          >>> v == 2
          <ember.Tensor: shape=(3,), dtype=bool, numpy=array([False,  True, False])>
          >>> v == None
          False
        """
        return self.read_value() == other

    def __ne__(self, other):
        """Elementwise `!=` of the value, as a Tensor's."""
        return self.read_value() != other

    def __hash__(self):
        raise unhashable_error(self)

    def ref(self) -> TensorRef:
        """A hashable reference to this variable (by identity), usable as a dict key or set
        member; `.deref()` gives the variable back (tf.Variable.ref)."""
        return TensorRef(self)

    experimental_ref = ref  # TensorFlow's older spelling


def unhashable_error(variable) -> TypeError:
    """TensorFlow's error for hashing a variable: `==` is elementwise, so `ref()` keys."""
    return TypeError(f"Variable is unhashable: its `==` is elementwise. Instead, use "
                     f"variable.ref() as the key (Variable: {variable!r})")


def _creation_error(graph: tracing.FuncGraph) -> ValueError:
    """The error for an em.Variable created by a trace that may not create variables."""
    filename, line = user_location()
    if graph.checking_variables:
        why = (f"'{graph.name}' created variables on its first call, so it was traced a "
               "second time, as a later call would be, and that trace created one again")
    else:
        why = f"this trace of '{graph.name}' is not its first"
    return ValueError(
        f"em.function '{graph.name}' tried to create variables on non-first call, at "
        f"{filename}:{line}: em.function only supports singleton em.Variables created on the "
        f"first call ({why}). Make sure the em.Variable is only created once, e.g. behind "
        "`if self.v is None: self.v = em.Variable(...)`, or create it outside the "
        "em.function.")


def _resource_type(v: Variable):
    from ember.dialects.ember.types import ResourceType
    return ResourceType(v._type)


def _shape(actual, requested) -> tuple:
    if requested is None:
        return tuple(TensorShape(actual).dims) if TensorShape(actual).dims is not None else None
    return TensorShape(requested).dims


def _initialize_in_graph(var: Variable, init: tracing.SymbolicTensor) -> None:
    """Emits `if not initialized { var = init; initialized = true }` into the trace."""
    from ember.frontend import control_flow

    def first_call():
        var.assign(init)
        var._initialized.assign(True)

    control_flow.cond_effects(var._initialized.read_value(), lambda: None, first_call)


def _operator(name):
    def method(self, *args):
        return getattr(self.read_value(), name)(*args)
    method.__name__ = name
    return method


for _name in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__",
              "__truediv__", "__rtruediv__", "__floordiv__", "__rfloordiv__", "__mod__",
              "__rmod__", "__pow__", "__rpow__", "__matmul__", "__rmatmul__", "__lt__",
              "__le__", "__gt__", "__ge__", "__and__", "__rand__", "__or__", "__ror__",
              "__xor__", "__rxor__", "__invert__", "__lshift__", "__rlshift__",
              "__rshift__", "__rrshift__", "__neg__", "__abs__",
              "__bool__", "__int__", "__float__", "__index__", "__len__", "__iter__"):
    setattr(Variable, _name, _operator(_name))


def _written(spec, variable, value):
    """The value the write `spec` (an assign op) of `value` leaves in `variable`."""
    if spec is state.AssignVariableOp:
        return value
    from ember.frontend.math_ops import add, subtract
    old = variable.read_value()
    return add(old, value) if spec is state.AssignAddVariableOp else subtract(old, value)
