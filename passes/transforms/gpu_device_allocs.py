"""ember-gpu-device-allocs: the host code's buffers become device-visible (managed) memory.

After kernel outlining, the host functions of a CUDA module still allocate their
intermediates and results with `memref.alloc` (malloc), which a kernel cannot read or
write. This pass allocates them with `gpu.alloc host_shared` instead (`gpu-to-llvm` lowers
it to `mgpuMemAlloc(size, stream, 1)`: Ember's runtime hands out managed memory, which
both the host code and the kernels may touch) and frees them with `gpu.dealloc`
(`mgpuMemFree`). A synchronous `gpu.dealloc` has no lowering in MLIR 22, so each free is
the async form between a `gpu.wait async` and a `gpu.wait` (the runtime's one stream per
device: create and destroy are no-ops, the wait synchronises it). Functions inside
`gpu.module`s (the kernels) are left alone.

Algorithm:
  1. Collect `memref.alloc` and `memref.dealloc` in every `func.func` at the top level.
  2. Each alloc becomes `gpu.alloc host_shared` with the same sizes and symbols (the
     alignment attribute goes: managed memory is aligned to at least 256 bytes); count
     `allocs`.
  3. Each dealloc becomes `%t = gpu.wait async; %d = gpu.dealloc async [%t] %m;
     gpu.wait [%d]`; count `deallocs`.
  4. A constant (`memref.get_global`) that a `gpu.launch_func` takes lives in host memory:
     it is copied into a `gpu.alloc host_shared` buffer (`memref.copy`, on the host), which
     the launches take instead and which is freed as in 3 before its block's terminator;
     count `globals`.

Before:
    %m = memref.alloc(%n) {alignment = 64 : i64} : memref<?xf32>
    memref.dealloc %m : memref<?xf32>
After:
    %m = gpu.alloc host_shared (%n) : memref<?xf32>
    %t = gpu.wait async
    %d = gpu.dealloc async [%t] %m : memref<?xf32>
    gpu.wait [%d]
    %g = memref.get_global @c : memref<3xf32>
    gpu.launch_func @k::@k ... args(%g : memref<3xf32>)
After:
    %g = memref.get_global @c : memref<3xf32>
    %b = gpu.alloc host_shared () : memref<3xf32>
    memref.copy %g, %b : memref<3xf32> to memref<3xf32>
    gpu.launch_func @k::@k ... args(%b : memref<3xf32>)
    ... (freed as above, before the block's terminator)
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

from mlir import ir
from mlir.dialects import gpu, memref

from ember.passes.base import Pass, Statistics


@dataclasses.dataclass(frozen=True)
class GpuDeviceAllocsPass(Pass):
    name: ClassVar[str] = "ember-gpu-device-allocs"

    def run(self, module: ir.Module, stats: Statistics) -> None:
        allocs, deallocs = device_allocs(module)
        stats.add("allocs", allocs)
        stats.add("deallocs", deallocs)
        stats.add("globals", device_globals(module))


def device_allocs(module: ir.Module) -> tuple[int, int]:
    """Rewrites the host functions' allocations as described in the module docstring;
    returns how many allocs and deallocs it rewrote."""
    found: list[ir.Operation] = []

    def collect(op: ir.Operation) -> ir.WalkResult:
        if op.name in ("memref.alloc", "memref.dealloc"):
            found.append(op)
        return ir.WalkResult.ADVANCE

    for top in module.body.operations:
        top = top.operation
        if top.name == "func.func":
            top.walk(collect)
    allocs = deallocs = 0
    for op in found:
        with ir.InsertionPoint(op), op.location:
            if op.name == "memref.alloc":
                memref_type = op.results[0].type
                rank_dynamic = ir.MemRefType(memref_type).shape.count(ir.ShapedType
                                                                      .get_dynamic_size())
                operands = list(op.operands)
                new = gpu.AllocOp(memref_type, None, [], operands[:rank_dynamic],
                                  operands[rank_dynamic:], hostShared=True)
                op.results[0].replace_all_uses_with(new.results[0])
                allocs += 1
            else:
                _free(op.operands[0])
                deallocs += 1
        op.erase()
    return allocs, deallocs


def _free(buffer: ir.Value) -> None:
    """`gpu.dealloc` of `buffer` at the insertion point, in the async form that lowers."""
    token = gpu.AsyncTokenType.get()
    start = gpu.WaitOp(token, [])
    freed = gpu.DeallocOp(token, [start.results[0]], buffer)
    gpu.WaitOp(None, [freed.results[0]])


def device_globals(module: ir.Module) -> int:
    """Copies each host constant that a launch takes into managed memory (step 4);
    returns how many."""
    found: list[ir.Operation] = []

    def collect(op: ir.Operation) -> ir.WalkResult:
        if op.name == "memref.get_global" and any(
                use.owner.name == "gpu.launch_func" for use in op.results[0].uses):
            found.append(op)
        return ir.WalkResult.ADVANCE

    for top in module.body.operations:
        if top.operation.name == "func.func":
            top.operation.walk(collect)
    for op in found:
        constant = op.results[0]
        launches = [use.owner for use in constant.uses if use.owner.name == "gpu.launch_func"]
        with ir.InsertionPoint.after(op), op.location:
            buffer = gpu.AllocOp(constant.type, None, [], [], [], hostShared=True).results[0]
            memref.CopyOp(constant, buffer)
        for launch in launches:
            for i, operand in enumerate(launch.operands):
                if operand == constant:
                    launch.operands[i] = buffer
        block_end = list(op.block.operations)[-1]
        with ir.InsertionPoint(block_end), op.location:
            _free(buffer)
    return len(found)
