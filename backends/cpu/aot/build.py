"""One entry point of an AOT library: a traced function compiled for its signature.

Unlike the JIT (compiler.py), which compiles per static input shape, an entry keeps the
signature's `?` dims: the lowering already handles them (sizes come from the buffers'
descriptors; results whose size is known only at run time are returned allocated,
ember-unrank-dynamic-results), and the entry wrapper reads the arguments' `?` dims from
the call (jit.entry_wrapper with `inputs`). Steps:

  1. Specialise to the signature's types (compiler.specialize: inline, shape refinement).
  2. Bind the extra arguments: captured constants, and variables when frozen, become
     `ember.constant`s and leave the signature; other variables become plain arguments
     (the library's named buffers, capi.py). Then the pipeline runs again, to fold them.
  3. Name the function after the entry (`ember_aot_<entry>`: no clash with libc's names).
  4. Lower (CpuBackend), keeping the error sites (errors.py); every definition becomes
     internal (entries share one library), and the error key an external global that the
     library's C source defines and fills once (capi.py).
  5. Add the entry wrapper and emit a position-independent object for the target, its
     malloc and free calls renamed to the library's tracking ones (`_tracked`).
"""

from __future__ import annotations

import dataclasses
import re
from typing import Sequence

import llvmlite.binding as llvm
import numpy as np
from mlir import ir

from ember.backends.base import NotCompilable
from ember.backends.cpu.backend import BackendError, CpuBackend
from ember.backends.cpu.compilable import check_compilable, function_named
from ember.backends.cpu.compiler import DEFAULT_PIPELINE, specialize, specialize_pipeline
from ember.backends.cpu.host import rename_prints
from ember.backends.cpu.jit import ENTRY_PREFIX, JitError, entry_wrapper
from ember.backends.cpu.native import KEY_SYMBOL
from ember.backends.cpu.native_ir import error_sites
from ember.backends.cpu.translate import TranslationError
from ember.dialects.ember import creation
from ember.dialects.ember.builder import emit_typed
from ember.dialects.ember.convert import type_from_mlir, type_to_mlir
from ember.dialects.ember.errors import EmberError
from ember.dialects.ember.irdl import default_context
from ember.dialects.ember.types import ResourceType, TensorType
from ember.dialects.ember.verifier import iter_ops
from ember.passes.pipeline import PassFailure, run_pipeline

KERNEL_PREFIX = "ember_aot_"
# what the entries' calls of malloc and free become: the library's C source defines them
# (capi.py) and frees what a failing call allocated
TRACKED = {"malloc": "ember_aot_tracked_malloc", "calloc": "ember_aot_tracked_calloc",
           "free": "ember_aot_tracked_free"}


class AotError(EmberError, ValueError):
    """A function cannot be compiled ahead of time as asked (the message says why and what
    to change)."""


@dataclasses.dataclass(frozen=True)
class Extra:
    """An argument after the signature's tensors: a variable (`name`, its value now) or a
    large captured constant (`name` None)."""
    value: np.ndarray
    ttype: TensorType
    name: str | None = None


@dataclasses.dataclass(frozen=True)
class Entry:
    """What the C API needs of a compiled entry: its arguments (the signature's tensors,
    then the variables left as buffers), results and error sites (status -> site)."""
    name: str
    inputs: tuple
    variables: tuple  # indices into the Extras that stay arguments
    results: tuple
    errors: dict
    obj: bytes

    @property
    def kernel(self) -> str:
        return KERNEL_PREFIX + self.name

    @property
    def wrapper(self) -> str:
        return ENTRY_PREFIX + self.kernel


def build_entry(name: str, module_text: str, symbol: str, inputs: Sequence[TensorType],
                extras: Sequence[Extra], freeze: bool, backend: CpuBackend,
                pipeline: str = DEFAULT_PIPELINE) -> Entry:
    """Compiles `@symbol` of `module_text` (optimised by `pipeline`) as entry `name`."""
    types = list(inputs) + [e.ttype for e in extras]
    module = specialize(module_text, symbol, types, pipeline)
    kernel = KERNEL_PREFIX + name
    with default_context(), ir.Location.unknown():
        fn = function_named(module, symbol)
        kept = _bind_extras(fn, len(inputs), extras, freeze)
        fn.attributes["sym_name"] = ir.StringAttr.get(kernel)
    try:
        run_pipeline(module, specialize_pipeline(pipeline), verify_each=False)
    except PassFailure as e:
        raise NotCompilable(f"folding the constants of @{symbol} failed: {e}",
                            NotCompilable.Reason.FAILED) from None
    results = check_compilable(module, kernel)
    arg_types = list(inputs) + [extras[i].ttype for i in kept]
    try:
        backend.make_linalg(module)
        with module.context:
            if rename_prints(module):
                raise AotError(f"@{symbol} prints (em.print), which calls back into Python: "
                               "an AOT library has no Python to call; return the value "
                               "instead")
            errors = error_sites(module)
        backend.lower(module, "llvm", start="bufferized")
        with module.context, ir.Location.unknown():
            _internalize(module)
            _declare_key(module)
        llvm_ir = backend.make_llvmir(module)
    except (BackendError, PassFailure, TranslationError) as e:
        raise NotCompilable(f"lowering @{symbol} failed: {e}",
                            NotCompilable.Reason.FAILED) from None
    llvm_ir += entry_wrapper(kernel, arg_types + list(results), inputs=len(arg_types))
    machine = backend.target_machine(reloc="pic")
    try:
        optimized = _tracked(str(backend.optimize_llvm(llvm_ir, machine)))
        obj = machine.emit_object(llvm.parse_assembly(optimized))
    except RuntimeError as e:
        raise JitError(f"LLVM rejected the generated IR: {e}") from None
    return Entry(name, tuple(inputs), tuple(kept), tuple(results), errors, obj)


