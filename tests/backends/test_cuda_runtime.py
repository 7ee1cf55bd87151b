"""The CUDA runtime without a GPU: the errors when there is none (backend="cuda",
em.device("gpu:0"), list_physical_devices), and the driver wrapper, caching allocator,
mgpu* binding and call path against a stand-in for cuda-bindings' driver module
(cuda_fake_driver.py: host memory as "device" memory, kernels recorded, not run). The
compiled host code is real: JIT-compiled from the CUDA backend's host LLVM IR."""

import os
import sys

import numpy as np
import pytest

import ember as em
from ember.backends.cuda import allocator, driver, runtime
from ember.backends.cuda.driver import CudaError, GpuUnavailableError

sys.path.insert(0, os.path.dirname(__file__))
from cuda_fake_driver import CUresult, FakeDriver  # noqa: E402

NO_GPU = not driver.available()
needs_no_gpu = pytest.mark.skipif(not NO_GPU, reason="checks the errors of a machine "
                                  "without a GPU")


# -- without a GPU ------------------------------------------------------------------------

@needs_no_gpu
def test_cuda_backend_without_gpu_raises_at_decoration():
    with pytest.raises(GpuUnavailableError) as info:
        em.function(lambda x: x * 2, backend="cuda")
    text = str(info.value)
    assert "no NVIDIA driver or GPU" in text
    assert "ember-compile --target cuda:sm_90 --emit=ptx" in text
    assert 'backend="cpu"' in text
    assert isinstance(info.value, RuntimeError) and isinstance(info.value, em.errors.EmberError)
    with pytest.raises(GpuUnavailableError):  # the decorator form too
        em.function(backend="cuda")


def test_unknown_backend_lists_cuda():
    with pytest.raises(ValueError, match="'cuda'"):
        em.function(lambda x: x, backend="nonsense")


@needs_no_gpu
def test_gpu_device_scope_without_gpu_raises_on_entering():
    scope = em.device("gpu:0")  # a well-formed name: checked, not yet placed
    with pytest.raises(GpuUnavailableError, match="no NVIDIA driver or GPU"):
        with scope:
            pass
    assert runtime.set_scope_device(None) is None  # the failed entry left no scope behind


@needs_no_gpu
def test_list_physical_devices_without_gpu():
    cpu = em.config.PhysicalDevice(name="/physical_device:CPU:0", device_type="CPU")
    assert em.config.list_physical_devices("GPU") == []
    assert em.config.list_physical_devices("CPU") == [cpu]
    assert em.config.list_physical_devices() == [cpu]
    assert repr(cpu) == "PhysicalDevice(name='/physical_device:CPU:0', device_type='CPU')"
    with pytest.raises(ValueError, match="'TPU'"):
        em.config.list_physical_devices("TPU")


def test_ember_compile_stages_need_no_gpu():
    from ember import backends
    assert "ptx" in backends.get("cuda").stages(chip="sm_90").STAGES


def test_missing_bindings_say_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "cuda.bindings", None)  # import fails
    with pytest.raises(GpuUnavailableError, match=r"pip install 'ember\[cuda\]'"):
        driver.load_bindings()


# -- device names ---------------------------------------------------------------------------

@pytest.mark.parametrize("name,parsed", [
    ("cpu", ("CPU", 0)), ("CPU:0", ("CPU", 0)), ("gpu:1", ("GPU", 1)), ("/GPU:0", ("GPU", 0)),
    ("/device:GPU:2", ("GPU", 2)), ("/job:localhost/replica:0/task:0/device:GPU:0", ("GPU", 0)),
])
def test_device_names(name, parsed):
    from ember.runtime.devices import parse
    assert parse(name) == parsed


@pytest.mark.parametrize("name", ["tpu:0", "gpu:-1", "", "gpu0", 3])
def test_bad_device_names(name):
    with pytest.raises(ValueError, match="not a device name"):
        em.device(name)


def test_cpu_tensors_and_scope():
    t = em.constant([1.0, 2.0])
    assert t.device == "/job:localhost/replica:0/task:0/device:CPU:0"
    with em.device("/CPU:0") as scope:
        assert scope.name == t.device
        assert em.constant([3]).device == t.device


