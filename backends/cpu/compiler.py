"""Compiling one traced function for one set of static input shapes.

The runtime keeps a ConcreteFunction's IR shape-polymorphic (`?` dims) and compiles it per
distinct static input shape seen at call time, as JAX does: with all shapes static,
broadcasting is known at compile time, output buffers are allocated by the caller, and
LLVM sees constant trip counts. Steps:

  1. Parse the optimised module; inline nested functions into the entry function.
  2. Specialise: give the entry function's arguments the static types of this call.
  3. `ember-shape-refine` and the Function's own pipeline (`ember-optimize` unless the user
     gave another) propagate the static shapes (and fold); nothing else runs.
  4. If a result's rank is still unknown, or the function needs the host (strings, host
     callbacks, variables not yet lowered), raise NotCompilable naming the op: the runtime
     then interprets it. A result whose dims stay `?` (they depend on values: em.range(n),
     a loop state that grows) is compiled: the code allocates it and returns its sizes
     (ember-unrank-dynamic-results, jit.Executable).
  5. Lower through the backend's stages and JIT the LLVM IR.
"""

from __future__ import annotations

from typing import Callable, Sequence

from mlir import ir

from ember.backends import compile_log
from ember.backends.dumps import Dump, open_dump
from ember.backends.cpu.backend import BackendError, CpuBackend
from ember.backends.cpu.cache import disk_cache, memory_cache
from ember.backends.base import NotCompilable
from ember.backends.cpu.compilable import check_compilable, function_named
from ember.backends.cpu import block_cache, call_buffers
from ember.backends.cpu.host import rename_prints
from ember.backends.cpu import host_target
from ember.backends.cpu.jit import Executable, entry_wrapper, object_code  # noqa: F401
from ember.backends.cpu.linking import link
from ember.backends.cpu.native_ir import error_sites
from ember.backends.cpu.translate import TranslationError
from ember.backends.cpu.parallel import (SplitExecutable, has_rows, plan, retype_rows,
                                         row_split_rows)
from ember.dialects.ember.convert import type_from_mlir, type_to_mlir
from ember.dialects.ember.irdl import default_context
from ember.dialects.ember.parsing import parse_module
from ember.dialects.ember.types import ResourceType, TensorType, types_compatible
from ember.dialects.ember.verifier import find_op
from ember.passes.conversions.runtime_attrs import VARIABLES_ATTR
from ember.passes import reproducer
from ember.passes.pipeline import PassFailure, run_pipeline
from ember.backends.cpu.warm import (DEFAULT_PIPELINE, _BadEntry, CpuCompiler,  # noqa: F401
                                     EntryMeta, block_types, cached, entry_key, load_entry,
                                     object_is_whole, specialize_pipeline)

def specialize(module_text: str, symbol: str, arg_types: Sequence[TensorType],
               pipeline: str = DEFAULT_PIPELINE, instruments: tuple = ()) -> ir.Module:
    """The module with `@symbol`'s arguments fixed to static `arg_types`, shapes propagated
    by `specialize_pipeline(pipeline)` (`pipeline`: the one the module was optimised with;
    `instruments` watch its passes)."""
    with default_context():
        module = parse_module(module_text)
        fn = function_named(module, symbol)
        block = fn.regions[0].blocks[0]
        if len(block.arguments) != len(arg_types):
            raise NotCompilable(f"@{symbol} takes {len(block.arguments)} arguments, "
                                f"{len(arg_types)} given",
                                NotCompilable.Reason.BAD_ARGUMENTS)
        changed = False
        for i, (arg, t) in enumerate(zip(block.arguments, arg_types)):
            try:
                declared = type_from_mlir(arg.type)
            except TypeError as e:
                raise NotCompilable(f"@{symbol} argument #{i} has type {arg.type}: {e}",
                                    NotCompilable.Reason.BAD_ARGUMENTS) from None
            _check_argument(symbol, i, declared, t)
            # a variable's argument holds a resource of its value type
            new = type_to_mlir(ResourceType(t) if isinstance(declared, ResourceType) else t)
            if new != arg.type:
                from ember.passes.transforms.shape_refine import retype  # not on a cache hit
                retype(arg, new)  # users that pin the old type (loops, calls) get a cast
                changed = True
        results = list(ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value).results)
        fn.attributes["function_type"] = ir.TypeAttr.get(
            ir.FunctionType.get([a.type for a in block.arguments], results))
        nested = find_op(fn, lambda op: op.name == "func.call") is not None
        static = all(ir.RankedTensorType(t).has_static_shape for t in results
                     if isinstance(t, ir.RankedTensorType))
    if changed or nested or not static:  # else: optimised as traced, with these very types
        try:
            with compile_log.stage("specialize"):
                run_pipeline(module, specialize_pipeline(pipeline), verify_each=False,
                             instruments=compile_log.instruments() + tuple(instruments))
        except PassFailure as e:
            raise NotCompilable(f"specialising @{symbol} failed: {e}",
                                NotCompilable.Reason.FAILED) from None
    with default_context():
        _static_results(function_named(module, symbol))
    return module


