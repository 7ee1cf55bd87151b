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
     (fixups.unrank_dynamic_results, jit.Executable).
  5. Lower through the backend's stages and JIT the LLVM IR.
"""

from __future__ import annotations

import functools
import struct
import sys
from typing import Callable, Sequence

from mlir import ir

from ember.backends.cpu.backend import BackendError, CpuBackend
from ember.backends.cpu.cache import cache_key, disk_cache, memory_cache
from ember.backends.cpu.host import bind_print, rename_prints
from ember.backends.cpu.jit import (Executable, JitError, entry_wrapper, load_object,
                                    object_code)
from ember.backends.cpu.native import error_sites
from ember.backends.cpu.translate import TranslationError
from ember.backends.cpu.parallel import (SplitExecutable, has_rows, plan, retype_rows,
                                         row_split_rows)
from ember.dialects.ember.convert import type_from_mlir, type_to_mlir
from ember.dialects.ember.irdl import default_context
from ember.dialects.ember.parsing import parse_module
from ember.dialects.ember.types import ResourceType, TensorType, parse_type, types_compatible
from ember.dialects.ember.verifier import iter_ops
from ember.passes.conversions.ember_to_linalg import unlowerable_ops
from ember.passes.conversions.ember_to_linalg.variables import VARIABLES_ATTR
from ember.passes.ir_utils import symbol_name, symbol_table
from ember.passes.pipeline import PassFailure, Pipeline, run_pipeline
from ember.passes.transforms.shape_refine import retype

# Specialisation runs only what makes shapes static, inlining nested functions and refining
# shapes, around the Function's own pipeline ({user}), which folds the shape computations
# it can: a user's pipeline is the whole pipeline, and "" compiles the trace unoptimised.
_SPECIALIZE = "builtin.module(ember-inline{{max-ops=1000000}},{user}ember-shape-refine{after})"
DEFAULT_PIPELINE = "ember-optimize"


@functools.lru_cache(maxsize=64)
def specialize_pipeline(pipeline: str = DEFAULT_PIPELINE) -> str:
    """The pipeline `specialize` runs for a Function whose pipeline is `pipeline`."""
    inner = str(Pipeline.parse(pipeline))[len("builtin.module("):-1] if pipeline else ""
    return _SPECIALIZE.format(user=f"{inner}," if inner else "",
                              after=f",{inner}" if inner else "")


class NotCompilable(Exception):
    """The function cannot be compiled for the CPU; the message names the reason and op."""


def specialize(module_text: str, symbol: str, arg_types: Sequence[TensorType],
               pipeline: str = DEFAULT_PIPELINE) -> ir.Module:
    """The module with `@symbol`'s arguments fixed to static `arg_types`, shapes propagated
    by `specialize_pipeline(pipeline)` (`pipeline`: the one the module was optimised with)."""
    with default_context():
        module = parse_module(module_text)
        fn = _function(module, symbol)
        block = fn.regions[0].blocks[0]
        if len(block.arguments) != len(arg_types):
            raise NotCompilable(f"@{symbol} takes {len(block.arguments)} arguments, "
                                f"{len(arg_types)} given")
        changed = False
        for i, (arg, t) in enumerate(zip(block.arguments, arg_types)):
            declared = type_from_mlir(arg.type)
            _check_argument(symbol, i, declared, t)
            # a variable's argument holds a resource of its value type
            new = type_to_mlir(ResourceType(t) if isinstance(declared, ResourceType) else t)
            if new != arg.type:
                retype(arg, new)  # users that pin the old type (loops, calls) get a cast
                changed = True
        results = list(ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value).results)
        fn.attributes["function_type"] = ir.TypeAttr.get(
            ir.FunctionType.get([a.type for a in block.arguments], results))
        nested = any(op.name == "func.call" for op in iter_ops(fn))
        static = all(ir.RankedTensorType(t).has_static_shape for t in results
                     if isinstance(t, ir.RankedTensorType))
    if changed or nested or not static:  # else: optimised as traced, with these very types
        try:
            run_pipeline(module, specialize_pipeline(pipeline), verify_each=False)
        except PassFailure as e:
            raise NotCompilable(f"specialising @{symbol} failed: {e}") from None
    with default_context():
        _static_results(_function(module, symbol))
    return module


def _check_argument(symbol: str, i: int, declared, given) -> None:
    """NotCompilable unless `given` is a tensor type that refines argument #i's type (the
    value type, for a variable's resource) and has an element count int64 can hold."""
    held = declared.value if isinstance(declared, ResourceType) else declared
    if not isinstance(given, TensorType) or not types_compatible(given, held):
        raise NotCompilable(f"@{symbol} argument #{i} has type {declared}: {given} is not "
                            f"a refinement of {held}")
    count = 1
    for dim in given.shape or ():
        count *= dim if dim is not None else 1
    if count > 2 ** 63 - 1:
        raise NotCompilable(f"@{symbol} argument #{i}: {given} has more elements than int64 "
                            "can count")


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


