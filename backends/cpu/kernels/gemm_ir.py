"""The GEMM library's MLIR: packing, the vector micro-kernel and the blocked loop nest.

Goto's algorithm, as BLIS and OpenBLAS run it, written in upstream dialects (func, scf,
arith, memref, vector) and lowered by upstream passes. For C = alpha op(A) op(B) + beta C,
row-major, one thread's share (`@<p>_slice`):

    for jc in 0..n step NC:                  B's block of columns (the L3 cache)
      for pc in 0..k step KC:                a block of the sum (beta only on the first)
        pack op(B)[pc:+kc, jc:+nc]           panels of NR columns, k-major, zero-padded
        for ic in 0..m step MC:              A's block of rows (the L2 cache)
          pack op(A)[ic:+mc, pc:+kc]         panels of MR rows, k-major, zero-padded
          for jr in 0..nc step NR:           one B panel (the L1 cache) ...
            for ir in 0..mc step MR:         ... against every A panel
              micro-kernel: an MR x NR tile of C in MR * NR/VL vector registers

The micro-kernel keeps the tile in `MR * NRV` accumulators (NRV vectors of VL lanes per
row); each step of the sum loads NRV vectors of B and broadcasts MR scalars of A into
`vector.fma`s, which LLVM turns into FMAs with a broadcast memory operand. Why hand-built
rather than `transform.structured.tile/pack` + `vectorize` of `linalg.matmul`: the register
tile, the packed layouts and the loop order are the whole kernel, and here they are
explicit, one parameter each (Params), chosen per ISA; the transform route gives a
`vector.contract` whose lowering leaves the register allocation and the broadcasts to
chance, and packs with copies we could not order for the caches. What is upstream: every
op and every lowering pass; `vector.fma`, `vector.load/store` and scf carry the design.
"""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class Params:
    """One micro-kernel shape and the cache blocking around it, for one element type."""
    element: str  # "f32" or "f64"
    lanes: int    # VL: elements per vector register
    mr: int       # rows of the register tile
    nrv: int      # vectors per row of the register tile (NR = nrv * lanes)
    kc: int       # depth of a packed block
    mc: int       # rows of A's packed block (a multiple of mr)
    nc: int       # columns of B's packed block (a multiple of nr)

    @property
    def nr(self) -> int:
        return self.nrv * self.lanes

    @property
    def prefix(self) -> str:
        return "ember_s" if self.element == "f32" else "ember_d"


def _lines(*parts) -> str:
    return "\n".join(p for p in parts if p is not None)


class _Gen:
    """Accumulates SSA lines with fresh names."""

    def __init__(self, p: Params):
        self.p = p
        self.t = p.element
        self.v = f"vector<{p.lanes}x{p.element}>"
        self.out: list[str] = []
        self.n = 0

    def fresh(self, stem: str = "v") -> str:
        self.n += 1
        return f"%{stem}{self.n}"

    def emit(self, line: str) -> None:
        self.out.append("    " + line)

    def op(self, text: str, stem: str = "v") -> str:
        name = self.fresh(stem)
        self.emit(f"{name} = {text}")
        return name

    def const(self, n: int) -> str:
        return self.op(f"arith.constant {n} : index", "c")

    def add(self, a: str, b: str) -> str:
        return self.op(f"arith.addi {a}, {b} : index", "i")

    def mul(self, a: str, b: str) -> str:
        return self.op(f"arith.muli {a}, {b} : index", "i")


