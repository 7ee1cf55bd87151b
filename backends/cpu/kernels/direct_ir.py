"""The GEMM library's direct path: products of a few rows, A and B read where they are."""

from __future__ import annotations

import dataclasses

from ember.backends.cpu.kernels.gemm_ir import Params, micro_kernel


DIRECT_ROWS = 4  # products of at most this many rows (per thread) skip packing


def direct_widths(p: Params, rows: int) -> list[int]:
    """Vectors per row of the direct kernels for `rows` rows: as wide as the registers
    allow (a product of one row streams B, and wider steps read whole cache lines), then
    the packed kernels' NRV for what is left."""
    wide = max(p.nrv, min(8, (p.mr * p.nrv) // rows))
    return [wide, p.nrv] if wide != p.nrv else [p.nrv]


def direct_kernels(p: Params) -> str:
    """Every direct kernel `direct` calls."""
    return "".join(micro_kernel(dataclasses.replace(p, nrv=w), rows, direct=True)
                   for rows in range(1, DIRECT_ROWS + 1) for w in direct_widths(p, rows))


def direct(p: Params) -> str:
    """`@<p>_direct(a, lda, ta, b, ldb, c, ldc, m0, n0, m, n, k, alpha, beta) -> done`: for
    a product of 1 to DIRECT_ROWS rows with B stored by rows, C[m0:+m, n0:+done] for the
    columns that fill whole register tiles, with A and B read in place (`direct` kernels:
    no packing, no workspace); returns `done`. The caller does the rest."""
    t, mem = p.element, f"memref<?x{p.element}>"
    kernel_type = (f"({mem}, index, {mem}, index, index, {mem}, index, index, {t}, {t}, "
                   "index, index, i1, index, index, index) -> ()")
    arms = []
    for rows in range(1, DIRECT_ROWS + 1):
        body, start = [], "%c0"
        for w in direct_widths(p, rows):
            width = w * p.lanes
            body.append(f"""
        %w{rows}_{w} = arith.constant {width} : index
        %left{rows}_{w} = arith.subi %n, {start} : index
        %tail{rows}_{w} = arith.remui %left{rows}_{w}, %w{rows}_{w} : index
        %end{rows}_{w} = arith.subi %n, %tail{rows}_{w} : index
        scf.for %j = {start} to %end{rows}_{w} step %w{rows}_{w} {{
          %col = arith.addi %n0, %j : index
          %co = arith.addi %crow, %col : index
          func.call @{p.prefix}_direct{rows}x{w}(%a, %arow, %b, %col, %k, %c, %co, %ldc,
              %alpha, %beta, %m, %w{rows}_{w}, %false, %ars, %aks, %ldb) : {kernel_type}
        }}""")
            start = f"%end{rows}_{w}"
        arms.append(("".join(body), start))
    chain = ""
    for rows in range(DIRECT_ROWS, 0, -1):
        body, end = arms[rows - 1]
        if rows == DIRECT_ROWS:
            chain = f"{body}\n        scf.yield {end} : index"
        else:
            chain = (f"\n        %is{rows} = arith.cmpi eq, %m, %rows{rows} : index\n"
                     f"        %r{rows} = scf.if %is{rows} -> index {{{body}\n"
                     f"        scf.yield {end} : index\n        }} else {{{chain}\n        }}"
                     f"\n        scf.yield %r{rows} : index")
    consts = "\n".join(f"    %rows{r} = arith.constant {r} : index"
                       for r in range(1, DIRECT_ROWS))
    return f"""
  func.func private @{p.prefix}_direct(%a: {mem}, %lda: index, %ta: i1, %b: {mem},
      %ldb: index, %c: {mem}, %ldc: index, %m0: index, %n0: index, %m: index, %n: index,
      %k: index, %alpha: {t}, %beta: {t}) -> index
      attributes {{llvm.linkage = #llvm.linkage<internal>}} {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %false = arith.constant false
{consts}
    // A's (r, k): row-major at (m0 + r) * lda + k, transposed at k * lda + m0 + r
    %ars = arith.select %ta, %c1, %lda : index
    %aks = arith.select %ta, %lda, %c1 : index
    %arow = arith.muli %m0, %ars : index
    %crow = arith.muli %m0, %ldc : index
    %done = scf.execute_region -> index {{{chain}
    }}
    return %done : index
  }}
"""
