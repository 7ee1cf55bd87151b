"""The GPU bench (issue 17): `make bench-gpu`, or `.venv/bin/python bench/gpu.py`.

On a machine with an NVIDIA GPU, the driver and `ember[cuda]`:
  - case C's elementwise chain (`((x*2+1)*x - 3)/(x+4) + sin(x)`, 10,000,000 float32) with
    its inputs and results on the GPU, as GB/s (80 MB: one read, one write) against the
    device's copy bandwidth, measured with cuMemcpyDtoDAsync between CUDA events;
  - 4096×4096 matmul in float32 and bfloat16 as TFLOP/s, against PyTorch's cuBLAS
    (`torch.matmul` on CUDA tensors) when torch with CUDA is installed.
Each result is checked against the CPU backend (C) or numpy (matmul) before it is timed;
the median of 11 timed calls is reported, after a warm-up.

Without a GPU it prints one line saying so and exits with status 0 (nothing to measure is
not a failure: CI runs it on machines without one); status 1 means a check failed.
"""

from __future__ import annotations

import statistics
import sys
import time

import numpy as np

import ember as em
from ember.backends.cuda import driver, runtime

N_C, N_MM, REPEATS = 10_000_000, 4096, 11


def case_c(x):
    return ((x * 2 + 1) * x - 3) / (x + 4) + em.sin(x)


def _median_ms(fn, device) -> float:
    fn()
    device.synchronize()
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        fn()
        device.synchronize()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def copy_bandwidth(device, nbytes: int) -> float:
    """GB/s of a device-to-device copy of `nbytes` (read + write), timed with events."""
    src, dst = device.allocator.malloc(nbytes), device.allocator.malloc(nbytes)
    call = device.driver.call
    start, end = call("cuEventCreate", 0), call("cuEventCreate", 0)
    try:
        device.copy(dst, src, nbytes)  # warm-up
        call("cuEventRecord", start, device.stream)
        for _ in range(REPEATS):
            device.copy(dst, src, nbytes)
        call("cuEventRecord", end, device.stream)
        call("cuEventSynchronize", end)
        ms = call("cuEventElapsedTime", start, end) / REPEATS
    finally:
        call("cuEventDestroy", start)
        call("cuEventDestroy", end)
        device.allocator.free(src, from_host=True)
        device.allocator.free(dst, from_host=True)
    return 2 * nbytes / ms / 1e6


def bench_c(device) -> bool:
    x = np.random.default_rng(0).uniform(-1, 1, N_C).astype(np.float32)
    f_gpu, f_cpu = em.function(case_c, backend="cuda"), em.function(case_c, backend="cpu")
    with em.device(f"gpu:{device.info.ordinal}"):
        x_gpu = em.constant(x)  # on the GPU: the timed calls copy nothing
        y = f_gpu(x_gpu)
    expected = f_cpu(x).numpy()
    if not np.allclose(y.numpy(), expected, rtol=1e-4, atol=1e-5):
        print("C: the GPU result differs from the CPU backend's")
        return False
    ms = _median_ms(lambda: f_gpu(x_gpu), device)
    peak = copy_bandwidth(device, x.nbytes)
    achieved = 2 * x.nbytes / ms / 1e6
    print(f"C  elementwise chain, 10M f32 : {ms:8.3f} ms  {achieved:7.1f} GB/s  "
          f"(device copy {peak:7.1f} GB/s: {achieved / peak:5.2f}x)")
    return True


def bench_matmul(device, dtype) -> bool:
    rng = np.random.default_rng(1)
    a = rng.standard_normal((N_MM, N_MM)).astype(np.float32)
    b = rng.standard_normal((N_MM, N_MM)).astype(np.float32)
    f = em.function(lambda p, q: em.matmul(p, q), backend="cuda")
    with em.device(f"gpu:{device.info.ordinal}"):
        pa, pb = (em.constant(m, dtype=dtype) for m in (a, b))
    result = np.asarray(em.cast(f(pa, pb), em.float32).numpy())
    reference = a[:256] @ b
    tolerance = 1e-3 if dtype == em.float32 else 5e-2
    if not np.allclose(result[:256], reference, rtol=tolerance, atol=tolerance * N_MM ** 0.5):
        print(f"matmul {dtype.name}: the GPU result differs from numpy's")
        return False
    ms = _median_ms(lambda: f(pa, pb), device)
    line = f"matmul 4096² {dtype.name:8s}: {ms:8.3f} ms  {2 * N_MM ** 3 / ms / 1e9:7.1f} TFLOP/s"
    torch_ms = _torch_matmul_ms(a, b, dtype.name)
    if torch_ms is not None:
        line += f"  (torch cuBLAS {torch_ms:8.3f} ms: Ember {torch_ms / ms:5.2f}x its speed)"
    print(line)
    return True


def _torch_matmul_ms(a, b, dtype_name):
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    ta = torch.from_numpy(a).to("cuda", getattr(torch, dtype_name))
    tb = torch.from_numpy(b).to("cuda", getattr(torch, dtype_name))
    torch.matmul(ta, tb)
    torch.cuda.synchronize()
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        torch.matmul(ta, tb)
        torch.cuda.synchronize()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def main() -> int:
    try:
        _, devices = driver.probe()
    except em.errors.GpuUnavailableError as e:
        del e  # its text is long; the one line says what matters
        print("bench-gpu: no usable NVIDIA GPU or driver in this process: nothing to measure")
        return 0
    device = runtime.require_device(0)
    print(f"GPU:0 {devices[0].name} ({devices[0].chip})")
    ok = bench_c(device)
    for dtype in (em.float32, em.bfloat16):
        ok = bench_matmul(device, dtype) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
