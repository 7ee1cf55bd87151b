"""The reference interpreter: runs `func.func`s of an ember module with the ops' numpy kernels.

It is the executable meaning of the IR — the thing compiled code is tested against. Each
function body is compiled once into a list of Python steps (attributes decoded, kernels
looked up), then run on numpy values. Besides ember ops it runs the upstream ops the tracer
emits: `func.call`/`func.return`, `scf.if`/`scf.while`/`scf.for`/`scf.yield`/`scf.condition`,
`tensor.concat`, `tensor.extract`, `tensor.from_elements`, `tensor.cast`, `arith.constant`,
`arith.index_cast`.

Values: tensors are numpy arrays; scalars (i1, index) are Python ints/bools; a variable
argument (`!ember.resource<...>`) is any object with a `value` attribute holding its array.
Calls of functions the module only declares go to `callbacks[symbol]` (host callbacks).
"""

from __future__ import annotations

import sys
import threading
from typing import Any, Callable, Sequence

import numpy as np
from mlir import ir

from ember.dialects.ember.base import (REGISTRY, AssertionFailedError, InvalidArgumentError,
                                       OpError, Trait)
from ember.dialects.ember.convert import attr_from_mlir, type_from_mlir
from ember.dialects.ember.errors import EmberError
from ember.dialects.ember.types import TensorType
from ember.dialects.ember.verifier import where
from ember.passes.ir_utils import symbol_table


class InterpreterError(EmberError, RuntimeError):
    """The interpreter met IR it cannot run (an unknown op, a missing callee)."""


class _Return(Exception):
    def __init__(self, values):
        self.values = values


Step = Callable[[dict], None]


def _where(op: ir.Operation) -> str:
    return where(op.location)


