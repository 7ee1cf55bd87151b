"""Worker threads kept across GEMM calls: the GEMM library's thread pool, in the LLVM dialect.

Starting a thread per product and joining it costs 20-40 us per call, more on a loaded
machine, and a training step makes eight products. Here the threads started by the first
call stay: between calls they wait (first WORKER_LOOKS looks at the job counter, then a few
rounds of `sched_yield`, then asleep on a condition variable), and the next call only hands
them a job.

`@ember_gemm_pool_run(fn, arg, threads) -> i32` runs `fn(arg, t)` for every t in
[0, threads) and returns DONE once all are done: share 0 on the calling thread, the others
claimed one at a time (an atomic counter) by whichever of the workers (started on first
need, up to `MAX_WORKERS`) and the caller is free first. So a share whose worker is not
running yet (asleep, or preempted on a machine shared with other work) is run by the
caller once its own is done, instead of the caller waiting for it; with every thread on a
core of its own, each worker claims one share, as a static split would give it. It
returns REFUSED without running anything when the pool is switched off (`KEEP_SYMBOL`, 0
by default: an AOT library starts threads per call as before, so no worker of its is left
running code of a library that may be unloaded) or busy with another caller's job (one
job at a time; the other caller starts threads of its own). It returns ALONE, having run
nothing, when the caller should run the product alone as one share: after a job whose
shares the caller ran all (no worker was running: a machine busier than its cores), for
the next 1, 3, 7, ... jobs (at most BACKOFF_MAX, back to none after a job a worker
joined), since splitting then only adds work (256x1024x10 with the other core busy: 56-59
us split, 55-60 alone, against 65 when every call waited for the worker). After a `fork`
the child has no workers: the pool notices (`getpid`) and starts new ones.

One job at a time, in globals: `fn`, `arg`, `threads`, the next share to claim (1), the
shares left to finish (`left`: threads), then the generation counter is bumped under the
mutex and the workers woken. The caller returns once `left` is 0: it never waits for a
worker that got no share (one not yet running when the caller had claimed them all, on a
machine busier than its cores). Every started worker still answers every job (after
claiming shares until none is left) by decrementing `pending`, and the next job is written
only once none still reads this one: a call that finds a worker yet to answer (after
ANSWER_SPIN looks) returns ALONE. Memory order: the job's fields are published by the
release of the generation (and the mutex), and each share of C by the acq_rel decrement
of `left` after it, which the caller reads with acquire.

pthread mutex and condition variables are zero-initialised storage (PTHREAD_*_INITIALIZER
is all zeros on glibc and musl), reserved larger than any libc's type.
"""

from __future__ import annotations

from ember.backends.cpu.options import GEMM_KEEP_SYMBOL as KEEP_SYMBOL

MAX_WORKERS = 63
SPIN = 2000  # sched_yield rounds a waiting caller watches for its condition before sleeping
# A worker waiting for the next job looks at the generation this many times (about 150 us:
# back-to-back products find it running), then yields WORKER_YIELDS times and sleeps: one
# watching by sched_yield stayed runnable for as long as 2000 yields took on a busy machine
# (each gives the CPU to another process for a time slice), taking CPU time from the caller
WORKER_LOOKS = 1 << 19
WORKER_YIELDS = 8
# looks at `pending` a call takes before running alone when a worker has yet to answer the
# last job (a few us: one just done with it answers at once, one preempted may take ms)
ANSWER_SPIN = 256
# looks at the shares left a caller done with its own takes before it yields the CPU (about
# 20 us: a worker running its share is done about then; sched_yield on a busy machine
# gives the CPU away for another process's whole time slice, ms)
CALLER_LOOKS = 1 << 16
# jobs run alone, at most, after one the workers were absent from (doubling from 1)
BACKOFF_MAX = 63
# what `ember_gemm_pool_run` returns
REFUSED, DONE, ALONE = 0, 1, 2
_SYNC_BYTES = 128


def _global(name: str, ty: str, value: str = "0") -> str:
    return f"llvm.mlir.global internal @{name}({value} : {ty}) {{addr_space = 0 : i32}} : {ty}\n"


def _storage(name: str) -> str:
    ty = f"!llvm.array<{_SYNC_BYTES} x i8>"
    return (f"llvm.mlir.global internal @{name}() {{addr_space = 0 : i32, alignment = 64 : i64}}"
            f" : {ty} {{\n  %z = llvm.mlir.zero : {ty}\n  llvm.return %z : {ty}\n}}\n")


