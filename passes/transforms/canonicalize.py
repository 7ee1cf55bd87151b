"""ember-canonicalize: algebraic identities and constant control flow, to a fixed point.

Upstream `canonicalize` runs each op's patterns and folders; IRDL ops have none, so ember's
live here, each a small function with its equation. Identities wrong under NaN, inf or -0.0
are not applied to floats: `x * 0 -> 0` (NaN * 0 is NaN), `x - x -> 0` (inf - inf is NaN),
`x + 0.0 -> x` (-0.0 + 0.0 is +0.0); `x + (-0.0)` and `x - (+0.0)` are exact.

The patterns are written with the rewrite API (passes/rewrite.py), whose driver applies
them through MLIR's walk driver and pattern applicator.

Algorithm:
  1. Walk every function's ops in post-order (nested ops and producers first, so chains
     collapse in one walk); a rewrite erases only the visited op and ops nested in it.
  2. The op's first matching pattern (by benefit, then as listed) gives the values replacing
     its results, each of exactly the result's type (a pattern that cannot keep the type
     does not match); count its name.
  3. After each walk erase pure ops left without uses that cannot fail (dce.erase_dead).
  4. Repeat until no pattern matched or `max_iterations` walks ran.

Before:
    %n = "ember.neg"(%x) : (tensor<4xi32>) -> tensor<4xi32>
    %m = "ember.neg"(%n) : (tensor<4xi32>) -> tensor<4xi32>
    %z = "ember.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
    %s = "ember.add"(%z, %m) : (tensor<i32>, tensor<4xi32>) -> tensor<4xi32>
    return %s : tensor<4xi32>
After:
    return %x : tensor<4xi32>
"""

from __future__ import annotations

import dataclasses
from typing import Callable, ClassVar, Optional

import numpy as np
from mlir import ir

from ember.dialects.ember.elementwise.binary import AddOp, DivOp, MulOp, SubOp
from ember.dialects.ember.types import parse_type
from ember.passes.ir_utils import decoded_attrs, is_splat
from ember.passes.rewrite import (PatternPass, commuted, constant_of, defined_by, rewrite,
                                  same_type)


def _with_constant(op: ir.Operation, neutral: Callable) -> Optional[list]:
    """[x] for op(x, c) (or op(c, x) when the op commutes, by its spec) where x is numeric,
    has the result's type (no broadcasting lost) and `neutral(c as float64, x is a float)`
    holds."""
    for x, c in commuted(op):
        value, dtype = constant_of(c), parse_type(str(x.type)).dtype
        if value is None or value.size == 0 or not same_type(x, op.results[0]):
            continue
        if not any(value.strides):  # a splat is a broadcast view: look at one element only
            value = value.reshape(-1)[:1]
        if dtype.is_numeric and neutral(value.astype(np.float64), dtype.is_floating):
            return [x]
    return None


# add(x, 0) -> x   (integers; floats only for -0.0, since -0.0 + +0.0 is +0.0)
@rewrite(AddOp)
def _add_zero(op, rw):
    return _with_constant(op, lambda v, is_float: bool(np.all(v == 0)) and bool(
        np.all(np.signbit(v) == is_float)))


# sub(x, 0) -> x   (floats only for +0.0, since -0.0 - -0.0 is +0.0)
@rewrite(SubOp)
def _sub_zero(op, rw):
    return _with_constant(op, lambda v, _: bool(np.all(v == 0) and not np.any(np.signbit(v))))


# mul(x, 1) -> x   (exact for every float too, NaN and -0.0 included)
@rewrite(MulOp)
def _mul_one(op, rw):
    return _with_constant(op, lambda v, _: bool(np.all(v == 1)))


# div(x, 1) -> x   (floats: integer division gives floats, so x's type is not kept)
@rewrite(DivOp)
def _div_one(op, rw):
    return _with_constant(op, lambda v, _: bool(np.all(v == 1)))


def _int_zeros(op: ir.Operation, rw) -> Optional[list]:
    t = parse_type(str(op.results[0].type))
    ok = t.dtype.is_integer and t.is_static
    return [rw.constant(np.zeros(t.shape, t.dtype.np_dtype), op.results[0])] if ok else None


# mul(x, 0) -> 0   (integers only: NaN * 0 and inf * 0 are NaN)
@rewrite(MulOp)
def _mul_zero(op, rw):
    return _int_zeros(op, rw) if any(is_splat(v, 0) for v in op.operands) else None


# sub(x, x) -> 0   (integers only: inf - inf and NaN - NaN are NaN)
@rewrite(SubOp)
def _sub_self(op, rw):
    return _int_zeros(op, rw) if op.operands[0] == op.operands[1] else None


def _same_or_none(x: ir.Value, op: ir.Operation) -> Optional[list]:
    return [x] if same_type(x, op.results[0]) else None