def _function(module: ir.Module, symbol: str) -> ir.Operation:
    op = symbol_table(module).get(symbol)
    if op is not None and op.name == "func.func":
        return op
    raise NotCompilable(f"no function @{symbol} in the module")


def _where(location: ir.Location) -> str:
    from ember.dialects.ember.verifier import Diagnostic
    d = Diagnostic.at(location, "")
    return f"{d.filename}:{d.line}" if d.line else str(location)


def check_compilable(module: ir.Module, symbol: str) -> list[TensorType]:
    """The (ranked) result types of `@symbol`, or NotCompilable naming what stands in the
    way."""
    fn = _function(module, symbol)
    _check_no_strings(fn)
    for op in iter_ops(fn):
        if op.name == "func.call":  # a host callback (py_function); nested calls are inlined
            raise NotCompilable(f"'{op.name}' (at {_where(op.location)}) runs on the host")
    _no_giant_tensors(fn)
    _no_rank_from_values(fn)
    blocked = unlowerable_ops(module)
    if blocked:
        op = blocked[0]
        raise NotCompilable(f"'{op.name}' (at {_where(op.location)}) has no CPU lowering for "
                            "these types")
    results = []
    for t in ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value).results:
        rt = type_from_mlir(t)
        if not isinstance(rt, TensorType) or rt.shape is None:
            raise NotCompilable(f"the rank of result type {rt} depends on run-time values")
        results.append(rt)
    return results


def _no_rank_from_values(fn: ir.Operation) -> None:
    """NotCompilable naming the first op whose result rank is unknown until its operands'
    sizes are: its traced result has `?` dims, but its operand types of this call give a
    different rank (squeeze of `?` dims, which drops the dims that turn out to be 1). A
    buffer of unknown rank has no loop nest to fill it, so the interpreter runs it."""
    from ember.dialects.ember.base import REGISTRY, OpError
    from ember.passes.ir_utils import decoded_attrs
    for op in iter_ops(fn):
        spec = REGISTRY.get(op.name)
        if spec is None or spec.upstream or all(
                not isinstance(r.type, ir.RankedTensorType) or r.type.has_static_shape
                for r in op.results):
            continue
        operands = tuple(type_from_mlir(v.type) for v in op.operands)
        if any(isinstance(t, TensorType) and t.shape is None for t in operands):
            continue
        try:
            inferred = spec.infer_types(operands, decoded_attrs(op))
        except (OpError, TypeError, ValueError, KeyError):
            continue  # raised when the op runs (the lowering's checks.fail)
        for r, t in zip(op.results, inferred):
            declared = type_from_mlir(r.type)
            if isinstance(t, TensorType) and isinstance(declared, TensorType) and \
                    t.shape is not None and declared.shape is not None and \
                    len(t.shape) != len(declared.shape):
                raise NotCompilable(f"'{op.name}' (at {_where(op.location)}): the rank of "
                                    f"its result {declared} depends on run-time values")


def _check_no_strings(fn: ir.Operation) -> None:
    """NotCompilable if any value of `fn` (an op's operand or result, a region's argument,
    the function's argument or result) is of a string type: buffers of strings have no
    memref type, whatever op makes them, and a function may hold no op at all (one that
    returns its string argument). The first op touching a string is named, else the
    signature's."""
    for op in iter_ops(fn):
        if op.name == "func.return":  # the signature below says it better
            continue
        values = list(op.operands) + list(op.results) + [
            a for r in op.regions for b in r.blocks for a in b.arguments]
        if any(_is_string(v.type) for v in values):
            raise NotCompilable(f"'{op.name}' (at {_where(op.location)}) works on string "
                                "tensors, which only the host runs")
    signature = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)
    for kind, types in (("argument", signature.inputs), ("result", signature.results)):
        for i, t in enumerate(types):
            if _is_string(t):
                raise NotCompilable(f"{kind} {i} of @{_name(fn)} is a string tensor ({t}); "
                                    "string tensors run only on the host")


