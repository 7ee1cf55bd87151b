"""ember-copies-to-linalg: rewrite `memref.copy` as `linalg.copy`, which becomes loops.

Works around `finalize-memref-to-llvm` lowering a copy between non-contiguous buffers to a
call of `memrefCopy`, a function of MLIR's C runner-utils library, which the JIT process does
not load: the call would jump to address 0 (MLIR 22.1; not an upstream bug). It can go, with
its step in the CPU backend, if the backend ever links the runner utilities.

Algorithm:
  1. Collect every `memref.copy`.
  2. Replace each by `linalg.copy ins(source) outs(target)` at the same place; an
     unranked target (the copy of a ranked buffer into a result of run-time rank, when
     a dynamic result aliases another) is `memref.cast` to the source's shape first.

Before:
    memref.copy %a, %b : memref<4xf32, strided<[2]>> to memref<4xf32>
After:
    linalg.copy ins(%a : memref<4xf32, strided<[2]>>) outs(%b : memref<4xf32>)
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

from mlir import ir
from mlir.dialects import linalg

from ember.dialects.ember.verifier import iter_ops
from ember.passes.base import Pass, Statistics


@dataclasses.dataclass(frozen=True)
class CopiesToLinalgPass(Pass):
    name: ClassVar[str] = "ember-copies-to-linalg"

    def run(self, module: ir.Module, stats: Statistics) -> None:
        with ir.Location.unknown():
            copies_to_linalg(module)


def copies_to_linalg(module: ir.Module) -> None:
    """Rewrites `memref.copy` as `linalg.copy` (which becomes loops): finalize-memref-to-llvm
    turns a copy between non-contiguous buffers into a call of the `memrefCopy` runtime
    function, which no library in this process provides — the JIT would jump to nowhere."""
    for op in [op for op in iter_ops(module.operation) if op.name == "memref.copy"]:
        source, target = op.operands[0], op.operands[1]
        with ir.InsertionPoint(op), op.location:
            if isinstance(target.type, ir.UnrankedMemRefType) and \
                    isinstance(source.type, ir.MemRefType):
                target = _ranked_like(target, ir.MemRefType(source.type))
            if isinstance(target.type, ir.UnrankedMemRefType):
                continue  # unranked to unranked: no loop nest to write (left as it was)
            linalg.copy(source, outs=[target])
        op.erase()


def _ranked_like(target: ir.Value, source: ir.MemRefType) -> ir.Value:
    """The unranked `target` (a clone of a ranked buffer returned with a dynamic result
    type: bufferization's `clone ... to memref<*xT>`) cast to `source`'s shape."""
    from mlir.dialects import memref
    ranked = ir.MemRefType.get(source.shape, source.element_type,
                               memory_space=source.memory_space)
    return memref.CastOp(ranked, target).result
