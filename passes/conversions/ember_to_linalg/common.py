"""Shared machinery of `convert-ember-to-linalg`: the rule table and IR-building helpers.

A lowering rule is registered with `@lowers(SpecClass, ...)` and called as
`rule(op, lw)` where `lw` is a `Lowering` for that op: the op's ember operand/result types,
its decoded attributes, and helpers that build linalg/tensor/arith/math at the op's place.
It returns the replacement values (one per result).

Element types: ember's `ui8` becomes signless `i8` (arith needs signless integers; the bits
are the same, so the runtime's buffers are untouched) and ops choose unsigned arithmetic
(`divui`, `cmpi ult`, ...) from the ember dtype. Half floats (f16, bf16) compute
transcendental math in f32.
"""

from __future__ import annotations

from typing import Callable, Sequence

from mlir import ir
from mlir.dialects import arith, linalg, tensor

from ember.dialects.ember.base import Op
from ember.dialects.ember.dtypes import DType
from ember.dialects.ember.errors import EmberError
from ember.dialects.ember.types import TensorType, broadcast_shapes
from ember.dialects.ember.verifier import iter_ops
from ember.passes.ir_utils import symbol_table

LOWERINGS: dict[type[Op], Callable] = {}
PARALLEL = "#linalg.iterator_type<parallel>"
REDUCTION = "#linalg.iterator_type<reduction>"


def lowers(*specs: type[Op]):
    """Registers the decorated function as the lowering rule of each spec."""
    def register(fn):
        for spec in specs:
            if spec in LOWERINGS:
                raise ValueError(f"{spec.name} has two lowering rules")
            LOWERINGS[spec] = fn
        return fn
    return register


class LoweringError(EmberError):
    """An op that cannot be lowered (e.g. a host-only string op); names the op."""


def element_type(dtype: DType) -> ir.Type:
    """The signless MLIR element type that holds `dtype`'s bits."""
    if dtype.is_string:
        raise LoweringError("string tensors only run on the host (interpreter)")
    return ir.Type.parse("i8" if dtype.mlir == "ui8" else dtype.mlir)


def retype_ui8(op: ir.Operation) -> None:
    """Retypes `ui8` to signless `i8` (same bits) in `op`'s results and everything its
    regions hold (block arguments, results of nested ops), scalars and tensors alike."""
    def fix(value: ir.Value) -> None:
        text = str(value.type)
        if text == "ui8" or text.endswith("xui8>") or text == "tensor<ui8>":
            value.set_type(ir.Type.parse(text.replace("ui8", "i8")))

    for o in [op, *iter_ops(op)]:
        for r in o.results:
            fix(r)
        for region in o.regions:
            for block in region.blocks:
                for arg in block.arguments:
                    fix(arg)


def tensor_type(t: TensorType) -> ir.Type:
    if t.shape is None:
        return ir.UnrankedTensorType.get(element_type(t.dtype))
    dims = [ir.ShapedType.get_dynamic_size() if d is None else d for d in t.shape]
    return ir.RankedTensorType.get(dims, element_type(t.dtype))


