"""Run-time checks: an op whose kernel rejects some input values raises the same error
compiled as eagerly (integer division by zero, a negative integer exponent, a gather index
out of range).

The check runs before the op, over the operand the kernel checks, as the kernel does (before
broadcasting: `x // y` raises when `y` holds a zero even where the result is empty):

  1. loops over the operand reduce it to "is any element bad" (an or-reduction, which
     LLVM vectorises), or, when the message names the value, to (any bad, the first bad
     value in row-major order: the element the kernel reports); they carry scalars, so
     the check allocates nothing;
  2. `scf.if` on that flag calls the site's error function `@ember_error_<k>(i64 value)`,
     a private declaration that carries the error's class, op, message (`{}` stands for the
     value) and the op's location as attributes.

The CPU backend defines each `@ember_error_<k>` to unwind the native call and report
status k (backends/cpu/native.py); the runtime raises the error those attributes describe.
A constant operand is checked here instead, once: no check is emitted when it has no bad
element. Upstream has no equivalent (`cf.assert` aborts the process).

Before (`x // y` on i32):
    %q = "ember.floordiv"(%x, %y) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
After:
    %bad = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %false) -> (i1) {
      %e = tensor.extract %y[%i] : tensor<4xi32>
      %z = arith.cmpi eq, %e, %c0_i32 : i32
      %o = arith.ori %acc, %z : i1
      scf.yield %o : i1
    }
    scf.if %bad { func.call @ember_error_0(%c0_i64) : (i64) -> () }
    %q = linalg.generic ...
"""

from __future__ import annotations

import json
from typing import Callable

import numpy as np
from mlir import ir
from mlir.dialects import arith, func, scf, tensor

from ember.dialects.ember import elements
from ember.dialects.ember.base import OpError
from ember.dialects.ember.types import TensorType
from ember.passes.conversions.ember_to_linalg.builders import signless
from ember.passes.conversions.ember_to_linalg.common import Lowering, enclosing, fresh_symbol
from ember.passes.conversions.runtime_attrs import (  # the sites' names (native.py reads them)
    ERROR_PREFIX, SHAPE_ATTRS, SITE_ATTRS, VALUED_ATTR)
from ember.dialects.ember.verifier import iter_ops, where
from ember.passes.ir_utils import as_operation, op_id, symbol_table

MAX_SHAPE_VALUES = 32  # run-time dims a shape site reports (backends/cpu/native.MAX_VALUES)


def shape_check(lw: Lowering, bad: ir.Value, valued: tuple[int, ...] = ()) -> None:
    """Emits, before the op being lowered, a call of a shape site when `bad` (an i1 the
    rule computed from run-time sizes) holds. The site reports every `?` dim of the op's
    operands; the runtime substitutes them into the operand types and re-runs the op's
    type inference, which raises exactly the error eager raises on such shapes
    (`shape_error`): the op, both shapes with their run-time sizes, the user's line.

    `valued`: operands (small, static, numeric) whose elements the site reports too, for
    an op whose inference reads operand values (`uses_values`: em.range's bounds, a
    reshape's shape operand); floats travel as the bits of their f64 value."""
    i64 = ir.IntegerType.get_signless(64)
    dims = []
    for k in valued:
        dims += _element_bits(lw.operands[k], lw.operand_types[k])
    for value, t in zip(lw.operands, lw.operand_types):
        if not isinstance(t, TensorType) or t.shape is None:
            continue
        for k, d in enumerate(t.shape):
            if d is None:
                size = tensor.DimOp(value, lw.index(k)).result
                dims.append(arith.IndexCastOp(i64, size).result)
    shaped = len(dims) <= MAX_SHAPE_VALUES
    if not shaped or not dims:
        dims = [arith.ConstantOp(i64, 0).result]
    site = _declare_site(lw, "OpShapeError", "operand shapes are incompatible at run time",
                         len(dims))
    if shaped:
        decl = _declaration(lw, site)
        decl.attributes[SHAPE_ATTRS[0]] = ir.StringAttr.get(
            json.dumps([str(t) for t in lw.operand_types]))
        decl.attributes[SHAPE_ATTRS[1]] = ir.StringAttr.get(json.dumps(
            {a.name: str(a.attr) for a in map(lw.op.attributes.__getitem__,
                                               range(len(lw.op.attributes)))}))
        decl.attributes[VALUED_ATTR] = ir.StringAttr.get(json.dumps(list(valued)))
    branch = scf.IfOp(bad)
    with ir.InsertionPoint(branch.then_block):
        func.CallOp([], ir.FlatSymbolRefAttr.get(site), dims)
        scf.YieldOp([])