class Interpreter:
    """Runs the functions of one module; compile plans are cached per function."""

    def __init__(self, module: ir.Module, callbacks: dict[str, Callable] | None = None,
                 streams: dict[str, Any] | None = None):
        self.module = module
        self.callbacks = dict(callbacks or {})
        self.streams = streams or {}
        self._funcs: dict[str, ir.Operation] = {
            name: op for name, op in symbol_table(module).items() if op.name == "func.func"}
        self._plans: dict[str, tuple[list, list[Step]] | None] = {}
        self._types: dict = {}  # MLIR type -> ember type (printing a type is the slow part)
        self._attrs: dict = {}  # (op, name, MLIR attribute) -> its decoded value
        self._lock = threading.RLock()

    def _attr(self, op_name: str, key: str, slot, attr: ir.Attribute):
        """The attribute's Python value, decoded once per distinct attribute (attributes
        are uniqued: a trace repeating a constant has one)."""
        cache_key = (op_name, key, attr)
        found = self._attrs.get(cache_key)
        if found is None:
            found = self._attrs[cache_key] = attr_from_mlir(op_name, key, slot, attr)
        return found

    def _type(self, t: ir.Type):
        found = self._types.get(t)
        if found is None:
            found = self._types[t] = type_from_mlir(t)
        return found

    def call(self, name: str, args: Sequence) -> tuple:
        """Runs function `name` on `args`; returns its results as a tuple."""
        plan = self._plan(name)
        if plan is None:
            if name not in self.callbacks:
                raise InterpreterError(f"function @{name} is only declared and no host "
                                       "callback is bound to it")
            out = self.callbacks[name](*args)
            return tuple(out) if isinstance(out, (tuple, list)) else (out,)
        params, steps = plan
        if len(args) != len(params):
            raise InterpreterError(f"@{name} takes {len(params)} arguments, got {len(args)}")
        env = dict(zip(params, args))
        return self._run_block(steps, env)

    def _plan(self, name: str):
        if name in self._plans:
            return self._plans[name]
        with self._lock:  # concurrent first calls compile the plan once
            return self._plan_locked(name)

    def _plan_locked(self, name: str):
        if name not in self._plans:
            if name not in self._funcs:
                if name in self.callbacks:
                    return None
                raise InterpreterError(f"no function @{name} in the module")
            fn = self._funcs[name]
            if not fn.regions[0].blocks:
                self._plans[name] = None
            else:
                block = fn.regions[0].blocks[0]
                self._plans[name] = (list(block.arguments), self._compile_block(block))
        return self._plans[name]

    @staticmethod
    def _run_block(steps: list[Step], env: dict):
        try:
            for step in steps:
                step(env)
        except _Return as r:
            return r.values
        return ()

    # -- compilation ------------------------------------------------------------------------

    def _compile_block(self, block: ir.Block) -> list[Step]:
        return [self._compile_op(op.operation) for op in block.operations]

    def _compile_op(self, op: ir.Operation) -> Step:
        name = op.name
        if name in REGISTRY:
            return self._compile_spec(op)
        handler = _UPSTREAM.get(name)
        if handler is None:
            raise InterpreterError(f"{_where(op)}: the interpreter cannot run '{name}'")
        return handler(self, op)

    def _compile_spec(self, op: ir.Operation) -> Step:
        spec = REGISTRY[op.name]
        attrs = spec.normalize_attrs({k: self._attr(spec.name, k, slot, op.attributes[k])
                                      for k, slot in spec.attrs.items() if k in op.attributes})
        operands = list(op.operands)
        results = list(op.results)
        dtypes = [self._type(r.type).dtype for r in results]
        kernel = spec.reference
        if spec.has(Trait.SIDE_EFFECTING):
            return self._compile_effect(spec, op, operands, results, dtypes, attrs)

        operand_types = [self._type(v.type) for v in operands]
        operand_dtypes = [getattr(t, "dtype", None) for t in operand_types]
        # static operand types were checked when the op was built (the verifier): the
        # arrays have exactly those shapes, so only `?` dims need checking when it runs
        check = spec.uses_values or not all(isinstance(t, TensorType) and t.is_static
                                            for t in operand_types)

        def step(env):
            arrays = [env[v] for v in operands]
            # as eager dispatch does: the concrete shapes may break what `?` allowed
            if check:
                try:
                    spec.infer_types(tuple(TensorType(d, a.shape) for d, a in
                                           zip(operand_dtypes, arrays)),
                                     attrs, arrays if spec.uses_values else None)
                except OpError as e:
                    raise e.located(_where(op)) from None
            try:
                with np.errstate(all="ignore"):
                    out = kernel(*arrays, **attrs)
            except (ArithmeticError, IndexError, ValueError) as e:
                raise InvalidArgumentError(spec.name, str(e)).located(_where(op)) from None
            outs = out if isinstance(out, tuple) else (out,)
            for r, dt, value in zip(results, dtypes, outs):
                arr = np.asarray(value)
                env[r] = arr if arr.dtype == dt.np_dtype else arr.astype(dt.np_dtype)
        return step

    def _compile_effect(self, spec, op, operands, results, dtypes, attrs) -> Step:
        kernel = spec.reference
        if spec.name == "ember.read_variable":
            def read(env):
                env[results[0]] = env[operands[0]].value
            return read
        if spec.name == "ember.assert":
            def check(env):
                if not kernel(env[operands[0]], **attrs):
                    raise AssertionFailedError(spec.name, attrs["message"]).located(
                        _where(op))
            return check
        if spec.name == "ember.print":
            def show(env):
                stream = self.streams.get(attrs["stream"]) or getattr(sys, attrs["stream"])
                stream.write(kernel(env[operands[0]], **attrs))
            return show
        held = self._type(operands[0].type).value.dtype

        def assign(env):
            resource = env[operands[0]]
            with np.errstate(all="ignore"):
                new = np.asarray(kernel(resource.value, env[operands[1]]))
            resource.value = new.astype(held.np_dtype, copy=False)
        return assign


# -- upstream ops ---------------------------------------------------------------------------

def _func_return(interp: Interpreter, op: ir.Operation) -> Step:
    operands = list(op.operands)

    def step(env):
        raise _Return(tuple(env[v] for v in operands))
    return step


def _func_call(interp: Interpreter, op: ir.Operation) -> Step:
    callee = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
    operands, results = list(op.operands), list(op.results)

    def step(env):
        outs = interp.call(callee, [env[v] for v in operands])
        for r, value in zip(results, outs):
            env[r] = _as_result(r, value)
    return step


def _as_result(result: ir.Value, value):
    try:
        t = type_from_mlir(result.type)
    except TypeError:
        return value
    if isinstance(t, TensorType):
        arr = np.asarray(value)
        return arr if arr.dtype == t.dtype.np_dtype else arr.astype(t.dtype.np_dtype)
    return value


