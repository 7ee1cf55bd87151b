"""The GEMM library's kernel for narrow products: fewer columns than a register tile.

C[m x n] = alpha A B + beta C with n < NR (a Dense layer with 10 outputs) wastes most of a
register tile whichever way it is laid (NR columns, or MR rows of C^T after packing A^T).
When A is stored by rows, each C[i, j] is a dot product of a row of A with a column of B,
both contiguous along k once B is read transposed (in place if B is stored transposed,
else copied: n x k is small). `@<p>_dot` computes DR x DC blocks of C at a time, DR * DC
vector accumulators running along k (DR loads of A and DC of B^T per DR * DC FMAs), then
sums each accumulator's lanes (4 x 5: a 10-wide layer in two blocks; 4 x 5 measured 10%
faster than 4 x 4 and 6 x 4 on 256 x 1024 by 1024 x 10), over panels of rows of A of
about DOT_PANEL_BYTES, each swept once per block of DC columns: the panel stays in L2 and
those columns of B^T in L1 (5% faster than every column block per DR rows, which read all
of B^T from L2 each time). Rows and columns past the matrix
repeat the last one (valid reads) and are not stored; the last steps of k load under a
mask. On 256 x 1024 x 10 (Zen 4, one thread) the loop along k runs at the FMA units'
peak; what is around it was a third of the time and is now a tenth:
  - the copy of B^T transposes lanes x lanes blocks in registers (`transpose_block`); B
    read column by column as scalars took a tenth, and stored row by row (10 streams
    4 KiB apart, one L1 set) a quarter;
  - the copy's rows are one vector (a cache line with AVX-512) past a multiple of 4 KiB, so
    the DC rows of B^T and DR of A the loop reads do not all fall in one L1 set (k = 1024:
    9 streams, 8 ways);
  - a block's DR * DC sums across lanes are one tree of shuffles and adds (`sum_lanes`),
    not DR * DC ordered reductions of lanes - 1 dependent adds each.
Each C[i, j] is summed in an order set by the shape alone, whichever block or thread its
row falls in: the same bits on every call and for any number of threads.
"""

from __future__ import annotations

from ember.backends.cpu.kernels.gemm_ir import _BYTES, Params

DR, DC = 4, 5
# B (k x n, stored by rows) is copied transposed for this path when it has at most this
# many elements; larger ones take the packed path
DOT_COPY_ELEMENTS = 1 << 18
# rows of A are taken in panels of about this many bytes (at least DR rows): a panel stays
# in L2 while each block of DC columns sweeps it
DOT_PANEL_BYTES = 1 << 18


def sum_lanes(lines: list[str], vectors: list[str], lanes: int, t: str) -> list[tuple[str, int]]:
    """Appends to `lines` the ops that sum each of `vectors` (vector<lanes x t>) across its
    lanes, several at a time; returns where each sum is: (a vector, its lane). A tree of
    shuffles and adds in a fixed order (the same bits on every call): each level pairs
    two vectors, each holding 2^L sums of `lanes / 2^L` lanes, into one holding 2^(L+1) of
    half as many, by adding the low halves of each group to the high halves (a vector
    without a partner pairs with itself; its copy's lanes are not used). 20 accumulators
    take 20 adds and 40 shuffles, not 20 reductions of 15 dependent adds each."""
    v = f"vector<{lanes}x{t}>"
    level: list[tuple[str, list[int | None]]] = [(x, [i]) for i, x in enumerate(vectors)]
    width, step = lanes, 0
    while width > 1:
        half, nxt = width // 2, []
        for pair in range(0, len(level), 2):
            (x, xs), (y, ys) = level[pair], level[pair + 1] if pair + 1 < len(level) else \
                (level[pair][0], [None] * len(level[pair][1]))
            groups = len(xs)
            lo = [g * width + i for g in range(groups) for i in range(half)]
            hi = [g * width + half + i for g in range(groups) for i in range(half)]
            name = f"%red{step}_{pair // 2}"
            lo_all = ", ".join(map(str, lo + [lanes + j for j in lo]))
            hi_all = ", ".join(map(str, hi + [lanes + j for j in hi]))
            lines.append(f"        {name}lo = vector.shuffle {x}, {y} [{lo_all}] : {v}, {v}")
            lines.append(f"        {name}hi = vector.shuffle {x}, {y} [{hi_all}] : {v}, {v}")
            lines.append(f"        {name} = arith.addf {name}lo, {name}hi : {v}")
            nxt.append((name, xs + ys))
        level, width, step = nxt, half, step + 1
    where: dict[int, tuple[str, int]] = {}
    for name, sources in level:
        for lane, source in enumerate(sources):
            if source is not None:
                where[source] = (name, lane)
    return [where[i] for i in range(len(vectors))]


