"""The buffers a running call of JIT code has allocated, freed when the call fails.

A failing call unwinds to its entry (`longjmp`, native.py) past the frames that would have
freed its intermediates: before this, every failed `em.debugging.assert_*` or index check
leaked them (a dynamic-size `em.where` feeding a failing assert: ~2.7 MB per call). So the
call keeps a list of them in its error context (native.TRACK_OFFSET), on the entry's stack:

  1. `track` renames the code's calls of malloc and free (the memref lowering's, the
     checked allocator's) to `@ember_rt_tracked_malloc` / `@ember_rt_tracked_free`, which
     find the calling thread's context through the error key (as `ember_rt_fail` does) and
     add the buffer to its list / remove it (searching from the most recent) around the
     real malloc and free. Code running without a context (none: outside an entry) keeps
     no list; code that allocates nothing (`allocates`) is left as it was.
  2. The entry (jit.entry_wrapper with `track`) starts the list empty in the context's
     `TRACK_INLINE` slots; it moves to malloc'ed storage, doubling, when they fill.
  3. On return the entry calls `@ember_rt_track_end(ctx, failed)`: after a failure it
     frees every listed buffer first; either way it frees the list's storage. On success
     the listed buffers are the call's results (dynamic-shape results and their
     descriptors, which the caller now owns): they stay.

Each call's list is its own (the context is per entry and per thread), so Python threads
calling at once, row blocks on parallel.py's threads and nested calls (a host callback
calling compiled code) each free only their own. Ember's GEMM library allocates its
packing buffers itself and frees them before it returns (kernels/driver_ir.py), so they
are never listed. The names here call plain `@malloc` and `@free`, which `block_cache.route`
then sends through the allocator's table like the rest of the code's. AOT libraries track
their calls in their C runtime instead (backends/cpu/aot/runtime_c.py).
A successful call pays two small calls per allocation-free pair and one per call.
"""

from __future__ import annotations

import re

from ember.backends.cpu.native import KEY_SYMBOL, MALLOC as CHECKED, TRACK_INLINE, TRACK_OFFSET

MALLOC, FREE, END = "ember_rt_tracked_malloc", "ember_rt_tracked_free", "ember_rt_track_end"
COUNT, CAPACITY, LIST, SLOTS = (TRACK_OFFSET, TRACK_OFFSET + 8, TRACK_OFFSET + 16,
                                TRACK_OFFSET + 24)

_DECLARATION = re.compile(r"^declare [^\n]*@(malloc|free)\([^\n]*\n", re.MULTILINE)
_CALL = re.compile(r"@(malloc|free)\(")
_ALLOCATION = re.compile(rf"call ptr @{CHECKED}\(")

