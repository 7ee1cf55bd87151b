"""Packing full panels with vector loads and stores (packing_ir.py's full-panel copies).

A step-major panel (a step's lanes contiguous: B by rows, A transposed) is copied one
vector per step (`step_major`). A lane-major one is copied with in-register transposes.

A panel is lane-major when lane L of step k sits at `(lo + L) * ld + p0 + k`: B stored
transposed (`transb`, as every backward product `dY @ W^T` has it) and A stored by rows.
Copying it element by element reads `width` rows at once, one float from each per step:
for B's 64-lane panels (AVX-512) that is 64 streams, more than the hardware prefetchers
follow, and the 256 x 1024 x 1024 product with B transposed took 7.9 ms single-threaded
against 6.4 ms with B by rows (bench case E's step has two such products).

Here a full panel whose width is a multiple of the vector length VL is copied in VL x VL
tiles: VL vector loads, each VL consecutive steps of one lane (a run of one row: one cache
line for f32 on AVX-512), then log2(VL) rounds of interleaving shuffles (round r pairs
vector i with vector i + VL/2: the low halves interleaved, then the high halves; after
log2(VL) rounds vector j holds step j of every lane), then VL vector stores of one step's
lanes each. Lanes go in groups of VL, each group over the whole depth, so VL rows stream
at a time. Steps past the last whole tile are copied element by element.
"""

from __future__ import annotations

from ember.backends.cpu.kernels.gemm_ir import Params


def vectorizable(p: Params, width: int) -> bool:
    """Whether panels of `width` lanes are copied by `tiled_lane_major`: whole vectors of
    a power-of-two length."""
    v = p.lanes
    return v >= 2 and v & (v - 1) == 0 and width % v == 0


def tiled_lane_major(p: Params, width: int, src: str, ld: str, dst: str) -> str:
    """MLIR (scf/arith/vector, for inside `_pack`'s full-panel branch) copying the steps
    `[0, kc - kc % VL)` of the full lane-major panel at `%lane_base` into `dst` from
    `%base`, and returning in `%tp_tail` where the element-by-element copy must start. Uses
    the names `_pack` defines: %c0, %cw, %kc, %p0, %base, %lane_base."""
    v, t = p.lanes, p.element
    vec = f"vector<{v}x{t}>"
    mem = f"memref<?x{t}>"
    half = v // 2
    lo = ", ".join(f"{i}, {i + v}" for i in range(half))
    hi = ", ".join(f"{i}, {i + v}" for i in range(half, v))
    lines = [f"%tp_v = arith.constant {v} : index",
             "%tp_whole = arith.divui %kc, %tp_v : index",
             "%tp_tail = arith.muli %tp_whole, %tp_v : index"]
    loops = []
    for g in range(width // v):
        k = f"%tp_k{g}"
        body = [f"%tp_kk{g} = arith.addi %p0, {k} : index",
                f"%tp_dk{g} = arith.muli {k}, %cw : index",
                f"%tp_d{g} = arith.addi %base, %tp_dk{g} : index"]
        rows = []
        for i in range(v):
            lane = g * v + i
            body += [f"%tp_l{g}_{i} = arith.constant {lane} : index",
                     f"%tp_r{g}_{i} = arith.addi %lane_base, %tp_l{g}_{i} : index",
                     f"%tp_o{g}_{i} = arith.muli %tp_r{g}_{i}, {ld} : index",
                     f"%tp_s{g}_{i} = arith.addi %tp_o{g}_{i}, %tp_kk{g} : index",
                     f"%tp_x{g}_{i} = vector.load {src}[%tp_s{g}_{i}] : {mem}, {vec}"]
            rows.append(f"%tp_x{g}_{i}")
        for r in range(v.bit_length() - 1):
            out = []
            for i in range(half):
                a, b = rows[i], rows[i + half]
                for which, mask in (("a", lo), ("b", hi)):
                    name = f"%tp_y{g}_{r}_{i}{which}"
                    body.append(f"{name} = vector.shuffle {a}, {b} [{mask}] : {vec}, {vec}")
                    out.append(name)
            rows = out
        for j in range(v):
            body += [f"%tp_q{g}_{j} = arith.constant {j * width + g * v} : index",
                     f"%tp_at{g}_{j} = arith.addi %tp_d{g}, %tp_q{g}_{j} : index",
                     f"vector.store {rows[j]}, {dst}[%tp_at{g}_{j}] : {mem}, {vec}"]
        loops += [f"scf.for {k} = %c0 to %tp_tail step %tp_v {{"]
        loops += ["  " + line for line in body] + ["}"]
    indent = " " * 10
    return "\n".join(
        [indent + line for line in lines]
        + [indent + line for line in loops])


def step_major(p: Params, width: int, src: str, dst: str) -> str:
    """MLIR copying one step of a full step-major panel (its `width` lanes contiguous at
    `%row`, as B by rows and A transposed are) to `%d`: one vector load and store, which
    LLVM splits into whole registers. Element by element, LLVM kept 64 scalar loads and
    stores per step of B (it may not reorder them: `src` and `dst` might alias), and
    packing took ~18% of a 256 x 1024 x 1024 product."""
    vec, mem = f"vector<{width}x{p.element}>", f"memref<?x{p.element}>"
    return (f"            %sm_x = vector.load {src}[%row] : {mem}, {vec}\n"
            f"            vector.store %sm_x, {dst}[%d] : {mem}, {vec}")