def _check_argument(symbol: str, i: int, declared, given) -> None:
    """NotCompilable unless `given` is a tensor type that refines argument #i's type (the
    value type, for a variable's resource) and has an element count int64 can hold."""
    held = declared.value if isinstance(declared, ResourceType) else declared
    if not isinstance(given, TensorType) or not types_compatible(given, held):
        raise NotCompilable(f"@{symbol} argument #{i} has type {declared}: {given} is not "
                            f"a refinement of {held}",
                            NotCompilable.Reason.BAD_ARGUMENTS)
    count = 1
    for dim in given.shape or ():
        count *= dim if dim is not None else 1
    if count > 2 ** 63 - 1:
        raise NotCompilable(f"@{symbol} argument #{i}: {given} has more elements than int64 "
                            "can count",
                            NotCompilable.Reason.BAD_ARGUMENTS)


def _static_results(fn: ir.Operation) -> None:
    """Returns the static values behind `tensor.cast`s to `?`, and retypes the results: the
    entry function has no callers whose types could break."""
    block = fn.regions[0].blocks[0]
    ret = list(block.operations)[-1].operation
    for i, value in enumerate(list(ret.operands)):
        owner = value.owner
        if isinstance(owner, ir.OpView):
            owner = owner.operation
        if isinstance(owner, ir.Operation) and owner.name == "tensor.cast":
            ret.operands[i] = owner.operands[0]
    fn.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(
        [a.type for a in block.arguments], [v.type for v in ret.operands]))


def compile_function(module_text: str | Callable[[], str], symbol: str,
                     arg_types: Sequence[TensorType], backend: CpuBackend | None = None,
                     block: tuple[int, int, int] | None = None,
                     source_key: str | None = None, pipeline: str = DEFAULT_PIPELINE,
                     cached_only: bool = False) -> Executable | SplitExecutable | None:
    """Specialises, lowers and compiles `@symbol` for static `arg_types`, through the
    memory and disk caches (see cache.py). A large elementwise function comes back as a
    SplitExecutable running blocks of rows on threads (parallel.py); `block=(rank, rows,
    count)` compiles one such block: every value of that rank with `rows` rows gets `count`.

    `module_text` may be a callable, called only when the caches miss; then `source_key`,
    text that determines the module (the traced module and the pipeline that optimises
    it), keys the caches in its place, so a cache hit skips the optimisation too.
    `pipeline` is the one the module was optimised with; specialisation runs it again.
    With `cached_only`, None instead of compiling when neither cache has the code."""
    backend = backend or CpuBackend()
    if source_key is None and callable(module_text):
        module_text = module_text()
    key = entry_key(module_text, symbol, arg_types, pipeline, backend.options, block,
                    source_key)
    exe = cached(key, module_text, symbol, arg_types, backend, block, source_key, pipeline)
    if exe is not None or cached_only:
        return exe
    if not host_target.verify():  # the key named another host: LLVM's now
        return compile_function(module_text, symbol, arg_types,
                                CpuBackend(backend.requested, backend.instrument), block,
                                source_key, pipeline, cached_only)
    with compile_log.stage(f"compile @{symbol}"):
        if callable(module_text):
            module_text = module_text()
        obj, meta = _build(module_text, symbol, arg_types, backend, block, pipeline,
                           open_dump(f"{symbol}-compile"))
        with compile_log.stage("link"):
            library = link(obj, backend)
        disk_cache().store(key, obj, meta, library)
        try:
            exe = load_entry((obj, {**meta, "shared": library}), module_text, symbol,
                             arg_types, backend, block, source_key, pipeline)
        except _BadEntry as e:
            raise NotCompilable(f"compiling @{symbol} gave code that does not load: {e}",
                                NotCompilable.Reason.FAILED) from None
    memory_cache.put(key, exe)
    return exe


