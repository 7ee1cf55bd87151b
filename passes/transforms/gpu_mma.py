"""ember-gpu-mma: f16 matrix products on NVIDIA tensor cores (WMMA), warps of 16×16 tiles.

A tensor core multiplies 16×16 f16 tiles into an f32 (or f16) accumulator in one warp-wide
instruction (PTX `wmma.mma.sync`). MLIR's `gpu.subgroup_mma_*` ops are that instruction
and its tile loads and stores; convert-gpu-to-nvvm lowers them to `nvvm.wmma.*`. MLIR 22's
`!gpu.mma_matrix` holds f16 (not bf16), so bf16 products keep the tiled loop path
(ember-gpu-tile-matmul), as do products whose M, N or K is not a multiple of 16.

Handled: `linalg.matmul` and `linalg.batch_matmul` (their default indexing maps) on
statically shaped, contiguous row-major memrefs, f16 inputs, an f32 or f16 output (Ember
lowers an f16 product to an f32 accumulator rounded afterwards), M, N, K multiples of 16
(M/16 and the batch within the grid's 65535). Each tile then starts a multiple of 32
bytes into its buffer, so its address is 32-byte aligned, as WMMA loads and stores need,
when the buffer is (device allocations are 256-byte aligned, Ember's own 64-byte).

Algorithm:
  1. Split M and N: a warp (32 threads along x) computes fm × fn 16×16 fragments of C
     (2 along a dim where 32 divides it, else 1), a block has wm × wn warps (2 along a
     dim where 2 warps' fragments divide it; threads y: along N, z: along M); the grid
     is (N/(16 fn wn), M/(16 fm wm), batch). A fragment reused: 2×2 fragments take 4
     products per 4 tile loads, 1×1 one per 2.
  2. Replace each such product by that `gpu.launch`; each warp's fragments start from
     C's values (linalg accumulates into its output).
  3. K runs in chunks of up to UNROLL steps of 16: per chunk, load the C fragments, for
     each step load the A and B tiles and accumulate (`gpu.subgroup_mma_compute`), store
     the C fragments back.

The products leave the CUDA backend's mapped stage as launches already: to run that
stage on the CPU (the cuda-emulated backend), ember-gpu-mma-emulate turns them into loops
computing the same tiles.

Before:
    linalg.matmul ins(%a, %b : memref<16x16xf16>, memref<16x48xf16>)
                  outs(%c : memref<16x48xf32>)
After:
    gpu.launch blocks(...) in (%x = %c3, %y = %c1, %z = %c1)
               threads(...) in (%tx = %c32, %ty = %c1, %tz = %c1) {
      scf.for %i = %c0 to %c16 step %c16 {
        %t0 = gpu.subgroup_mma_load_matrix %c[%row, %col] {leadDimension = 48 : index} ...
        ... per K step: two gpu.subgroup_mma_load_matrix, gpu.subgroup_mma_compute ...
        gpu.subgroup_mma_store_matrix %t1, %c[%row, %col] {leadDimension = 48 : index} ...
      }
      gpu.terminator
    }
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar, Optional

from mlir import ir

from ember.passes.base import Pass, Statistics
from ember.passes.ir_utils import ops_named
from ember.passes.transforms.gpu_matmul_products import DEFAULT_MAPS

TILE = 16
# At most this many 16-deep K steps per loop iteration, the accumulator tile in registers
# (a loop carrying it fails to lower: convert-gpu-to-nvvm cannot convert an mma_matrix
# block argument), stored to C and reloaded between iterations.
UNROLL = 8
GRID_YZ = 65535  # blocks a launch may have along y and z (x: 2^31 - 1)
NAMES = ("linalg.matmul", "linalg.batch_matmul")


def _shape(t: ir.Type) -> Optional[list[int]]:
    """The static shape of a contiguous row-major memref, else None."""
    if not isinstance(t, ir.MemRefType) or not ir.MemRefType(t).has_static_shape:
        return None
    m = ir.MemRefType(t)
    shape = list(m.shape)
    strides, offset = m.get_strides_and_offset()
    expected, running = [], 1
    for size in reversed(shape):
        expected.insert(0, running)
        running *= size
    return shape if strides == expected and offset == 0 else None


def eligible(op: ir.Operation) -> Optional[tuple[int, int, int, int, str]]:
    """(batch, M, N, K, accumulator type) if `op` is a product this pass handles."""
    if op.name not in NAMES or len(op.operands) != 3:
        return None
    if "indexing_maps" in op.attributes and str(op.attributes["indexing_maps"]) != \
            str(ir.Attribute.parse(DEFAULT_MAPS[op.name])):  # transposed or broadcast
        return None
    shapes = [_shape(v.type) for v in op.operands]
    if None in shapes:
        return None
    types = [str(ir.MemRefType(v.type).element_type) for v in op.operands]
    if types[0] != "f16" or types[1] != "f16" or types[2] not in ("f16", "f32"):
        return None
    a, b, c = shapes
    batch = 1
    if op.name == "linalg.batch_matmul":
        batch, a, b, c = a[0], a[1:], b[1:], c[1:]
    (m, k), (_, n) = a, b
    if any(d % TILE or d == 0 for d in (m, n, k)):
        return None
    if m // (TILE * _split(m)[0] * _split(m)[1]) > GRID_YZ or batch > GRID_YZ:
        return None  # past the launch's grid limits in y and z
    return batch, m, n, k, types[2]


def _chunk(steps: int) -> int:
    """K steps per loop iteration: the largest divisor of `steps` up to UNROLL."""
    return max(d for d in range(1, min(steps, UNROLL) + 1) if steps % d == 0)


def _split(size: int) -> tuple[int, int]:
    """(fragments per warp, warps per block) along a dim of `size` (a multiple of 16): 2
    fragments when they divide it, then 2 warps when those divide it."""
    frags = 2 if size % (2 * TILE) == 0 else 1
    return frags, 2 if size % (2 * TILE * frags) == 0 else 1


def _launch_text(types: list[str], batch: int, m: int, n: int, k: int, acc: str,
                 batched: bool) -> str:
    """A function holding the launch; its body is moved in place of the product."""
    frag = '!gpu.mma_matrix<%dx%dx{}, "{}">' % (TILE, TILE)
    a_t, b_t, c_t = frag.format("f16", "AOp"), frag.format("f16", "BOp"), \
        frag.format(acc, "COp")
    z = "%bz, " if batched else ""
    (fm, wm), (fn, wn) = _split(m), _split(n)
    chunk = _chunk(k // TILE)

    def load(target, buffer, row, col, lead, mtype, kind):
        return (f"\n      %{target} = gpu.subgroup_mma_load_matrix %{buffer}[{z}%{row}, %{col}]"
                f" {{leadDimension = {lead} : index}} : {mtype} -> {kind}")
    lines = [load(f"t0_{i}_{j}", "c", f"rw{i}", f"cl{j}", n, types[2], c_t)
             for i in range(fm) for j in range(fn)]
    for s_ in range(chunk):
        lines.append(f"\n      %k{s_} = arith.addi %i, %off{s_} : index")
        lines += [load(f"x{s_}_{i}", "a", f"rw{i}", f"k{s_}", k, types[0], a_t)
                  for i in range(fm)]
        lines += [load(f"y{s_}_{j}", "b", f"k{s_}", f"cl{j}", n, types[1], b_t)
                  for j in range(fn)]
        lines += [f"\n      %t{s_ + 1}_{i}_{j} = gpu.subgroup_mma_compute %x{s_}_{i}, "
                  f"%y{s_}_{j}, %t{s_}_{i}_{j} : {a_t}, {b_t} -> {c_t}"
                  for i in range(fm) for j in range(fn)]
    lines += [f"\n      gpu.subgroup_mma_store_matrix %t{chunk}_{i}_{j}, %c[{z}%rw{i}, %cl{j}] "
              f"{{leadDimension = {n} : index}} : {c_t}, {types[2]}"
              for i in range(fm) for j in range(fn)]
    offsets = "".join(f"\n    %off{s_} = arith.constant {s_ * TILE} : index"
                      for s_ in range(chunk))
    bases = "".join(f"\n    %rw{i} = arith.addi %row, %o{i} : index\n"
                    f"    %cl{i} = arith.addi %col, %o{i} : index" for i in range(2))
    return f"""
