"""em.function(backend="cuda"), em.device and DLPack exchange of CUDA buffers in a process
whose "GPU" is the stand-in driver of tests/backends/cuda_fake_driver.py (host memory as
device memory; kernels are recorded, not run, so only shapes, placement and copies are
checked here: the values are checked against the CPU backend by the gpu-marked tests)."""

import os
import sys

import numpy as np
import pytest

import ember as em
from ember.backends.cuda import driver, runtime
from ember.frontend import dlpack_structs as ds
from ember.frontend.dlpack import _Capsule

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "backends"))
from cuda_fake_driver import FakeDriver  # noqa: E402

GPU0 = "/job:localhost/replica:0/task:0/device:GPU:0"


@pytest.fixture
def fake_gpu(monkeypatch):
    api = FakeDriver(devices=2)
    d = driver.Driver(api)
    found = d.devices()
    monkeypatch.setattr(driver, "probe", lambda: (d, found))
    monkeypatch.setattr(driver, "_devices", {})
    yield api


class _Producer:
    """A CUDA array library's tensor: a DLPack capsule over memory it owns."""

    def __init__(self, array, kind):
        self.array, self.kind, self.asked = array, kind, []

    def __dlpack_device__(self):
        return (self.kind, 0)

    def __dlpack__(self, stream=None, max_version=None):
        self.asked.append(stream)
        a = self.array
        return ds.export_capsule(a, a.ctypes.data, a.shape, ds.dl_dtype(a.dtype, a.dtype.name),
                                 (self.kind, 0), versioned=max_version is not None)


def test_cuda_function_on_a_gpu_scope_keeps_results_there(fake_gpu):
    assert [d.name for d in em.config.list_physical_devices("GPU")] == \
        ["/physical_device:GPU:0", "/physical_device:GPU:1"]
    f = em.function(lambda a: a * 2.0 + 1.0, backend="cuda")
    x = np.ones((3, 5), np.float32)
    host = f(x)
    assert host.device.endswith("CPU:0") and host.shape == (3, 5)  # copied back
    with em.device("gpu:0"):
        y = f(x)
    assert y.device == GPU0 and y.numpy().shape == (3, 5)
    copies_in = sum(c[0] == "cuMemcpyHtoDAsync" for c in fake_gpu.calls)
    z = f(y)  # a device input: passed as it is, the result stays on the GPU
    assert z.device == GPU0
    assert sum(c[0] == "cuMemcpyHtoDAsync" for c in fake_gpu.calls) == copies_in
    assert fake_gpu.launches and all(k.endswith("_kernel") for k, *_ in fake_gpu.launches)


def test_device_scope_names_a_missing_gpu(fake_gpu):
    with pytest.raises(ValueError, match="there is no GPU:5: this process sees 2 GPU"):
        with em.device("/device:GPU:5"):
            pass


def test_from_dlpack_copies_cuda_memory_once_on_the_gpu(fake_gpu):
    source = np.arange(6, dtype=np.float32).reshape(2, 3)
    producer = _Producer(source, ds.KDL_CUDA)
    t = em.experimental.dlpack.from_dlpack(producer)
    assert t.device == GPU0 and t.dtype == em.float32
    np.testing.assert_array_equal(t.numpy(), source)
    device = runtime.require_device(0)
    assert producer.asked == [device.stream_id]  # the producer orders its work first
    assert t._value.ctypes.data != source.ctypes.data
    assert [c[0] for c in fake_gpu.calls].count("cuMemcpyAsync") == 1
    assert not ds._exports  # the producer's buffer was released at once


def test_from_dlpack_wraps_managed_memory_without_a_copy(fake_gpu):
    source = np.arange(4, dtype=np.int32)
    t = em.experimental.dlpack.from_dlpack(_Producer(source, ds.KDL_CUDA_MANAGED))
    assert t.device == GPU0 and t._value.ctypes.data == source.ctypes.data
    assert len(ds._exports) == 1  # held while the tensor lives
    del t
    assert not ds._exports


def test_gpu_tensors_go_out_as_cuda_capsules(fake_gpu):
    device = runtime.require_device(0)
    t = em.Tensor(runtime.to_device(np.array([1.5, 2.5], np.float64), device))
    assert t.__dlpack_device__() == (ds.KDL_CUDA, 0)
    legacy = ds.read_capsule(em.experimental.dlpack.to_dlpack(t))
    assert legacy.device == (ds.KDL_CUDA, 0) and legacy.read_only
    assert legacy.pointer == t._value.ctypes.data and (legacy.code, legacy.bits) == (2, 64)
    legacy.release()
    with pytest.raises(BufferError, match="copy=True"):
        t.__dlpack__(max_version=(1, 0), copy=True)


