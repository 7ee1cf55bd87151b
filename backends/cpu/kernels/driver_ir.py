"""The GEMM library's entry points, in the LLVM dialect: `@ember_sgemm` / `@ember_dgemm` with
the ILP64 CBLAS signature, starting threads with pthreads.

Written in the LLVM dialect because they take raw pointers and a function's address (for
`pthread_create`), which the func-level dialects cannot express; they are added to the
library after the rest is lowered (library.py), like native.py's error runtime. Each call:

  1. `@<p>_plan` says how many threads (1 for a small product; `@ember_gemm_threads` if
     set (> 0), else the CPUs online, at most one per MIN_MACS_PER_THREAD of work, or per
     MIN_MACS_PER_POOLED_THREAD with the pool's kept workers on);
  2. threads 1.. run `@<p>_slice` on their share (gemm_ir.split), thread 0 on the caller's:
     the workers kept across calls (pool_ir.py) when the pool is on and free, else
     threads started for this call; or the caller alone when the pool says its workers
     are not running (ALONE);
  3. the caller waits for the workers, or joins its threads; a share whose thread could
     not be started is run by the caller instead, so a call never fails for want of
     threads.
"""

from __future__ import annotations

from ember.backends.cpu.kernels.gemm_ir import Params
from ember.backends.cpu.kernels.pool_ir import ALONE, DONE, KEEP_SYMBOL, POOL_RUNTIME
from ember.backends.cpu.options import ENTRY  # noqa: F401 (defined there for cache hits)
from ember.backends.cpu.options import GEMM_THREADS_SYMBOL as THREADS_SYMBOL


