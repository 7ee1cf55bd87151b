"""What the GEMM library's tests share (test_gemm_kernels, test_narrow_dot_kernel,
test_trainstep_gemm_pool): the targets this host can run and a library's CBLAS entry."""

import ctypes

import pytest

from ember.backends.cpu import kernels
from ember.backends.cpu.backend import CpuBackend

HOST = CpuBackend().options
TARGETS = [pytest.param((HOST.cpu, HOST.features), id="host")]
if "+avx2" in HOST.features.split(",") and "+fma" in HOST.features.split(","):
    TARGETS.append(pytest.param(("x86-64-v3", ""), id="avx2"))
SSE = [pytest.param(("x86-64", ""), id="sse")] \
    if HOST.cpu and "x86" in CpuBackend().target_machine().triple else []


def entry(target, element):
    """The ILP64 CBLAS gemm of `element` ("f32"/"f64") in the library for `target` (cpu,
    features), loaded, as a ctypes function; and the library's addresses by symbol."""
    addresses = kernels.load(*target)
    scalar = ctypes.c_float if element == "f32" else ctypes.c_double
    proto = ctypes.CFUNCTYPE(None, ctypes.c_int32, ctypes.c_int32, ctypes.c_int32,
                             ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, scalar,
                             ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64,
                             scalar, ctypes.c_void_p, ctypes.c_int64)
    return proto(addresses[kernels.ENTRY[element]]), addresses