def _element_bits(value: ir.Value, vtype: TensorType) -> list[ir.Value]:
    """Each element of a small static tensor as an i64: integers extended by their
    signedness, floats as the bits of their f64 value."""
    i64, f64 = ir.IntegerType.get_signless(64), ir.F64Type.get()
    out = []
    for flat in range(vtype.num_elements):
        index, rest = [], flat
        for d in reversed(vtype.shape):
            index.insert(0, lw_index(rest % d))
            rest //= d
        x = signless(tensor.ExtractOp(value, index).result)
        if vtype.dtype.is_floating:
            x = x if vtype.dtype.bits == 64 else arith.ExtFOp(f64, x).result
            x = arith.BitcastOp(i64, x).result
        elif vtype.dtype.bits < 64:
            wide = arith.ExtUIOp if vtype.dtype.kind in ("uint", "bool") else arith.ExtSIOp
            x = wide(i64, x).result
        out.append(x)
    return out


def lw_index(i: int) -> ir.Value:
    return arith.ConstantOp(ir.IndexType.get(), i).result


def _values_of(types: list, valued: list[int], bits) -> tuple:
    """The operand values a shape site reported (`bits`, in order), as numpy arrays."""
    values = [None] * len(types)
    for k in valued:
        t = types[k]
        raw = np.array([next(bits) for _ in range(t.num_elements)], np.int64)
        array = raw.view(np.float64) if t.dtype.is_floating else raw
        values[k] = array.astype(t.dtype.np_dtype).reshape(t.shape)
    return tuple(values)


def shape_error(site: dict, values: list[int]) -> OpError:
    """The error the op of a shape site (shape_check) raises on its operand types with
    the `?` dims replaced by `values`, in order (after the values of its `valued`
    operands, which its inference then reads)."""
    from ember.dialects.ember.base import REGISTRY, OpShapeError
    from ember.dialects.ember.convert import attr_from_mlir
    from ember.dialects.ember.irdl import default_context
    from ember.dialects.ember.types import parse_type
    spec = REGISTRY.get(site["op"])
    valued = json.loads(site.get("valued", "[]"))
    declared = [parse_type(text) for text in json.loads(site["types"])]
    sizes = iter(values)
    operand_values = _values_of(declared, valued, sizes) if valued else None
    types = []
    for t in declared:
        if isinstance(t, TensorType) and t.shape is not None:
            t = TensorType(t.dtype, tuple(next(sizes) if d is None else d for d in t.shape))
        types.append(t)
    if spec is not None:
        with default_context():
            raw = json.loads(site["attrs"])
            attrs = {k: attr_from_mlir(spec.name, k, slot, ir.Attribute.parse(raw[k]))
                     for k, slot in spec.attrs.items() if k in raw}
        try:
            spec.infer_types(tuple(types), spec.normalize_attrs(attrs), operand_values)
        except OpError as e:
            return e
    shapes = ", ".join(str(t) for t in types)
    return OpShapeError(site["op"], f"{site['message']}: {shapes}")