def _bind_extras(fn: ir.Operation, first: int, extras: Sequence[Extra],
                 freeze: bool) -> list[int]:
    """Step 2 of the module docstring; returns the indices of the extras that stay
    arguments (variables, when not frozen)."""
    block = fn.regions[0].blocks[0]
    args = list(block.arguments)
    kept, dropped = [], []
    for k, extra in enumerate(extras):
        arg = args[first + k]
        value = arg
        if isinstance(type_from_mlir(arg.type), ResourceType):
            value = _read_only(fn, arg, extra)
        if extra.name is None or freeze:
            with ir.InsertionPoint.at_block_begin(block):
                (const,), _ = emit_typed(creation.ConstantOp, (), {"value": extra.value})
            value.replace_all_uses_with(const)
            dropped.append(first + k)
        else:
            arg.set_type(type_to_mlir(extra.ttype))
            if value != arg:
                value.replace_all_uses_with(arg)
            kept.append(k)
        if value != arg:
            value.owner.erase()
    for index in reversed(dropped):
        block.erase_argument(index)
    results = list(ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value).results)
    fn.attributes["function_type"] = ir.TypeAttr.get(
        ir.FunctionType.get([a.type for a in block.arguments], results))
    return kept


def _read_only(fn: ir.Operation, arg: ir.Value, extra: Extra) -> ir.Value:
    """The one `ember.read_variable` of variable `arg` (merged into one if several);
    AotError if the function does anything else with it (it assigns it)."""
    reads = []
    for op in iter_ops(fn):
        if any(operand == arg for operand in op.operands):
            if op.name != "ember.read_variable":
                raise AotError(f"the function changes variable '{extra.name}' ({op.name}): "
                               "an AOT library keeps no state between calls; compile a "
                               "function that only reads its variables")
            reads.append(op)
    if not reads:
        raise AotError(f"variable '{extra.name}' is an argument but never read")
    first = reads[0]
    block = fn.regions[0].blocks[0]
    with ir.InsertionPoint.at_block_begin(block):
        read = ir.Operation.create("ember.read_variable", [r.type for r in first.results],
                                   [arg], loc=first.location)
    for op in reads:
        op.results[0].replace_all_uses_with(read.results[0])
        op.erase()
    return read.results[0]


def _tracked(llvm_ir: str) -> str:
    """Step 5: the optimised IR with its calls of malloc, calloc and free renamed to the
    library's tracking ones (after LLVM's optimisations, which know malloc and free by name). A
    failing call unwinds past the frames that own its buffers (native.py); the library
    frees what the call allocated and has not freed (capi.py), so failing calls leak
    nothing."""
    return re.sub(r"@(malloc|calloc|free)\(", lambda m: f"@{TRACKED[m.group(1)]}(", llvm_ir)


def _internalize(module: ir.Module) -> None:
    """Gives every function and global the module defines internal linkage: several
    entries' objects go into one library, and each has its own helpers of the same names
    (the deallocation's `dealloc_helper`); the entry wrapper, added as LLVM IR after
    this, is what the C source calls."""
    internal = ir.Attribute.parse("#llvm.linkage<internal>")
    for op in module.body.operations:
        op = op.operation
        if op.name == "llvm.func" and op.regions[0].blocks or \
                op.name == "llvm.mlir.global" and ("value" in op.attributes or
                                                   op.regions[0].blocks):
            op.attributes["linkage"] = internal


def _declare_key(module: ir.Module) -> None:
    """Turns the error key's definition (native_ir.install) into an external declaration:
    the library defines it once for all its entries (capi.py)."""
    for op in list(module.body.operations):
        op = op.operation
        if op.name == "llvm.mlir.global" and \
                ir.StringAttr(op.attributes["sym_name"]).value == KEY_SYMBOL:
            op.erase()
    decl = ir.Module.parse(f"llvm.mlir.global external @{KEY_SYMBOL}() : i32")
    for op in list(decl.body.operations):
        module.body.append(op.operation)