def _build(module_text: str, symbol: str, arg_types, backend: CpuBackend,
           block: tuple[int, int, int] | None = None, pipeline: str = DEFAULT_PIPELINE,
           dump: Dump | None = None):
    """Compiles from IR: returns the object code and the metadata stored next to it (for
    a function split by rows, no code: the blocks are compiled as entries of their own).
    `dump` (EMBER_DUMP_DIR) gets the input, the IR after every pass and each stage."""
    lowering = backend
    if dump is not None:
        dump.write("input", module_text)
        lowering = type(backend)(backend.options, {  # the same stages, dumped
            **backend.instrument,
            "instruments": tuple(backend.instrument.get("instruments", ())) + (dump,)})
    module = specialize(module_text, symbol, arg_types, pipeline,
                        (dump,) if dump is not None else ())
    result_types = check_compilable(module, symbol, host_calls=True)
    from ember.backends.cpu import host_call_lowering  # the lowering's: not on a cache hit
    with module.context, ir.Location.unknown():
        fn = function_named(module, symbol)
        hosts = host_call_lowering.check(module, fn)
        if block is not None:
            retype_rows(fn, *block)
            result_types = block_types(result_types, block)
            arg_types = block_types(arg_types, block)
        elif backend.options.threads > 1 and all(t.is_static for t in result_types) and \
                (rows := row_split_rows(fn)):
            rank = len(result_types[0].shape)
            row_elements = max(t.num_elements // rows for t in result_types)
            blocks = plan(rows, row_elements, backend.options.threads)
            if len(blocks) > 1:
                split_args = [has_rows(t.shape, rank, rows) for t in arg_types]
                return b"", EntryMeta(symbol, tuple(str(t) for t in result_types),
                                      split=tuple(tuple(b) for b in blocks),
                                      split_rows=(rank, rows),
                                      split_args=tuple(split_args)).as_json()
    try:
        with compile_log.stage("linalg"):
            lowering.make_linalg(module)
        if dump is not None:
            dump.write("linalg", str(module))
        fn = function_named(module, symbol)
        variables = [int(i) for i in ir.DenseI64ArrayAttr(fn.attributes[VARIABLES_ATTR])] \
            if VARIABLES_ATTR in fn.attributes else []
        with module.context:
            host_call_lowering.lower(module, symbol, hosts)
            prints = rename_prints(module)
            errors = error_sites(module)
        llvm_ir = module
        for stage in backend.path_to("llvmir", "bufferized"):  # each one logged (and dumped)
            with compile_log.stage(stage):
                llvm_ir = getattr(lowering, f"make_{stage}")(llvm_ir)
            if dump is not None:
                dump.write(stage, str(llvm_ir), ".ll" if stage == "llvmir" else ".mlir")
    except (BackendError, PassFailure, TranslationError) as e:
        note = reproducer.codegen_note(module) if isinstance(e, TranslationError) else ""
        raise NotCompilable(f"lowering @{symbol} failed: {e}{note}",
                            NotCompilable.Reason.FAILED) from None
    result_types = result_types + [arg_types[i] for i in variables]
    tracked = call_buffers.allocates(llvm_ir)  # (a failing call frees its buffers)
    llvm_ir += entry_wrapper(symbol, list(arg_types) + result_types, track=tracked)
    meta = EntryMeta(symbol, tuple(str(t) for t in result_types), tuple(variables),
                     tuple(prints), tuple(errors.items()), hosts=tuple(hosts))
    # the JIT's code allocates through the block cache (AOT libraries keep libc's)
    llvm_ir = block_cache.route(call_buffers.track(llvm_ir) if tracked else llvm_ir)
    return object_code(backend, llvm_ir), meta.as_json()
