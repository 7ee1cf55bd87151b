"""Tracing: symbolic tensors and the graph (an MLIR `func.func`) they are recorded into.

While a `FuncGraph` is active on a thread, every op call (`em.add`, operators, ...) emits an
op into it instead of computing (see `dispatch.execute`). Eager tensors used inside become
`ember.constant`s (trace_constants.py), variables become `!ember.resource` arguments, and
tensors of an enclosing trace become extra arguments (closure captures). Every op carries
the user's `file:line`.

A captured eager tensor (or numpy array) larger than `LARGE_CONSTANT_BYTES` becomes an extra
argument instead, as TensorFlow captures tensors: printing 40 MB into the IR, and hashing
that text for the compile cache, took most of a minute and gigabytes. The graph keeps a
read-only snapshot of it (the value at trace time, as an IR constant would be) which is
passed to the compiled code as a buffer on every call. Smaller ones stay IR constants, so
the constant folder still sees everything it could have produced itself (its size cap).

Guard rails: a symbolic tensor remembers its graph and region; using it after its trace, or
outside the `em.cond`/`em.while_loop` body that made it, raises `TypeError` saying where.
"""

from __future__ import annotations

import collections
import contextlib
import threading
from typing import Callable, Sequence

from mlir import ir
from mlir.dialects import builtin, func  # noqa: F401 (builtin: Module.create would import it)

from ember.dialects.ember.base import Op
from ember.dialects.ember.builder import emit_typed, inferred_plain
from ember.dialects.ember.convert import type_from_mlir, type_to_mlir
from ember.dialects.ember.errors import EmberError
from ember.dialects.ember.irdl import tracing_context
from ember.dialects.ember.types import IRType, ResourceType, TensorType
from ember.frontend.autodiff import recording
from ember.frontend.shape import TensorShape
from ember.frontend.tensor import Tensor
from ember.frontend.trace_constants import ConstantOps, frozen
from ember.frontend.trace_scope import (Scope, active_graphs, current_graph,  # noqa: F401
                                        graph_scope, init_scope, thread_state)
from ember.frontend.trace_types import TensorTraceType
from ember.frontend.symbols import symbol_for, unique_name
from ember.frontend.user_code import user_location

_create = ir.Operation.create
LARGE_CONSTANT_BYTES = 1 << 20  # = ember-constant-fold's default size-cap
_LIFTABLE_KINDS = "biuf"  # bool, signed, unsigned, float: what compiled code takes as buffers

class OutOfScopeError(EmberError, TypeError):
    """A symbolic tensor was used outside the trace (or branch) that created it."""


class SymbolicValueError(EmberError, TypeError, AttributeError):
    """`.numpy()` of a symbolic tensor, which has no value. Also an AttributeError because
    TensorFlow's graph tensors have no `numpy` attribute (the tf.function guide catches
    AttributeError when it calls `.numpy()` on a leaked tensor)."""


