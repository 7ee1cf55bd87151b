"""Emulated GPUs (backends/cuda/emulated_device.py): how they are asked for, the driver
over host memory they stand on, and `em.device` / `backend="cuda"` on them: device
arrays, copies in and out, results kept on the device, and the cuda-emulated backend's
code computing what the CPU backend computes."""

import numpy as np
import pytest

import ember as em
from ember.backends.cuda import driver, emulated_device, runtime
from ember.backends.cuda.emulated_device import ENV, emulate_gpus

GPU = "/job:localhost/replica:0/task:0/device:GPU:{}"


@pytest.fixture
def gpus():
    previous, fallback = emulate_gpus(2), em.config.get_fallback()
    em.config.set_fallback("error")
    yield
    em.config.set_fallback(fallback)
    emulate_gpus(previous)


def test_asked_for_by_the_environment_or_emulate_gpus(monkeypatch):
    previous = emulate_gpus(None)  # the environment decides
    try:
        monkeypatch.setenv(ENV, "3")
        driver.probe.cache_clear()
        infos = driver.probe()[1]
        assert [(i.ordinal, i.name, i.chip) for i in infos] == [
            (0, "Emulated GPU 0", "sm_80"), (1, "Emulated GPU 1", "sm_80"),
            (2, "Emulated GPU 2", "sm_80")]
        assert emulated_device.is_emulated(driver.device(2))
        monkeypatch.setenv(ENV, "two")
        driver.probe.cache_clear()
        with pytest.raises(ValueError, match=f"{ENV}='two': give the number of emulated GPUs"):
            driver.probe()
        monkeypatch.setenv(ENV, "99")
        with pytest.raises(ValueError, match="an integer from 0 to 16, got 99"):
            emulated_device.requested()
    finally:
        monkeypatch.undo()
        emulate_gpus(previous)
    for bad in (-1, 1.5, True, "2"):
        with pytest.raises(ValueError, match="emulate_gpus: the number of emulated GPUs"):
            emulate_gpus(bad)


def test_the_emulated_driver_holds_memory_and_refuses_ptx(gpus):
    device = driver.device(1)
    assert device.name == GPU.format(1) and device.info.total_memory == emulated_device.MEMORY
    x = np.arange(10, dtype=np.float32)
    on_device = runtime.to_device(x, device)
    assert runtime.buffer_of(on_device).ember_device == GPU.format(1)
    back = np.empty_like(x)
    device.to_host(back.ctypes.data, on_device.ctypes.data, x.nbytes)
    np.testing.assert_array_equal(back, x)
    device.memset32(on_device.ctypes.data, 0x3F800000, 4)  # 1.0f
    np.testing.assert_array_equal(on_device[:5], [1, 1, 1, 1, 4])
    with pytest.raises(driver.CudaError, match="cuModuleLoadData failed: "
                                               "CUDA_ERROR_NOT_SUPPORTED .*runs no PTX"):
        device.load_module(b"// ptx\0")
    with pytest.raises(ValueError, match=r"there is no GPU:2: this process sees 2 GPU\(s\) "
                                         r"\(GPU:0 Emulated GPU 0, GPU:1 Emulated GPU 1\)"):
        driver.device(2)
    del on_device
    assert device.allocator.stats.allocated == 0


def test_device_scope_places_tensors_and_keeps_results(gpus):
    f = em.function(lambda a, b: em.reduce_sum(a * b, axis=1) + 1.0, backend="cuda")
    a = np.random.default_rng(0).standard_normal((33, 70)).astype(np.float32)
    out = f(a, a)  # outside a scope: computed on GPU 0, copied to the host
    assert out.device.endswith("CPU:0")
    with em.device("gpu:1"):
        scalar = em.constant(2.5)
        assert (scalar.device, scalar.shape.as_list()) == (GPU.format(1), [])
        kept = f(a, a)
    assert kept.device == GPU.format(1)
    again = f(kept[:, None] * np.ones((1, 70), np.float32), a)  # eager ops: back on the CPU
    assert again.device.endswith("CPU:0")
    double = em.function(lambda v: v * 2.0, backend="cuda")
    with em.device("gpu:0"):
        kept0 = f(a, a)
    chained = double(kept0)  # outside a scope, on GPU 0: an input there keeps it there
    assert chained.device == GPU.format(0)
    assert double(kept).device.endswith("CPU:0")  # GPU 1's input: copied, run on GPU 0
    same = em.function(lambda v: v, backend="cuda")(kept)  # the CPU code returns its input
    assert same.device.endswith("CPU:0") and runtime.buffer_of(same.numpy()) is None
    want = em.function(lambda a, b: em.reduce_sum(a * b, axis=1) + 1.0, backend="cpu")(a, a)
    np.testing.assert_allclose(out.numpy(), want.numpy(), rtol=1e-5)
    np.testing.assert_allclose(kept.numpy(), want.numpy(), rtol=1e-5)
    np.testing.assert_allclose(chained.numpy(), 2 * want.numpy(), rtol=1e-5)


def test_variables_on_an_emulated_gpu(gpus):
    with em.device("gpu:0"):
        v = em.Variable(em.constant([1.0, 2.0, 3.0]))
    step = em.function(lambda d: v.assign_add(d * 2.0).read_value(), backend="cuda")
    with em.device("gpu:0"):
        result = step(em.constant([1.0, 1.0, 1.0]))
    assert result.device == GPU.format(0) and v.read_value().device == GPU.format(0)
    np.testing.assert_array_equal(v.numpy(), [3.0, 4.0, 5.0])


def test_emulated_gpus_refuse_what_the_cuda_backend_refuses(gpus, cache_dir):
    dynamic = em.function(lambda a: em.boolean_mask(a, a > 0), backend="cuda")
    with pytest.raises(em.errors.InterpreterFallbackError,
                       match="not supported by the CUDA backend"):
        dynamic(np.array([1, -2, 3], np.int32))
    em.config.set_fallback("warn")
    seen = []

    def f(a):
        em.py_function(lambda x: seen.append(x.numpy().tolist()), [a], [])
        return a * 2.0
    host = em.function(f, backend="cuda")
    np.testing.assert_array_equal(host(np.ones(2, np.float32)).numpy(), [2.0, 2.0])
    assert seen == [[1.0, 1.0]]  # a host call: on the interpreter, as on a GPU
    reason = host._traces[0][1]._executor.fallback_reason
    assert "runs on the host" in reason
    # what compiles is built for CUDA (PTX in the compile cache) and runs emulated
    double = em.function(lambda a: a * 2.0, backend="cuda")
    with em.device("gpu:1"):
        out = double(np.ones(3, np.float32))
    assert out.device == GPU.format(1) and out.numpy().tolist() == [2.0, 2.0, 2.0]
    assert double._traces[0][1]._executor.fallback_reason is None
    assert any(b".target sm_80" in p.read_bytes() for p in cache_dir.rglob("*.obj"))
