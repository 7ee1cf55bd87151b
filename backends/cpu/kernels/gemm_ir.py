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


_BYTES = {"f32": 4, "f64": 8}


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


def row_variants(p: Params) -> list[int]:
    """The register tiles' row counts: MR, and fewer for the last rows of A (a product of
    one row would otherwise do MR rows of work)."""
    return sorted({p.mr} | {r for r in (1, 2, 4) if r < p.mr}, reverse=True)


def kernel_name(p: Params, rows: int) -> str:
    return f"{p.prefix}_kernel" if rows == p.mr else f"{p.prefix}_kernel{rows}"


def micro_kernel(p: Params, rows: int | None = None, unroll: int = 4,
                 direct: bool = False) -> str:
    """`@<p>_kernel(ap, ao, bp, bo, kc, c, co, ldc, alpha, beta, mr, nr, tc)`: the MR x NR
    tile of C at `c[co]` (row stride `ldc`; `mr` x `nr` of it valid; stored transposed, row
    i at column i, if `tc`) becomes alpha * (A panel at `ap[ao]` times B panel at `bp[bo]`,
    `kc` deep) + beta * itself; beta == 0 never reads C. Full row-major tiles are written
    with vector stores, other tiles stored by rows under masks (the rows they have, the
    columns they have), tiles stored transposed element by element through a scratch
    tile. `rows` (<= MR) is the tile's height in registers: `@<p>_kernel<rows>` reads only
    the first `rows` of each step's MR packed values of A, for `mr` <= `rows`.

    `direct`: `@<p>_direct<rows>(a, ao, b, bo, kc, c, co, ldc, alpha, beta, mr, nr, tc,
    ars, aks, bks)` reads A and B where they are, unpacked: A's (r, k) at `a[ao + r * ars
    + k * aks]`, B's step k at `b[bo + k * bks]` (its NR values contiguous). For products of
    a few rows, where packing B would cost as much as the product."""
    g = _Gen(p)
    t, v, nrv, lanes, nr = g.t, g.v, p.nrv, p.lanes, p.nr
    mr = p.mr if rows is None else rows
    acc_types = ", ".join([v] * (mr * nrv))
    c0, c1 = g.const(0), g.const(1)
    cmr, cnr = g.const(mr), g.const(nr)
    cstride = g.const(p.mr)  # the packed panel's values of A per step
    cu = g.const(unroll)
    zero = g.op(f"arith.constant dense<0.0> : {v}", "z")
    # kc rounded down to the unrolled step
    rem = g.op(f"arith.remui %kc, {cu} : index", "i")
    kmain = g.op(f"arith.subi %kc, {rem} : index", "i")

    def step_body(g: _Gen, k: str, accs: list[str]) -> list[str]:
        boff = g.add("%bo", g.mul(k, "%bks" if direct else cnr))
        bvec = [g.op(f"vector.load %bp[{g.add(boff, g.const(j * lanes)) if j else boff}] : "
                     f"memref<?x{t}>, {v}", "b") for j in range(nrv)]
        aoff = g.add("%ao", g.mul(k, "%aks" if direct else cstride))
        new = []
        for r in range(mr):
            step = g.mul(g.const(r), "%ars") if direct else g.const(r)
            idx = g.add(aoff, step) if r else aoff
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

    # C's tile is read (beta) and written after the loop: have its lines fetched meanwhile
    # (the rows are ldc apart, often a multiple of 4 KiB: the hardware prefetcher does not
    # see them as one stream). A prefetch never faults, so edge tiles need no check.
    for r in range(mr):
        row = g.add("%co", g.mul(g.const(r), "%ldc")) if r else "%co"
        for j in range(0, nrv * lanes, 64 // _BYTES[t]):
            at = g.add(row, g.const(j)) if j else row
            g.emit(f"memref.prefetch %c[{at}], write, locality<3>, data : memref<?x{t}>")
    accs = loop(g, c0, kmain, cu, [zero] * (mr * nrv), unroll)
    accs = loop(g, kmain, "%kc", c1, accs, 1)
    alpha = g.op(f"vector.broadcast %alpha : {t} to {v}", "al")
    beta = g.op(f"vector.broadcast %beta : {t} to {v}", "be")
    fzero = g.op(f"arith.constant 0.0 : {t}", "fz")
    no_beta = g.op(f"arith.cmpf oeq, %beta, {fzero} : {t}", "nb")
    full_m = g.op(f"arith.cmpi eq, %mr, {cmr} : index", "fm")
    full_n = g.op(f"arith.cmpi eq, %nr, {cnr} : index", "fn")
    full_mn = g.op(f"arith.andi {full_m}, {full_n} : i1", "fu")
    true = g.op("arith.constant true", "tr")
    row_major = g.op(f"arith.xori %tc, {true} : i1", "rm")
    full = g.op(f"arith.andi {full_mn}, {row_major} : i1", "fu")
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
    g.emit(f"}} else {{")
    # an edge tile stored by rows: the rows it has, each under a mask of its columns
    g.emit(f"  scf.if {row_major} {{")
    mask_t = f"vector<{lanes}xi1>"
    for r in range(mr):
        if r:
            inside = g.op(f"arith.cmpi ult, {g.const(r)}, %mr : index", "in")
            g.emit(f"scf.if {inside} {{")
        row = g.add("%co", g.mul(g.const(r), "%ldc"))
        for j in range(nrv):
            at = g.add(row, g.const(j * lanes)) if j else row
            left = g.op(f"arith.subi %nr, {g.const(j * lanes)} : index", "n")
            mask = g.op(f"vector.create_mask {left} : {mask_t}", "mk")
            fresh = g.op(f"arith.mulf {alpha}, {accs[r * nrv + j]} : {v}", "o")
            g.emit(f"scf.if {no_beta} {{")
            g.emit(f"  vector.maskedstore %c[{at}], {mask}, {fresh} : memref<?x{t}>, "
                   f"{mask_t}, {v}")
            g.emit("} else {")
            old = g.op(f"vector.maskedload %c[{at}], {mask}, {zero} : memref<?x{t}>, "
                       f"{mask_t}, {v} into {v}", "o")
            val = g.op(f"vector.fma {beta}, {old}, {fresh} : {v}", "o")
            g.emit(f"  vector.maskedstore %c[{at}], {mask}, {val} : memref<?x{t}>, "
                   f"{mask_t}, {v}")
            g.emit("}")
        if r:
            g.emit("}")
    g.emit("  } else {")
    # an edge tile stored transposed: through a scratch tile, element by element
    tile = g.op(f"memref.alloca() : memref<{mr * nr}x{t}>", "tile")
    for r in range(mr):
        for j in range(nrv):
            g.emit(f"vector.store {accs[r * nrv + j]}, {tile}[{g.const(r * nr + j * lanes)}] "
                   f": memref<{mr * nr}x{t}>, {v}")
    i, jj = g.fresh("i"), g.fresh("j")
    g.emit(f"scf.for {i} = {c0} to %mr step {c1} {{")
    g.emit(f"  scf.for {jj} = {c0} to %nr step {c1} {{")
    src = g.add(g.mul(i, cnr), jj)
    stride_i = g.op(f"arith.select %tc, {c1}, %ldc : index", "i")
    stride_j = g.op(f"arith.select %tc, %ldc, {c1} : index", "i")
    dst = g.add("%co", g.add(g.mul(i, stride_i), g.mul(jj, stride_j)))
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
    g.emit("  }")
    g.emit("}")
    name = f"{p.prefix}_direct{mr}x{p.nrv}" if direct else kernel_name(p, mr)
    strides = ", %ars: index, %aks: index, %bks: index" if direct else ""
    head = (f"  func.func private @{name}(%ap: memref<?x{t}>, %ao: index, "
            f"%bp: memref<?x{t}>, %bo: index, %kc: index, %c: memref<?x{t}>, %co: index, "
            f"%ldc: index, %alpha: {t}, %beta: {t}, %mr: index, %nr: index, %tc: i1"
            f"{strides}) attributes {{llvm.linkage = #llvm.linkage<internal>}} {{")
    return _lines(head, *g.out, "    return", "  }")


def blocked(p: Params) -> str:
    """`@<p>_blocked(a, lda, ta, b, ldb, tb, c, ldc, m0, n0, m, n, k, alpha, beta, ap, bp,
    mcb, ncb, tc)`: C[m0:+m, n0:+n] = alpha op(A)[m0:+m, :k] op(B)[:k, n0:+n] + beta C[...]
    for k > 0, through packed blocks of at most `mcb` rows of A and `ncb` columns of B
    (workspaces `ap`: mcb * KC, `bp`: KC * ncb); C stored transposed if `tc`."""
    t, mem = p.element, f"memref<?x{p.element}>"
    pack_type = f"({mem}, index, i1, index, index, index, index, {mem}) -> ()"
    dispatch = _dispatch_rows(p, row_variants(p), " " * 14)
    row_consts = "\n".join(f"    %rows{r} = arith.constant {r} : index"
                           for r in row_variants(p))
    return f"""
  func.func private @{p.prefix}_blocked(%a: {mem}, %lda: index, %ta: i1, %b: {mem},
      %ldb: index, %tb: i1, %c: {mem}, %ldc: index, %m0: index, %n0: index, %m: index,
      %n: index, %k: index, %alpha: {t}, %beta: {t}, %ap: {mem}, %bp: {mem}, %mcb: index,
      %ncb: index, %tc: i1) attributes {{llvm.linkage = #llvm.linkage<internal>}} {{
    %c0 = arith.constant 0 : index
    %ckc = arith.constant {p.kc} : index
    %cmr = arith.constant {p.mr} : index
    %cnr = arith.constant {p.nr} : index
{row_consts}
    // blocks of the sum of equal depth (a multiple of 8, at most KC): no thin last block
    %c8 = arith.constant 8 : index
    %nkb = arith.ceildivui %k, %ckc : index
    %even = arith.ceildivui %k, %nkb : index
    %even8 = arith.ceildivui %even, %c8 : index
    %kcb = arith.muli %even8, %c8 : index
    %one = arith.constant 1.0 : {t}
    scf.for %jc = %c0 to %n step %ncb {{
      %nc = affine.min affine_map<(d0)[s0, s1] -> (s1, s0 - d0)>(%jc)[%n, %ncb]
      %bj = arith.addi %n0, %jc : index
      scf.for %pc = %c0 to %k step %kcb {{
        %kc = affine.min affine_map<(d0)[s0, s1] -> (s1, s0 - d0)>(%pc)[%k, %kcb]
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
              %at = arith.select %tc, %col, %row : index
              %within = arith.select %tc, %row, %col : index
              %rs = arith.muli %at, %ldc : index
              %co = arith.addi %rs, %within : index
{dispatch}
            }}
          }}
        }}
      }}
    }}
    return
  }}
"""


def _dispatch_rows(p: Params, variants: list[int], pad: str) -> str:
    """The kernel call of `blocked` for a panel of `%mr` rows: the smallest tile that holds
    them, chosen by a chain of scf.if (the largest, MR, last)."""
    t, mem = p.element, f"memref<?x{p.element}>"
    call = (f"func.call @{{name}}(%ap, %ao, %bp, %bo, %kc, %c, %co, %ldc, %alpha, %beta_here, "
            f"%mr, %nr, %tc) : ({mem}, index, {mem}, index, index, {mem}, index, index, {t}, "
            f"{t}, index, index, i1) -> ()")
    if len(variants) == 1:
        return pad + call.format(name=kernel_name(p, variants[0]))
    small = variants[-1]
    return (f"{pad}%fits{small} = arith.cmpi ule, %mr, %rows{small} : index\n"
            f"{pad}scf.if %fits{small} {{\n"
            f"{pad}  " + call.format(name=kernel_name(p, small)) + "\n"
            f"{pad}}} else {{\n" + _dispatch_rows(p, variants[:-1], pad + "  ") + "\n"
            f"{pad}}}")