class SymbolicTensor(Tensor):
    """A tensor inside a trace: an SSA value of the graph's function, with static type."""

    __slots__ = ("_ir", "_graph", "_ttype", "_name", "_origin", "_scope")

    def __init__(self, graph: "FuncGraph", value: ir.Value, ttype: TensorType, name: str,
                 origin: tuple[str, int] | None = None):
        self._ir = value
        self._graph = graph
        self._ttype = ttype
        self._name = name
        self._origin = origin or user_location()
        self._scope = graph.scope
        self._value = None
        self._dtype = ttype.dtype

    @property
    def shape(self) -> TensorShape:
        return TensorShape(self._ttype.shape)

    @property
    def ndim(self):
        return self._ttype.rank

    @property
    def name(self) -> str:
        return f"{self._name}:0"

    @property
    def graph(self) -> "FuncGraph":
        return self._graph

    def where(self) -> str:
        return f"{self._origin[0]}:{self._origin[1]}"

    def _no_value(self, what: str, error: type = TypeError, static: bool = False):
        if self._graph.finalized:
            raise error(f"{what} needs a value, but {_out_of_scope(self)}")
        raise error(f"{what} needs a value, but {self} is symbolic: it stands for a value "
                    f"computed when '{self._graph.name}' runs (traced at {self.where()}). "
                    "Use it in em ops, or em.print it; to branch on it use em.cond "
                    "(AutoGraph converts `if`/`while` on tensors)." + (
                        " An op argument that decides its result's shape (an axis, a "
                        "permutation, paddings) must be known while tracing: give a Python "
                        "int (a Python argument of the em.function keys its traces), or a "
                        "tensor computed from constants and shapes." if static else ""))

    def numpy(self):
        self._no_value("numpy()", SymbolicValueError)
    _numpy_array = numpy

    def __array__(self, dtype=None, copy=None):
        self._no_value("Converting to a numpy array", static=True)

    def __bool__(self):
        self._no_value("Using a tensor as a Python bool")

    def __int__(self):
        self._no_value("int()", static=True)

    def __float__(self):
        self._no_value("float()")

    def __index__(self):
        self._no_value("Using a tensor as a Python index", static=True)

    def __len__(self):
        if self._ttype.rank is None:
            raise TypeError(f"len() of {self}: its rank is unknown while tracing, so it may "
                            "be a scalar; use em.shape(x)[0], or give x a known rank")
        if self._ttype.rank == 0:
            raise TypeError(f"len() of {self}: the tensor is a scalar")
        if self._ttype.shape[0] is None:
            raise TypeError(f"len() of {self}: its first dimension is unknown while tracing; "
                            "use em.shape(x)[0]")
        return self._ttype.shape[0]

    def __iter__(self):  # raised by iter() itself, as for eager tensors
        if self._ttype.rank is not None and self._ttype.rank > 0 and self._ttype.shape[0] is None:
            raise TypeError(f"cannot iterate over {self}: its first dimension is unknown while "
                            "tracing. Loop with `for i in em.range(em.shape(x)[0])` (AutoGraph "
                            "stages it as a while loop), or use em.map_fn / em.scan")
        return (self[i] for i in range(len(self)))

    def __repr__(self) -> str:
        return f"<ember.Tensor '{self.name}' shape={self.shape} dtype={self._dtype.name}>"

    def __str__(self) -> str:
        # as TensorFlow: the shape is left out when even the rank is unknown
        shape = "" if self._ttype.rank is None else f", shape={self.shape}"
        return f'Tensor("{self.name}"{shape}, dtype={self._dtype.name})'

    def _ember_trace_type(self):
        return TensorTraceType(self._dtype, self._ttype.shape)