def micro_kernel(p: Params, unroll: int = 4) -> str:
    """`@<p>_kernel(ap, ao, bp, bo, kc, c, co, ldc, alpha, beta, mr, nr)`: the MR x NR tile
    of C at `c[co]` (row stride `ldc`; `mr` x `nr` of it valid) becomes alpha * (A panel at
    `ap[ao]` times B panel at `bp[bo]`, `kc` deep) + beta * itself; beta == 0 never reads C."""
    g = _Gen(p)
    t, v, mr, nrv, lanes, nr = g.t, g.v, p.mr, p.nrv, p.lanes, p.nr
    acc_types = ", ".join([v] * (mr * nrv))
    c0, c1 = g.const(0), g.const(1)
    cmr, cnr, cl = g.const(mr), g.const(nr), g.const(lanes)
    cu = g.const(unroll)
    zero = g.op(f"arith.constant dense<0.0> : {v}", "z")
    # kc rounded down to the unrolled step
    rem = g.op(f"arith.remui %kc, {cu} : index", "i")
    kmain = g.op(f"arith.subi %kc, {rem} : index", "i")

    def step_body(g: _Gen, k: str, accs: list[str]) -> list[str]:
        boff = g.add("%bo", g.mul(k, cnr))
        bvec = [g.op(f"vector.load %bp[{g.add(boff, g.const(j * lanes)) if j else boff}] : "
                     f"memref<?x{t}>, {v}", "b") for j in range(nrv)]
        aoff = g.add("%ao", g.mul(k, cmr))
        new = []
        for r in range(mr):
            idx = g.add(aoff, g.const(r)) if r else aoff
            s = g.op(f"memref.load %ap[{idx}] : memref<?x{t}>", "s")
            bc = g.op(f"vector.broadcast {s} : {t} to {v}", "a")
            for j in range(nrv):
                new.append(g.op(f"vector.fma {bc}, {bvec[j]}, {accs[r * nrv + j]} : {v}",
                                "f"))
        return new

    def loop(g: _Gen, lo: str, hi: str, step: str, init: list[str], times: int) -> list[str]:
        k = g.fresh("k")
        args = [g.fresh("acc") for _ in init]
        results = g.fresh("r")
        carried = ", ".join(f"{a} = {i}" for a, i in zip(args, init))
        g.emit(f"{results}:{len(init)} = scf.for {k} = {lo} to {hi} step {step} "
               f"iter_args({carried}) -> ({acc_types}) {{")
        accs = args
        for u in range(times):
            ku = g.add(k, g.const(u)) if u else k
            accs = step_body(g, ku, accs)
        g.emit(f"  scf.yield {', '.join(accs)} : {acc_types}")
        g.emit("}")
        return [f"{results}#{i}" for i in range(len(init))]

    accs = loop(g, c0, kmain, cu, [zero] * (mr * nrv), unroll)
    accs = loop(g, kmain, "%kc", c1, accs, 1)
    alpha = g.op(f"vector.broadcast %alpha : {t} to {v}", "al")
    beta = g.op(f"vector.broadcast %beta : {t} to {v}", "be")
    fzero = g.op(f"arith.constant 0.0 : {t}", "fz")
    no_beta = g.op(f"arith.cmpf oeq, %beta, {fzero} : {t}", "nb")
    full_m = g.op(f"arith.cmpi eq, %mr, {cmr} : index", "fm")
    full_n = g.op(f"arith.cmpi eq, %nr, {cnr} : index", "fn")
    full = g.op(f"arith.andi {full_m}, {full_n} : i1", "fu")
    g.emit(f"scf.if {full} {{")
    g.emit(f"  scf.if {no_beta} {{")
    for r in range(mr):
        row = g.add("%co", g.mul(g.const(r), "%ldc"))
        for j in range(nrv):
            at = g.add(row, g.const(j * lanes)) if j else row
            val = g.op(f"arith.mulf {alpha}, {accs[r * nrv + j]} : {v}", "o")
            g.emit(f"vector.store {val}, %c[{at}] : memref<?x{t}>, {v}")
    g.emit("  } else {")
    for r in range(mr):
        row = g.add("%co", g.mul(g.const(r), "%ldc"))
        for j in range(nrv):
            at = g.add(row, g.const(j * lanes)) if j else row
            old = g.op(f"vector.load %c[{at}] : memref<?x{t}>, {v}", "o")
            scaled = g.op(f"arith.mulf {beta}, {old} : {v}", "o")
            val = g.op(f"vector.fma {alpha}, {accs[r * nrv + j]}, {scaled} : {v}", "o")
            g.emit(f"vector.store {val}, %c[{at}] : memref<?x{t}>, {v}")
    g.emit("  }")
    g.emit("} else {")
    # an edge tile: through a scratch tile, element by element
    tile = g.op(f"memref.alloca() : memref<{mr * nr}x{t}>", "tile")
    for r in range(mr):
        for j in range(nrv):
            g.emit(f"vector.store {accs[r * nrv + j]}, {tile}[{g.const(r * nr + j * lanes)}] "
                   f": memref<{mr * nr}x{t}>, {v}")
    i, jj = g.fresh("i"), g.fresh("j")
    g.emit(f"scf.for {i} = {c0} to %mr step {c1} {{")
    g.emit(f"  scf.for {jj} = {c0} to %nr step {c1} {{")
    src = g.add(g.mul(i, cnr), jj)
    dst = g.add("%co", g.add(g.mul(i, "%ldc"), jj))
    x = g.op(f"memref.load {tile}[{src}] : memref<{mr * nr}x{t}>", "x")
    ax = g.op(f"arith.mulf %alpha, {x} : {t}", "x")
    g.emit(f"scf.if {no_beta} {{")
    g.emit(f"  memref.store {ax}, %c[{dst}] : memref<?x{t}>")
    g.emit("} else {")
    old = g.op(f"memref.load %c[{dst}] : memref<?x{t}>", "x")
    val = g.op(f"math.fma %beta, {old}, {ax} : {t}", "x")
    g.emit(f"  memref.store {val}, %c[{dst}] : memref<?x{t}>")
    g.emit("}")
    g.emit("  }")
    g.emit("}")
    g.emit("}")
    head = (f"  func.func private @{p.prefix}_kernel(%ap: memref<?x{t}>, %ao: index, "
            f"%bp: memref<?x{t}>, %bo: index, %kc: index, %c: memref<?x{t}>, %co: index, "
            f"%ldc: index, %alpha: {t}, %beta: {t}, %mr: index, %nr: index) "
            "attributes {llvm.linkage = #llvm.linkage<internal>} {")
    return _lines(head, *g.out, "    return", "  }")


