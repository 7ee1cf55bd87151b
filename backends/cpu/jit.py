"""JIT: LLVM IR -> machine code in this process (llvmlite MCJIT, or a shared library through
the dynamic loader: shared.py), and the entry wrapper the flat call path calls.

The lowered function takes every memref expanded into scalars (MLIR's default calling
convention): `allocated, aligned, offset, sizes..., strides...` per argument, inputs first
and then one output buffer per result (`buffer-results-to-out-params`). `Executable`
(executable.py, re-exported here; a cache hit imports only that module) keeps the ctypes
function and fills that list from numpy arrays: the only per-call Python work is reading
each array's data pointer and allocating the outputs.

Lifetime: an execution engine (and the machine code in it) lives exactly as long as the
objects that can call into it: the `Executable` holding it, and through it every cache
entry and fast-path closure that holds the Executable. When the last of them goes, the
engine is disposed and its code freed; nothing keeps engines for the life of the process.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from ember.backends import compile_log
from ember.backends.cpu import block_cache, call_buffers, host_target, native
from ember.backends.cpu.options import ENTRY, OPENBLAS
from ember.backends.cpu.executable import (ENTRY_PREFIX, Executable,  # noqa: F401
                                           JitError)
if TYPE_CHECKING:
    from ember.backends.cpu.backend import CpuBackend
from ember.dialects.ember.types import TensorType


def jit_compile(backend: CpuBackend, llvm_ir: str):
    """Compiles LLVM IR for the host and returns the execution engine holding the code (the
    caller keeps it alive while the code may run: the engine frees the code when it goes)."""
    machine = backend.target_machine()
    try:
        module = backend.optimize_llvm(llvm_ir, machine)
    except RuntimeError as e:
        raise JitError(f"LLVM rejected the generated IR: {e}") from None
    if block_cache.uses(llvm_ir):
        block_cache.bind_mcjit()
    from ember.backends.cpu import kernels  # the GEMM library: where code is compiled
    with kernels.resolving(bind_gemm(backend, llvm_ir)):
        engine = host_target.binding().create_mcjit_compiler(module, machine)
        engine.finalize_object()
    native.bind(engine)
    return engine


def bind_gemm(backend: CpuBackend, code: str | bytes) -> dict:
    """The GEMMs the code may call, made resolvable: Ember's own kernels (loaded once per
    process, kernels/; the code resolves them inside `kernels.resolving` of what this
    returns: fast-tier code may get the library's fast tier) and numpy's OpenBLAS
    (blas_library.py). Code that calls OpenBLAS where none is available is refused here:
    MCJIT would abort the process on the unresolved symbol."""
    def mentions(symbol: str) -> bool:
        return (symbol.encode() if isinstance(code, bytes) else symbol) in code
    from ember.backends.cpu import blas_library as blas, kernels  # not on a shared-library hit
    o, own = backend.options, {}
    for element, symbol in ENTRY.items():
        if mentions(symbol):
            own[symbol] = kernels.bind_jit(o.cpu, o.features, o.threads, element,
                                           fast=not o.vectorize)
    if any(mentions(s) for s in OPENBLAS.values()) and not blas.bind():
        raise JitError("the code calls numpy's OpenBLAS, but no OpenBLAS library is "
                       "available in this process: compile with EMBER_BLAS=off")
    return own


def entry_wrapper(symbol: str, types: Sequence[TensorType], inputs: int = 0,
                  track: bool = False) -> str:
    """LLVM IR of `i32 __ember_entry_<symbol>(ptr* data)`: calls `@symbol` with each
    buffer's data pointer from `data` and its (static) sizes and strides as constants, so
    a call from Python passes one pointer array instead of 5 + 2*rank scalars per buffer.
    A result of dynamic shape has no buffer: `@symbol` returns it unranked (the
    ember-unrank-dynamic-results pass) and the entry stores its descriptor's address
    (malloc'ed: the caller frees it and, once done with the data, the buffer) in the
    result's slot.

    It returns a status (native.py): 0, or the failure's status after compiled code
    unwound to it (`longjmp`), with the failure's values written into the `native.MAX_VALUES`
    slots from `data[len(types)]` on.
    With `inputs`, the first `inputs` types are the arguments and may have `?` dims (the
    ahead-of-time library, backends/cpu/aot): the k-th `?` dim of the arguments, in order,
    is read as an i64 from `data[len(types) + native.MAX_VALUES + k]`, and their strides
    (row-major) are computed from it.
    The error context (jump buffer, value, the thread's previous context) lives on its
    stack and is the thread's value of the error key while `@symbol` runs. The module must
    have the error runtime (`native_ir.install`, run by `CpuBackend.make_llvm`).
    With `track` (the JIT's code, its malloc and free tracked: call_buffers.py), the context
    also lists the buffers the call allocated, and the entry frees those still listed when
    the call fails."""
    n = len(types)
    key, outer = f"@{native.KEY_SYMBOL}", native.OUTER_OFFSET
    lines = [f"define i32 @{ENTRY_PREFIX}{symbol}(ptr %data) {{",
             f"  %ctx = alloca [{native.CONTEXT_BYTES} x i8], align 16",
             f"  %key = load i32, ptr {key}",
             "  %outer = call ptr @pthread_getspecific(i32 %key)",
             f"  %outer.at = getelementptr i8, ptr %ctx, i64 {outer}",
             "  store ptr %outer, ptr %outer.at",
             *(call_buffers.entry_start("%ctx") if track else []),
             "  %status = call i32 @_setjmp(ptr %ctx)",
             "  %failed = icmp ne i32 %status, 0",
             "  br i1 %failed, label %fail, label %run",
             "run:",
             "  call i32 @pthread_setspecific(i32 %key, ptr %ctx)"]
    args = []
    dynamic = [i for i, t in enumerate(types) if i >= inputs and not t.is_static]
    sized = iter(range(n + native.MAX_VALUES, 1 << 62))  # slots of the arguments' `?` dims
    for i, t in enumerate(types):
        if i in dynamic:
            continue  # returned by the call, not passed
        lines.append(f"  %slot{i} = getelementptr ptr, ptr %data, i64 {i}")
        lines.append(f"  %p{i} = load ptr, ptr %slot{i}")
        sizes = [str(d) if d is not None else _load_size(lines, f"%n{i}.{k}", next(sized))
                 for k, d in enumerate(t.shape)]
        strides, step = [], "1"
        for k in reversed(range(len(t.shape))):
            strides.insert(0, f"i64 {step}")
            step = _times(lines, f"%s{i}.{k}", step, sizes[k])
        scalars = ["i64 0"] + [f"i64 {d}" for d in sizes] + strides
        args += [f"ptr %p{i}", f"ptr %p{i}"] + scalars
    call = f"call void @{symbol}({', '.join(args)})"
    if dynamic:  # unranked results: {i64 rank, ptr descriptor}, in a struct if several
        one = "{ i64, ptr }"
        ret = one if len(dynamic) == 1 else "{ " + ", ".join([one] * len(dynamic)) + " }"
        lines.append(f"  %returned = call {ret} @{symbol}({', '.join(args)})")
        for k, i in enumerate(dynamic):
            path = "1" if len(dynamic) == 1 else f"{k}, 1"
            lines += [f"  %d{i} = extractvalue {ret} %returned, {path}",
                      f"  %slot{i} = getelementptr ptr, ptr %data, i64 {i}",
                      f"  store ptr %d{i}, ptr %slot{i}"]
        call = None
    if call is not None:
        lines.append(f"  {call}")
    lines += ["  call i32 @pthread_setspecific(i32 %key, ptr %outer)",
              *(call_buffers.entry_end("%ctx", failed=False) if track else []),
              "  ret i32 0",
              "fail:",  # after longjmp: re-read what registers may have lost from memory
              f"  %key.again = load volatile i32, ptr {key}",
              "  %outer.again = load volatile ptr, ptr %outer.at",
              "  call i32 @pthread_setspecific(i32 %key.again, ptr %outer.again)",
              *_copy_values(n),
              *(call_buffers.entry_end("%ctx", failed=True) if track else []),
              "  ret i32 %status",
              "}"]
    return "\n".join(lines) + "\n"


def _load_size(lines: list[str], name: str, slot: int) -> str:
    """Entry IR loading the i64 in `data[slot]` as `name`; returns `name`."""
    lines += [f"  {name}.at = getelementptr ptr, ptr %data, i64 {slot}",
              f"  {name} = load i64, ptr {name}.at"]
    return name


def _times(lines: list[str], name: str, step: str, size: str) -> str:
    """The stride after `step` (a constant or a value) over a dim of `size`, at least 1
    each as the static strides are: a constant if both are, else IR computing `name`."""
    if step.lstrip("-").isdigit() and size.lstrip("-").isdigit():
        return str(int(step) * max(int(size), 1))
    lines += [f"  {name}.big = icmp sgt i64 {size}, 1",
              f"  {name}.one = select i1 {name}.big, i64 {size}, i64 1",
              f"  {name} = mul i64 {step}, {name}.one"]
    return name


def _copy_values(n: int) -> list[str]:
    """Entry IR copying the failure's values from the context into `data[n:]`."""
    lines = []
    for k in range(native.MAX_VALUES):
        lines += [f"  %v{k}.at = getelementptr i8, ptr %ctx, i64 {native.DETAIL_OFFSET + 8 * k}",
                  f"  %v{k} = load volatile i64, ptr %v{k}.at",
                  f"  %v{k}.slot = getelementptr ptr, ptr %data, i64 {n + k}",
                  f"  store i64 %v{k}, ptr %v{k}.slot"]
    return lines


def object_code(backend: CpuBackend, llvm_ir: str) -> bytes:
    """Optimised machine code for the host as a relocatable object (what the cache keeps)."""
    machine = backend.target_machine(reloc="pic")
    try:
        with compile_log.stage("llvm-optimize"):
            module = backend.optimize_llvm(llvm_ir, machine)
    except RuntimeError as e:
        raise JitError(f"LLVM rejected the generated IR: {e}") from None
    with compile_log.stage("emit-object"):
        return machine.emit_object(module)


def load_object(backend: CpuBackend, obj: bytes):
    """An execution engine holding the code of an object file (from object_code); it owns
    its target machine, and frees both when it is garbage-collected."""
    llvm = host_target.binding()
    own = bind_gemm(backend, obj)
    if block_cache.uses(obj):
        block_cache.bind_mcjit()  # the malloc and free the code calls (block_cache.route)
        block_cache.for_code()  # (LLVM is loaded now: its cached object through MCJIT)
    machine = backend.target_machine(reloc="pic")
    engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), machine)
    engine.add_object_file(llvm.ObjectFileRef.from_data(obj))
    from ember.backends.cpu import kernels, libcalls  # (not on a cache hit's path)
    with kernels.resolving(own):
        missing = libcalls.unresolved(obj, llvm)
        if missing:  # the code would call address 0 (libcalls.py)
            raise JitError(f"the compiled code calls {', '.join(missing)}, which this process "
                           "does not provide (a runtime-library call of LLVM's code "
                           "generator that Ember does not supply yet): please report it")
        engine.finalize_object()
    native.bind(engine)
    return engine