# -- the driver wrapper -----------------------------------------------------------------

def test_checked_calls_name_the_call_and_the_driver_reason():
    api = FakeDriver(memory_limit=1024)
    d = driver.Driver(api)
    with pytest.raises(CudaError, match=r"cuMemAllocManaged failed: CUDA_ERROR_OUT_OF_MEMORY "
                                        r"\(out of memory\)"):
        d.call("cuMemAllocManaged", 1 << 20, 1)
    assert d.call("cuDeviceGetCount") == 1
    assert d.call("cuInit", 0) is None


def test_device_enumeration():
    api = FakeDriver(devices=2, capability=(8, 6))
    infos = driver.Driver(api).devices()
    assert [(i.ordinal, i.name, i.chip) for i in infos] == [(0, "Fake GPU 0", "sm_86"),
                                                            (1, "Fake GPU 1", "sm_86")]
    assert api.calls[0] == ("cuInit", (0,))


def test_chip_follows_the_device():
    info = driver.DeviceInfo(0, "x", (8, 9), 0)
    assert runtime.chip_for(info, runtime.CudaOptions()).chip == "sm_89"
    newer = driver.DeviceInfo(0, "x", (12, 0), 0)
    assert runtime.chip_for(newer, runtime.CudaOptions()).chip == "sm_90"  # PTX JITs forward
    with pytest.raises(em.errors.NotCompilable, match="compute capability"):
        runtime.chip_for(driver.DeviceInfo(0, "old", (5, 2), 0), runtime.CudaOptions())


# -- the caching allocator ------------------------------------------------------------------

def test_allocator_reuses_blocks_by_size_class():
    api = FakeDriver()
    device = driver.Device(driver.Driver(api), driver.Driver(api).devices()[0])
    pool = device.allocator
    a = pool.malloc(1000)
    assert pool.owns(a) and pool.owns(a + 1023) and not pool.owns(a + 1024)
    pool.free(a)
    b = pool.malloc(700)  # same class (1024 bytes): the freed block again
    assert b == a and pool.stats.reused == 1 and pool.stats.driver_allocs == 1
    c = pool.malloc(3 << 20)
    assert allocator.size_class(3 << 20) == 4 << 20 and pool.stats.allocated == 1024 + (4 << 20)
    pool.free(c, from_host=True)
    with pytest.raises(ValueError, match="not a block in use"):
        pool.free(c)
    pool.empty_cache()
    assert pool.stats.cached == 0 and pool.stats.driver_frees == 1 and len(api.memory) == 1
    assert not pool.owns(c)


def test_allocator_empties_its_cache_before_giving_up():
    api = FakeDriver(memory_limit=5 << 20)
    device = driver.Device(driver.Driver(api), driver.Driver(api).devices()[0])
    pool = device.allocator
    pool.free(pool.malloc(2 << 20))  # cached, holding 2 of the 5 MiB
    block = pool.malloc(4 << 20)  # needs the cached block returned first
    assert pool.stats.driver_frees == 1 and pool.owns(block)
    with pytest.raises(allocator.AllocationError, match="no 4194304 bytes free"):
        pool.malloc(4 << 20)


# -- compiled calls through the fake driver --------------------------------------------------

@pytest.fixture
def fake_device():
    api = FakeDriver()
    d = driver.Driver(api)
    return api, driver.Device(d, d.devices()[0])


def _traced(fn, *args):
    """(optimised module text, symbol, argument types, pipeline) the runtime would give a
    backend for `fn(*args)`."""
    from ember import backends
    seen = {}

    class Spy:
        name, compiles = "spy", True

        def compile(self, module_text, symbol, arg_types, *, source_key=None,
                    pipeline="ember-optimize"):
            seen["args"] = (module_text() if callable(module_text) else module_text, symbol,
                            list(arg_types), pipeline)
            raise backends.NotCompilable("spy", backends.NotCompilable.Reason.HOST_ONLY)

        def stages(self, instrument=None, **options):
            raise backends.NotCompilable("spy", backends.NotCompilable.Reason.HOST_ONLY)

    backends.register("spy-cuda", Spy)
    try:
        em.function(fn, backend="spy-cuda")(*args)
    finally:
        backends.unregister("spy-cuda")
    return seen["args"]