def check(lw: Lowering, value: ir.Value, vtype: TensorType,
          is_bad: Callable[[ir.Value], ir.Value], bad_numpy: Callable[[np.ndarray], np.ndarray],
          message: str, error: str = "InvalidArgumentError",
          extra: tuple = ()) -> None:
    """Emits, before the op being lowered, a check that raises `error` with `message` if
    any element `x` of `value` has `is_bad(x)` (an i1). `bad_numpy` is the same test on
    numpy arrays, for a constant `value`. A `{}` in the message stands for the first bad
    value; further `{}`s for the i64 values `extra` (a size known only at run time)."""
    constant = _constant(value, vtype)
    if constant is not None and not np.any(bad_numpy(constant)):
        return
    i1, i64 = ir.IntegerType.get_signless(1), ir.IntegerType.get_signless(64)
    false = arith.ConstantOp(i1, 0).result
    site = _declare_site(lw, error, message, 1 + len(extra))
    if "{}" not in message:
        (failed,) = _scan(lw, value, vtype, lambda x, found: [
            arith.OrIOp(found, is_bad(x)).result], [false])
        detail = arith.ConstantOp(i64, 0).result
    else:
        wide = arith.ExtUIOp if vtype.dtype.kind == "uint" else arith.ExtSIOp

        def first_bad(x, found, first):
            bad = is_bad(x)
            x = x if vtype.dtype.bits == 64 else wide(i64, x).result
            take = arith.AndIOp(bad, arith.XOrIOp(found, _true()).result).result
            return [arith.OrIOp(found, bad).result, arith.SelectOp(take, x, first).result]
        failed, detail = _scan(lw, value, vtype, first_bad,
                               [false, arith.ConstantOp(i64, 0).result])
    branch = scf.IfOp(failed)
    with ir.InsertionPoint(branch.then_block):
        func.CallOp([], ir.FlatSymbolRefAttr.get(site), [detail, *extra])
        scf.YieldOp([])


def fail(lw: Lowering, error: OpError) -> list[ir.Value]:
    """Raises `error` when the op being lowered runs, and returns placeholders for its
    results (never read: the site unwinds).

    For an op that the operand types of this compile make invalid although the traced
    types were not (a specialisation's static shapes: `x[-1]` on a dim of size 0, argmax
    over an empty dim): eager raises the type inference's error when it reaches the op,
    and only then — the op may sit in a branch not taken, or after an op that fails
    first — so compiled code raises it there too, not the compiler."""
    i64 = ir.IntegerType.get_signless(64)
    site = _declare_site(lw, type(error).__name__, error.detail)
    func.CallOp([], ir.FlatSymbolRefAttr.get(site), [arith.ConstantOp(i64, 0).result])
    return [_placeholder(t) for t in lw.result_types]


TERMINATORS = frozenset({"func.return", "scf.yield", "scf.condition"})


def cut_after(failing: list[ir.Operation]) -> set[int]:
    """Erases the ops after each op of `failing` in its block, which never run: the op
    raises when it runs (`fail`), as eager does there. Left in, they would see its
    placeholder results, sized 0 where a dim is `?`, and sizes folded from those can make
    IR that MLIR rejects (a slice at offset -1 of an empty dim, a cast of 1x4 to 1x6).
    The block's terminator passes placeholders of its operands' types instead. Returns the
    ids (`op_id`) of the erased ops and of the ops they held."""
    erased: set[int] = set()
    for op in failing:
        if op_id(op) in erased:
            continue
        ops = list(op.block.operations)
        ids = [op_id(o.operation) for o in ops]
        start, terminator = ids.index(op_id(op)), ops[-1].operation
        later = [o.operation for o in ops[start + 1:-1]]
        if terminator.name not in TERMINATORS:
            continue
        dead = {op_id(op), *ids[start + 1:-1]}
        stale = [i for i, v in enumerate(terminator.operands)
                 if isinstance(v.owner, (ir.OpView, ir.Operation))
                 and op_id(as_operation(v.owner)) in dead]
        if not later and not stale:
            continue
        with ir.InsertionPoint(terminator), terminator.location:
            values = [_placeholder_of(terminator.operands[i].type) for i in stale]
        if any(v is None for v in values):
            continue  # a type with no placeholder: left as it was
        for i, value in zip(stale, values):
            terminator.operands[i] = value
        for o in reversed(later):
            erased.update([op_id(o), *(op_id(n) for n in iter_ops(o))])
            o.erase()
    return erased