def _wait_until(label: str, cond_ptr: str, test: str, busy: int = 0, yields: int = SPIN) -> str:
    """Blocks of a loop that waits until `test` (blocks computing %<label>_ok from nothing;
    true to stop) holds: `busy` looks without giving up the CPU, then `yields` rounds of
    sched_yield, then asleep on `cond_ptr` under the pool mutex. Enters at ^<label>, leaves
    to ^<label>_done."""
    looks = f"""  llvm.br ^{label}_busy(%zero : i64)
^{label}_busy(%{label}_k: i64):
{test.format(p=label + "_c")}
  llvm.cond_br %{label}_c_ok, ^{label}_done, ^{label}_busier
^{label}_busier:
  %{label}_k1 = llvm.add %{label}_k, %one : i64
  %{label}_klimit = llvm.mlir.constant({busy} : i64) : i64
  %{label}_kgo = llvm.icmp "slt" %{label}_k1, %{label}_klimit : i64
  llvm.cond_br %{label}_kgo, ^{label}_busy(%{label}_k1 : i64), ^{label}_yields
^{label}_yields:
""" if busy else ""
    return looks + f"""  llvm.br ^{label}_spin(%zero : i64)
^{label}_spin(%{label}_i: i64):
{test.format(p=label + "_a")}
  llvm.cond_br %{label}_a_ok, ^{label}_done, ^{label}_more
^{label}_more:
  %{label}_limit = llvm.mlir.constant({yields} : i64) : i64
  %{label}_go = llvm.icmp "slt" %{label}_i, %{label}_limit : i64
  llvm.cond_br %{label}_go, ^{label}_yield, ^{label}_lock
^{label}_yield:
  %{label}_y = llvm.call @sched_yield() : () -> i32
  %{label}_i1 = llvm.add %{label}_i, %one : i64
  llvm.br ^{label}_spin(%{label}_i1 : i64)
^{label}_lock:
  %{label}_l = llvm.call @pthread_mutex_lock(%mutex) : (!llvm.ptr) -> i32
  llvm.br ^{label}_check
^{label}_check:
{test.format(p=label + "_b")}
  llvm.cond_br %{label}_b_ok, ^{label}_unlock, ^{label}_sleep
^{label}_sleep:
  %{label}_w = llvm.call @pthread_cond_wait({cond_ptr}, %mutex) : (!llvm.ptr, !llvm.ptr) -> i32
  llvm.br ^{label}_check
^{label}_unlock:
  %{label}_u = llvm.call @pthread_mutex_unlock(%mutex) : (!llvm.ptr) -> i32
  llvm.br ^{label}_done
"""


_ADDRESSES = """  %zero = llvm.mlir.constant(0 : i64) : i64
  %one = llvm.mlir.constant(1 : i64) : i64
  %mutex = llvm.mlir.addressof @ember_pool_mutex : !llvm.ptr
  %wake = llvm.mlir.addressof @ember_pool_wake : !llvm.ptr
  %done_cv = llvm.mlir.addressof @ember_pool_done : !llvm.ptr
  %gen_at = llvm.mlir.addressof @ember_pool_gen : !llvm.ptr
  %pending_at = llvm.mlir.addressof @ember_pool_pending : !llvm.ptr
  %fn_at = llvm.mlir.addressof @ember_pool_fn : !llvm.ptr
  %arg_at = llvm.mlir.addressof @ember_pool_arg : !llvm.ptr
  %nt_at = llvm.mlir.addressof @ember_pool_threads : !llvm.ptr
  %next_at = llvm.mlir.addressof @ember_pool_next : !llvm.ptr
  %left_at = llvm.mlir.addressof @ember_pool_left : !llvm.ptr
"""

_NEW_GEN = """  %{p}_g = llvm.load %gen_at atomic acquire {{alignment = 8 : i64}} : !llvm.ptr -> i64
  %{p}_ok = llvm.icmp "ne" %{p}_g, %seen : i64"""
_NONE_LEFT = """  %{p}_n = llvm.load %left_at atomic acquire {{alignment = 8 : i64}}
      : !llvm.ptr -> i64
  %{p}_ok = llvm.icmp "eq" %{p}_n, %zero : i64"""

