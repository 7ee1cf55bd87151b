"""LLVM's runtime-library calls (backends/cpu/libcalls.py): bf16 code carries its own
`__truncsfbf2`, and loading code that calls a symbol nobody provides is refused with its
name, not run into address 0."""

import numpy as np
import pytest
from mlir import ir

import ember as em
from ember.backends.cpu import host_target, jit, libcalls
from ember.backends.cpu.backend import CpuBackend

def _zen3_object(llvm_ir: str) -> bytes:
    """`llvm_ir` optimised and compiled for AMD Zen 3 (no AVX512-BF16), whatever the host."""
    llvm = host_target.binding()
    machine = llvm.Target.from_triple("x86_64-unknown-linux-gnu").create_target_machine(
        cpu="znver3", features="+avx2,+fma", opt=3, reloc="pic")
    mod = llvm.parse_assembly(llvm_ir)
    pm = llvm.create_pass_builder(machine, llvm.create_pipeline_tuning_options(speed_level=3))
    pm.getModulePassManager().run(mod, pm)
    return machine.emit_object(mod)


def test_bf16_code_defines_the_rounding_it_calls():
    # em.searchsorted on bf16: instcombine makes its compares of widened bf16 values bf16
    # compares, which x86 without AVX512-BF16 lowers with calls of __truncsfbf2 (LLVM 22).
    a = em.cast(em.constant(np.linspace(0, 1, 9, dtype=np.float32).reshape(1, 9)), em.bfloat16)
    concrete = em.function(lambda a: em.searchsorted(a, a)).get_concrete_function(a)
    backend = CpuBackend()
    with concrete._ensure_optimized().module.context:
        module = ir.Module.parse(concrete.mlir("optimized"))
        stages = (backend.make_linalg, backend.make_bufferized, backend.make_llvm)
        for stage in stages:
            module = stage(module)
        llvm_ir = backend.make_llvmir(module)
    assert "__truncsfbf2" in libcalls.undefined_symbols(_zen3_object(llvm_ir))
    assert "__truncsfbf2" not in libcalls.undefined_symbols(
        _zen3_object(libcalls.provide(llvm_ir)))


def test_loading_code_that_calls_a_missing_symbol_is_refused():
    ir = ("declare i32 @ember_nowhere_to_be_found(i32)\n"
          "define i32 @f(i32 %x) {\n  %y = call i32 @ember_nowhere_to_be_found(i32 %x)\n"
          "  ret i32 %y\n}\n")
    backend = CpuBackend()
    obj = jit.object_code(backend, ir)
    assert libcalls.undefined_symbols(obj) == ["ember_nowhere_to_be_found"]
    with pytest.raises(jit.JitError, match="ember_nowhere_to_be_found.*does not provide"):
        jit.load_object(backend, obj)


@pytest.mark.parametrize("tier", ["fast", "full"])
def test_bf16_searchsorted_compiles_on_every_cpu(tier, monkeypatch):
    monkeypatch.setenv("EMBER_TIER", tier)
    seq = np.linspace(-1, 1, 9, dtype=np.float32).reshape(1, 9)
    a = em.cast(em.constant(seq), em.bfloat16)
    v = em.cast(em.constant(np.array([[-2.0, 0.1, 0.5, 3.0]], np.float32)), em.bfloat16)
    got = em.function(lambda s, x: em.searchsorted(s, x))(a, v)
    np.testing.assert_array_equal(got.numpy(), em.searchsorted(a, v).numpy())