def test_from_dlpack_refuses_strided_cuda_buffers(fake_gpu):
    source = np.zeros((4, 4), np.float32)
    capsule = source[:, ::2].__dlpack__(max_version=(1, 0))  # a CPU capsule: numpy's
    imported = ds.read_capsule(capsule)
    imported.device = (ds.KDL_CUDA, 0)
    from ember.runtime.dlpack_cuda import _cuda_tensor
    with pytest.raises(BufferError, match="strided"):
        _cuda_tensor(imported)
    imported.release()


# -- DLPack's structures against numpy's implementation (no GPU involved) ----------------

@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.uint8, np.bool_, np.complex64])
def test_ember_capsules_are_read_by_numpy(dtype):
    a = np.arange(12).reshape(3, 4).astype(dtype)
    capsule = ds.export_capsule(a, a.ctypes.data, a.shape, ds.dl_dtype(a.dtype, "x"),
                                (ds.KDL_CPU, 0))
    b = np.from_dlpack(_Capsule(capsule))
    np.testing.assert_array_equal(b, a)
    assert b.ctypes.data == a.ctypes.data and not b.flags.writeable
    del b, capsule
    assert not ds._exports


def test_numpy_capsules_are_read_by_ember():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    imported = ds.read_capsule(a.__dlpack__(max_version=(1, 0)))
    assert (imported.pointer, imported.shape, imported.device) == \
        (a.ctypes.data, (3, 4), (ds.KDL_CPU, 0))
    assert imported.contiguous and (imported.code, imported.bits, imported.lanes) == (2, 32, 1)
    imported.release()
    with pytest.raises(BufferError, match="not an unconsumed"):
        ds.read_capsule(object())


def test_unconsumed_capsules_release_their_owner():
    a = np.ones(3)
    for versioned in (True, False):
        ds.export_capsule(a, a.ctypes.data, a.shape, ds.dl_dtype(a.dtype, "f8"),
                          (ds.KDL_CPU, 0), versioned=versioned)
    assert not ds._exports


def test_cpu_from_dlpack_still_goes_through_numpy():
    a = np.arange(5, dtype=np.float32)
    t = em.experimental.dlpack.from_dlpack(a)
    assert t.device.endswith("CPU:0") and t._value.ctypes.data == a.ctypes.data
    t2 = em.experimental.dlpack.from_dlpack(em.experimental.dlpack.to_dlpack(t))
    np.testing.assert_array_equal(t2.numpy(), a)


def test_each_gpu_gets_its_own_executable(fake_gpu):
    f = em.function(lambda a: a + 1.0, backend="cuda")
    x = np.zeros(4, np.float32)
    with em.device("gpu:1"):
        y = f(x)
    assert y.device.endswith("GPU:1")
    with em.device("gpu:0"):
        z = f(x)  # the same signature, compiled again for GPU 0
    assert z.device == GPU0
    loaded = [m for m in fake_gpu.modules.values() if b".entry" in m]
    assert len(loaded) >= 2


def test_constants_made_in_a_gpu_scope_live_there(fake_gpu):
    with em.device("gpu:1"):
        t = em.constant([1.0, 2.0], shape=[2])
        with em.device("cpu:0"):
            c = em.constant(3)
    assert t.device.endswith("GPU:1") and c.device.endswith("CPU:0")
    np.testing.assert_array_equal(t.numpy(), [1.0, 2.0])
    assert (t + 1.0).device.endswith("CPU:0")  # eager ops compute on the CPU
    assert em.constant(1.0).device.endswith("CPU:0")  # the scope ended


def test_device_none_clears_a_gpu_scope_and_cpu_1_does_not_exist(fake_gpu):
    with em.device("gpu:0"):
        with em.device(None):  # tf.device(None): no constraint
            c = em.constant(1.0)
        t = em.constant(2.0)
    assert c.device.endswith("CPU:0") and t.device == GPU0
    assert type(t.numpy()) is np.float32 and t.numpy() == 2.0  # a host scalar, as on the CPU
    assert type(np.asarray(t)) is np.ndarray and np.asarray(t).shape == ()
    with pytest.raises(ValueError, match="there is no CPU:1: this process sees 1 CPU"):
        with em.device("cpu:1"):
            pass


def test_gpu_bench_checks_results_before_timing(fake_gpu, monkeypatch, capsys):
    """bench/gpu.py on the stand-in GPU, whose kernels do not run: its check against the
    CPU backend must catch the wrong result (and the copy-bandwidth timing runs)."""
    root = os.path.join(os.path.dirname(__file__), "..", "..")
    monkeypatch.syspath_prepend(os.path.join(root, "bench"))
    import gpu as bench
    monkeypatch.setattr(bench, "N_C", 1000)
    device = runtime.require_device(0)
    assert bench.copy_bandwidth(device, 1 << 20) == pytest.approx(2 * 11 * (1 << 20) / 2.5 / 1e6)
    assert bench.bench_c(device) is False
    assert "C: the GPU result differs from the CPU backend's" in capsys.readouterr().out
