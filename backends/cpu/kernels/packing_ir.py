"""The GEMM library's packing functions (see gemm_ir.py for the algorithm they serve)."""

from __future__ import annotations

from ember.backends.cpu.kernels.gemm_ir import Params


def packing(p: Params) -> str:
    """`@<p>_pack_a(a, lda, ta, i0, p0, mc, kc, ap)`: op(A)[i0:+mc, p0:+kc] into panels of
    MR rows, ap[(panel * kc + k) * MR + r], rows past `mc` zero. `@<p>_pack_b(b, ldb, tb, p0,
    j0, kc, nc, bp)`: op(B)[p0:+kc, j0:+nc] into panels of NR columns, bp[(panel * kc + k)
    * NR + j], columns past `nc` zero. `ta`/`tb`: the operand is stored transposed. Full
    panels take unrolled copies with the row (column) offsets hoisted; edge panels go
    element by element."""
    return _pack("a", p, p.mr) + _pack("b", p, p.nr)


def _pack(which: str, p: Params, width: int) -> str:
    """One packing function: `width` lanes of the packed panel (MR rows of A, NR columns
    of B). For A, lane r of step k is A[i0 + r, p0 + k] (stored: row-major at (i0+r)*lda +
    p0+k, transposed at (p0+k)*lda + i0+r); for B, lane j of step k is B[p0 + k, j0 + j]
    (row-major at (p0+k)*ldb + j0+j, transposed at (j0+j)*ldb + p0+k). Both are
    "lane-major at lane*ld + k" or "step-major at k*ld + lane" in a common form."""
    t, pre = p.element, p.prefix
    ld, tr = ("%lda", "%ta") if which == "a" else ("%ldb", "%tb")
    src, dst = ("%a", "%ap") if which == "a" else ("%b", "%bp")
    # A row-major and B transposed are lane-major: lane L of step k at (lo+L)*ld + p0+k
    lane_major_when = "%ta_n" if which == "a" else tr  # i1 true when lane-major
    mem = f"memref<?x{t}>"
    unrolled_lane_major = "\n".join(
        f"""            %lb{L} = arith.addi %lane_base, %c{L}l : index
            %la{L} = arith.muli %lb{L}, {ld} : index
            %ls{L} = arith.addi %la{L}, %kk : index
            %x{L} = memref.load {src}[%ls{L}] : {mem}
            %dl{L} = arith.addi %d, %c{L}l : index
            memref.store %x{L}, {dst}[%dl{L}] : {mem}""" for L in range(width))
    unrolled_step_major = "\n".join(
        f"""            %ss{L} = arith.addi %row, %c{L}l : index
            %y{L} = memref.load {src}[%ss{L}] : {mem}
            %ds{L} = arith.addi %d, %c{L}l : index
            memref.store %y{L}, {dst}[%ds{L}] : {mem}""" for L in range(width))
    lane_consts = "\n".join(f"    %c{L}l = arith.constant {L} : index" for L in range(width))
    return f"""
  func.func private @{pre}_pack_{which}({src}: {mem}, {ld}: index, {tr}: i1, %lo: index,
      %p0: index, %extent: index, %kc: index, {dst}: {mem})
      attributes {{llvm.linkage = #llvm.linkage<internal>}} {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %cw = arith.constant {width} : index
    %true_ = arith.constant true
    %zero = arith.constant 0.0 : {t}
{lane_consts}
    %ta_n = arith.xori {tr}, %true_ : i1
    scf.for %panel = %c0 to %extent step %cw {{
      %lanes = affine.min affine_map<(d0)[s0] -> ({width}, s0 - d0)>(%panel)[%extent]
      %base = arith.muli %panel, %kc : index
      %lane_base = arith.addi %lo, %panel : index
      %full = arith.cmpi eq, %lanes, %cw : index
      scf.if %full {{
        scf.if {lane_major_when} {{
          scf.for %k = %c0 to %kc step %c1 {{
            %dk = arith.muli %k, %cw : index
            %d = arith.addi %base, %dk : index
            %kk = arith.addi %p0, %k : index
{unrolled_lane_major}
          }}
        }} else {{
          scf.for %k = %c0 to %kc step %c1 {{
            %dk = arith.muli %k, %cw : index
            %d = arith.addi %base, %dk : index
            %kk = arith.addi %p0, %k : index
            %rs = arith.muli %kk, {ld} : index
            %row = arith.addi %rs, %lane_base : index
{unrolled_step_major}
          }}
        }}
      }} else {{
        scf.for %k = %c0 to %kc step %c1 {{
          %dk = arith.muli %k, %cw : index
          %d = arith.addi %base, %dk : index
          %kk = arith.addi %p0, %k : index
          scf.for %L = %c0 to %cw step %c1 {{
            %dst = arith.addi %d, %L : index
            %inside = arith.cmpi ult, %L, %lanes : index
            %x = scf.if %inside -> {t} {{
              %lane = arith.addi %lane_base, %L : index
              %at = scf.if {lane_major_when} -> index {{
                %s = arith.muli %lane, {ld} : index
                %q = arith.addi %s, %kk : index
                scf.yield %q : index
              }} else {{
                %s = arith.muli %kk, {ld} : index
                %q = arith.addi %s, %lane : index
                scf.yield %q : index
              }}
              %y = memref.load {src}[%at] : {mem}
              scf.yield %y : {t}
            }} else {{
              scf.yield %zero : {t}
            }}
            memref.store %x, {dst}[%dst] : {mem}
          }}
        }}
      }}
    }}
    return
  }}
"""