# `ember_gemm_cpus()`: the CPUs online, asked of sysconf once (it reads a file in /sys:
# about 10 us, more than a small product takes) and kept; a race only asks twice.
POOL_SLOTS = 8  # workspaces kept across calls (two per thread of a call)
# The pool: `ember_gemm_take_bytes(n)` gives a 64-byte-aligned buffer of at least n bytes (a
# block kept by an earlier call if one is big enough, else aligned_alloc; null if that
# fails), `ember_gemm_give_bytes(p)` keeps it for the next call (or frees it when all
# POOL_SLOTS are taken). Lock-free: a slot is taken with an atomic exchange and filled with
# a compare-and-swap. A block's first 64 bytes hold its capacity.
POOL = """llvm.mlir.global internal @ember_gemm_pool() {addr_space = 0 : i32}
    : !llvm.array<8 x ptr> {
  %z = llvm.mlir.zero : !llvm.array<8 x ptr>
  llvm.return %z : !llvm.array<8 x ptr>
}
llvm.func @aligned_alloc(i64, i64) -> !llvm.ptr
llvm.func @free(!llvm.ptr)
llvm.func internal @ember_gemm_take_bytes(%bytes: i64) -> !llvm.ptr {
  %zero = llvm.mlir.constant(0 : i64) : i64
  %null = llvm.mlir.zero : !llvm.ptr
  %none = llvm.icmp "eq" %bytes, %zero : i64
  llvm.cond_br %none, ^nothing, ^search(%zero : i64)
^nothing:
  llvm.return %null : !llvm.ptr
^search(%i: i64):
  %slots = llvm.mlir.constant(@SLOTS@ : i64) : i64
  %more = llvm.icmp "slt" %i, %slots : i64
  llvm.cond_br %more, ^try, ^fresh
^try:
  %pool = llvm.mlir.addressof @ember_gemm_pool : !llvm.ptr
  %slot = llvm.getelementptr %pool[0, %i] : (!llvm.ptr, i64) -> !llvm.ptr, !llvm.array<8 x ptr>
  %block = llvm.atomicrmw xchg %slot, %null acq_rel : !llvm.ptr, !llvm.ptr
  %empty = llvm.icmp "eq" %block, %null : !llvm.ptr
  llvm.cond_br %empty, ^next, ^have
^next:
  %one = llvm.mlir.constant(1 : i64) : i64
  %i1 = llvm.add %i, %one : i64
  llvm.br ^search(%i1 : i64)
^have:
  %capacity = llvm.load %block : !llvm.ptr -> i64
  %fits = llvm.icmp "uge" %capacity, %bytes : i64
  llvm.cond_br %fits, ^done(%block : !llvm.ptr), ^drop
^drop:
  llvm.call @free(%block) : (!llvm.ptr) -> ()
  llvm.br ^fresh
^fresh:
  %c63 = llvm.mlir.constant(127 : i64) : i64
  %mask = llvm.mlir.constant(-64 : i64) : i64
  %padded = llvm.add %bytes, %c63 : i64
  %total = llvm.and %padded, %mask : i64
  %align = llvm.mlir.constant(64 : i64) : i64
  %new = llvm.call @aligned_alloc(%align, %total) : (i64, i64) -> !llvm.ptr
  %failed = llvm.icmp "eq" %new, %null : !llvm.ptr
  llvm.cond_br %failed, ^nothing, ^record
^record:
  %head = llvm.mlir.constant(64 : i64) : i64
  %cap = llvm.sub %total, %head : i64
  llvm.store %cap, %new : i64, !llvm.ptr
  llvm.br ^done(%new : !llvm.ptr)
^done(%b: !llvm.ptr):
  %buffer = llvm.getelementptr %b[64] : (!llvm.ptr) -> !llvm.ptr, i8
  llvm.return %buffer : !llvm.ptr
}
llvm.func internal @ember_gemm_give_bytes(%buffer: !llvm.ptr) {
  %null = llvm.mlir.zero : !llvm.ptr
  %zero = llvm.mlir.constant(0 : i64) : i64
  %none = llvm.icmp "eq" %buffer, %null : !llvm.ptr
  llvm.cond_br %none, ^done, ^start
^start:
  %block = llvm.getelementptr %buffer[-64] : (!llvm.ptr) -> !llvm.ptr, i8
  llvm.br ^search(%zero : i64)
^search(%i: i64):
  %slots = llvm.mlir.constant(@SLOTS@ : i64) : i64
  %more = llvm.icmp "slt" %i, %slots : i64
  llvm.cond_br %more, ^try, ^release
^try:
  %pool = llvm.mlir.addressof @ember_gemm_pool : !llvm.ptr
  %slot = llvm.getelementptr %pool[0, %i] : (!llvm.ptr, i64) -> !llvm.ptr, !llvm.array<8 x ptr>
  %res = llvm.cmpxchg %slot, %null, %block acq_rel monotonic : !llvm.ptr, !llvm.ptr
  %kept = llvm.extractvalue %res[1] : !llvm.struct<(ptr, i1)>
  %one = llvm.mlir.constant(1 : i64) : i64
  %i1 = llvm.add %i, %one : i64
  llvm.cond_br %kept, ^done, ^search(%i1 : i64)
^release:
  llvm.call @free(%block) : (!llvm.ptr) -> ()
  llvm.br ^done
^done:
  llvm.return
}
""".replace("@SLOTS@", str(POOL_SLOTS))
COMMON = f"""
llvm.mlir.global external @{THREADS_SYMBOL}(0 : i32) {{addr_space = 0 : i32}} : i32
llvm.mlir.global internal @ember_gemm_online(0 : i64) {{addr_space = 0 : i32}} : i64
llvm.func @sysconf(i32) -> i64
llvm.func internal @ember_gemm_cpus() -> i64 {{
  %at = llvm.mlir.addressof @ember_gemm_online : !llvm.ptr
  %known = llvm.load %at atomic monotonic {{alignment = 8 : i64}} : !llvm.ptr -> i64
  %zero = llvm.mlir.constant(0 : i64) : i64
  %ask = llvm.icmp "eq" %known, %zero : i64
  llvm.cond_br %ask, ^sysconf, ^done(%known : i64)
^sysconf:
  %name = llvm.mlir.constant(84 : i32) : i32
  %n = llvm.call @sysconf(%name) : (i32) -> i64
  %one = llvm.mlir.constant(1 : i64) : i64
  %cpus = llvm.intr.smax(%n, %one) : (i64, i64) -> i64
  llvm.store %cpus, %at atomic monotonic {{alignment = 8 : i64}} : i64, !llvm.ptr
  llvm.br ^done(%cpus : i64)
^done(%r: i64):
  llvm.return %r : i64
}}
{POOL}llvm.func @pthread_create(!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> i32
llvm.func @pthread_join(i64, !llvm.ptr) -> i32
{POOL_RUNTIME}"""

_ARGS = ["i32", "i32", "i32", "i64", "i64", "i64", "T", "!llvm.ptr", "i64", "!llvm.ptr", "i64",
         "T", "!llvm.ptr", "i64"]
_NAMES = ["order", "ta", "tb", "m", "n", "k", "alpha", "a", "lda", "b", "ldb", "beta", "c",
          "ldc"]