func.func private @ember_mma(%a: {types[0]}, %b: {types[1]}, %c: {types[2]}) {{
  %warp = arith.constant 32 : index
  %wn = arith.constant {wn} : index
  %wm = arith.constant {wm} : index
  %gx = arith.constant {n // (TILE * fn * wn)} : index
  %gy = arith.constant {m // (TILE * fm * wm)} : index
  %gz = arith.constant {batch} : index
  gpu.launch blocks(%bx, %by, %bz) in (%sx = %gx, %sy = %gy, %sz = %gz)
             threads(%tx, %ty, %tz) in (%wx = %warp, %wy = %wn, %wz = %wm) {{
    %c0 = arith.constant 0 : index
    %o0 = arith.constant 0 : index
    %o1 = arith.constant {TILE} : index
    %tm = arith.constant {TILE * fm} : index
    %tn = arith.constant {TILE * fn} : index
    %step = arith.constant {chunk * TILE} : index
    %kk = arith.constant {k} : index{offsets}
    %wr = arith.muli %by, %wm : index
    %wc = arith.muli %bx, %wn : index
    %wr2 = arith.addi %wr, %tz : index
    %wc2 = arith.addi %wc, %ty : index
    %row = arith.muli %wr2, %tm : index
    %col = arith.muli %wc2, %tn : index{bases}
    scf.for %i = %c0 to %kk step %step {{{"".join(lines)}
    }}
    gpu.terminator
  }}
  return
}}"""


def rewrite(op: ir.Operation, shape: tuple[int, int, int, int, str]) -> None:
    """Replaces product `op` by its WMMA launch (module docstring)."""
    batch, m, n, k, acc = shape
    types = [str(v.type) for v in op.operands]
    text = _launch_text(types, batch, m, n, k, acc, op.name == "linalg.batch_matmul")
    helper = ir.Module.parse(text, op.context)
    fn = helper.body.operations[0]
    block = fn.regions[0].blocks[0]
    for arg, value in zip(block.arguments, op.operands):
        arg.replace_all_uses_with(value)
    for inner in list(block.operations)[:-1]:  # all but the return
        inner.operation.move_before(op)
    op.erase()


@dataclasses.dataclass(frozen=True)
class GpuMmaPass(Pass):
    name: ClassVar[str] = "ember-gpu-mma"
    per_function: ClassVar[bool] = True

    def run(self, module: ir.Module, stats: Statistics) -> None:
        for op in ops_named(module, NAMES):
            shape = eligible(op)
            if shape is None:
                stats.add("skipped")
                continue
            rewrite(op, shape)
            stats.add("products")