def test_call_copies_in_launches_and_copies_out(fake_device):
    api, device = fake_device
    x = np.arange(64 * 33, dtype=np.float32).reshape(64, 33)
    text, symbol, types, pipeline = _traced(lambda a: em.reduce_max(em.exp(a), axis=1) * 2.0,
                                            x)
    exe = runtime.compile_function(text, symbol, types, pipeline=pipeline, device=device)
    assert exe.symbol == symbol and not exe.fast_path
    assert any(b".entry" in ptx and b".target sm_90" in ptx for ptx in api.modules.values())
    before = len(api.launches)
    out = exe([x])
    assert out[0].shape == (64,) and out[0].dtype == np.float32
    assert runtime.buffer_of(out[0]) is None  # copied back to a host array
    assert len(api.launches) > before
    names = [c[0] for c in api.calls]
    assert "cuMemcpyHtoDAsync" in names and "cuMemcpyDtoHAsync" in names
    for kernel, grid, block, shared in api.launches:
        assert all(g >= 1 for g in grid) and 1 <= np.prod(block) <= 1024
    # the second call reuses the first call's blocks: no new driver allocations
    allocs = device.allocator.stats.driver_allocs
    exe([x])
    assert device.allocator.stats.driver_allocs == allocs
    assert device.allocator.stats.allocated == 0  # inputs and outputs went back


def test_device_inputs_keep_results_on_the_device(fake_device):
    api, device = fake_device
    x = np.ones((4, 8), np.float32)
    text, symbol, types, pipeline = _traced(lambda a: a + 1.0, x)
    exe = runtime.compile_function(text, symbol, types, pipeline=pipeline, device=device)
    on_device = runtime.to_device(x, device)
    np.testing.assert_array_equal(on_device, x)  # managed memory: the host reads it
    copies = sum(c[0] == "cuMemcpyHtoDAsync" for c in api.calls)
    out = exe([on_device])[0]
    assert sum(c[0] == "cuMemcpyHtoDAsync" for c in api.calls) == copies  # no copy in
    assert runtime.buffer_of(out).ember_device == device.name
    t = em.Tensor(out)
    assert t.device == "/job:localhost/replica:0/task:0/device:GPU:0"
    assert t.__dlpack_device__() == (2, 0)
    host = t.numpy()
    assert runtime.buffer_of(host) is None and host.shape == (4, 8)
    from ember.frontend.dlpack_structs import read_capsule
    exported = read_capsule(t.__dlpack__(max_version=(1, 0)))  # zero-copy, kDLCUDA
    assert (exported.pointer, exported.shape, exported.device) == \
        (out.ctypes.data, (4, 8), (2, 0))
    assert exported.read_only and (exported.code, exported.bits) == (2, 32)
    exported.release()
    np.testing.assert_array_equal(np.from_dlpack(t, device="cpu"), host)


def test_host_allocations_come_from_the_device_allocator(fake_device):
    api, device = fake_device
    x = np.random.default_rng(0).standard_normal((16, 40)).astype(np.float32)
    text, symbol, types, pipeline = _traced(
        lambda a: em.reduce_sum(em.exp(a - em.reduce_max(a, axis=1, keepdims=True)), axis=1),
        x)
    exe = runtime.compile_function(text, symbol, types, pipeline=pipeline, device=device)
    stats = device.allocator.stats
    before = stats.driver_allocs + stats.reused
    exe([x])
    # input, output and the intermediate row maxima: all from the caching allocator
    assert stats.driver_allocs + stats.reused - before >= 3
    assert stats.allocated == 0