def _region_runner(interp: Interpreter, region: ir.Region):
    block = region.blocks[0]
    params = list(block.arguments)
    steps = interp._compile_block(block)
    return params, steps


def _yielded(steps, env):
    """Runs a region body ending in scf.yield/scf.condition; returns the terminator values."""
    try:
        for step in steps:
            step(env)
    except _Return as r:
        return r.values
    raise AssertionError("region without terminator")


def _scf_yield(interp: Interpreter, op: ir.Operation) -> Step:
    return _func_return(interp, op)


def _scf_if(interp: Interpreter, op: ir.Operation) -> Step:
    cond = op.operands[0]
    results = list(op.results)
    then_steps = _region_runner(interp, op.regions[0])[1]
    else_steps = _region_runner(interp, op.regions[1])[1] if op.regions[1].blocks else []

    def step(env):
        if bool(env[cond]):
            values = _yielded(then_steps, env)
        else:
            values = _yielded(else_steps, env) if else_steps else ()
        for r, v in zip(results, values):
            env[r] = v
    return step


def _scf_while(interp: Interpreter, op: ir.Operation) -> Step:
    inits, results = list(op.operands), list(op.results)
    before_params, before = _region_runner(interp, op.regions[0])
    after_params, after = _region_runner(interp, op.regions[1])

    def step(env):
        carried = [env[v] for v in inits]
        while True:
            env.update(zip(before_params, carried))
            cond, *forwarded = _yielded(before, env)
            if not bool(cond):
                break
            env.update(zip(after_params, forwarded))
            carried = list(_yielded(after, env))
        env.update(zip(results, forwarded))
    return step


def _scf_for(interp: Interpreter, op: ir.Operation) -> Step:
    lb, ub, stride, *inits = list(op.operands)
    results = list(op.results)
    params, body = _region_runner(interp, op.regions[0])

    def step(env):
        carried = [env[v] for v in inits]
        for i in range(int(env[lb]), int(env[ub]), int(env[stride])):
            env.update(zip(params, [i, *carried]))
            carried = list(_yielded(body, env))
        env.update(zip(results, carried))
    return step


def _scf_condition(interp: Interpreter, op: ir.Operation) -> Step:
    return _func_return(interp, op)


def _tensor_extract(interp: Interpreter, op: ir.Operation) -> Step:
    source, *indices = list(op.operands)
    result = op.results[0]

    def step(env):
        value = np.asarray(env[source])[tuple(int(env[i]) for i in indices)]
        env[result] = value.item() if value.dtype != object else value
    return step


def _tensor_from_elements(interp: Interpreter, op: ir.Operation) -> Step:
    operands, result = list(op.operands), op.results[0]
    t = type_from_mlir(result.type)

    def step(env):
        env[result] = np.array([env[v] for v in operands], dtype=t.dtype.np_dtype
                               ).reshape(t.shape)
    return step


def _tensor_cast(interp: Interpreter, op: ir.Operation) -> Step:
    source, result = op.operands[0], op.results[0]

    def step(env):
        env[result] = env[source]  # a static-information cast: the value is unchanged
    return step


def _arith_constant(interp: Interpreter, op: ir.Operation) -> Step:
    attr = op.attributes["value"]
    if not isinstance(attr, (ir.IntegerAttr, ir.FloatAttr, ir.BoolAttr)):
        raise InterpreterError(f"{_where(op)}: only scalar arith.constant is supported")
    value = bool(attr.value) if isinstance(attr, ir.BoolAttr) else attr.value
    result = op.results[0]

    def step(env):
        env[result] = value
    return step


def _arith_index_cast(interp: Interpreter, op: ir.Operation) -> Step:
    source, result = op.operands[0], op.results[0]

    def step(env):
        env[result] = int(env[source])
    return step


_UPSTREAM: dict[str, Callable[[Interpreter, ir.Operation], Step]] = {
    "func.return": _func_return,
    "func.call": _func_call,
    "scf.yield": _scf_yield,
    "scf.condition": _scf_condition,
    "scf.if": _scf_if,
    "scf.while": _scf_while,
    "scf.for": _scf_for,
    "tensor.extract": _tensor_extract,
    "tensor.from_elements": _tensor_from_elements,
    "tensor.cast": _tensor_cast,
    "arith.constant": _arith_constant,
    "arith.index_cast": _arith_index_cast,
}