def transpose_network(out: list[str], rows: list[str], lanes: int, v: str, stem: str,
                      pad: str) -> list[str]:
    """Appends to `out` the shuffles transposing `lanes` vectors `rows` (of type `v`, lanes
    lanes each) as a lanes x lanes matrix; returns the transposed rows' names (`stem`
    followed by level_row). Each level swaps one bit of the row index with the same bit of
    the lane: lanes * log2(lanes) two-source shuffles."""
    bit, level = 1, 0
    while bit < lanes:
        new = list(rows)
        for r0 in range(lanes):
            if r0 & bit:
                continue
            r1 = r0 | bit
            low = [c if not c & bit else lanes + c - bit for c in range(lanes)]
            high = [c + bit if not c & bit else lanes + c for c in range(lanes)]
            for r, mask in ((r0, low), (r1, high)):
                name = f"{stem}{level + 1}_{r}"
                out.append(f"{pad}{name} = vector.shuffle {rows[r0]}, {rows[r1]} "
                           f"[{', '.join(map(str, mask))}] : {v}, {v}")
                new[r] = name
        rows, bit, level = new, bit * 2, level + 1
    return rows


def transpose_block(p: Params) -> list[str]:
    """The ops copying rows %kk.. (lanes of them) of B's columns %j0.. (%nleft of them, at
    most lanes: `%cmask`) to rows %j0.. of `%copy` (row stride `%kpad`), transposed in
    registers (`transpose_network`)."""
    lanes, t, mem = p.lanes, p.element, f"memref<?x{p.element}>"
    v, mask_t = f"vector<{lanes}x{t}>", f"vector<{lanes}xi1>"
    out, rows = [], []
    for r in range(lanes):
        out += [f"            %tr{r} = arith.addi %kk, %c{r} : index" if r else
                "            %tr0 = arith.addi %kk, %c0 : index",
                f"            %trow{r} = arith.muli %tr{r}, %ldb : index",
                f"            %tat{r} = arith.addi %trow{r}, %col : index",
                f"            %t0_{r} = vector.maskedload %b[%tat{r}], %cmask, %vzero : "
                f"{mem}, {mask_t}, {v} into {v}"]
        rows.append(f"%t0_{r}")
    rows = transpose_network(out, rows, lanes, v, "%t", " " * 12)
    for c in range(lanes):
        out += [f"            %tin{c} = arith.cmpi ult, %c{c}, %nleft : index" if c else
                "            %tin0 = arith.cmpi ult, %c0, %nleft : index",
                f"            scf.if %tin{c} {{",
                f"              %tj{c} = arith.addi %j0, %c{c} : index" if c else
                "              %tj0 = arith.addi %j0, %c0 : index",
                f"              %tdr{c} = arith.muli %tj{c}, %kpad : index",
                f"              %tdst{c} = arith.addi %tdr{c}, %kk : index",
                f"              vector.store {rows[c]}, %copy[%tdst{c}] : {mem}, {v}",
                "            }"]
    return out


