"""ember-canonicalize: algebraic identities and constant control flow, to a fixed point.

Upstream `canonicalize` runs each op's patterns and folders; IRDL ops have none, so ember's
live here, each a small function with its equation. Identities wrong under NaN, inf or -0.0
are not applied to floats: `x * 0 -> 0` (NaN * 0 is NaN), `x - x -> 0` (inf - inf is NaN),
`x + 0.0 -> x` (-0.0 + 0.0 is +0.0); `x + (-0.0)` and `x - (+0.0)` are exact.

Algorithm:
  1. Walk every function's ops in post-order (nested ops and producers first, so chains
     collapse in one walk); a rewrite erases only the visited op and ops nested in it.
  2. The op's first matching pattern gives the values replacing its results, each of exactly
     the result's type (a pattern that cannot keep the type does not match); count its name.
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

from ember.dialects.ember.types import parse_type
from ember.passes.base import Pass, Statistics
from ember.passes.ir_utils import (constant_of, decoded_attrs, is_splat, make_constant,
                                   replace_op, same_type, until_fixed_point)
from ember.passes.transforms.dce import erase_dead


@dataclasses.dataclass(frozen=True)
class CanonicalizePass(Pass):
    name: ClassVar[str] = "ember-canonicalize"
    per_function: ClassVar[bool] = True
    max_iterations: int = 16

    def run(self, module: ir.Module, stats: Statistics) -> None:
        def step(fn: ir.Operation) -> bool:
            changed = any([_rewrite(op, stats) for op in _post_order(fn)])
            erase_dead(fn)
            return changed
        until_fixed_point(module, step, self.max_iterations)


def _rewrite(op: ir.Operation, stats: Statistics) -> bool:
    for name, pattern in PATTERNS.get(op.name, ()):
        if (values := pattern(op)) is not None:
            assert all(same_type(v, r) for v, r in zip(values, op.results)), name
            replace_op(op, values)
            stats.add(name)
            return True
    return False


def _with_constant(op: ir.Operation, neutral: Callable, commutative: bool) -> Optional[list]:
    """[x] for op(x, c) (or op(c, x) when commutative) where x is numeric, has the result's
    type (no broadcasting lost) and `neutral(c as float64, x is a float)` holds."""
    lhs, rhs = op.operands
    for x, c in ((lhs, rhs), (rhs, lhs)) if commutative else ((lhs, rhs),):
        value, dtype = constant_of(c), parse_type(str(x.type)).dtype
        if value is None or value.size == 0 or not same_type(x, op.results[0]):
            continue
        if not any(value.strides):  # a splat is a broadcast view: look at one element only
            value = value.reshape(-1)[:1]
        if dtype.is_numeric and neutral(value.astype(np.float64), dtype.is_floating):
            return [x]
    return None


# add(x, 0) -> x   (integers; floats only for -0.0, since -0.0 + +0.0 is +0.0)
def _add_zero(op):
    return _with_constant(op, lambda v, is_float: bool(np.all(v == 0)) and bool(
        np.all(np.signbit(v) == is_float)), commutative=True)


# sub(x, 0) -> x   (floats only for +0.0, since -0.0 - -0.0 is +0.0)
def _sub_zero(op):
    return _with_constant(op, lambda v, _: bool(np.all(v == 0) and not np.any(np.signbit(v))),
                          commutative=False)


# mul(x, 1) -> x   (exact for every float too, NaN and -0.0 included)
def _mul_one(op):
    return _with_constant(op, lambda v, _: bool(np.all(v == 1)), commutative=True)


# div(x, 1) -> x   (floats: integer division gives floats, so x's type is not kept)
def _div_one(op):
    return _with_constant(op, lambda v, _: bool(np.all(v == 1)), commutative=False)


def _int_zeros(op: ir.Operation) -> Optional[list]:
    t = parse_type(str(op.results[0].type))
    ok = t.dtype.is_integer and t.is_static
    return [make_constant(np.zeros(t.shape, t.dtype.np_dtype), op.results[0], op)] if ok else None


# mul(x, 0) -> 0   (integers only: NaN * 0 and inf * 0 are NaN)
def _mul_zero(op):
    return _int_zeros(op) if any(is_splat(v, 0) for v in op.operands) else None


# sub(x, x) -> 0   (integers only: inf - inf and NaN - NaN are NaN)
def _sub_self(op):
    return _int_zeros(op) if op.operands[0] == op.operands[1] else None


def _defined_by(value: ir.Value, name: str) -> Optional[ir.Operation]:
    owner = value.owner
    return owner.operation if isinstance(owner, ir.OpView) and owner.operation.name == name \
        else None


def _same_or_none(x: ir.Value, op: ir.Operation) -> Optional[list]:
    return [x] if same_type(x, op.results[0]) else None


# neg(neg(x)) -> x
def _neg_neg(op):
    inner = _defined_by(op.operands[0], "ember.neg")
    return None if inner is None else _same_or_none(inner.operands[0], op)


def _recreate(op: ir.Operation, operand: ir.Value, attrs: dict) -> Optional[list]:
    """`op` with a new operand and attributes, keeping its declared result type."""
    with ir.InsertionPoint(op), op.location:
        new = ir.Operation.create(op.name, results=[op.results[0].type], operands=[operand],
                                  attributes=attrs)
    return [new.results[0]]


# transpose(x, perm = identity) -> x
def _transpose_identity(op):
    perm = decoded_attrs(op)["perm"]
    return _same_or_none(op.operands[0], op) if perm == tuple(range(len(perm))) else None


# transpose(transpose(x, p), q) -> transpose(x, [p[i] for i in q])   (x when that is identity)
def _transpose_transpose(op):
    if (inner := _defined_by(op.operands[0], "ember.transpose")) is None:
        return None
    inner_perm, x = decoded_attrs(inner)["perm"], inner.operands[0]
    composed = [inner_perm[i] for i in decoded_attrs(op)["perm"]]
    if composed == list(range(len(composed))) and same_type(x, op.results[0]):
        return [x]
    return _recreate(op, x, {"perm": ir.DenseI64ArrayAttr.get(composed)})


# reshape(reshape(x, s1), s2) -> reshape(x, s2)
def _reshape_reshape(op):
    inner = _defined_by(op.operands[0], "ember.reshape")
    return None if inner is None else \
        _recreate(op, inner.operands[0], {"shape": op.attributes["shape"]})


# reshape(x, shape(x)) -> x;  broadcast_to(x, shape(x)) -> x;  cast(x, dtype(x)) -> x
def _same_static_type(op):
    x = op.operands[0]
    static = parse_type(str(x.type)).is_static or op.name == "ember.cast"
    return _same_or_none(x, op) if static else None


# select(true, a, b) -> a;  select(false, a, b) -> b
def _select_constant(op):
    cond, a, b = op.operands
    picked = a if is_splat(cond, True) else b if is_splat(cond, False) else None
    return None if picked is None else _same_or_none(picked, op)


def _constant_bool(value: ir.Value) -> Optional[bool]:
    """The value of an i1 from `arith.constant` or `tensor.extract` of a 0-d ember.constant."""
    if (op := _defined_by(value, "arith.constant")) is not None:
        attr = op.attributes["value"]
        return bool(attr.value) if isinstance(attr, (ir.BoolAttr, ir.IntegerAttr)) else None
    if (op := _defined_by(value, "tensor.extract")) is not None and len(op.operands) == 1:
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
def _if_constant(op):
    if (taken := _constant_bool(op.operands[0])) is None:
        return None
    region = op.regions[0 if taken else 1]
    return _inline_before(region.blocks[0], op) if len(region.blocks) else []  # else: absent


# scf.while (%a = %init) {B; scf.condition(%false) %v} -> B[%a := %init]; results are %v
def _while_false(op):
    block = op.regions[0].blocks[0]
    if _constant_bool(list(block.operations)[-1].operands[0]) is not False:
        return None
    for arg, init in zip(block.arguments, op.operands):
        arg.replace_all_uses_with(init)
    return _inline_before(block, op)[1:]


PATTERNS: dict[str, list[tuple[str, Callable[[ir.Operation], Optional[list]]]]] = {
    "ember.add": [("add-zero", _add_zero)],
    "ember.sub": [("sub-zero", _sub_zero), ("sub-self", _sub_self)],
    "ember.mul": [("mul-one", _mul_one), ("mul-zero", _mul_zero)],
    "ember.div": [("div-one", _div_one)],
    "ember.neg": [("neg-neg", _neg_neg)],
    "ember.transpose": [("transpose-identity", _transpose_identity),
                        ("transpose-transpose", _transpose_transpose)],
    "ember.reshape": [("reshape-reshape", _reshape_reshape),
                      ("reshape-noop", _same_static_type)],
    "ember.broadcast_to": [("broadcast-noop", _same_static_type)],
    "ember.cast": [("cast-noop", _same_static_type)],
    "ember.select": [("select-constant", _select_constant)],
    "scf.if": [("if-constant", _if_constant)],
    "scf.while": [("while-false", _while_false)],
}


def _post_order(root: ir.Operation) -> list[ir.Operation]:
    """Ops nested in `root`, each after its nested ops and earlier siblings (iterative)."""
    out, stack = [], [root]
    while stack:
        op = stack.pop()
        out.append(op)
        stack.extend(c.operation for r in op.regions for b in r.blocks for c in b.operations)
    return out[:0:-1]  # drop `root` itself



