"""ember-gpu-launch-bounds: each kernel requires exactly the block size it is launched with.

Outlining records the block size of every launch on its kernel (`known_block_size`), and
convert-gpu-to-nvvm turns that into `nvvm.maxntid`, PTX's `.maxntid`: an upper bound. The
CUDA backend launches each kernel only from the `gpu.launch_func` that outlining made, with
those constant sizes, so the size is exact: `nvvm.reqntid` (PTX `.reqntid`) says so, and
lets ptxas size registers for exactly that many threads. PTX allows one of the two
directives, so the bound is replaced.

Algorithm:
  1. Find each `llvm.func` in a `gpu.module` with `gpu.kernel` and an `nvvm.maxntid`
     equal to its `gpu.known_block_size` (kernels convert-gpu-to-nvvm has lowered).
  2. Replace its `nvvm.maxntid` by `nvvm.reqntid` of that size; count `kernels`.

Before:
    llvm.func @k(...) attributes {gpu.kernel, gpu.known_block_size = array<i32: 8, 32, 1>,
                                  nvvm.kernel, nvvm.maxntid = array<i32: 8, 32, 1>}
After:
    llvm.func @k(...) attributes {gpu.kernel, gpu.known_block_size = array<i32: 8, 32, 1>,
                                  nvvm.kernel, nvvm.reqntid = array<i32: 8, 32, 1>}
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

from mlir import ir

from ember.passes.base import Pass, Statistics


@dataclasses.dataclass(frozen=True)
class GpuLaunchBoundsPass(Pass):
    name: ClassVar[str] = "ember-gpu-launch-bounds"

    def run(self, module: ir.Module, stats: Statistics) -> None:
        for holder in module.body.operations:
            if holder.operation.name != "gpu.module":
                continue
            for op in holder.operation.regions[0].blocks[0].operations:
                op = op.operation
                attrs = op.attributes
                if op.name != "llvm.func" or "gpu.kernel" not in attrs or \
                        "nvvm.maxntid" not in attrs or "gpu.known_block_size" not in attrs:
                    continue
                if str(attrs["nvvm.maxntid"]) != str(attrs["gpu.known_block_size"]):
                    continue
                attrs["nvvm.reqntid"] = attrs["nvvm.maxntid"]
                del attrs["nvvm.maxntid"]
                stats.add("kernels")