def test_dynamic_results_are_refused(fake_device):
    _, device = fake_device
    x = np.array([1, -2, 3], np.int32)
    text, symbol, types, pipeline = _traced(lambda a: em.boolean_mask(a, a > 0), x)
    with pytest.raises(em.errors.NotCompilable, match="shape depends on values") as info:
        runtime.compile_function(text, symbol, types, pipeline=pipeline, device=device)
    assert info.value.reason is em.errors.NotCompilable.Reason.UNSUPPORTED


def test_failed_driver_call_in_host_code_raises_after_the_call(fake_device):
    api, device = fake_device
    x = np.ones((8,), np.float32)
    text, symbol, types, pipeline = _traced(lambda a: a * 3.0, x)
    exe = runtime.compile_function(text, symbol, types, pipeline=pipeline, device=device)
    api.cuLaunchKernel = lambda *args: (CUresult.CUDA_ERROR_INVALID_VALUE,)
    with pytest.raises(CudaError, match="cuLaunchKernel failed: CUDA_ERROR_INVALID_VALUE"):
        exe([x])
    assert device.allocator.stats.allocated == 0  # the call's buffers were still freed


# -- on a GPU (skipped without one: conftest.py) --------------------------------------------

@pytest.mark.gpu
@pytest.mark.parametrize("fn", [lambda a, b: a * b + 1.0,
                                lambda a, b: em.reduce_sum(a * b, axis=1),
                                lambda a, b: em.nn.relu(a - b) / 2.0])