def _is_string(t: ir.Type) -> bool:
    return "!ember.string" in str(t)


_name = symbol_name


# Byte sizes from here on do not fit the i64 arithmetic of buffer sizes and strides (MLIR
# asserts on an element count that overflows; a byte count that wraps would allocate too
# little). No machine can allocate this much: the interpreter raises eager's error instead.
MAX_TENSOR_BYTES = 1 << 62


def _no_giant_tensors(fn: ir.Operation) -> None:
    """NotCompilable naming the first op whose result has MAX_TENSOR_BYTES or more."""
    for op in iter_ops(fn):
        for result in op.results:
            t = result.type
            if not isinstance(t, ir.RankedTensorType) or not t.has_static_shape:
                continue
            count = 1
            for d in t.shape:
                count *= d
            if count * max(getattr(t.element_type, "width", 8) // 8, 1) >= MAX_TENSOR_BYTES:
                raise NotCompilable(f"'{op.name}' (at {_where(op.location)}) makes a {t}, "
                                    f"of 2**62 bytes or more")


def compile_function(module_text: str | Callable[[], str], symbol: str,
                     arg_types: Sequence[TensorType], backend: CpuBackend | None = None,
                     block: tuple[int, int, int] | None = None,
                     source_key: str | None = None,
                     pipeline: str = DEFAULT_PIPELINE) -> Executable | SplitExecutable:
    """Specialises, lowers and compiles `@symbol` for static `arg_types`, through the
    memory and disk caches (see cache.py). A large elementwise function comes back as a
    SplitExecutable running blocks of rows on threads (parallel.py); `block=(rank, rows,
    count)` compiles one such block: every value of that rank with `rows` rows gets `count`.

    `module_text` may be a callable, called only when the caches miss; then `source_key`,
    text that determines the module (the traced module and the pipeline that optimises
    it), keys the caches in its place, so a cache hit skips the optimisation too.
    `pipeline` is the one the module was optimised with; specialisation runs it again."""
    backend = backend or CpuBackend()
    if source_key is None and callable(module_text):
        module_text = module_text()
    key = cache_key(module_text if source_key is None else ("source", source_key), symbol,
                    tuple(str(t) for t in arg_types), specialize_pipeline(pipeline),
                    backend.options.key(),
                    block)
    exe = memory_cache.get(key)
    if exe is not None:
        return exe
    disk = disk_cache()
    entry = disk.load(key)
    if entry is not None:
        try:
            exe = _load(entry, module_text, symbol, arg_types, backend, block, source_key,
                        pipeline)
        except _BadEntry as e:  # checksummed but unusable: discard it and rebuild, once
            disk.discard(key, str(e))
    if exe is None:
        if callable(module_text):
            module_text = module_text()
        obj, meta = _build(module_text, symbol, arg_types, backend, block, pipeline)
        disk.store(key, obj, meta)
        try:
            exe = _load((obj, meta), module_text, symbol, arg_types, backend, block, source_key,
                        pipeline)
        except _BadEntry as e:
            raise NotCompilable(f"compiling @{symbol} gave code that does not load: {e}") \
                from None
    memory_cache.put(key, exe)
    return exe


class _BadEntry(Exception):
    """A compile-cache entry that passed its checksum but cannot be used as this entry."""


def _load(entry: tuple[bytes, dict], module_text, symbol: str, arg_types, backend: CpuBackend,
          block, source_key, pipeline: str = DEFAULT_PIPELINE) -> Executable | SplitExecutable:
    """The executable of a cache entry (object code + metadata). Everything that could
    make it unusable is checked before native code sees it (a truncated object crashes
    the loader): raises _BadEntry naming the problem."""
    obj, meta = entry
    try:
        if meta.get("symbol") != symbol:
            raise _BadEntry(f"it holds @{meta.get('symbol')}, not @{symbol}")
        results = [parse_type(t) for t in meta["results"]]
        if meta.get("split"):
            rank, rows = meta["split_rows"]
            blocks = [(compile_function(module_text, symbol, arg_types, backend,
                                        (int(rank), int(rows), int(count)), source_key,
                                        pipeline),
                       int(start)) for start, count in meta["split"]]
            return SplitExecutable(blocks, arg_types, results, list(meta["split_args"]))
        variables = [int(i) for i in meta["variables"]]
        if any(not 0 <= i < len(arg_types) for i in variables):
            raise _BadEntry(f"variable indices {variables} out of range")
        if not object_is_whole(obj):
            raise _BadEntry("the object file is truncated or not an object file")
        errors = dict(meta.get("errors", {}))
        prints = [bind_print(p) for p in meta["prints"]]
        own_types = _block_types(arg_types, block) if block else arg_types
        exe = Executable(load_object(backend, obj), symbol, own_types, results)
    except (JitError, KeyError, TypeError, ValueError, AttributeError) as e:
        raise _BadEntry(f"{type(e).__name__}: {e}") from None
    exe.variables = variables
    exe.errors = errors
    exe.keep_alive = prints
    return exe


_ELF_MAGIC = b"\x7fELF"


def object_is_whole(obj: bytes) -> bool:
    """Whether `obj` is a complete 64-bit little-endian ELF object: its section table and
    every section lie inside the bytes (LLVM's loader reads past the end otherwise)."""
    if not sys.platform.startswith("linux"):
        return bool(obj)  # other hosts' object formats are not checked here
    if len(obj) < 64 or obj[:4] != _ELF_MAGIC or obj[4] != 2 or obj[5] != 1:
        return False
    shoff, = struct.unpack_from("<Q", obj, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", obj, 0x3A)
    if shentsize != 64 or shnum == 0 or shstrndx >= shnum or shoff + shnum * 64 > len(obj):
        return False
    for i in range(shnum):
        kind, = struct.unpack_from("<I", obj, shoff + i * 64 + 4)
        offset, size = struct.unpack_from("<QQ", obj, shoff + i * 64 + 0x18)
        if kind not in (0, 8) and offset + size > len(obj):  # SHT_NULL, SHT_NOBITS
            return False
    return True


def _block_types(types: Sequence[TensorType], block: tuple[int, int, int]) -> list[TensorType]:
    rank, rows, count = block
    return [TensorType(t.dtype, (count, *t.shape[1:])) if has_rows(t.shape, rank, rows)
            else t for t in types]


def _build(module_text: str, symbol: str, arg_types, backend: CpuBackend,
           block: tuple[int, int, int] | None = None, pipeline: str = DEFAULT_PIPELINE):
    """Compiles from IR: returns the object code and the metadata stored next to it (for
    a function split by rows, no code: the blocks are compiled as entries of their own)."""
    module = specialize(module_text, symbol, arg_types, pipeline)
    result_types = check_compilable(module, symbol)
    with module.context, ir.Location.unknown():
        fn = _function(module, symbol)
        if block is not None:
            retype_rows(fn, *block)
            result_types = _block_types(result_types, block)
            arg_types = _block_types(arg_types, block)
        elif backend.options.threads > 1 and all(t.is_static for t in result_types) and \
                (rows := row_split_rows(fn)):
            rank = len(result_types[0].shape)
            row_elements = max(t.num_elements // rows for t in result_types)
            blocks = plan(rows, row_elements, backend.options.threads)
            if len(blocks) > 1:
                split_args = [has_rows(t.shape, rank, rows) for t in arg_types]
                return b"", {"symbol": symbol, "results": [str(t) for t in result_types],
                             "split": blocks, "split_rows": [rank, rows],
                             "split_args": split_args, "variables": [], "prints": []}
    try:
        backend.make_linalg(module)
        fn = _function(module, symbol)
        variables = [int(i) for i in ir.DenseI64ArrayAttr(fn.attributes[VARIABLES_ATTR])] \
            if VARIABLES_ATTR in fn.attributes else []
        with module.context:
            prints = rename_prints(module)
            errors = error_sites(module)
        llvm_ir = backend.lower(module, "llvmir", start="bufferized")
    except (BackendError, PassFailure, TranslationError) as e:
        raise NotCompilable(f"lowering @{symbol} failed: {e}") from None
    result_types = result_types + [arg_types[i] for i in variables]
    llvm_ir += entry_wrapper(symbol, list(arg_types) + result_types)
    meta = {"symbol": symbol, "results": [str(t) for t in result_types],
            "variables": variables, "prints": prints, "errors": errors}
    return object_code(backend, llvm_ir), meta