def blocked(p: Params) -> str:
    """`@<p>_blocked(a, lda, ta, b, ldb, tb, c, ldc, m0, n0, m, n, k, alpha, beta, ap, bp,
    mcb, ncb)`: C[m0:+m, n0:+n] = alpha op(A)[m0:+m, :k] op(B)[:k, n0:+n] + beta C[...] for
    k > 0, through packed blocks of at most `mcb` rows of A and `ncb` columns of B
    (workspaces `ap`: mcb * KC, `bp`: KC * ncb)."""
    t, mem = p.element, f"memref<?x{p.element}>"
    pack_type = f"({mem}, index, i1, index, index, index, index, {mem}) -> ()"
    return f"""
  func.func private @{p.prefix}_blocked(%a: {mem}, %lda: index, %ta: i1, %b: {mem},
      %ldb: index, %tb: i1, %c: {mem}, %ldc: index, %m0: index, %n0: index, %m: index,
      %n: index, %k: index, %alpha: {t}, %beta: {t}, %ap: {mem}, %bp: {mem}, %mcb: index,
      %ncb: index) attributes {{llvm.linkage = #llvm.linkage<internal>}} {{
    %c0 = arith.constant 0 : index
    %ckc = arith.constant {p.kc} : index
    %cmr = arith.constant {p.mr} : index
    %cnr = arith.constant {p.nr} : index
    %one = arith.constant 1.0 : {t}
    scf.for %jc = %c0 to %n step %ncb {{
      %nc = affine.min affine_map<(d0)[s0, s1] -> (s1, s0 - d0)>(%jc)[%n, %ncb]
      %bj = arith.addi %n0, %jc : index
      scf.for %pc = %c0 to %k step %ckc {{
        %kc = affine.min affine_map<(d0)[s0] -> ({p.kc}, s0 - d0)>(%pc)[%k]
        %first = arith.cmpi eq, %pc, %c0 : index
        %beta_here = arith.select %first, %beta, %one : {t}
        func.call @{p.prefix}_pack_b(%b, %ldb, %tb, %bj, %pc, %nc, %kc, %bp) : {pack_type}
        scf.for %ic = %c0 to %m step %mcb {{
          %mc = affine.min affine_map<(d0)[s0, s1] -> (s1, s0 - d0)>(%ic)[%m, %mcb]
          %ai = arith.addi %m0, %ic : index
          func.call @{p.prefix}_pack_a(%a, %lda, %ta, %ai, %pc, %mc, %kc, %ap) : {pack_type}
          scf.for %jr = %c0 to %nc step %cnr {{
            %nr = affine.min affine_map<(d0)[s0] -> ({p.nr}, s0 - d0)>(%jr)[%nc]
            %bo = arith.muli %jr, %kc : index
            %col = arith.addi %bj, %jr : index
            scf.for %ir = %c0 to %mc step %cmr {{
              %mr = affine.min affine_map<(d0)[s0] -> ({p.mr}, s0 - d0)>(%ir)[%mc]
              %ao = arith.muli %ir, %kc : index
              %row = arith.addi %ai, %ir : index
              %rs = arith.muli %row, %ldc : index
              %co = arith.addi %rs, %col : index
              func.call @{p.prefix}_kernel(%ap, %ao, %bp, %bo, %kc, %c, %co, %ldc, %alpha,
                  %beta_here, %mr, %nr)
                : ({mem}, index, {mem}, index, index, {mem}, index, index, {t}, {t}, index,
                   index) -> ()
            }}
          }}
        }}
      }}
    }}
    return
  }}
"""