def test_cuda_matches_cpu(fn):
    rng = np.random.default_rng(1)
    a, b = (rng.standard_normal((33, 70)).astype(np.float32) for _ in range(2))
    cuda, cpu = em.function(fn, backend="cuda"), em.function(fn, backend="cpu")
    np.testing.assert_allclose(cuda(a, b).numpy(), cpu(a, b).numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.gpu
def test_results_stay_on_the_gpu_inside_its_scope():
    f = em.function(lambda a: a * 2.0, backend="cuda")
    with em.device("gpu:0"):
        y = f(np.ones(5, np.float32))
    assert y.device.endswith("GPU:0")
    z = f(y)  # a device input: no copy in, the result stays there
    assert z.device.endswith("GPU:0")
    np.testing.assert_array_equal(z.numpy(), np.full(5, 4.0, np.float32))


def test_compiled_host_code_is_cached_on_disk(fake_device, tmp_path, monkeypatch):
    from ember.backends.cpu.cache import disk_cache
    monkeypatch.setenv("EMBER_CACHE_DIR", str(tmp_path))
    api, device = fake_device
    x = np.ones((5, 7), np.float32)
    text, symbol, types, pipeline = _traced(lambda a: a - 0.5, x)
    runtime.compile_function(text, symbol, types, pipeline=pipeline, device=device)
    stored = list(tmp_path.rglob("*.obj"))
    assert len(stored) == 1
    build = runtime.build
    monkeypatch.setattr(runtime, "build", lambda *a, **k: pytest.fail("compiled again"))
    other = driver.Device(device.driver, device.info)  # a new device: the memory cache misses
    exe = runtime.compile_function(text, symbol, types, pipeline=pipeline, device=other)
    assert exe([x])[0].shape == (5, 7)
    stored[0].write_bytes(stored[0].read_bytes()[:-100])  # damaged: discarded and rebuilt
    monkeypatch.setattr(runtime, "build", build)
    third = driver.Device(device.driver, device.info)
    discarded = disk_cache().discarded
    runtime.compile_function(text, symbol, types, pipeline=pipeline, device=third)
    assert disk_cache().discarded == discarded + 1 and len(list(tmp_path.rglob("*.obj"))) == 1


def test_constants_reach_kernels_through_managed_memory(fake_device):
    api, device = fake_device
    x = np.ones((4, 3), np.float32)
    text, symbol, types, pipeline = _traced(
        lambda a: a * em.constant([1.0, 2.0, 3.0]) + em.constant([[1.0], [2.0], [3.0], [4.0]]),
        x)
    exe = runtime.compile_function(text, symbol, types, pipeline=pipeline, device=device)
    stats = device.allocator.stats
    before = stats.driver_allocs + stats.reused
    exe([x])
    assert stats.driver_allocs + stats.reused - before == 4  # input, output, 2 constants
    assert stats.allocated == 0


@pytest.mark.parametrize("setup,message", [
    (lambda api: setattr(api, "cuInit", lambda flags: (CUresult.CUDA_ERROR_NO_DEVICE,)),
     r"no usable NVIDIA GPU was found: CUDA driver call cuInit failed: CUDA_ERROR_NO_DEVICE "
     r"\(no CUDA-capable device is detected\)"),
    (lambda api: setattr(api, "count", 0), "the NVIDIA driver sees no GPU"),
])
def test_probe_says_why_there_is_no_gpu(monkeypatch, setup, message):
    api = FakeDriver()
    setup(api)
    monkeypatch.setattr(driver, "load_bindings", lambda: api)
    driver.probe.cache_clear()
    try:
        with pytest.raises(GpuUnavailableError, match=message):
            driver.probe()
        assert not driver.available()
        assert em.config.list_physical_devices("GPU") == []
    finally:
        monkeypatch.undo()
        driver.probe.cache_clear()  # the real answer again for the tests after this one


def test_dropped_executables_unload_their_modules(fake_device):
    import gc
    api, device = fake_device
    x = np.ones(3, np.float32)
    text, symbol, types, pipeline = _traced(lambda a: a / 4.0, x)
    exe = runtime.CudaExecutable(runtime.build(text, symbol, types,
                                               runtime.CudaOptions(chip="sm_90"), pipeline)[0],
                                 symbol, types, types, device)
    loaded = len(api.modules)
    assert loaded >= 1
    del exe
    gc.collect()
    assert len(api.modules) < loaded and ("cuModuleUnload" in [c[0] for c in api.calls])


@pytest.mark.parametrize("line,name", [
    (".extern .func _mlir_ciface_ember_error_0", "ember_error_0"),
    (".extern .func  (.param .b32 func_retval0) _mlir_ciface_helper", "helper"),
    (".extern .func  (.param .b32 func_retval0) vprintf(", "vprintf"),
])
def test_kernels_calling_undefined_functions_are_refused(line, name):
    ptx = f".version 8.0\n.target sm_90\n{line}\n.visible .entry k()\n{{\n\tret;\n}}\n"
    with pytest.raises(em.errors.NotCompilable, match=f"kernel module @m calls {name}\\b"):
        runtime.check_kernel_calls("m", ptx)
    runtime.check_kernel_calls("m", ptx.replace(line, ""))  # no declaration: accepted


def test_ptx_the_driver_refuses_is_not_compilable(fake_device):
    api, device = fake_device
    api.cuModuleLoadData = lambda image: (CUresult.CUDA_ERROR_INVALID_VALUE,)
    x = np.ones(3, np.float32)
    text, symbol, types, pipeline = _traced(lambda a: a * 5.0, x)
    with pytest.raises(em.errors.NotCompilable, match="loading the kernels of .* on Fake GPU 0 "
                       "failed: CUDA driver call cuModuleLoadData failed") as info:
        runtime.compile_function(text, symbol, types, pipeline=pipeline, device=device)
    assert info.value.reason is em.errors.NotCompilable.Reason.FAILED


def test_empty_tensors_and_empty_grids(fake_device):
    from ember.backends.cuda import runtime_mgpu
    api, device = fake_device
    x = np.ones((0, 3), np.float32)
    text, symbol, types, pipeline = _traced(lambda a: a + 1.0, x)
    exe = runtime.compile_function(text, symbol, types, pipeline=pipeline, device=device)
    assert exe([x])[0].shape == (0, 3)
    api.functions[900] = "k"  # the driver refuses a grid with no blocks: not launched
    runtime_mgpu._launch(device, 900, 0, 1, 1, 32, 1, 1, 0, None, None, None, 0)
    assert api.launches == []
    runtime_mgpu._launch(device, 900, 2, 1, 1, 32, 1, 1, 0, None, None, None, 0)
    assert api.launches == [("k", (2, 1, 1), (32, 1, 1), 0)]