WORKER = f"""llvm.func internal @ember_pool_worker(%p: !llvm.ptr) -> !llvm.ptr {{
{_ADDRESSES}  %base_at = llvm.mlir.addressof @ember_pool_base : !llvm.ptr
  %start = llvm.load %base_at atomic acquire {{alignment = 8 : i64}} : !llvm.ptr -> i64
  llvm.br ^wait(%start : i64)
^wait(%seen: i64):
{_wait_until("job", "%wake", _NEW_GEN, WORKER_LOOKS, WORKER_YIELDS)}^job_done:
  %fn = llvm.load %fn_at : !llvm.ptr -> !llvm.ptr
  %arg = llvm.load %arg_at : !llvm.ptr -> !llvm.ptr
  %nt = llvm.load %nt_at : !llvm.ptr -> i64
  %gen = llvm.add %seen, %one : i64
  llvm.br ^take
^take:
  %share = llvm.atomicrmw add %next_at, %one acq_rel : !llvm.ptr, i64
  %mine = llvm.icmp "slt" %share, %nt : i64
  llvm.cond_br %mine, ^run, ^answer
^run:
  llvm.call %fn(%arg, %share) : !llvm.ptr, (!llvm.ptr, i64) -> ()
  %unfinished = llvm.atomicrmw sub %left_at, %one acq_rel : !llvm.ptr, i64
  %last = llvm.icmp "eq" %unfinished, %one : i64
  llvm.cond_br %last, ^signal, ^take
^signal:
  // the last share finished: none left to claim, so answer at once (the caller's next
  // job may follow right away), then wake the caller if it sleeps
  %answered_last = llvm.atomicrmw sub %pending_at, %one acq_rel : !llvm.ptr, i64
  %l = llvm.call @pthread_mutex_lock(%mutex) : (!llvm.ptr) -> i32
  %b = llvm.call @pthread_cond_broadcast(%done_cv) : (!llvm.ptr) -> i32
  %u = llvm.call @pthread_mutex_unlock(%mutex) : (!llvm.ptr) -> i32
  llvm.br ^wait(%gen : i64)
^answer:
  %answered = llvm.atomicrmw sub %pending_at, %one acq_rel : !llvm.ptr, i64
  llvm.br ^wait(%gen : i64)
}}
"""

