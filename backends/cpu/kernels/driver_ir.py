"""The GEMM library's entry points, in the LLVM dialect: `@ember_sgemm` / `@ember_dgemm` with
the ILP64 CBLAS signature, starting threads with pthreads.

Written in the LLVM dialect because they take raw pointers and a function's address (for
`pthread_create`), which the func-level dialects cannot express; they are added to the
library after the rest is lowered (library.py), like native.py's error runtime. Each call:

  1. `@<p>_plan` says how many threads (1 for a small product; `@ember_gemm_threads` if
     set (> 0), else the CPUs online, at most one per MIN_MACS_PER_THREAD of work);
  2. threads 1.. run `@<p>_slice` on their share (gemm_ir.split), thread 0 on the caller's;
  3. the caller joins them; a thread that could not be started has its share run by the
     caller instead, so a call never fails for want of threads.
"""

from __future__ import annotations

from ember.backends.cpu.kernels.gemm_ir import Params

THREADS_SYMBOL = "ember_gemm_threads"
ENTRY = {"f32": "ember_sgemm", "f64": "ember_dgemm"}

# `ember_gemm_cpus()`: the CPUs online, asked of sysconf once (it reads a file in /sys:
# about 10 us, more than a small product takes) and kept; a race only asks twice.
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
llvm.func @pthread_create(!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> i32
llvm.func @pthread_join(i64, !llvm.ptr) -> i32
"""

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
    pack = "\n".join(f"  %s{i + 1} = llvm.insertvalue %{n}, %s{i}[{i}] : {struct}"
                     for i, n in enumerate(_NAMES))
    n_fields = len(_NAMES)
    return f"""
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

llvm.func @{ENTRY[t]}({params}) {{
  %zero = llvm.mlir.constant(0 : i64) : i64
  %one = llvm.mlir.constant(1 : i64) : i64
  %zero32 = llvm.mlir.constant(0 : i32) : i32
  %zero8 = llvm.mlir.constant(0 : i8) : i8
  %at = llvm.mlir.addressof @{THREADS_SYMBOL} : !llvm.ptr
  %want32 = llvm.load %at : !llvm.ptr -> i32
  %want = llvm.sext %want32 : i32 to i64
  %nt = llvm.call @{pre}_plan(%m, %n, %k, %want) : (i64, i64, i64, i64) -> i64
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
  llvm.br ^create(%one : i64)
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
