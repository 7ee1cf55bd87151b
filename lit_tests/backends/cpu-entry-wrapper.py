# The entry wrapper the JIT calls (jit.entry_wrapper): it returns a status, keeps the error
# context (jump buffer, failure value, the thread's previous context) on its stack, makes it
# the thread's context through the error key, and on a longjmp back restores the previous
# context and copies the failure's values after the buffer pointers. A result of dynamic
# shape has no buffer: the call returns it unranked and its descriptor goes in its slot.
# RUN: %python %s | FileCheck %s

from ember.backends.cpu.jit import entry_wrapper
from ember.dialects.ember import dtypes
from ember.dialects.ember.types import TensorType

print(entry_wrapper("f", [TensorType(dtypes.int32, (4,)), TensorType(dtypes.int32, (4,))]))
print(entry_wrapper("g", [TensorType(dtypes.int32, (4,)), TensorType(dtypes.int32, (None,)),
                          TensorType(dtypes.int32, (2,)), TensorType(dtypes.int32, (None, 3))]))
# An AOT library's entry (inputs=2): the arguments' `?` dims come from the slots after the
# value slots, in order, and their strides are computed from them.
print(entry_wrapper("h", [TensorType(dtypes.float32, (None, 3, None)),
                          TensorType(dtypes.float32, (2,)), TensorType(dtypes.float32, (None,))],
                    inputs=2))

# The JIT's entry of code that allocates (track=True, call_buffers.py): the call's list of
# live buffers starts empty in the context's 16 slots, and the entry ends it on both paths,
# freeing what is listed after a failure.
print(entry_wrapper("t", [TensorType(dtypes.int32, (4,))], track=True))

# CHECK-LABEL: define i32 @__ember_entry_f(ptr %data) {
# CHECK-NEXT:    %ctx = alloca [928 x i8], align 16
# CHECK-NEXT:    %key = load i32, ptr @ember_rt_error_key
# CHECK-NEXT:    %outer = call ptr @pthread_getspecific(i32 %key)
# CHECK:         store ptr %outer, ptr %outer.at
# CHECK-NEXT:    %status = call i32 @_setjmp(ptr %ctx)
# CHECK-NEXT:    %failed = icmp ne i32 %status, 0
# CHECK-NEXT:    br i1 %failed, label %fail, label %run
# CHECK:       run:
# CHECK-NEXT:    call i32 @pthread_setspecific(i32 %key, ptr %ctx)
# CHECK:         call void @f(ptr %p0, ptr %p0, i64 0, i64 4, i64 1, ptr %p1, ptr %p1, i64 0, i64 4, i64 1)
# CHECK-NEXT:    call i32 @pthread_setspecific(i32 %key, ptr %outer)
# CHECK-NEXT:    ret i32 0
# CHECK:       fail:
# CHECK:         call i32 @pthread_setspecific(i32 %key.again, ptr %outer.again)
# CHECK:         %v0.slot = getelementptr ptr, ptr %data, i64 2
# CHECK-NEXT:    store i64 %v0, ptr %v0.slot
# CHECK:         %v31.slot = getelementptr ptr, ptr %data, i64 33
# CHECK-NEXT:    store i64 %v31, ptr %v31.slot
# CHECK-NEXT:    ret i32 %status

# CHECK-LABEL: define i32 @__ember_entry_g(ptr %data) {
# CHECK:         %returned = call { { i64, ptr }, { i64, ptr } } @g(ptr %p0, ptr %p0, i64 0, i64 4, i64 1, ptr %p2, ptr %p2, i64 0, i64 2, i64 1)
# CHECK-NEXT:    %d1 = extractvalue { { i64, ptr }, { i64, ptr } } %returned, 0, 1
# CHECK-NEXT:    %slot1 = getelementptr ptr, ptr %data, i64 1
# CHECK-NEXT:    store ptr %d1, ptr %slot1
# CHECK-NEXT:    %d3 = extractvalue { { i64, ptr }, { i64, ptr } } %returned, 1, 1
# CHECK-NEXT:    %slot3 = getelementptr ptr, ptr %data, i64 3
# CHECK-NEXT:    store ptr %d3, ptr %slot3
# CHECK:         %v0.slot = getelementptr ptr, ptr %data, i64 4

# CHECK-LABEL: define i32 @__ember_entry_h(ptr %data) {
# CHECK:         %n0.0.at = getelementptr ptr, ptr %data, i64 35
# CHECK-NEXT:    %n0.0 = load i64, ptr %n0.0.at
# CHECK-NEXT:    %n0.2.at = getelementptr ptr, ptr %data, i64 36
# CHECK-NEXT:    %n0.2 = load i64, ptr %n0.2.at
# CHECK:         %returned = call { i64, ptr } @h(ptr %p0, ptr %p0, i64 0, i64 %n0.0, i64 3, i64 %n0.2, i64 %s0.1, i64 %s0.2, i64 1, ptr %p1, ptr %p1, i64 0, i64 2, i64 1)

# CHECK-LABEL: define i32 @__ember_entry_t(ptr %data) {
# CHECK:         %track.count = getelementptr i8, ptr %ctx, i64 776
# CHECK-NEXT:    store i64 0, ptr %track.count
# CHECK-NEXT:    %track.cap = getelementptr i8, ptr %ctx, i64 784
# CHECK-NEXT:    store i64 16, ptr %track.cap
# CHECK-NEXT:    %track.list = getelementptr i8, ptr %ctx, i64 792
# CHECK-NEXT:    %track.slots = getelementptr i8, ptr %ctx, i64 800
# CHECK-NEXT:    store ptr %track.slots, ptr %track.list
# CHECK-NEXT:    %status = call i32 @_setjmp(ptr %ctx)
# CHECK:         call i32 @pthread_setspecific(i32 %key, ptr %outer)
# CHECK-NEXT:    call void @ember_rt_track_end(ptr %ctx, i1 false)
# CHECK-NEXT:    ret i32 0
# CHECK:       fail:
# CHECK:         store i64 %v31, ptr %v31.slot
# CHECK-NEXT:    call void @ember_rt_track_end(ptr %ctx, i1 true)
# CHECK-NEXT:    ret i32 %status