RUN = f"""llvm.func internal @ember_gemm_pool_run(%fn: !llvm.ptr, %arg: !llvm.ptr,
                                                %nt: i64) -> i32 {{
{_ADDRESSES}  %false = llvm.mlir.constant({REFUSED} : i32) : i32
  %true = llvm.mlir.constant({DONE} : i32) : i32
  %solo = llvm.mlir.constant({ALONE} : i32) : i32
  %skip_at = llvm.mlir.addressof @ember_pool_skip : !llvm.ptr
  %backoff_at = llvm.mlir.addressof @ember_pool_backoff : !llvm.ptr
  %zero32 = llvm.mlir.constant(0 : i32) : i32
  %one32 = llvm.mlir.constant(1 : i32) : i32
  %keep_at = llvm.mlir.addressof @{KEEP_SYMBOL} : !llvm.ptr
  %keep = llvm.load %keep_at atomic monotonic {{alignment = 4 : i64}} : !llvm.ptr -> i32
  %off = llvm.icmp "eq" %keep, %zero32 : i32
  llvm.cond_br %off, ^refuse, ^claim
^refuse:
  llvm.return %false : i32
^claim:
  %busy_at = llvm.mlir.addressof @ember_pool_busy : !llvm.ptr
  %cas = llvm.cmpxchg %busy_at, %zero32, %one32 acquire monotonic : !llvm.ptr, i32
  %got = llvm.extractvalue %cas[1] : !llvm.struct<(i32, i1)>
  llvm.cond_br %got, ^forked, ^refuse
^forked:
  %pid_at = llvm.mlir.addressof @ember_pool_pid : !llvm.ptr
  %pid = llvm.call @getpid() : () -> i32
  %owner = llvm.load %pid_at : !llvm.ptr -> i32
  %same = llvm.icmp "eq" %pid, %owner : i32
  llvm.cond_br %same, ^skipping, ^reset
^skipping:
  // the workers were absent from a recent job: this one alone, as one share
  %skip = llvm.load %skip_at : !llvm.ptr -> i64
  %skipped = llvm.icmp "sgt" %skip, %zero : i64
  %skip1 = llvm.sub %skip, %one : i64
  llvm.cond_br %skipped, ^skip_this(%skip1 : i64), ^answered(%zero : i64)
^skip_this(%skip_left: i64):
  llvm.store %skip_left, %skip_at : i64, !llvm.ptr
  llvm.br ^release_alone
^answered(%tries: i64):
  // a worker answering the last job is given ANSWER_SPIN looks before this job runs alone
  %late = llvm.load %pending_at atomic acquire {{alignment = 8 : i64}} : !llvm.ptr -> i64
  %all_answered = llvm.icmp "eq" %late, %zero : i64
  %tries1 = llvm.add %tries, %one : i64
  %patience = llvm.mlir.constant({ANSWER_SPIN} : i64) : i64
  %again = llvm.icmp "slt" %tries1, %patience : i64
  llvm.cond_br %all_answered, ^grow, ^late(%again : i1)
^late(%wait_more: i1):
  llvm.cond_br %wait_more, ^answered(%tries1 : i64), ^release_alone
^release_alone:
  %busy_at1 = llvm.mlir.addressof @ember_pool_busy : !llvm.ptr
  llvm.store %zero32, %busy_at1 atomic release {{alignment = 4 : i64}} : i32, !llvm.ptr
  llvm.return %solo : i32
^reset:
  %started_at0 = llvm.mlir.addressof @ember_pool_started : !llvm.ptr
  llvm.store %zero, %started_at0 : i64, !llvm.ptr
  llvm.store %zero, %pending_at : i64, !llvm.ptr
  %zero8 = llvm.mlir.constant(0 : i8) : i8
  %bytes = llvm.mlir.constant({_SYNC_BYTES} : i64) : i64
  "llvm.intr.memset"(%mutex, %zero8, %bytes) <{{isVolatile = false}}> : (!llvm.ptr, i8, i64) -> ()
  "llvm.intr.memset"(%wake, %zero8, %bytes) <{{isVolatile = false}}> : (!llvm.ptr, i8, i64) -> ()
  "llvm.intr.memset"(%done_cv, %zero8, %bytes) <{{isVolatile = false}}> : (!llvm.ptr, i8, i64) -> ()
  llvm.store %pid, %pid_at : i32, !llvm.ptr
  llvm.br ^grow
^grow:
  %started_at = llvm.mlir.addressof @ember_pool_started : !llvm.ptr
  %have = llvm.load %started_at : !llvm.ptr -> i64
  %need0 = llvm.sub %nt, %one : i64
  %cap = llvm.mlir.constant({MAX_WORKERS} : i64) : i64
  %need = llvm.intr.smin(%need0, %cap) : (i64, i64) -> i64
  %short = llvm.icmp "slt" %have, %need : i64
  llvm.cond_br %short, ^prepare, ^publish(%have : i64)
^prepare:
  %base_at = llvm.mlir.addressof @ember_pool_base : !llvm.ptr
  %now = llvm.load %gen_at atomic acquire {{alignment = 8 : i64}} : !llvm.ptr -> i64
  llvm.store %now, %base_at atomic release {{alignment = 8 : i64}} : i64, !llvm.ptr
  llvm.br ^start(%have : i64)
^start(%s: i64):
  %more = llvm.icmp "slt" %s, %need : i64
  llvm.cond_br %more, ^spawn, ^started(%s : i64)
^spawn:
  %tids = llvm.mlir.addressof @ember_pool_tids : !llvm.ptr
  %tid = llvm.getelementptr %tids[0, %s] : (!llvm.ptr, i64) -> !llvm.ptr,
      !llvm.array<{MAX_WORKERS} x i64>
  %index = llvm.add %s, %one : i64
  %ip = llvm.inttoptr %index : i64 to !llvm.ptr
  %worker = llvm.mlir.addressof @ember_pool_worker : !llvm.ptr
  %null = llvm.mlir.zero : !llvm.ptr
  %rc = llvm.call @pthread_create(%tid, %null, %worker, %ip)
      : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> i32
  %ok = llvm.icmp "eq" %rc, %zero32 : i32
  llvm.cond_br %ok, ^start(%index : i64), ^started(%s : i64)
^started(%count: i64):
  llvm.store %count, %started_at : i64, !llvm.ptr
  llvm.br ^publish(%count : i64)
^publish(%workers: i64):
  %none = llvm.icmp "eq" %workers, %zero : i64
  llvm.cond_br %none, ^release_refuse, ^hand_out
^release_refuse:
  %busy_at2 = llvm.mlir.addressof @ember_pool_busy : !llvm.ptr
  llvm.store %zero32, %busy_at2 atomic release {{alignment = 4 : i64}} : i32, !llvm.ptr
  llvm.return %false : i32
^hand_out:
  llvm.store %fn, %fn_at : !llvm.ptr, !llvm.ptr
  llvm.store %arg, %arg_at : !llvm.ptr, !llvm.ptr
  llvm.store %nt, %nt_at : i64, !llvm.ptr
  llvm.store %one, %next_at : i64, !llvm.ptr
  llvm.store %nt, %left_at : i64, !llvm.ptr
  llvm.store %workers, %pending_at atomic release {{alignment = 8 : i64}} : i64, !llvm.ptr
  %l = llvm.call @pthread_mutex_lock(%mutex) : (!llvm.ptr) -> i32
  %g = llvm.atomicrmw add %gen_at, %one release : !llvm.ptr, i64
  %bc = llvm.call @pthread_cond_broadcast(%wake) : (!llvm.ptr) -> i32
  %u = llvm.call @pthread_mutex_unlock(%mutex) : (!llvm.ptr) -> i32
  llvm.call %fn(%arg, %zero) : !llvm.ptr, (!llvm.ptr, i64) -> ()
  %first_done = llvm.atomicrmw sub %left_at, %one acq_rel : !llvm.ptr, i64
  llvm.br ^take(%one : i64)
^take(%ran: i64):
  %share = llvm.atomicrmw add %next_at, %one acq_rel : !llvm.ptr, i64
  %unclaimed = llvm.icmp "slt" %share, %nt : i64
  llvm.cond_br %unclaimed, ^inline, ^tally
^inline:
  llvm.call %fn(%arg, %share) : !llvm.ptr, (!llvm.ptr, i64) -> ()
  %done_one = llvm.atomicrmw sub %left_at, %one acq_rel : !llvm.ptr, i64
  %ran1 = llvm.add %ran, %one : i64
  llvm.br ^take(%ran1 : i64)
^tally:
  // the caller ran every share (no worker was running): the next 1, 3, 7, ... jobs (at
  // most BACKOFF_MAX) run alone as one share; a job a worker joined resets that
  %absent = llvm.icmp "eq" %ran, %nt : i64
  %backoff = llvm.load %backoff_at : !llvm.ptr -> i64
  %twice = llvm.shl %backoff, %one : i64
  %grown = llvm.or %twice, %one : i64
  %cap_b = llvm.mlir.constant({BACKOFF_MAX} : i64) : i64
  %capped = llvm.intr.smin(%grown, %cap_b) : (i64, i64) -> i64
  %next_backoff = llvm.select %absent, %capped, %zero : i1, i64
  llvm.store %next_backoff, %backoff_at : i64, !llvm.ptr
  llvm.store %next_backoff, %skip_at : i64, !llvm.ptr
  llvm.br ^await
^await:
{_wait_until("all", "%done_cv", _NONE_LEFT, CALLER_LOOKS)}^all_done:
  %busy_at3 = llvm.mlir.addressof @ember_pool_busy : !llvm.ptr
  llvm.store %zero32, %busy_at3 atomic release {{alignment = 4 : i64}} : i32, !llvm.ptr
  llvm.return %true : i32
}}
"""

