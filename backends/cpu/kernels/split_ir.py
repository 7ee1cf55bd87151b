"""The GEMM library's per-thread share of a CBLAS call: `@<p>_plan` and `@<p>_slice`."""

from __future__ import annotations

from ember.backends.cpu.kernels.dot_ir import DOT_COPY_ELEMENTS
from ember.backends.cpu.kernels.dott_ir import DOTT_MAX_COLUMNS
from ember.backends.cpu.kernels.direct_ir import DIRECT_ROWS
from ember.backends.cpu.kernels.gemm_ir import Params


# GEMMs of fewer multiply-adds than this run on the calling thread alone; a thread is
# started per call (about 20-40 us), so each must get at least this much work.
MIN_MACS_PER_THREAD = 1 << 21
# The same with the pool's kept workers (pool_ir.py, the JIT's library): waking one costs a
# few us, so half as much work per thread pays (case D's 256x1024x10: 2.6M multiply-adds, on
# two threads 34-38 us against 56-64 us on one, the machine otherwise quiet).
MIN_MACS_PER_POOLED_THREAD = 1 << 20
MAX_THREADS = 64


def split(p: Params) -> str:
    """`@<p>_plan(m, n, k, want, pooled) -> threads` and `@<p>_slice(order, transa, transb, m, n, k,
    alpha, a, lda, b, ldb, beta, c, ldc, t, threads)`: the CBLAS call's share of thread `t` of
    `threads`. Column-major calls become row-major ones (C^T = B^T A^T); a product narrower than
    a register tile (n < NR) runs as dot products along k if A is stored by rows (dot_ir.py), as
    tiles of C^T along k reading A in place if A is stored transposed and n <= DOTT_MAX_COLUMNS
    (dott_ir.py), else (m > n) as C^T = B^T A^T with C written transposed, so the tile's rows,
    not its columns, go to waste. Threads split C in whole register tiles, by columns if m <= n
    (each thread packs all of A, the smaller operand) else by rows (all of B), unless that dim
    has fewer tiles than threads (splitting 256 x 1024 products by rows packed B twice: the 8
    products of bench case E took 15.4-16.1 ms, 14.3 by columns). k == 0 or alpha == 0 scale C
    by beta (zero it when beta == 0). Workspaces come from a small pool kept across calls
    (driver_ir: a fresh malloc of a few MB per call page-faulted ~1000 times per case E step),
    or the stack for one tile of rows or columns or if malloc fails (slower then, never wrong)."""
    t, mem, pre = p.element, f"memref<?x{p.element}>", p.prefix
    return f"""
  func.func private @ember_gemm_cpus() -> i64
  func.func private @{pre}_take(index) -> {mem}
  func.func private @{pre}_give({mem})

  func.func @{pre}_plan(%m: i64, %n: i64, %k: i64, %want: i64, %pooled: i1) -> i64
      attributes {{llvm.linkage = #llvm.linkage<internal>}} {{
    %c1 = arith.constant 1 : i64
    %cmin_own = arith.constant {MIN_MACS_PER_THREAD} : i64
    %cmin_pooled = arith.constant {MIN_MACS_PER_POOLED_THREAD} : i64
    %cmin = arith.select %pooled, %cmin_pooled, %cmin_own : i64
    %cmax = arith.constant {MAX_THREADS} : i64
    %cmr = arith.constant {p.mr} : i64
    %cnr = arith.constant {p.nr} : i64
    %c0 = arith.constant 0 : i64
    %mn = arith.muli %m, %n : i64
    %macs = arith.muli %mn, %k : i64
    %by_work = arith.divsi %macs, %cmin : i64
    %mt = arith.ceildivsi %m, %cmr : i64
    %nt = arith.ceildivsi %n, %cnr : i64
    %units = arith.maxsi %mt, %nt : i64
    %asked = arith.cmpi sgt, %want, %c0 : i64
    %alone = arith.cmpi sle, %by_work, %c1 : i64
    %skip = arith.ori %asked, %alone : i1
    %cpus = scf.if %skip -> i64 {{
      scf.yield %want : i64
    }} else {{
      %s = func.call @ember_gemm_cpus() : () -> i64
      scf.yield %s : i64
    }}
    %a = arith.minsi %cpus, %units : i64
    %b = arith.minsi %a, %by_work : i64
    %d = arith.minsi %b, %cmax : i64
    %r = arith.maxsi %d, %c1 : i64
    %one = arith.select %alone, %c1, %r : i64
    return %one : i64
  }}

  func.func @{pre}_slice(%order: i32, %transa: i32, %transb: i32, %m64: i64, %n64: i64,
      %k64: i64, %alpha: {t}, %a0: {mem}, %lda64: i64, %b0: {mem}, %ldb64: i64, %beta: {t},
      %c: {mem}, %ldc64: i64, %t64: i64, %nt64: i64)
      attributes {{llvm.linkage = #llvm.linkage<internal>}} {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %cmr = arith.constant {p.mr} : index
    %cnr = arith.constant {p.nr} : index
    %cdirect = arith.constant {DIRECT_ROWS} : index
    %notrans = arith.constant 111 : i32
    %colmajor = arith.constant 102 : i32
    %fzero = arith.constant 0.0 : {t}
    %swap = arith.cmpi eq, %order, %colmajor : i32
    %ta0 = arith.cmpi ne, %transa, %notrans : i32
    %tb0 = arith.cmpi ne, %transb, %notrans : i32
    %mi0 = arith.index_cast %m64 : i64 to index
    %ni0 = arith.index_cast %n64 : i64 to index
    %k = arith.index_cast %k64 : i64 to index
    %lda0 = arith.index_cast %lda64 : i64 to index
    %ldb0 = arith.index_cast %ldb64 : i64 to index
    %ldc = arith.index_cast %ldc64 : i64 to index
    %tix = arith.index_cast %t64 : i64 to index
    %ntix = arith.index_cast %nt64 : i64 to index
    // column-major: the row-major product of the swapped operands
    %a1 = arith.select %swap, %b0, %a0 : {mem}
    %b1 = arith.select %swap, %a0, %b0 : {mem}
    %lda1 = arith.select %swap, %ldb0, %lda0 : index
    %ldb1 = arith.select %swap, %lda0, %ldb0 : index
    %ta1 = arith.select %swap, %tb0, %ta0 : i1
    %tb1 = arith.select %swap, %ta0, %tb0 : i1
    %m1 = arith.select %swap, %ni0, %mi0 : index
    %n1 = arith.select %swap, %mi0, %ni0 : index
    // narrow: C^T = op(B)^T op(A)^T, C written transposed
    %true = arith.constant true
    %false_s = arith.constant false
    %thin = arith.cmpi ult, %n1, %cnr : index
    %taller = arith.cmpi ugt, %m1, %n1 : index
    // unless A is stored by rows: then dot products along k (dot_ir)
    %a_rows = arith.xori %ta1, %true : i1
    %kn1 = arith.muli %k, %n1 : index
    %cdotmax = arith.constant {DOT_COPY_ELEMENTS} : index
    %copy_fits = arith.cmpi ule, %kn1, %cdotmax : index
    %b_fits = arith.ori %tb1, %copy_fits : i1
    %dot0 = arith.andi %thin, %a_rows : i1
    %dot = arith.andi %dot0, %b_fits : i1
    // A stored transposed and at most DOTT_MAX_COLUMNS columns: a tile of C^T along all
    // of k, A read in place (dott_ir)
    %cdottmax = arith.constant {DOTT_MAX_COLUMNS} : index
    %n_dott = arith.cmpi ule, %n1, %cdottmax : index
    %dott0 = arith.andi %thin, %ta1 : i1
    %dott = arith.andi %dott0, %n_dott : i1
    %dots = arith.ori %dot, %dott : i1
    %ndot = arith.xori %dots, %true : i1
    %tc0 = arith.andi %thin, %taller : i1
    %tc = arith.andi %tc0, %ndot : i1
    %a = arith.select %tc, %b1, %a1 : {mem}
    %b = arith.select %tc, %a1, %b1 : {mem}
    %lda = arith.select %tc, %ldb1, %lda1 : index
    %ldb = arith.select %tc, %lda1, %ldb1 : index
    %ntb1 = arith.xori %tb1, %true : i1
    %nta1 = arith.xori %ta1, %true : i1
    %ta = arith.select %tc, %ntb1, %ta1 : i1
    %tb = arith.select %tc, %nta1, %tb1 : i1
    %m = arith.select %tc, %n1, %m1 : index
    %n = arith.select %tc, %m1, %n1 : index
    // this thread's rows or columns, in whole register tiles
    %mu = arith.ceildivui %m, %cmr : index
    %nu = arith.ceildivui %n, %cnr : index
    // split where less is packed twice: by columns each thread packs all of A (m x k), by
    // rows all of B (k x n); unless that dim has fewer tiles than threads
    %a_smaller = arith.cmpi ule, %m, %n : index
    %cols_enough = arith.cmpi uge, %nu, %ntix : index
    %rows_enough = arith.cmpi uge, %mu, %ntix : index
    %more_cols = arith.cmpi uge, %nu, %mu : index
    %prefer_cols = arith.select %a_smaller, %cols_enough, %false_s : i1
    %rows_short = arith.xori %rows_enough, %true : i1
    %cols_if_rows_short = arith.andi %rows_short, %more_cols : i1
    %not_a_smaller = arith.xori %a_smaller, %true : i1
    %cols_b = arith.andi %not_a_smaller, %cols_if_rows_short : i1
    %cols_short = arith.xori %cols_enough, %true : i1
    %rows_fallback = arith.andi %a_smaller, %cols_short : i1
    %cols_c = arith.andi %rows_fallback, %more_cols : i1
    %by_cols0 = arith.ori %prefer_cols, %cols_b : i1
    %by_cols = arith.ori %by_cols0, %cols_c : i1
    %units = arith.select %by_cols, %nu, %mu : index
    %tile = arith.select %by_cols, %cnr, %cmr : index
    %extent = arith.select %by_cols, %n, %m : index
    %u0 = arith.muli %units, %tix : index
    %first_unit = arith.divui %u0, %ntix : index
    %t1 = arith.addi %tix, %c1 : index
    %u1 = arith.muli %units, %t1 : index
    %end_unit = arith.divui %u1, %ntix : index
    %s0 = arith.muli %first_unit, %tile : index
    %s1 = arith.muli %end_unit, %tile : index
    %start = arith.minui %s0, %extent : index
    %stop = arith.minui %s1, %extent : index
    %size = arith.subi %stop, %start : index
    %m0 = arith.select %by_cols, %c0, %start : index
    %n0 = arith.select %by_cols, %start, %c0 : index
    %ms = arith.select %by_cols, %m, %size : index
    %ns = arith.select %by_cols, %size, %n : index
    %empty_m = arith.cmpi eq, %ms, %c0 : index
    %empty_n = arith.cmpi eq, %ns, %c0 : index
    %empty = arith.ori %empty_m, %empty_n : i1
    %no_k = arith.cmpi eq, %k, %c0 : index
    %no_alpha = arith.cmpf oeq, %alpha, %fzero : {t}
    %scale_only = arith.ori %no_k, %no_alpha : i1
    %few = arith.cmpi ule, %ms, %cdirect : index
    %ntb = arith.xori %tb, %true : i1
    %ntc = arith.xori %tc, %true : i1
    %by_rows = arith.andi %ntb, %ntc : i1
    %direct = arith.andi %few, %by_rows : i1
    scf.if %empty {{
    }} else {{
      scf.if %scale_only {{
        %no_beta = arith.cmpf oeq, %beta, %fzero : {t}
        scf.for %i = %c0 to %ms step %c1 {{
          %row = arith.addi %m0, %i : index
          scf.for %j = %c0 to %ns step %c1 {{
            %col = arith.addi %n0, %j : index
            %r = arith.select %tc, %col, %row : index
            %q = arith.select %tc, %row, %col : index
            %rs = arith.muli %r, %ldc : index
            %at = arith.addi %rs, %q : index
            %new = scf.if %no_beta -> {t} {{
              scf.yield %fzero : {t}
            }} else {{
              %old = memref.load %c[%at] : {mem}
              %s = arith.mulf %old, %beta : {t}
              scf.yield %s : {t}
            }}
            memref.store %new, %c[%at] : {mem}
          }}
        }}
      }} else {{
        // narrow with A by rows: dot products; a few rows with B by rows: whole register
        // tiles reading A and B in place; the columns left take the packed path
        %done = scf.if %dots -> index {{
          %fine = scf.if %dott -> i1 {{
            %r = func.call @{pre}_dott(%a, %lda, %b, %ldb, %tb, %c, %ldc, %m0, %n0, %ms,
                %ns, %k, %alpha, %beta) : ({mem}, index, {mem}, index, i1, {mem}, index,
                index, index, index, index, index, {t}, {t}) -> i1
            scf.yield %r : i1
          }} else {{
            %r = func.call @{pre}_dot(%a, %lda, %b, %ldb, %tb, %c, %ldc, %m0, %n0, %ms,
                %ns, %k, %alpha, %beta) : ({mem}, index, {mem}, index, i1, {mem}, index,
                index, index, index, index, index, {t}, {t}) -> i1
            scf.yield %r : i1
          }}
          %all = arith.select %fine, %ns, %c0 : index
          scf.yield %all : index
        }} else {{
          %dd = scf.if %direct -> index {{
            %d = func.call @{pre}_direct(%a, %lda, %ta, %b, %ldb, %c, %ldc, %m0, %n0, %ms,
                %ns, %k, %alpha, %beta) : ({mem}, index, i1, {mem}, index, {mem}, index,
                index, index, index, index, index, {t}, {t}) -> index
            scf.yield %d : index
          }} else {{
            scf.yield %c0 : index
          }}
          scf.yield %dd : index
        }}
        %n0r = arith.addi %n0, %done : index
        %nsr = arith.subi %ns, %done : index
        %rest = arith.cmpi ugt, %nsr, %c0 : index
        scf.if %rest {{
        %cmc = arith.constant {p.mc} : index
        %cnc = arith.constant {p.nc} : index
        %ckc = arith.constant {p.kc} : index
        %mr_up = arith.ceildivui %ms, %cmr : index
        %mrs = arith.muli %mr_up, %cmr : index
        %nr_up = arith.ceildivui %nsr, %cnr : index
        %nrs = arith.muli %nr_up, %cnr : index
        %mcb = arith.minui %cmc, %mrs : index
        %ncb = arith.minui %cnc, %nrs : index
        // one register tile of rows or of columns: panels on the stack (no malloc)
        %few_rows = arith.cmpi ule, %ms, %cmr : index
        %few_cols = arith.cmpi ule, %nsr, %cnr : index
        %small = arith.ori %few_rows, %few_cols : i1
        %asize = arith.muli %mcb, %ckc : index
        %bsize = arith.muli %ncb, %ckc : index
        %asize_h = arith.select %small, %c0, %asize : index
        %bsize_h = arith.select %small, %c0, %bsize : index
        %ap = func.call @{pre}_take(%asize_h) : (index) -> {mem}
        %bp = func.call @{pre}_take(%bsize_h) : (index) -> {mem}
        %apx = memref.extract_aligned_pointer_as_index %ap : {mem} -> index
        %bpx = memref.extract_aligned_pointer_as_index %bp : {mem} -> index
        %a_ok = arith.cmpi ne, %apx, %c0 : index
        %b_ok = arith.cmpi ne, %bpx, %c0 : index
        %ok = arith.andi %a_ok, %b_ok : i1
        %true_s = arith.constant true
        %small_not = arith.xori %small, %true_s : i1
        %heap = arith.andi %ok, %small_not : i1
        scf.if %heap {{
          func.call @{pre}_blocked(%a, %lda, %ta, %b, %ldb, %tb, %c, %ldc, %m0, %n0r, %ms, %nsr,
              %k, %alpha, %beta, %ap, %bp, %mcb, %ncb, %tc) : ({mem}, index, i1, {mem},
              index, i1, {mem}, index, index, index, index, index, index, {t}, {t}, {mem},
              {mem}, index, index, i1) -> ()
        }} else {{
          // small, or malloc failed: one panel of A and one of B on the stack (slower
          // only when both m and n span several tiles)
          %aps = memref.alloca() {{alignment = 64 : i64}} : memref<{p.mr * p.kc}x{t}>
          %bps = memref.alloca() {{alignment = 64 : i64}} : memref<{p.nr * p.kc}x{t}>
          %apd = memref.cast %aps : memref<{p.mr * p.kc}x{t}> to {mem}
          %bpd = memref.cast %bps : memref<{p.nr * p.kc}x{t}> to {mem}
          func.call @{pre}_blocked(%a, %lda, %ta, %b, %ldb, %tb, %c, %ldc, %m0, %n0r, %ms, %nsr,
              %k, %alpha, %beta, %apd, %bpd, %cmr, %cnr, %tc) : ({mem}, index, i1, {mem},
              index, i1, {mem}, index, index, index, index, index, index, {t}, {t}, {mem},
              {mem}, index, index, i1) -> ()
        }}
        func.call @{pre}_give(%ap) : ({mem}) -> ()
        func.call @{pre}_give(%bp) : ({mem}) -> ()
        }}
      }}
    }}
    return
  }}
"""
