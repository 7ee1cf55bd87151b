"""The GEMM library's kernel for narrow products whose left operand is stored transposed.

C[m x n] = alpha A^T B + beta C with n small and A stored k x m (the weight gradient of a
10-wide output layer, h^T @ dlogits): a column of C^T, C[i:i+VL, j], is a sum over k of
rows of A (contiguous along i) scaled by one value of B. `@<p>_dott` keeps a tile of C^T,
DOTT_COLUMNS columns of C by `vectors(p)` vectors of rows, in registers along a block of
DOTT_K_BLOCK steps of k: each step loads those vectors of A and broadcasts DOTT_COLUMNS
values of B (stored by rows or transposed) into as many FMAs as the tile has vectors. A is
read once per DOTT_COLUMNS columns, in place; nothing is packed (the C^T = B^T A^T path
packed all of A, m x k, for a product of 10 columns: 1024 x 256 x 10 took 130 us on one
Zen 4 core, 2.5x its by-rows twin). The tile is transposed in registers
(dot_ir.transpose_network) and stored by rows of C under a mask of its columns. Rows past
m load under a mask and are not stored; columns past n repeat the last one and are not
stored. Each block of k is summed in order and added to C in turn (beta applied with the
first), as the packed path adds its blocks of KC: the same bits whatever the tile or
thread a row falls in, and errors that grow with KC, not k.
"""

from __future__ import annotations

from ember.backends.cpu.kernels.dot_ir import transpose_network
from ember.backends.cpu.kernels.gemm_ir import Params

DOTT_COLUMNS = 10
# products of at most this many columns take this path (A is read once per DOTT_COLUMNS)
DOTT_MAX_COLUMNS = 16
DOTT_K_BLOCK = 256  # steps of k summed in registers before they are added to C
PREFETCH_STEPS = 8  # rows of A fetched ahead (each step jumps lda: no hardware stream)


def vectors(p: Params) -> int:
    """Vectors of rows per tile: 2 with 32 vector registers (20 accumulators), else 1."""
    return 2 if p.mr * p.nrv >= 24 else 1