# neg(neg(x)) -> x
@rewrite("ember.neg")
def _neg_neg(op, rw):
    inner = defined_by(op.operands[0], "ember.neg")
    return None if inner is None else _same_or_none(inner.operands[0], op)


def _recreate(op: ir.Operation, operand: ir.Value, attrs: dict) -> Optional[list]:
    """`op` with a new operand and attributes, keeping its declared result type."""
    with ir.InsertionPoint(op), op.location:
        new = ir.Operation.create(op.name, results=[op.results[0].type], operands=[operand],
                                  attributes=attrs)
    return [new.results[0]]


# transpose(x, perm = identity) -> x
@rewrite("ember.transpose")
def _transpose_identity(op, rw):
    perm = decoded_attrs(op)["perm"]
    return _same_or_none(op.operands[0], op) if perm == tuple(range(len(perm))) else None


# transpose(transpose(x, p), q) -> transpose(x, [p[i] for i in q])   (x when that is identity)
@rewrite("ember.transpose")
def _transpose_transpose(op, rw):
    if (inner := defined_by(op.operands[0], "ember.transpose")) is None:
        return None
    inner_perm, x = decoded_attrs(inner)["perm"], inner.operands[0]
    composed = [inner_perm[i] for i in decoded_attrs(op)["perm"]]
    if composed == list(range(len(composed))) and same_type(x, op.results[0]):
        return [x]
    return _recreate(op, x, {"perm": ir.DenseI64ArrayAttr.get(composed)})


# reshape(reshape(x, s1), s2) -> reshape(x, s2)
@rewrite("ember.reshape")
def _reshape_reshape(op, rw):
    inner = defined_by(op.operands[0], "ember.reshape")
    return None if inner is None else \
        _recreate(op, inner.operands[0], {"shape": op.attributes["shape"]})


# reshape(x, shape(x)) -> x;  broadcast_to(x, shape(x)) -> x;  cast(x, dtype(x)) -> x
def _same_static_type(op):
    x = op.operands[0]
    static = parse_type(str(x.type)).is_static or op.name == "ember.cast"
    return _same_or_none(x, op) if static else None


@rewrite("ember.reshape")
def _reshape_noop(op, rw):
    return _same_static_type(op)


@rewrite("ember.broadcast_to", name="broadcast-noop")
def _broadcast_to_noop(op, rw):
    return _same_static_type(op)


@rewrite("ember.cast")
def _cast_noop(op, rw):
    return _same_static_type(op)


# select(true, a, b) -> a;  select(false, a, b) -> b
@rewrite("ember.select")
def _select_constant(op, rw):
    cond, a, b = op.operands
    picked = a if is_splat(cond, True) else b if is_splat(cond, False) else None
    return None if picked is None else _same_or_none(picked, op)


def _constant_bool(value: ir.Value) -> Optional[bool]:
    """The value of an i1 from `arith.constant` or `tensor.extract` of a 0-d ember.constant."""
    if (op := defined_by(value, "arith.constant")) is not None:
        attr = op.attributes["value"]
        return bool(attr.value) if isinstance(attr, (ir.BoolAttr, ir.IntegerAttr)) else None
    if (op := defined_by(value, "tensor.extract")) is not None and len(op.operands) == 1:
        array = constant_of(op.operands[0])
        return None if array is None or array.size != 1 else bool(array.reshape(-1)[0])
    return None


def _inline_before(block: ir.Block, op: ir.Operation) -> list:
    """Moves `block`'s ops (all but its terminator) before `op`; the terminator's operands."""
    *body, terminator = [o.operation for o in block.operations]
    for inner in body:
        inner.move_before(op)
    return list(terminator.operands)


# scf.if %true {A} else {B} -> A;  scf.if %false {A} else {B} -> B
@rewrite("scf.if")
def _if_constant(op, rw):
    if (taken := _constant_bool(op.operands[0])) is None:
        return None
    region = op.regions[0 if taken else 1]
    return _inline_before(region.blocks[0], op) if len(region.blocks) else []  # else: absent


# scf.while (%a = %init) {B; scf.condition(%false) %v} -> B[%a := %init]; results are %v
@rewrite("scf.while")
def _while_false(op, rw):
    block = op.regions[0].blocks[0]
    if _constant_bool(list(block.operations)[-1].operands[0]) is not False:
        return None
    for arg, init in zip(block.arguments, op.operands):
        arg.replace_all_uses_with(init)
    return _inline_before(block, op)[1:]


@dataclasses.dataclass(frozen=True)
class CanonicalizePass(PatternPass):
    name: ClassVar[str] = "ember-canonicalize"
    # one benefit: an op's patterns are tried in this order
    patterns: ClassVar[tuple] = (
        _add_zero, _sub_zero, _sub_self, _mul_one, _mul_zero, _div_one, _neg_neg,
        _transpose_identity, _transpose_transpose, _reshape_reshape, _reshape_noop,
        _broadcast_to_noop, _cast_noop, _select_constant, _if_constant, _while_false)
    max_iterations: int = 16
