"""Which products ember-gpu-tile-matmul tiles (gpu_tile_matmul.py): `linalg.matmul`,
`linalg.batch_matmul` and the `linalg.generic` products of Ember's lowering, on statically
shaped memrefs, described by their loop dims (`Product`).
"""

from __future__ import annotations

import dataclasses
from typing import Optional

from mlir import ir

PRODUCTS = ("linalg.matmul", "linalg.batch_matmul", "linalg.generic")
DEFAULT_MAPS = {
    "linalg.matmul": "[affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, "
                     "affine_map<(m, n, k) -> (m, n)>]",
    "linalg.batch_matmul": "[affine_map<(b, m, n, k) -> (b, m, k)>, "
                           "affine_map<(b, m, n, k) -> (b, k, n)>, "
                           "affine_map<(b, m, n, k) -> (b, m, n)>]",
}


@dataclasses.dataclass
class Product:
    """A product `op` to tile: `maps` index (a, b, out) by the loop dims, `parallel` the
    output's dims in order, `reduction` the others in loop order, `extents` per loop dim."""
    op: ir.Operation
    maps: list[ir.AffineMap]
    parallel: list[int]
    reduction: list[int]
    extents: list[int]


def _maps(op: ir.Operation) -> Optional[list[ir.AffineMap]]:
    if "indexing_maps" in op.attributes:
        attr = ir.ArrayAttr(op.attributes["indexing_maps"])
    elif op.name in DEFAULT_MAPS:
        attr = ir.ArrayAttr(ir.Attribute.parse(DEFAULT_MAPS[op.name]))
    else:
        return None
    return [ir.AffineMapAttr(a).value for a in attr]


def _body_ok(op: ir.Operation) -> bool:
    """A body `yield out + g(a, b)` with a multiplication in g and no linalg.index."""
    blocks = list(op.regions[0].blocks)
    if len(blocks) != 1 or len(blocks[0].arguments) != 3:
        return False
    ops = [o.operation for o in blocks[0].operations]
    names = [o.name for o in ops]
    if "linalg.index" in names or not ({"arith.mulf", "arith.muli"} & set(names)):
        return False
    if any(o.regions and len(o.regions) for o in ops):
        return False
    ret = ops[-1]
    if ret.name != "linalg.yield" or len(ret.operands) != 1:
        return False
    value = ret.operands[0]
    owner = value.owner
    if not isinstance(owner, ir.OpView) or owner.operation.name not in ("arith.addf",
                                                                         "arith.addi"):
        return False
    return any(o == blocks[0].arguments[2] for o in owner.operation.operands)


def product(op: ir.Operation) -> Optional[Product]:
    """The product `op` computes, if it is one this pass tiles (see the module docstring)."""
    if op.name not in PRODUCTS or len(op.operands) != 3 or len(op.results) != 0:
        return None
    types = [v.type for v in op.operands]
    if not all(isinstance(t, ir.MemRefType) for t in types):
        return None
    shaped = [ir.MemRefType(t) for t in types]
    if not all(s.has_static_shape for s in shaped) or shaped[2].rank < 2:
        return None
    maps = _maps(op)
    if maps is None or len(maps) != 3 or any(m.n_symbols for m in maps):
        return None
    rank = maps[2].n_dims
    parallel = []
    for e in maps[2].results:
        if not isinstance(e, ir.AffineDimExpr):
            return None
        parallel.append(e.position)
    if len(set(parallel)) != len(parallel):
        return None
    reduction = [d for d in range(rank) if d not in parallel]
    if not reduction:
        return None
    extents: list[Optional[int]] = [None] * rank
    for m, s in zip(maps, shaped):
        if len(m.results) != s.rank:
            return None
        for j, e in enumerate(m.results):
            if isinstance(e, ir.AffineDimExpr) and extents[e.position] is None:
                extents[e.position] = s.shape[j]
    if None in extents or 0 in extents:
        return None
    if op.name == "linalg.generic":
        iterators = [str(a).split("<")[-1].rstrip(">")
                     for a in ir.ArrayAttr(op.attributes["iterator_types"])]
        if iterators != ["reduction" if d in reduction else "parallel" for d in range(rank)]:
            return None
    if not _body_ok(op):
        return None
    return Product(op, maps, parallel, reduction, extents)


def _dims_of(e) -> set[int]:
    if isinstance(e, ir.AffineDimExpr):
        return {e.position}
    if isinstance(e, ir.AffineBinaryExpr):
        return _dims_of(e.lhs) | _dims_of(e.rhs)
    return set()


def used_dims(m: ir.AffineMap) -> set[int]:
    """The loop dims any result of `m` depends on."""
    return set().union(*(_dims_of(e) for e in m.results))