class Lowering:
    """The context one rule runs in: types, attributes and builders for one op."""

    def __init__(self, op: ir.Operation, operand_types: list, result_types: list,
                 attrs: dict, fusion=None):
        self.op = op
        self.fusion = fusion  # fusion.Fusion of the function, or None: no fusion
        self.blocked_sums = True  # the pass's option: float sums in blocks (blocked_sum.py)
        self.operands = list(op.operands)
        self.operand_types = operand_types
        self.result_types = result_types
        self.attrs = attrs
        self.loc = op.location

    # -- scalars ------------------------------------------------------------------------------

    def scalar(self, value, dtype: DType) -> ir.Value:
        """An `arith.constant` scalar of `dtype`."""
        et = element_type(dtype)
        if dtype.is_complex:  # complex.create of two f32/f64 constants
            from mlir.dialects import complex as cx
            value = complex(value)
            return cx.CreateOp(et, self.scalar(value.real, dtype.real_dtype),
                               self.scalar(value.imag, dtype.real_dtype)).result
        if dtype.is_floating:
            attr = ir.FloatAttr.get(et, float(value))
        else:
            attr = ir.IntegerAttr.get(et, int(value))
        return arith.ConstantOp(et, attr).result

    def index(self, value: int) -> ir.Value:
        return arith.ConstantOp(ir.IndexType.get(), ir.IntegerAttr.get(ir.IndexType.get(),
                                                                      value)).result

    # -- tensors --------------------------------------------------------------------------

    def dynamic_dims(self, t: TensorType, like: Sequence[tuple[ir.Value, TensorType]]):
        """SSA sizes for the dynamic dims of `t`, read from operands of the same size."""
        sizes = []
        for i, d in enumerate(t.shape):
            if d is not None:
                continue
            source = self._source_of_dim(i, len(t.shape), like)
            sizes.append(tensor.DimOp(source[0], self.index(source[1])).result)
        return sizes

    @staticmethod
    def _source_of_dim(i: int, rank: int, like):
        for value, vt in like:
            if vt.shape is None:
                continue
            j = i - (rank - len(vt.shape))
            if j >= 0 and vt.shape[j] is None:
                return value, j
        raise LoweringError(f"cannot find the size of dynamic dim {i}")

    def empty(self, t: TensorType, like=(), known: dict | None = None) -> ir.Value:
        """`tensor.empty` of type `t` (dynamic sizes from `known`, by dim, else taken from
        `like` operands)."""
        known = known or {}
        mixed = []
        for i, d in enumerate(t.shape):
            if d is not None:
                mixed.append(d)
            elif i in known:
                mixed.append(known[i])
            else:
                value, j = self._source_of_dim(i, len(t.shape), like)
                mixed.append(tensor.DimOp(value, self.index(j)).result)
        return tensor.EmptyOp(mixed, element_type(t.dtype)).result

    def broadcast_map(self, operand: TensorType, out_rank: int) -> ir.AffineMap:
        """(d0..dn) -> operand index: leading dims dropped, size-1 dims pinned to 0."""
        lead = out_rank - len(operand.shape)
        exprs = []
        for j, d in enumerate(operand.shape):
            out_dim = lead + j
            exprs.append(ir.AffineConstantExpr.get(0) if d == 1 else
                         ir.AffineDimExpr.get(out_dim))
        return ir.AffineMap.get(out_rank, 0, exprs)

    def elementwise(self, inputs: Sequence[ir.Value], input_types: Sequence[TensorType],
                    out: TensorType, body: Callable[..., ir.Value]) -> ir.Value:
        """A `linalg.generic` computing `body(*scalars)` over the broadcast of the inputs."""
        ok, shape = broadcast_shapes(*(t.shape for t in input_types))
        if not ok or shape is None:
            raise LoweringError("operand shapes must be ranked and broadcast-compatible")
        rank = len(out.shape)
        sizes = {}
        if any(None in t.shape for t in input_types):  # may broadcast at run time
            from ember.passes.conversions.ember_to_linalg.broadcast import \
                broadcast_at_run_time
            inputs, sizes = broadcast_at_run_time(self, inputs, input_types, out)
        if self.fusion is not None:  # operands made by elementwise generics: read theirs
            leaves, body = self.fusion.plan(inputs, input_types, out, body, self.op,
                                            lambda t: self.broadcast_map(t, rank))
        else:
            leaves = [(v, t, self.broadcast_map(t, rank)) for v, t in zip(inputs, input_types)]
        dest = self.empty(out, [(v, t) for v, t, _ in leaves], sizes)
        if self.fusion is not None and self.fusion.will_be_fused(self.op, out):
            return self.fusion.defer(leaves, body, out, dest, tensor_type(out))
        generic = build_generic(leaves, body, out, dest)
        if self.fusion is not None:
            self.fusion.record(generic, leaves, body, out)
        return generic.results[0]


def build_generic(leaves: Sequence[tuple], body: Callable[..., ir.Value], out: TensorType,
                  dest: ir.Value) -> ir.Operation:
    """A parallel `linalg.generic` over `out` reading each (value, type, map) leaf and
    writing `body(*leaf scalars)` into `dest`."""
    rank = len(out.shape)
    maps = [m for _, _, m in leaves] + [ir.AffineMap.get_identity(rank)]
    generic = linalg.GenericOp(
        [tensor_type(out)], [v for v, _, _ in leaves], [dest],
        ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps]),
        ir.ArrayAttr.get([ir.Attribute.parse(PARALLEL)] * rank))
    block = generic.regions[0].blocks.append(
        *[element_type(t.dtype) for _, t, _ in leaves], element_type(out.dtype))
    with ir.InsertionPoint(block):
        linalg.YieldOp([body(*block.arguments[:len(leaves)])])
    return generic.operation


def enclosing(op: ir.Operation, name: str) -> ir.Operation:
    """The nearest op named `name` that holds `op`; LoweringError if there is none."""
    parent = op.parent
    while parent is not None and parent.name != name:
        parent = parent.parent
    if parent is None:
        raise LoweringError(f"'{op.name}' is not inside a {name}")
    return parent.operation


def fresh_symbol(op: ir.Operation, prefix: str) -> tuple[ir.Operation, str]:
    """The function holding `op` and the first `<prefix><k>` no symbol of its module has
    (for a private declaration the lowering adds next to that function)."""
    fn = enclosing(op, "func.func")
    module = enclosing(fn, "builtin.module")
    taken = set(symbol_table(module))
    k = 0
    while f"{prefix}{k}" in taken:
        k += 1
    return fn, f"{prefix}{k}"
