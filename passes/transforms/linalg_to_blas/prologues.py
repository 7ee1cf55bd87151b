"""Taking elementwise prologues back out of products, so they stay GEMMs.

`linalg-fuse-elementwise-ops` fuses an elementwise producer of a product's operand into the
product once a reshape has turned `linalg.matmul` into a `linalg.generic` (a flatten before
a Dense layer: `out += relu(x) * w` over the reduction dims h, w, c). The body is then no
longer a multiply-add, and the product would run as a scalar loop nest. `split_prologues`
(run by `ember-prepare-blas`, on tensors) puts each operand's prologue back into an
elementwise generic of its own over that operand, leaving `out += a' * b'`.

Before:
    %r = linalg.generic {maps = [(n,o,h,w,c) -> (n,h,w,c), (n,o,h,w,c) -> (h,w,c,o), ...]}
           ins(%x, %w) outs(%z) { ^bb0(%a, %b, %o): %m = max(%a, 0); %p = %m * %b; %s = %o + %p }
After:
    %x1 = linalg.generic {identity maps} ins(%x) outs(%e) { ^bb0(%a, %_): max(%a, 0) }
    %r = linalg.generic {the same maps} ins(%x1, %w) outs(%z) { %p = %a * %b; %s = %o + %p }
"""

from __future__ import annotations

from typing import Optional

from mlir import ir
from mlir.dialects import linalg, tensor

from ember.passes.transforms.linalg_to_blas.plan import ELEMENTS, value_op


def _body(op: ir.Operation):
    blocks = list(op.regions[0].blocks)
    return blocks[0] if len(blocks) == 1 else None


def _slice(value: ir.Value, block, op: ir.Operation) -> Optional[list[ir.Operation]]:
    """The body ops `value` is computed by (in block order), or None if it reads another
    block argument than one: the caller checks which."""
    ops: list[ir.Operation] = []
    stack = [value]
    while stack:
        v = stack.pop()
        owner = value_op(v)
        if not isinstance(owner, ir.Operation) or owner.parent != op or owner in ops:
            continue  # a block argument, or a value from outside the product
        if not owner.name.startswith(("arith.", "math.")) or len(owner.regions):
            return None  # linalg.index and the like mean the loop space, not the operand's
        ops.append(owner)
        stack.extend(owner.operands)
    order = {o: i for i, o in enumerate(o.operation for o in block.operations)}
    return sorted(ops, key=lambda o: order[o])


def _arguments(ops: list[ir.Operation], block) -> set[int]:
    """The block arguments (by number) the ops read."""
    args = list(block.arguments)
    return {args.index(v) for op in ops for v in op.operands
            if isinstance(v, ir.BlockArgument) and v in args}


def _split_one(op: ir.Operation) -> bool:
    if op.name != "linalg.generic" or len(op.operands) != 3 or len(op.results) != 1:
        return False
    if not isinstance(op.results[0].type, ir.RankedTensorType):
        return False
    iterators = [str(i) for i in ir.ArrayAttr(op.attributes["iterator_types"])]
    if not any("reduction" in i for i in iterators):
        return False
    block = _body(op)
    if block is None:
        return False
    ops = [o.operation for o in block.operations]
    if len(ops) < 4 or ops[-1].name != "linalg.yield" or len(ops[-1].operands) != 1:
        return False
    add = value_op(ops[-1].operands[0])
    a, b, out = block.arguments
    if not isinstance(add, ir.Operation) or add.name != "arith.addf" or \
            out not in list(add.operands):
        return False
    mul = value_op(add.operands[1] if add.operands[0] == out else add.operands[0])
    if not isinstance(mul, ir.Operation) or mul.name != "arith.mulf" or mul.parent != op:
        return False
    if str(ir.RankedTensorType(op.results[0].type).element_type) not in ELEMENTS:
        return False
    slices = [_slice(v, block, op) for v in mul.operands]
    if any(s is None for s in slices):
        return False
    reads = [_arguments(s, block) | ({list(block.arguments).index(v)}
                                     if isinstance(v, ir.BlockArgument) else set())
             for s, v in zip(slices, mul.operands)]
    if reads[0] == {1} and reads[1] == {0}:  # out += b' * a'
        slices, reads, sides = slices[::-1], reads[::-1], (1, 0)
    else:
        sides = (0, 1)
    if reads != [{0}, {1}] or set(ops) != {*slices[0], *slices[1], mul, add, ops[-1]}:
        return False
    if not slices[0] and not slices[1]:
        return False
    element = str(ir.RankedTensorType(op.results[0].type).element_type)
    for operand, ops_of in zip((0, 1), slices):
        if not ops_of:
            continue
        value = mul.operands[sides[operand]]
        if str(value.type) != element:
            return False
        _hoist(op, operand, ops_of, value, mul, sides[operand])
    return True


def _hoist(op: ir.Operation, operand: int, ops_of: list[ir.Operation], value: ir.Value,
           mul: ir.Operation, mul_index: int) -> None:
    """Computes `ops_of` (ending in `value`) over operand `operand` in a generic of its own
    before `op`, and makes `op` read its result."""
    source = op.operands[operand]
    src_type = ir.RankedTensorType(source.type)
    with ir.InsertionPoint(op), op.location:
        sizes = [tensor.DimOp(source, _index(i)).result if src_type.is_dynamic_dim(i)
                 else src_type.get_dim_size(i) for i in range(src_type.rank)]
        empty = tensor.EmptyOp(sizes, value.type)
        identity = ir.AffineMap.get_identity(src_type.rank)
        new = linalg.GenericOp(
            [empty.result.type], [source], [empty.result],
            ir.ArrayAttr.get([ir.AffineMapAttr.get(identity)] * 2),
            ir.ArrayAttr.get([ir.Attribute.parse("#linalg.iterator_type<parallel>")] *
                             src_type.rank))
        inner = new.regions[0].blocks.append(src_type.element_type, value.type)
        arg = _body(op).arguments[operand]
        mapping = {arg: inner.arguments[0]}
        with ir.InsertionPoint(inner):
            for o in ops_of:
                clone = o.clone()
                for i, v in enumerate(list(clone.operands)):
                    if v in mapping:
                        clone.operands[i] = mapping[v]
                for old, fresh in zip(o.results, clone.results):
                    mapping[old] = fresh
            linalg.YieldOp([mapping[value]])
    mul.operands[mul_index] = arg
    arg.set_type(value.type)
    op.operands[operand] = new.results[0]
    for o in reversed(ops_of):
        o.erase()


def _index(i: int) -> ir.Value:
    from mlir.dialects import arith
    return arith.ConstantOp(ir.IndexType.get(), i).result


def split_prologues(root) -> int:
    """Splits the elementwise prologues out of the products under `root` (on tensors);
    returns how many products were split."""
    found: list = []
    root = root.operation if isinstance(root, ir.Module) else root
    root.walk(lambda o: found.append(o) or ir.WalkResult.ADVANCE)
    return sum(_split_one(op) for op in found if op.name == "linalg.generic")