_RUNTIME = """
declare ptr @malloc(i64)
declare void @free(ptr)

define internal ptr @{context}() {{
  %key = load i32, ptr @{key}
  %ctx = call ptr @pthread_getspecific(i32 %key)
  ret ptr %ctx
}}

define internal ptr @{malloc}(i64 %size) {{
entry:
  %p = call ptr @malloc(i64 %size)
  %ctx = call ptr @{context}()
  %none = icmp eq ptr %ctx, null
  %null = icmp eq ptr %p, null
  %skip = or i1 %none, %null
  br i1 %skip, label %done, label %keep
keep:
  %countp = getelementptr i8, ptr %ctx, i64 {count}
  %count = load i64, ptr %countp
  %capp = getelementptr i8, ptr %ctx, i64 {capacity}
  %cap = load i64, ptr %capp
  %full = icmp eq i64 %count, %cap
  br i1 %full, label %grow, label %store
grow:
  %grown = call i1 @ember_rt_track_grow(ptr %ctx)
  br i1 %grown, label %store, label %nomem
nomem:
  call void @free(ptr %p)
  ret ptr null
store:
  %listp = getelementptr i8, ptr %ctx, i64 {list}
  %list = load ptr, ptr %listp
  %at = getelementptr ptr, ptr %list, i64 %count
  store ptr %p, ptr %at
  %next = add i64 %count, 1
  store i64 %next, ptr %countp
  br label %done
done:
  ret ptr %p
}}

; doubles the list's storage (malloc'ed; the context's slots at first)
define internal i1 @ember_rt_track_grow(ptr %ctx) noinline cold {{
entry:
  %capp = getelementptr i8, ptr %ctx, i64 {capacity}
  %cap = load i64, ptr %capp
  %listp = getelementptr i8, ptr %ctx, i64 {list}
  %list = load ptr, ptr %listp
  %cap2 = shl i64 %cap, 1
  %bytes = shl i64 %cap2, 3
  %new = call ptr @malloc(i64 %bytes)
  %failed = icmp eq ptr %new, null
  br i1 %failed, label %no, label %copy
no:
  ret i1 false
copy:
  %i = phi i64 [ 0, %entry ], [ %i2, %copy ]
  %from = getelementptr ptr, ptr %list, i64 %i
  %item = load ptr, ptr %from
  %to = getelementptr ptr, ptr %new, i64 %i
  store ptr %item, ptr %to
  %i2 = add i64 %i, 1
  %more = icmp ult i64 %i2, %cap
  br i1 %more, label %copy, label %copied
copied:
  %slots = getelementptr i8, ptr %ctx, i64 {slots}
  %inline = icmp eq ptr %list, %slots
  br i1 %inline, label %set, label %drop
drop:
  call void @free(ptr %list)
  br label %set
set:
  store ptr %new, ptr %listp
  store i64 %cap2, ptr %capp
  ret i1 true
}}

define internal void @{free}(ptr %p) {{
entry:
  %null = icmp eq ptr %p, null
  br i1 %null, label %done, label %find
find:
  %ctx = call ptr @{context}()
  %none = icmp eq ptr %ctx, null
  br i1 %none, label %release, label %search
search:
  %countp = getelementptr i8, ptr %ctx, i64 {count}
  %count = load i64, ptr %countp
  %listp = getelementptr i8, ptr %ctx, i64 {list}
  %list = load ptr, ptr %listp
  br label %loop
loop:
  %i = phi i64 [ %count, %search ], [ %k, %look ]
  %end = icmp eq i64 %i, 0
  br i1 %end, label %release, label %look
look:
  %k = sub i64 %i, 1
  %at = getelementptr ptr, ptr %list, i64 %k
  %q = load ptr, ptr %at
  %same = icmp eq ptr %q, %p
  br i1 %same, label %forget, label %loop
forget:
  %last = sub i64 %count, 1
  %lastp = getelementptr ptr, ptr %list, i64 %last
  %moved = load ptr, ptr %lastp
  store ptr %moved, ptr %at
  store i64 %last, ptr %countp
  br label %release
release:
  call void @free(ptr %p)
  br label %done
done:
  ret void
}}

; the entry's last step: frees the listed buffers if the call failed, and the list's storage
define internal void @{end}(ptr %ctx, i1 %failed) noinline {{
entry:
  %countp = getelementptr i8, ptr %ctx, i64 {count}
  %count = load volatile i64, ptr %countp
  %listp = getelementptr i8, ptr %ctx, i64 {list}
  %list = load volatile ptr, ptr %listp
  %some = icmp ne i64 %count, 0
  %drop = and i1 %failed, %some
  br i1 %drop, label %loop, label %storage
loop:
  %i = phi i64 [ 0, %entry ], [ %i2, %loop ]
  %at = getelementptr ptr, ptr %list, i64 %i
  %p = load ptr, ptr %at
  call void @free(ptr %p)
  %i2 = add i64 %i, 1
  %more = icmp ult i64 %i2, %count
  br i1 %more, label %loop, label %storage
storage:
  %slots = getelementptr i8, ptr %ctx, i64 {slots}
  %own = icmp ne ptr %list, %slots
  br i1 %own, label %release, label %done
release:
  call void @free(ptr %list)
  br label %done
done:
  ret void
}}
"""


def runtime_ir() -> str:
    """LLVM IR of the tracked malloc and free and the entry's `END` (for a module that has
    the error runtime, native_ir.install)."""
    return _RUNTIME.format(context="ember_rt_track_context", key=KEY_SYMBOL, malloc=MALLOC,
                           free=FREE, end=END, count=COUNT, capacity=CAPACITY, list=LIST,
                           slots=SLOTS)


def allocates(llvm_ir: str) -> bool:
    """Whether a module's code allocates (calls native_ir.install's checked allocator, where
    every malloc of the lowering goes). Code that does not has nothing to track: its entry
    stays as it was, and it loads without the block cache (a warm start's dlopen)."""
    return _ALLOCATION.search(llvm_ir) is not None


def track(llvm_ir: str) -> str:
    """A JIT module's LLVM IR (its entries made with `track`) with its calls of malloc and
    free tracked (step 1), the tracking's code appended."""
    text = _DECLARATION.sub("", llvm_ir)
    text = _CALL.sub(lambda m: f"@{MALLOC if m.group(1) == 'malloc' else FREE}(", text)
    return text + runtime_ir()


def entry_start(ctx: str) -> list[str]:
    """Entry IR starting the call's list empty in the context's slots (step 2)."""
    return [f"  %track.count = getelementptr i8, ptr {ctx}, i64 {COUNT}",
            "  store i64 0, ptr %track.count",
            f"  %track.cap = getelementptr i8, ptr {ctx}, i64 {CAPACITY}",
            f"  store i64 {TRACK_INLINE}, ptr %track.cap",
            f"  %track.list = getelementptr i8, ptr {ctx}, i64 {LIST}",
            f"  %track.slots = getelementptr i8, ptr {ctx}, i64 {SLOTS}",
            "  store ptr %track.slots, ptr %track.list"]


def entry_end(ctx: str, failed: bool) -> list[str]:
    """Entry IR ending the call's list (step 3)."""
    return [f"  call void @{END}(ptr {ctx}, i1 {'true' if failed else 'false'})"]