def driver(p: Params) -> str:
    """LLVM-dialect text of `@<p>_run`, `@<p>_worker` and the CBLAS entry for `p.element`."""
    t, pre = p.element, p.prefix
    types = [x.replace("T", t) for x in _ARGS]
    struct = f"!llvm.struct<({', '.join(types + ['i64', 'i64'])})>"
    params = ", ".join(f"%{n}: {ty}" for n, ty in zip(_NAMES, types))
    args = ", ".join(f"%{n}" for n in _NAMES)
    sig = ", ".join(types)
    # each buffer as the memref<?xT> descriptor the lowered slice takes:
    # allocated, aligned, offset 0, a size it never reads, stride 1
    expanded, expanded_types = [], []
    for n, ty in zip(_NAMES, types):
        if ty == "!llvm.ptr":
            expanded += [f"%{n}", f"%{n}", "%zero", "%huge", "%one"]
            expanded_types += ["!llvm.ptr", "!llvm.ptr", "i64", "i64", "i64"]
        else:
            expanded.append(f"%{n}")
            expanded_types.append(ty)
    slice_args = ", ".join(expanded + ["%t", "%nt"])
    slice_types = ", ".join(expanded_types + ["i64", "i64"])
    unpack = "\n".join(f"  %{n} = llvm.extractvalue %s[{i}] : {struct}"
                       for i, n in enumerate(_NAMES + ["t", "nt"]))
    unpack_shared = "\n".join(f"  %{n} = llvm.extractvalue %s[{i}] : {struct}"
                              for i, n in enumerate(_NAMES + ["t_unused", "nt"]))
    pack = "\n".join(f"  %s{i + 1} = llvm.insertvalue %{n}, %s{i}[{i}] : {struct}"
                     for i, n in enumerate(_NAMES))
    n_fields = len(_NAMES)
    size = 4 if t == "f32" else 8
    descriptor = "!llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>"
    return f"""
llvm.func internal @{pre}_take(%n: i64) -> {descriptor} {{
  %size = llvm.mlir.constant({size} : i64) : i64
  %bytes = llvm.mul %n, %size : i64
  %p = llvm.call @ember_gemm_take_bytes(%bytes) : (i64) -> !llvm.ptr
  %zero = llvm.mlir.constant(0 : i64) : i64
  %one = llvm.mlir.constant(1 : i64) : i64
  %d0 = llvm.mlir.undef : {descriptor}
  %d1 = llvm.insertvalue %p, %d0[0] : {descriptor}
  %d2 = llvm.insertvalue %p, %d1[1] : {descriptor}
  %d3 = llvm.insertvalue %zero, %d2[2] : {descriptor}
  %d4 = llvm.insertvalue %n, %d3[3, 0] : {descriptor}
  %d5 = llvm.insertvalue %one, %d4[4, 0] : {descriptor}
  llvm.return %d5 : {descriptor}
}}

llvm.func internal @{pre}_give(%allocated: !llvm.ptr, %aligned: !llvm.ptr, %offset: i64,
                               %n: i64, %stride: i64) {{
  llvm.call @ember_gemm_give_bytes(%aligned) : (!llvm.ptr) -> ()
  llvm.return
}}

llvm.func internal @{pre}_run({params}, %t: i64, %nt: i64) {{
  %zero = llvm.mlir.constant(0 : i64) : i64
  %one = llvm.mlir.constant(1 : i64) : i64
  %huge = llvm.mlir.constant(4611686018427387903 : i64) : i64
  llvm.call @{pre}_slice({slice_args}) : ({slice_types}) -> ()
  llvm.return
}}

llvm.func internal @{pre}_worker(%p: !llvm.ptr) -> !llvm.ptr {{
  %s = llvm.load %p : !llvm.ptr -> {struct}
{unpack}
  llvm.call @{pre}_run({args}, %t, %nt) : ({sig}, i64, i64) -> ()
  %null = llvm.mlir.zero : !llvm.ptr
  llvm.return %null : !llvm.ptr
}}

llvm.func internal @{pre}_task(%p: !llvm.ptr, %t: i64) {{
  %s = llvm.load %p : !llvm.ptr -> {struct}
{unpack_shared}
  llvm.call @{pre}_run({args}, %t, %nt) : ({sig}, i64, i64) -> ()
  llvm.return
}}

llvm.func @{ENTRY[t]}({params}) {{
  %zero = llvm.mlir.constant(0 : i64) : i64
  %one = llvm.mlir.constant(1 : i64) : i64
  %zero32 = llvm.mlir.constant(0 : i32) : i32
  %zero8 = llvm.mlir.constant(0 : i8) : i8
  %at = llvm.mlir.addressof @{THREADS_SYMBOL} : !llvm.ptr
  %want32 = llvm.load %at : !llvm.ptr -> i32
  %want = llvm.sext %want32 : i32 to i64
  // with the pool's kept workers on (pool_ir), threads for less work each
  %keep_at = llvm.mlir.addressof @{KEEP_SYMBOL} : !llvm.ptr
  %keep = llvm.load %keep_at atomic monotonic {{alignment = 4 : i64}} : !llvm.ptr -> i32
  %pool_on = llvm.icmp "ne" %keep, %zero32 : i32
  %nt = llvm.call @{pre}_plan(%m, %n, %k, %want, %pool_on) : (i64, i64, i64, i64, i1) -> i64
  %single = llvm.icmp "sle" %nt, %one : i64
  llvm.cond_br %single, ^alone, ^spawn
^alone:
  llvm.call @{pre}_run({args}, %zero, %one) : ({sig}, i64, i64) -> ()
  llvm.return
^spawn:
  %slots = llvm.alloca %nt x {struct} : (i64) -> !llvm.ptr
  %tids = llvm.alloca %nt x i64 : (i64) -> !llvm.ptr
  %started = llvm.alloca %nt x i8 : (i64) -> !llvm.ptr
  %fn = llvm.mlir.addressof @{pre}_worker : !llvm.ptr
  %null = llvm.mlir.zero : !llvm.ptr
  %s0 = llvm.mlir.undef : {struct}
{pack}
  %shared = llvm.insertvalue %nt, %s{n_fields}[{n_fields + 1}] : {struct}
  // the pool's workers if it has them (pool_ir), else a thread started per share
  llvm.store %shared, %slots : {struct}, !llvm.ptr
  %task = llvm.mlir.addressof @{pre}_task : !llvm.ptr
  %pooled = llvm.call @ember_gemm_pool_run(%task, %slots, %nt)
      : (!llvm.ptr, !llvm.ptr, i64) -> i32
  llvm.switch %pooled : i32, ^create(%one : i64) [
    {DONE}: ^done,
    {ALONE}: ^alone
  ]
^create(%i: i64):
  %more = llvm.icmp "slt" %i, %nt : i64
  llvm.cond_br %more, ^make, ^work
^make:
  %mine = llvm.insertvalue %i, %shared[{n_fields}] : {struct}
  %slot = llvm.getelementptr %slots[%i] : (!llvm.ptr, i64) -> !llvm.ptr, {struct}
  llvm.store %mine, %slot : {struct}, !llvm.ptr
  %tid = llvm.getelementptr %tids[%i] : (!llvm.ptr, i64) -> !llvm.ptr, i64
  %rc = llvm.call @pthread_create(%tid, %null, %fn, %slot)
      : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> i32
  %ok = llvm.icmp "eq" %rc, %zero32 : i32
  %ok8 = llvm.zext %ok : i1 to i8
  %flag = llvm.getelementptr %started[%i] : (!llvm.ptr, i64) -> !llvm.ptr, i8
  llvm.store %ok8, %flag : i8, !llvm.ptr
  %next = llvm.add %i, %one : i64
  llvm.br ^create(%next : i64)
^work:
  llvm.call @{pre}_run({args}, %zero, %nt) : ({sig}, i64, i64) -> ()
  llvm.br ^join(%one : i64)
^join(%j: i64):
  %left = llvm.icmp "slt" %j, %nt : i64
  llvm.cond_br %left, ^check, ^done
^check:
  %fp = llvm.getelementptr %started[%j] : (!llvm.ptr, i64) -> !llvm.ptr, i8
  %fv = llvm.load %fp : !llvm.ptr -> i8
  %was = llvm.icmp "ne" %fv, %zero8 : i8
  llvm.cond_br %was, ^wait, ^inline
^wait:
  %tp = llvm.getelementptr %tids[%j] : (!llvm.ptr, i64) -> !llvm.ptr, i64
  %tv = llvm.load %tp : !llvm.ptr -> i64
  %jr = llvm.call @pthread_join(%tv, %null) : (i64, !llvm.ptr) -> i32
  llvm.br ^after
^inline:
  llvm.call @{pre}_run({args}, %j, %nt) : ({sig}, i64, i64) -> ()
  llvm.br ^after
^after:
  %j1 = llvm.add %j, %one : i64
  llvm.br ^join(%j1 : i64)
^done:
  llvm.return
}}
"""
