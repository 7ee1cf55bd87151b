"""The native code of the block cache (block_cache.py): LLVM IR of `ember_pool_malloc`,
`ember_pool_free` and `ember_pool_release`, and the globals they share (the spin lock, the
table of blocks, the bytes cached and the bound). Compiled once and kept in the disk cache.
Needs only libc (malloc, free, mmap, munmap, madvise, sched_yield); the mmap and madvise
constants are Linux's (PROT_READ|PROT_WRITE = 3, MAP_PRIVATE|MAP_ANONYMOUS = 0x22,
MADV_HUGEPAGE = 14)."""

from __future__ import annotations

MIN_BYTES = 1 << 20  # smaller allocations stay libc's
HUGE = 1 << 21  # block granularity and alignment: one transparent huge page
SLOTS = 64  # blocks the table tracks (live and cached)
MALLOC, FREE = "ember_pool_malloc", "ember_pool_free"
GLOBALS = ("ember_pool_lock", "ember_pool_cached", "ember_pool_limit", "ember_pool_slots")

# slot: [base pointer, size, state] as i64s; state 0 empty, 1 live, 2 cached, 3 being mapped
IR = r"""
@ember_pool_slots = global [@SLOTS@ x [3 x i64]] zeroinitializer
@ember_pool_lock = global i32 0
@ember_pool_cached = global i64 0
@ember_pool_limit = global i64 0

declare ptr @malloc(i64)
declare void @free(ptr)
declare ptr @mmap(ptr, i64, i32, i32, i32, i64)
declare i32 @munmap(ptr, i64)
declare i32 @madvise(ptr, i64, i32)
declare i32 @sched_yield()

define internal void @lock() {
entry:
  br label %try
try:
  %old = atomicrmw xchg ptr @ember_pool_lock, i32 1 acquire
  %busy = icmp ne i32 %old, 0
  br i1 %busy, label %wait, label %done
wait:
  %y = call i32 @sched_yield()
  br label %try
done:
  ret void
}

define internal void @unlock() {
  store atomic i32 0, ptr @ember_pool_lock release, align 4
  ret void
}

define internal ptr @field(i64 %i, i32 %k) {
  %p = getelementptr [@SLOTS@ x [3 x i64]], ptr @ember_pool_slots, i64 0, i64 %i, i32 %k
  ret ptr %p
}

; unmaps every cached block other than slot %keep (-1: all) while the cache holds more
; than %room bytes; the lock is held
define internal void @evict(i64 %room, i64 %keep) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %next, %skip ]
  %end = icmp eq i64 %i, @SLOTS@
  br i1 %end, label %done, label %check
check:
  %cached = load i64, ptr @ember_pool_cached
  %over = icmp ugt i64 %cached, %room
  br i1 %over, label %look, label %done
look:
  %sp = call ptr @field(i64 %i, i32 2)
  %state = load i64, ptr %sp
  %is = icmp eq i64 %state, 2
  %other = icmp ne i64 %i, %keep
  %drop = and i1 %is, %other
  br i1 %drop, label %unmap, label %skip
unmap:
  %bp = call ptr @field(i64 %i, i32 0)
  %base = load ptr, ptr %bp
  %zp = call ptr @field(i64 %i, i32 1)
  %size = load i64, ptr %zp
  %r = call i32 @munmap(ptr %base, i64 %size)
  store i64 0, ptr %sp
  %less = sub i64 %cached, %size
  store i64 %less, ptr @ember_pool_cached
  br label %skip
skip:
  %next = add i64 %i, 1
  br label %loop
done:
  ret void
}

define void @ember_pool_release() {
  call void @lock()
  call void @evict(i64 0, i64 -1)
  call void @unlock()
  ret void
}

; a fresh block of %size bytes (a multiple of 2 MiB), 2 MiB-aligned, huge pages asked for
define internal ptr @map(i64 %size) {
entry:
  %len = add i64 %size, @HUGE@
  %p = call ptr @mmap(ptr null, i64 %len, i32 3, i32 34, i32 -1, i64 0)
  %pi = ptrtoint ptr %p to i64
  %failed = icmp eq i64 %pi, -1
  br i1 %failed, label %none, label %trim
none:
  ret ptr null
trim:
  %up = add i64 %pi, @HUGE1@
  %ai = and i64 %up, -@HUGE@
  %a = inttoptr i64 %ai to ptr
  %head = sub i64 %ai, %pi
  %hashead = icmp ne i64 %head, 0
  br i1 %hashead, label %cuthead, label %tail
cuthead:
  %r1 = call i32 @munmap(ptr %p, i64 %head)
  br label %tail
tail:
  %endi = add i64 %pi, %len
  %usedi = add i64 %ai, %size
  %rest = sub i64 %endi, %usedi
  %hastail = icmp ne i64 %rest, 0
  br i1 %hastail, label %cuttail, label %advise
cuttail:
  %u = inttoptr i64 %usedi to ptr
  %r2 = call i32 @munmap(ptr %u, i64 %rest)
  br label %advise
advise:
  %r3 = call i32 @madvise(ptr %a, i64 %size, i32 14)
  ret ptr %a
}

define ptr @ember_pool_malloc(i64 %size) {
entry:
  %big = icmp uge i64 %size, @MIN@
  br i1 %big, label %pool, label %small
small:
  %p = call ptr @malloc(i64 %size)
  ret ptr %p
pool:
  %up = add i64 %size, @HUGE1@
  %rounded = and i64 %up, -@HUGE@
  %quarter = lshr i64 %rounded, 2
  %most = add i64 %rounded, %quarter
  call void @lock()
  br label %loop
loop:
  %i = phi i64 [ 0, %pool ], [ %next, %step ]
  %best = phi i64 [ -1, %pool ], [ %best2, %step ]
  %bestsize = phi i64 [ -1, %pool ], [ %bestsize2, %step ]
  %empty = phi i64 [ -1, %pool ], [ %empty2, %step ]
  %end = icmp eq i64 %i, @SLOTS@
  br i1 %end, label %found, label %look
look:
  %sp = call ptr @field(i64 %i, i32 2)
  %state = load i64, ptr %sp
  %zp = call ptr @field(i64 %i, i32 1)
  %have = load i64, ptr %zp
  %cached = icmp eq i64 %state, 2
  %fits = icmp uge i64 %have, %rounded
  %notbig = icmp ule i64 %have, %most
  %better = icmp ult i64 %have, %bestsize
  %c1 = and i1 %cached, %fits
  %c2 = and i1 %notbig, %better
  %take = and i1 %c1, %c2
  %best2 = select i1 %take, i64 %i, i64 %best
  %bestsize2 = select i1 %take, i64 %have, i64 %bestsize
  %free = icmp eq i64 %state, 0
  %noempty = icmp eq i64 %empty, -1
  %firstfree = and i1 %free, %noempty
  %empty2 = select i1 %firstfree, i64 %i, i64 %empty
  br label %step
step:
  %next = add i64 %i, 1
  br label %loop
found:
  %hit = icmp ne i64 %best, -1
  br i1 %hit, label %reuse, label %fresh
reuse:
  %rsp = call ptr @field(i64 %best, i32 2)
  store i64 1, ptr %rsp
  %total = load i64, ptr @ember_pool_cached
  %less = sub i64 %total, %bestsize
  store i64 %less, ptr @ember_pool_cached
  %rbp = call ptr @field(i64 %best, i32 0)
  %block = load ptr, ptr %rbp
  call void @unlock()
  ret ptr %block
fresh:
  %full = icmp eq i64 %empty, -1
  br i1 %full, label %untracked, label %reserve
untracked:
  call void @unlock()
  %q = call ptr @malloc(i64 %size)
  ret ptr %q
reserve:
  %esp = call ptr @field(i64 %empty, i32 2)
  store i64 3, ptr %esp
  call void @unlock()
  %m = call ptr @map(i64 %rounded)
  %mok = icmp ne ptr %m, null
  br i1 %mok, label %record, label %pressure
pressure:
  call void @ember_pool_release()
  %m2 = call ptr @map(i64 %rounded)
  %m2ok = icmp ne ptr %m2, null
  br i1 %m2ok, label %record, label %fail
fail:
  call void @lock()
  store i64 0, ptr %esp
  call void @unlock()
  ret ptr null
record:
  %got = phi ptr [ %m, %reserve ], [ %m2, %pressure ]
  call void @lock()
  %ebp = call ptr @field(i64 %empty, i32 0)
  store ptr %got, ptr %ebp
  %ezp = call ptr @field(i64 %empty, i32 1)
  store i64 %rounded, ptr %ezp
  store i64 1, ptr %esp
  call void @unlock()
  ret ptr %got
}

define void @ember_pool_free(ptr %p) {
entry:
  %pi = ptrtoint ptr %p to i64
  %low = and i64 %pi, @HUGE1@
  %aligned = icmp eq i64 %low, 0
  %some = icmp ne i64 %pi, 0
  %maybe = and i1 %aligned, %some
  br i1 %maybe, label %search, label %libc
libc:
  call void @free(ptr %p)
  ret void
search:
  call void @lock()
  br label %loop
loop:
  %i = phi i64 [ 0, %search ], [ %next, %step ]
  %end = icmp eq i64 %i, @SLOTS@
  br i1 %end, label %notmine, label %look
look:
  %sp = call ptr @field(i64 %i, i32 2)
  %state = load i64, ptr %sp
  %bp = call ptr @field(i64 %i, i32 0)
  %base = load ptr, ptr %bp
  %live = icmp eq i64 %state, 1
  %same = icmp eq ptr %base, %p
  %it = and i1 %live, %same
  br i1 %it, label %mine, label %step
step:
  %next = add i64 %i, 1
  br label %loop
notmine:
  call void @unlock()
  call void @free(ptr %p)
  ret void
mine:
  %zp = call ptr @field(i64 %i, i32 1)
  %size = load i64, ptr %zp
  %limit = load i64, ptr @ember_pool_limit
  %room = sub i64 %limit, %size
  %fits = icmp ule i64 %size, %limit
  br i1 %fits, label %keep, label %unmap
keep:
  call void @evict(i64 %room, i64 %i)
  %cached = load i64, ptr @ember_pool_cached
  %more = add i64 %cached, %size
  store i64 %more, ptr @ember_pool_cached
  store i64 2, ptr %sp
  call void @unlock()
  ret void
unmap:
  store i64 0, ptr %sp
  call void @unlock()
  %r = call i32 @munmap(ptr %p, i64 %size)
  ret void
}
"""


def ir_text() -> str:
    return (IR.replace("@SLOTS@", str(SLOTS)).replace("@MIN@", str(MIN_BYTES))
            .replace("@HUGE1@", str(HUGE - 1)).replace("@HUGE@", str(HUGE)))