def dott(p: Params) -> str:
    """`@<p>_dott(a, lda, b, ldb, tb, c, ldc, m0, n0, m, n, k, alpha, beta) -> true`:
    C[m0:+m, n0:+n] for A stored transposed (`a[k * lda + m0 + i]`) and B stored by rows
    (`b[k * ldb + n0 + j]`) or transposed (`tb`: `b[(n0 + j) * ldb + k]`), k > 0."""
    t, mem, lanes = p.element, f"memref<?x{p.element}>", p.lanes
    v, mask_t = f"vector<{lanes}x{t}>", f"vector<{lanes}xi1>"
    iv, jc = vectors(p), DOTT_COLUMNS
    acc_types = ", ".join([v] * (iv * jc))
    out = []
    for q in range(iv):
        out += [f"      %ilq{q} = arith.subi %ileft, %c{q * lanes} : index" if q else
                "      %ilq0 = arith.addi %ileft, %c0 : index",
                f"      %il{q} = arith.maxsi %ilq{q}, %c0 : index",
                f"      %im{q} = vector.create_mask %il{q} : {mask_t}"]
    out.append("      scf.for %j = %c0 to %n step %cjc {")
    for c in range(jc):
        out += [f"        %cj{c} = arith.addi %j, %c{c} : index",
                f"        %cc{c} = arith.minui %cj{c}, %nlast : index",
                f"        %cn{c} = arith.addi %n0, %cc{c} : index",
                f"        %bj{c} = arith.muli %cn{c}, %bjs : index"]
    init = ", ".join(f"%s{i} = %vzero" for i in range(iv * jc))
    # blocks of DOTT_K_BLOCK steps of k, each added to C (beta on the first only): sums of
    # as many terms in registers as the packed path's blocks
    out += ["        scf.for %kb = %c0 to %k step %ckb {",
            "        %kend0 = arith.addi %kb, %ckb : index",
            "        %kend = arith.minui %kend0, %k : index",
            "        %first = arith.cmpi eq, %kb, %c0 : index",
            f"        %beta_b = arith.select %first, %beta, %one : {t}",
            f"        %vbb = vector.broadcast %beta_b : {t} to {v}",
            f"        %nbb = arith.cmpf oeq, %beta_b, %fzero : {t}"]
    out += [f"        %acc:{iv * jc} = scf.for %kk = %kb to %kend step %c1 iter_args({init}) "
            f"-> ({acc_types}) {{",
            "          %arow = arith.muli %kk, %lda : index",
            "          %aat = arith.addi %arow, %acol : index",
            "          %ahead = arith.addi %aat, %apre : index",
            f"          memref.prefetch %a[%ahead], read, locality<3>, data : {mem}",
            "          %bk = arith.muli %kk, %bks : index"]
    for q in range(iv):
        out += [f"          %aq{q} = arith.addi %aat, %c{q * lanes} : index" if q else
                "          %aq0 = arith.addi %aat, %c0 : index",
                f"          %va{q} = vector.maskedload %a[%aq{q}], %im{q}, %vzero : {mem}, "
                f"{mask_t}, {v} into {v}"]
    new = []
    for c in range(jc):
        out += [f"          %bat{c} = arith.addi %bj{c}, %bk : index",
                f"          %x{c} = memref.load %b[%bat{c}] : {mem}",
                f"          %vb{c} = vector.broadcast %x{c} : {t} to {v}"]
        for q in range(iv):
            out.append(f"          %f{c}_{q} = vector.fma %va{q}, %vb{c}, %s{c * iv + q} : {v}")
            new.append(f"%f{c}_{q}")
    out += [f"          scf.yield {', '.join(new)} : {acc_types}", "        }"]
    # the tile, C^T, to rows of C: lanes x lanes blocks transposed in registers
    for q in range(iv):
        for c0 in range(0, jc, lanes):
            rows = [f"%acc#{c * iv + q}" if c < jc else "%vzero"
                    for c in range(c0, c0 + lanes)]
            rows = transpose_network(out, rows, lanes, v, f"%tt{q}_{c0}_", " " * 8)
            # the columns of this chunk that C has (0 to min(lanes, jc - c0))
            out += [f"        %cl{q}_{c0} = arith.subi %n, %cj{c0} : index" if c0 else
                    f"        %cl{q}_{c0} = arith.subi %n, %j : index",
                    f"        %cp{q}_{c0} = arith.maxsi %cl{q}_{c0}, %c0 : index",
                    f"        %cmin{q}_{c0} = arith.minsi %cp{q}_{c0}, %c{min(lanes, jc - c0)}"
                    f" : index",
                    f"        %cms{q}_{c0} = vector.create_mask %cmin{q}_{c0} : {mask_t}",
                    f"        %col{q}_{c0} = arith.addi %n0, %j : index" if not c0 else
                    f"        %col{q}_{c0} = arith.addi %n0, %cj{c0} : index"]
            for r in range(lanes):
                name = f"{q}_{c0}_{r}"
                out += [f"        %ri{name} = arith.addi %i, %c{q * lanes + r} : index",
                        f"        %rin{name} = arith.cmpi ult, %ri{name}, %m : index",
                        f"        scf.if %rin{name} {{",
                        f"          %rg{name} = arith.addi %m0, %ri{name} : index",
                        f"          %rs{name} = arith.muli %rg{name}, %ldc : index",
                        f"          %at{name} = arith.addi %rs{name}, %col{q}_{c0} : index",
                        f"          %ax{name} = arith.mulf %valpha, {rows[r]} : {v}",
                        "          scf.if %nbb {",
                        f"            vector.maskedstore %c[%at{name}], %cms{q}_{c0}, %ax{name} "
                        f": {mem}, {mask_t}, {v}",
                        "          } else {",
                        f"            %old{name} = vector.maskedload %c[%at{name}], "
                        f"%cms{q}_{c0}, %vzero : {mem}, {mask_t}, {v} into {v}",
                        f"            %y{name} = vector.fma %vbb, %old{name}, %ax{name} : {v}",
                        f"            vector.maskedstore %c[%at{name}], %cms{q}_{c0}, %y{name} "
                        f": {mem}, {mask_t}, {v}",
                        "          }",
                        "        }"]
    out += ["        }", "      }"]
    consts = "\n".join(f"    %c{i} = arith.constant {i} : index"
                       for i in range(2, max(jc, iv * lanes, lanes) + 1))
    body = "\n".join(out)
    return f"""
  func.func private @{p.prefix}_dott(%a: {mem}, %lda: index, %b: {mem}, %ldb: index,
      %tb: i1, %c: {mem}, %ldc: index, %m0: index, %n0: index, %m: index, %n: index,
      %k: index, %alpha: {t}, %beta: {t}) -> i1
      attributes {{llvm.linkage = #llvm.linkage<internal>}} {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
{consts}
    %cjc = arith.constant {jc} : index
    %ci = arith.constant {iv * lanes} : index
    %true = arith.constant true
    %fzero = arith.constant 0.0 : {t}
    %vzero = arith.constant dense<0.0> : {v}
    %valpha = vector.broadcast %alpha : {t} to {v}
    %one = arith.constant 1.0 : {t}
    %ckb = arith.constant {DOTT_K_BLOCK} : index
    %nlast = arith.subi %n, %c1 : index
    // B's step along k and along j
    %bks = arith.select %tb, %c1, %ldb : index
    %bjs = arith.select %tb, %ldb, %c1 : index
    %cpre = arith.constant {PREFETCH_STEPS} : index
    %apre = arith.muli %cpre, %lda : index
    scf.for %i = %c0 to %m step %ci {{
      %ileft = arith.subi %m, %i : index
      %acol0 = arith.addi %m0, %i : index
      %acol = arith.addi %acol0, %c0 : index
{body}
    }}
    return %true : i1
  }}
"""