class FuncGraph:
    """One function being traced: a `func.func` in its own module, built op by op."""

    _symbols = collections.Counter()
    _symbol_lock = threading.Lock()

    def __init__(self, name: str, *, allow_variable_creation: bool = False,
                 checking_variables: bool = False):
        self.name = name
        with FuncGraph._symbol_lock:
            self.symbol = unique_name(FuncGraph._symbols, symbol_for(name))
        self.context = tracing_context()
        self.allow_variable_creation = allow_variable_creation
        # the second trace of a first call that created variables, made only to check that
        # a later call would create none (TensorFlow traces such a first call twice, too)
        self.checking_variables = checking_variables
        self.origin = user_location()
        with self.context, ir.Location.unknown():
            self.module = ir.Module.create()
            # the op func.FuncOp's builder makes, without its Python or OpView (~40 us a trace)
            self.func = _create("func.func", attributes={
                "sym_name": ir.StringAttr.get(self.symbol),
                "function_type": ir.TypeAttr.get(ir.FunctionType.get([], []))}, regions=1,
                ip=ir.InsertionPoint(self.module.body))
            self.block = self.func.regions[0].blocks.append()
        self.scope = Scope(None, f"the trace of '{name}'")
        self._blocks = [self.block]
        self._insertion = [ir.InsertionPoint(self.block)]  # at the end of each of _blocks
        self._locations: dict[tuple[str, int], ir.Location] = {}
        self._plain: dict[tuple, tuple] = {}  # see _emit_plain
        self.inputs: list[SymbolicTensor] = []
        # ("variable", Variable) | ("tensor", SymbolicTensor of an enclosing trace) |
        # ("constant", a large eager Tensor, snapshotted: see LARGE_CONSTANT_BYTES)
        self.extra_args: list[tuple[str, object]] = []
        self._extra_index: dict[int, ir.Value] = {}
        self._keep_alive: list = []
        self._constants: dict[int, SymbolicTensor] = {}
        self._constant_ops = ConstantOps(self.block)  # (trace_constants.py)
        self.names: collections.Counter = collections.Counter()
        self.callbacks: dict[str, Callable] = {}
        self.callees: set[str] = {self.symbol}
        self.created_variables: list = []
        self.replay_log = recording.ReplayLog()  # what a replay of it needs (its writes...)
        self.finalized = False
        self.result_dtypes: tuple = ()  # set by `finalize`

    # -- values -----------------------------------------------------------------------------

    def location(self, origin: tuple[str, int] | None = None) -> ir.Location:
        """The MLIR location of the user's code being traced (`origin`, if the caller has
        already looked it up: one stack walk per op instead of four); one per line."""
        origin = origin or user_location()
        loc = self._locations.get(origin)
        if loc is None:
            loc = self._locations[origin] = ir.Location.file(origin[0], origin[1], 0,
                                                             context=self.context)
        return loc

    def wrap(self, value: ir.Value, name: str, ttype: IRType | None = None,
             origin: tuple[str, int] | None = None) -> SymbolicTensor:
        return SymbolicTensor(self, value, ttype or type_from_mlir(value.type),
                              unique_name(self.names, name), origin)

    def add_input(self, ttype: IRType, name: str,
                  origin: tuple[str, int] | None = None) -> ir.Value:
        with self.context:
            return self.block.add_argument(type_to_mlir(ttype), self.location(origin))

    def placeholder(self, ttype: TensorType, name: str,
                    definition: tuple[str, int] | None = None) -> SymbolicTensor:
        """A parameter of the function. Its IR location is the function's `definition`
        (file, line), never the caller's line: the traced module keys the compile cache,
        and the same function called from elsewhere must find its code there."""
        t = self.wrap(self.add_input(ttype, name, definition or ("<unknown>", 0)), name, ttype)
        self.inputs.append(t)
        return t

    def resolve(self, t: Tensor, origin: tuple[str, int] | None = None) -> ir.Value:
        """The SSA value for a tensor used in this graph (capturing it if needed)."""
        if not isinstance(t, SymbolicTensor):
            return self._constant(t, origin)
        if t._graph is self:
            if t._graph.finalized:
                raise _out_of_scope(t)
            if not self.scope.encloses(t._scope):
                raise OutOfScopeError(
                    f"{t!r} was created inside {t._scope.what} (at {t.where()}) and is used "
                    "outside it. Values leave a branch or loop body only as its outputs: "
                    "return it from the branch/body function; in a Python `if`/`for`/"
                    "`while` on a tensor, assign it to a variable (a Python list appended "
                    "to in a loop cannot carry it out: collect with em.TensorArray).")
            return t._ir
        if t._graph.finalized or t._graph not in active_graphs():
            raise _out_of_scope(t)
        return self._capture("tensor", t, t._ttype)

    def capture_variable(self, variable) -> ir.Value:
        return self._capture("variable", variable, ResourceType(variable._type))

    def captures_of(self, callee: "FuncGraph") -> list[ir.Value]:
        """The operands a call of `callee` passes after its arguments: what `callee`
        captured, captured here in turn. The caller writes what `callee` writes."""
        self.replay_log.called(callee.replay_log)
        return [self.capture_variable(obj) if kind == "variable" else self.resolve(obj)
                for kind, obj in callee.extra_args]

    def _capture(self, kind: str, obj, ttype: IRType,
                 origin: tuple[str, int] | None = None) -> ir.Value:
        key = id(obj)
        if key not in self._extra_index:
            self._keep_alive.append(obj)
            self.extra_args.append((kind, obj))
            self._extra_index[key] = self.add_input(ttype, getattr(obj, "_name", kind), origin)
        return self._extra_index[key]

    def _constant(self, t: Tensor, origin: tuple[str, int] | None = None) -> ir.Value:
        key = id(t)
        if key not in self._constants:
            self._keep_alive.append(t)
            value = t._value
            if value.nbytes > LARGE_CONSTANT_BYTES and value.dtype.kind in _LIFTABLE_KINDS:
                snapshot = Tensor(frozen(value), t._dtype)
                ttype = TensorType(t._dtype, value.shape)
                arg = self._capture("constant", snapshot, ttype, origin)
                self._constants[key] = self.wrap(arg, "Const", ttype, origin)
                return arg
            result, ttype = self._constant_ops.emit(t, self.location(origin))
            self._constants[key] = self.wrap(result, "Const", ttype, origin)
        return self._constants[key]._ir

    # -- ops --------------------------------------------------------------------------------

    def apply(self, spec: type[Op], operands: Sequence[Tensor], attrs: dict):
        """Emits `spec` at the current insertion point; returns symbolic results."""
        origin = user_location()
        values, types = [], []
        for t in operands:
            if type(t) is SymbolicTensor and t._graph is self and t._scope is self.scope \
                    and not self.finalized:  # what `resolve` checks, in its commonest case
                values.append(t._ir)
                types.append(t._ttype)
                continue
            values.append(self.resolve(t, origin))
            types.append(t._ttype if isinstance(t, SymbolicTensor)
                         else self._constants[id(t)]._ttype)
        if attrs or spec.uses_values:
            return self.apply_on_values(spec, values, attrs, types, origin)
        return self._emit_plain(spec, values, types, origin)

    def apply_with_float(self, spec: type[Op], x: SymbolicTensor, y: float):
        """`apply(spec, [x, y])` for a Python float `y` that math_ops found converts to a
        constant of x's dtype, without an eager tensor of it; None (use `apply`) unless `x`
        is of this graph's current scope, this graph is tracing and no tape records."""
        graphs = thread_state.graphs
        if self.finalized or x._scope is not self.scope or not graphs or graphs[-1] is not self \
                or recording.recording():
            return None
        origin = user_location()
        loc = self.location(origin)
        constant, ttype = self._constant_ops.emit_float(y, x._dtype, loc)
        self.names["Const"] += 1  # as `_constant` names (wraps) it
        return self._emit_plain(spec, [x._ir, constant], (x._ttype, ttype), origin, loc)

    def _emit_plain(self, spec: type[Op], values: list, types: Sequence[IRType],
                    origin: tuple[str, int], loc: ir.Location | None = None):
        """`apply_on_values` for an op given no attributes, whose inference reads no operand
        values: what it infers is remembered per (spec, operand types) by their identities
        (`_plain` keeps the types alive, so their ids stay theirs)."""
        key = (spec, *map(id, types))
        known = self._plain.get(key)
        loc = loc or self.location(origin)
        if known is None:
            known = self._plain[key] = (*inferred_plain(spec, values, types, loc),
                                        spec.name.split(".", 1)[1], tuple(types))
        result_types, mlir_types, mlir_attrs, base, _ = known
        op = _create(spec.name, mlir_types, values, mlir_attrs, None, 0, loc,
                     self._insertion[-1])
        results = (op.result,) if len(result_types) == 1 else op.results
        return self._wrapped(base, results, result_types, origin)

    def apply_on_values(self, spec: type[Op], values: Sequence[ir.Value], attrs: dict,
                        types: Sequence[IRType] | None = None,
                        origin: tuple[str, int] | None = None):
        """Like `apply`, for operands that are already SSA values of this graph (`types`:
        their ember types, and `origin`, the user's file and line, if known)."""
        origin = origin or user_location()
        out, out_types = emit_typed(spec, values, attrs, loc=self.location(origin),
                                    operand_types=types, ip=self._insertion[-1])
        return self._wrapped(spec.name.split(".", 1)[1], out, out_types, origin)

    def _wrapped(self, base: str, results, types: Sequence[IRType], origin: tuple[str, int]):
        """An op's results as symbolic tensors named after `base`: one, a tuple, or None."""
        if len(results) == 1:
            n = self.names.get(base, 0)  # `unique_name`, inlined: once per op
            self.names[base] = n + 1
            return SymbolicTensor(self, results[0], types[0], f"{base}_{n}" if n else base,
                                  origin)
        return tuple(self.wrap(v, base, t, origin) for v, t in zip(results, types)) \
            if results else None

    @contextlib.contextmanager
    def region(self, block: ir.Block, what: str, scope: Scope | None = None):
        """Traces into `block` (a branch or loop body) for the duration of the block;
        yields its scope, which a later `region(block, what, scope)` enters again."""
        self._blocks.append(block)
        self._insertion.append(ir.InsertionPoint(block))
        outer, self.scope = self.scope, scope or Scope(self.scope, what)
        try:
            yield self.scope
        finally:
            self._blocks.pop()
            self._insertion.pop()
            self.scope = outer

    def insertion_point(self) -> ir.InsertionPoint:
        return ir.InsertionPoint(self._blocks[-1])

    # -- finishing ------------------------------------------------------------------------

    def finalize(self, results: Sequence[Tensor]) -> None:
        """Adds the `func.return` of `results`, fixes the function type and verifies."""
        values = [self.resolve(t) for t in results]
        self.result_dtypes = tuple(t._dtype for t in results)
        with self.context, ir.InsertionPoint(self.block), ir.Location.unknown():
            func.ReturnOp(values)
            inputs = [a.type for a in self.block.arguments]
            self.func.attributes["function_type"] = ir.TypeAttr.get(
                ir.FunctionType.get(inputs, [v.type for v in values]))
        self.finalized = True


def eager_use_error(t: SymbolicTensor) -> OutOfScopeError:
    """The error for a symbolic tensor reaching eager code."""
    if t._graph.finalized:
        return _out_of_scope(t)
    return OutOfScopeError(f"{t!r} is symbolic (traced in '{t._graph.name}' at {t.where()}) "
                           "and cannot be used eagerly, e.g. inside em.init_scope()")


def _out_of_scope(t: SymbolicTensor) -> OutOfScopeError:
    return OutOfScopeError(
        f"{t!r} is out of scope: it was created while tracing '{t._graph.name}' (at "
        f"{t.where()}) and that trace has finished. A tensor made inside an em.function "
        "cannot be kept and used later: return it from the function instead, or keep state "
        "in an em.Variable.")