def dot(p: Params) -> str:
    """`@<p>_dot(a, lda, b, ldb, tb, c, ldc, m0, n0, m, n, k, alpha, beta) -> ok`: C[m0:+m,
    n0:+n] for A stored by rows (`a[(m0 + i) * lda + k]`), B stored transposed (`tb`:
    `b[(n0 + j) * ldb + k]`) or by rows (`b[k * ldb + n0 + j]`, copied transposed first);
    returns false, having done nothing, if that copy could not be allocated."""
    t, mem, lanes = p.element, f"memref<?x{p.element}>", p.lanes
    v = f"vector<{lanes}x{t}>"
    mask_t = f"vector<{lanes}xi1>"
    lines = []

    # the loads of one step at column offset %kk (masked with %mask)
    def step(masked: bool, accs_in: list[str], suffix: str) -> list[str]:
        out = []
        for array, base, name, count in (("%a", "%arow", "%va", DR), ("%bt", "%brow", "%vb", DC)):
            for i in range(count):
                at = f"{name}at{i}_{suffix}"
                lines.append(f"          {at} = arith.addi {base}{i}, %kk : index")
                load = (f"vector.maskedload {array}[{at}], %mask, %vzero : {mem}, {mask_t}, "
                        f"{v} into {v}" if masked else f"vector.load {array}[{at}] : {mem}, {v}")
                lines.append(f"          {name}{i}_{suffix} = {load}")
        for r in range(DR):
            for c in range(DC):
                name = f"%f{r}{c}_{suffix}"
                lines.append(f"          {name} = vector.fma %va{r}_{suffix}, %vb{c}_{suffix}, "
                             f"{accs_in[r * DC + c]} : {v}")
                out.append(name)
        return out

    acc_types = ", ".join([v] * (DR * DC))
    init = ", ".join(f"%s{i} = %vzero" for i in range(DR * DC))
    lines.append(f"        %accs:{DR * DC} = scf.for %kk = %c0 to %kmain step %cl "
                 f"iter_args({init}) -> ({acc_types}) {{")
    new = step(False, [f"%s{i}" for i in range(DR * DC)], "m")
    lines.append(f"          scf.yield {', '.join(new)} : {acc_types}")
    lines.append("        }")
    lines.append(f"        %tails:{DR * DC} = scf.for %kk = %kmain to %k step %cl "
                 f"iter_args({', '.join(f'%u{i} = %accs#{i}' for i in range(DR * DC))}) -> "
                 f"({acc_types}) {{")
    lines.append("          %left = arith.subi %k, %kk : index")
    lines.append(f"          %mask = vector.create_mask %left : {mask_t}")
    new = step(True, [f"%u{i}" for i in range(DR * DC)], "t")
    lines.append(f"          scf.yield {', '.join(new)} : {acc_types}")
    lines.append("        }")
    sums = sum_lanes(lines, [f"%tails#{i}" for i in range(DR * DC)], lanes, t)
    for r in range(DR):
        for c in range(DC):
            vec, lane = sums[r * DC + c]
            lines += [
                f"        %sum{r}{c} = vector.extract {vec}[{lane}] : {t} from {v}",
                f"        %in{r}{c} = arith.andi %rin{r}, %cin{c} : i1",
                f"        scf.if %in{r}{c} {{",
                f"          %at{r}{c} = arith.addi %crow{r}, %ccol{c} : index",
                f"          %ax{r}{c} = arith.mulf %alpha, %sum{r}{c} : {t}",
                f"          %new{r}{c} = scf.if %no_beta -> {t} {{",
                f"            scf.yield %ax{r}{c} : {t}",
                "          } else {",
                f"            %old{r}{c} = memref.load %c[%at{r}{c}] : {mem}",
                f"            %y{r}{c} = math.fma %beta, %old{r}{c}, %ax{r}{c} : {t}",
                f"            scf.yield %y{r}{c} : {t}",
                "          }",
                f"          memref.store %new{r}{c}, %c[%at{r}{c}] : {mem}",
                "        }"]
    rows = "\n".join(
        f"""        %ri{r} = arith.addi %i, %c{r} : index
        %rin{r} = arith.cmpi ult, %ri{r}, %m : index
        %rc{r} = arith.minui %ri{r}, %mlast : index
        %rg{r} = arith.addi %m0, %rc{r} : index
        %arow{r} = arith.muli %rg{r}, %lda : index
        %rs{r} = arith.addi %m0, %ri{r} : index
        %crow{r} = arith.muli %rs{r}, %ldc : index""" for r in range(DR))
    cols = "\n".join(
        f"""        %cj{c} = arith.addi %j, %c{c} : index
        %cin{c} = arith.cmpi ult, %cj{c}, %n : index
        %cc{c} = arith.minui %cj{c}, %nlast : index
        %bc{c} = arith.muli %cc{c}, %ldbt : index
        %brow{c} = arith.addi %bt_base, %bc{c} : index
        %ccol{c} = arith.addi %n0, %cj{c} : index""" for c in range(DC))
    consts = "\n".join(f"    %c{i} = arith.constant {i} : index"
                       for i in range(2, max(DR, DC, p.lanes)))
    transpose = "\n".join(transpose_block(p))
    body = "\n".join(lines)
    return f"""
  func.func private @{p.prefix}_dot(%a: {mem}, %lda: index, %b: {mem}, %ldb: index, %tb: i1,
      %c: {mem}, %ldc: index, %m0: index, %n0: index, %m: index, %n: index, %k: index,
      %alpha: {t}, %beta: {t}) -> i1 attributes {{llvm.linkage = #llvm.linkage<internal>}} {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
{consts}
    %cl = arith.constant {lanes} : index
    %cdr = arith.constant {DR} : index
    %cdc = arith.constant {DC} : index
    %csize = arith.constant {_BYTES[p.element]} : index
    %cpanel = arith.constant {DOT_PANEL_BYTES} : index
    %fzero = arith.constant 0.0 : {t}
    %vzero = arith.constant dense<0.0> : {v}
    %no_beta = arith.cmpf oeq, %beta, %fzero : {t}
    %mlast = arith.subi %m, %c1 : index
    %nlast = arith.subi %n, %c1 : index
    %krem = arith.remui %k, %cl : index
    %kmain = arith.subi %k, %krem : index
    // B^T: in place (rows n0.. of B stored transposed), or a copy
    // the copy's rows one vector apart from a multiple of 4 KiB (rows k = 1024 floats
    // apart all fall in one L1 set, and DC of them with DR rows of A exceed its ways)
    %kup = arith.ceildivui %k, %cl : index
    %kup_l = arith.muli %kup, %cl : index
    %kpad = arith.addi %kup_l, %cl : index
    %size = arith.muli %n, %kpad : index
    %copy_size = arith.select %tb, %c0, %size : index
    %copy = memref.alloc(%copy_size) {{alignment = 64 : i64}} : {mem}
    %cx = memref.extract_aligned_pointer_as_index %copy : {mem} -> index
    %got = arith.cmpi ne, %cx, %c0 : index
    %ok = arith.ori %tb, %got : i1
    scf.if %ok {{
      %boff = arith.muli %n0, %ldb : index
      %bt_base = arith.select %tb, %boff, %c0 : index
      %ldbt = arith.select %tb, %ldb, %kpad : index
      %notb = arith.cmpi eq, %copy_size, %size : index
      %fill = arith.andi %notb, %got : i1
      scf.if %fill {{
        // lanes x lanes blocks of B transposed in registers (a column of B at a time
        // read as scalars was a tenth of a 256 x 1024 x 10 product); the last rows of k
        // one by one
        scf.for %j0 = %c0 to %n step %cl {{
          %nleft = arith.subi %n, %j0 : index
          %cmask = vector.create_mask %nleft : {mask_t}
          %col = arith.addi %n0, %j0 : index
          scf.for %kk = %c0 to %kmain step %cl {{
{transpose}
          }}
        }}
        scf.for %kk = %kmain to %k step %c1 {{
          %src_row = arith.muli %kk, %ldb : index
          %src0 = arith.addi %src_row, %n0 : index
          scf.for %j = %c0 to %n step %c1 {{
            %src = arith.addi %src0, %j : index
            %x = memref.load %b[%src] : {mem}
            %dj = arith.muli %j, %kpad : index
            %dst = arith.addi %dj, %kk : index
            memref.store %x, %copy[%dst] : {mem}
          }}
        }}
      }}
      %bt = arith.select %tb, %b, %copy : {mem}
      // panels of rows whose A fits in L2 (DOT_PANEL_BYTES); each panel's rows are
      // swept once per block of DC columns, those columns of B^T staying in L1
      %abytes = arith.muli %k, %csize : index
      %prows0 = arith.divui %cpanel, %abytes : index
      %prows1 = arith.divui %prows0, %cdr : index
      %prows2 = arith.muli %prows1, %cdr : index
      %prows = arith.maxui %prows2, %cdr : index
      scf.for %p0 = %c0 to %m step %prows {{
      %pnext = arith.addi %p0, %prows : index
      %pend = arith.minui %pnext, %m : index
      scf.for %j = %c0 to %n step %cdc {{
{cols}
      scf.for %i = %p0 to %pend step %cdr {{
{rows}
{body}
      }}
      }}
      }}
    }}
    memref.dealloc %copy : {mem}
    return %ok : i1
  }}
"""
