"""Finalizers and the CUDA caching allocator: a device array that dies while its thread is
inside the allocator (the garbage collector runs finalizers wherever Python allocates, e.g.
in the driver's cuMemAllocManaged under the allocator's lock) must not deadlock; its block
is freed later, after the stream, and reused. Each case runs in a daemon thread with a
timeout, so a regression fails instead of hanging the run."""

import gc
import threading
import weakref

import numpy as np

from ember.backends.cuda import allocator, driver, emulated_device, runtime
from ember.frontend import dlpack_structs

TIMEOUT = 30


def _device():
    d = driver.Driver(emulated_device.EmulatedApi(1))
    return driver.Device(d, d.devices()[0])


def _finishes(fn) -> dict:
    """Runs `fn()` in a daemon thread; fails if it has not returned within TIMEOUT."""
    out = {}

    def run():
        try:
            out["value"] = fn()
        except BaseException as e:  # noqa: BLE001 -- re-raised below
            out["error"] = e
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(TIMEOUT)
    assert not thread.is_alive(), "deadlock: the call did not return"
    if "error" in out:
        raise out["error"]
    return out


def _garbage_array(device):
    """A device array kept alive only by a reference cycle (freed by the next collection),
    and a weak reference to its buffer."""
    array = runtime.device_array(device, (256,), np.float32)
    buffer = weakref.ref(runtime.buffer_of(array))
    cycle = [array]
    cycle.append(cycle)
    return buffer


def test_a_finalizer_run_inside_malloc_does_not_deadlock():
    device = _device()
    pool = device.allocator
    allocate, seen = pool._allocate, {}

    def allocate_collecting(size):  # the driver's allocation, with the collector inside
        gc.collect()
        seen["pending"] = len(pool._pending)
        return allocate(size)

    gc.disable()
    try:
        buffer = _garbage_array(device)
        dead_block = allocator.size_class(256 * 4)
        pool._allocate = allocate_collecting
        big = _finishes(lambda: pool.malloc(3 << 20))["value"]
    finally:
        gc.enable()
    assert buffer() is None  # the array's finalizer ran inside malloc...
    assert seen["pending"] == 1  # ...under the lock: its block was queued, not freed
    stats = pool.stats  # the next call frees the queued block
    assert not pool._pending
    assert stats.allocated == allocator.size_class(3 << 20) and stats.cached == dead_block
    pool._allocate = allocate
    assert pool.malloc(256 * 4) != big and pool.stats.reused == 1  # the dead block again


def test_a_finalizer_in_a_gc_callback_during_allocation_does_not_deadlock():
    """The same through the collector's own hook: a collection started by an allocation
    of the emulated driver (np.empty in cuMemAllocManaged) while malloc holds the lock."""
    device = _device()
    pool = device.allocator
    ran = []

    def callback(phase, info):
        if phase == "stop" and pool._lock.locked():
            ran.append(len(pool._pending))

    allocate = pool._allocate
    pool._allocate = lambda size: (gc.collect(), allocate(size))[1]
    gc.disable()
    gc.callbacks.append(callback)
    try:
        buffer = _garbage_array(device)
        _finishes(lambda: pool.malloc(5 << 20))
    finally:
        gc.callbacks.remove(callback)
        gc.enable()
    assert buffer() is None and ran[-1] == 1  # queued by the finalizer under the lock
    assert pool.stats.allocated == allocator.size_class(5 << 20)


def test_a_dying_array_frees_its_block_at_once_when_the_lock_is_free():
    device = _device()
    pool = device.allocator
    syncs = []
    sync = pool._sync
    pool._sync = lambda: (syncs.append(1), sync())
    array = runtime.device_array(device, (1000,), np.float32)
    assert pool.stats.allocated == 4096
    del array
    assert not pool._pending and syncs  # freed by the finalizer, after the stream
    assert pool.stats.allocated == 0 and pool.stats.cached == 4096


def test_blocks_queued_while_the_lock_is_held_wait_for_the_stream_before_reuse():
    device = _device()
    pool = device.allocator
    pointer = pool.malloc(100)
    events = []
    sync = pool._sync
    pool._sync = lambda: (events.append("sync"), sync())
    with pool._lock:  # another call holds the lock: the finalizer's free is queued
        _finishes(lambda: pool.free_deferred(pointer))
    assert list(pool._pending) == [pointer] and not events
    allocate = pool._allocate
    pool._allocate = lambda size: (events.append("driver"), allocate(size))[1]
    assert pool.malloc(100) == pointer  # reused, after waiting for the stream
    assert events == ["sync"] and pool.stats.reused == 1


def test_a_bad_pointer_from_a_finalizer_is_dropped():
    device = _device()
    pool = device.allocator
    good = pool.malloc(100)
    with pool._lock:
        pool.free_deferred(12345)
        pool.free_deferred(good)
    assert pool.stats.allocated == 0 and pool.stats.cached == 512


def test_dlpack_release_from_a_finalizer_inside_the_export_lock():
    """A capsule's destructor (a finalizer) releases its export under dlpack_structs'
    lock; the collector may run it while the same thread holds that lock."""
    def nested():
        with dlpack_structs._lock:
            dlpack_structs._release(1)  # no such export: a no-op, without waiting
        return True
    assert _finishes(nested)["value"]