def _placeholder_of(t: ir.Type) -> ir.Value | None:
    """A value of MLIR type `t` for code that never runs, or None for a type it cannot
    make."""
    if isinstance(t, ir.RankedTensorType):
        from ember.dialects.ember.convert import type_from_mlir
        try:
            return _placeholder(type_from_mlir(t))
        except TypeError:
            return None
    if isinstance(t, (ir.IntegerType, ir.IndexType)):
        return arith.ConstantOp(t, 0).result
    if isinstance(t, (ir.F16Type, ir.BF16Type, ir.F32Type, ir.F64Type)):
        return arith.ConstantOp(t, 0.0).result
    return None


def _placeholder(t: TensorType) -> ir.Value:
    from ember.passes.conversions.ember_to_linalg.common import element_type
    zero = ir.IndexType.get()
    sizes = [arith.ConstantOp(zero, 0).result if d is None else d for d in t.shape]
    return tensor.EmptyOp(sizes, element_type(t.dtype)).result


def _scan(lw: Lowering, value: ir.Value, vtype: TensorType, step: Callable,
          inits: list) -> list:
    """Folds `step(element, *carried) -> carried` over `value` in row-major order: nested
    `scf.for` loops carrying scalars (no buffer; LLVM vectorises an or-reduction)."""
    shape = vtype.shape
    rank = len(shape)
    sizes = [lw.index(d) if d is not None else tensor.DimOp(value, lw.index(i)).result
             for i, d in enumerate(shape)]
    zero, one = lw.index(0), lw.index(1)

    def loop(dim: int, indices: list, carried: list) -> list:
        if dim == rank:
            return step(signless(tensor.ExtractOp(value, indices).result), *carried)
        for_op = scf.ForOp(zero, sizes[dim], one, carried)
        with ir.InsertionPoint(for_op.body):
            scf.YieldOp(loop(dim + 1, indices + [for_op.induction_variable],
                             list(for_op.inner_iter_args)))
        return list(for_op.results)
    return loop(0, [], inits)


def _true() -> ir.Value:
    return arith.ConstantOp(ir.IntegerType.get_signless(1), 1).result


def _constant(value: ir.Value, vtype: TensorType):
    """The numpy value of `value` if a constant defines it, else None."""
    owner = value.owner
    op = as_operation(owner)
    if not isinstance(op, ir.Operation) or op.name not in ("arith.constant",
                                                           "ember.constant"):
        return None
    try:
        return elements.to_numpy(op.attributes["value"], vtype)
    except (TypeError, ValueError, KeyError):
        return None


def _declaration(lw: Lowering, name: str) -> ir.Operation:
    fn = enclosing(lw.op, "func.func")
    module = enclosing(fn, "builtin.module")
    return symbol_table(module)[name]


def declare_site(lw: Lowering, error: str, message: str, count: int) -> str:
    """Declares an error site reporting `count` i64 values for the op being lowered (the
    k-th `{}` of `message` stands for the k-th value); returns its name, for a rule that
    calls it where its own loops find the bad values (scatter.py)."""
    return _declare_site(lw, error, message, count)


def _declare_site(lw: Lowering, error: str, message: str, count: int = 1) -> str:
    """Declares `@ember_error_<k>(i64 x count)` for the op being lowered; returns its name."""
    fn, name = fresh_symbol(lw.op, ERROR_PREFIX)
    with ir.InsertionPoint(fn):
        decl = func.FuncOp(name, ir.FunctionType.get(
            [ir.IntegerType.get_signless(64)] * count, []), visibility="private")
    values = (error, lw.op.name, message, where(lw.loc))
    for key, text in zip(SITE_ATTRS, values):
        decl.attributes[key] = ir.StringAttr.get(text)
    return name