POOL_RUNTIME = (
    f"llvm.mlir.global external @{KEEP_SYMBOL}(0 : i32) {{addr_space = 0 : i32}} : i32\n"
    + _global("ember_pool_busy", "i32") + _global("ember_pool_pid", "i32")
    + _global("ember_pool_started", "i64") + _global("ember_pool_base", "i64")
    + _global("ember_pool_gen", "i64") + _global("ember_pool_pending", "i64")
    + _global("ember_pool_threads", "i64") + _global("ember_pool_next", "i64")
    + _global("ember_pool_left", "i64") + _global("ember_pool_skip", "i64")
    + _global("ember_pool_backoff", "i64")
    + "".join(f"llvm.mlir.global internal @ember_pool_{n}() {{addr_space = 0 : i32}} : "
              f"!llvm.ptr {{\n  %z = llvm.mlir.zero : !llvm.ptr\n  llvm.return %z : !llvm.ptr\n}}\n"
              for n in ("fn", "arg"))
    + f"llvm.mlir.global internal @ember_pool_tids() {{addr_space = 0 : i32}} : "
      f"!llvm.array<{MAX_WORKERS} x i64> {{\n"
      f"  %z = llvm.mlir.zero : !llvm.array<{MAX_WORKERS} x i64>\n"
      f"  llvm.return %z : !llvm.array<{MAX_WORKERS} x i64>\n}}\n"
    + _storage("ember_pool_mutex") + _storage("ember_pool_wake") + _storage("ember_pool_done")
    + """llvm.func @pthread_mutex_lock(!llvm.ptr) -> i32
llvm.func @pthread_mutex_unlock(!llvm.ptr) -> i32
llvm.func @pthread_cond_wait(!llvm.ptr, !llvm.ptr) -> i32
llvm.func @pthread_cond_broadcast(!llvm.ptr) -> i32
llvm.func @sched_yield() -> i32
llvm.func @getpid() -> i32
""" + WORKER + RUN)
