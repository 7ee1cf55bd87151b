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

import dataclasses
import functools
import struct
import sys
from typing import Callable, Sequence

from mlir import ir

from ember.backends import compile_log
from ember.backends.dumps import Dump, open_dump
from ember.backends.cpu.backend import BackendError, CpuBackend, CpuOptions, tier_options
from ember.backends.cpu.cache import cache_key, disk_cache, memory_cache
from ember.backends.base import NotCompilable
from ember.backends.cpu.compilable import check_compilable, function_named
from ember.backends.cpu import block_cache, host_calls
from ember.backends.cpu.host import bind_print, rename_prints
from ember.backends.cpu import host_target
from ember.backends.cpu.jit import Executable, JitError, entry_wrapper, object_code
from ember.backends.cpu.shared import link, load_code
from ember.backends.cpu.native import error_sites
from ember.backends.cpu.translate import TranslationError
from ember.backends.cpu.parallel import (SplitExecutable, has_rows, plan, retype_rows,
                                         row_split_rows)
from ember.dialects.ember.convert import type_from_mlir, type_to_mlir
from ember.dialects.ember.irdl import default_context
from ember.dialects.ember.parsing import parse_module
from ember.dialects.ember.types import ResourceType, TensorType, parse_type, types_compatible
from ember.dialects.ember.verifier import iter_ops
from ember.passes.conversions.runtime_attrs import VARIABLES_ATTR
from ember.passes import reproducer
from ember.passes.pipeline import PassFailure, Pipeline, run_pipeline

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
        nested = any(op.name == "func.call" for op in iter_ops(fn))
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
    if exe is None and cached_only:
        return None
    if exe is None and not host_target.verify():  # the key named another host: LLVM's now
        return compile_function(module_text, symbol, arg_types,
                                CpuBackend(backend.requested, backend.instrument), block,
                                source_key, pipeline, cached_only)
    if exe is None:
        with compile_log.stage(f"compile @{symbol}"):
            if callable(module_text):
                module_text = module_text()
            obj, meta = _build(module_text, symbol, arg_types, backend, block, pipeline,
                               open_dump(f"{symbol}-compile"))
            with compile_log.stage("link"):
                library = link(obj, backend)
            disk.store(key, obj, meta, library)
            try:
                exe = _load((obj, {**meta, "shared": library}), module_text, symbol,
                            arg_types, backend, block, source_key, pipeline)
            except _BadEntry as e:
                raise NotCompilable(f"compiling @{symbol} gave code that does not load: {e}",
                                    NotCompilable.Reason.FAILED) from None
    memory_cache.put(key, exe)
    return exe


class CpuCompiler:
    """The CPU backend as the runtime sees it (backends.Backend): compile_function with
    the options of the environment (CpuOptions, resolved on each compile). It compiles at
    two tiers (runtime/tiers.py): "full" (the default options) and "fast" (tier_options)."""
    name = "cpu"
    compiles = True
    tiers = ("fast", "full")

    def compile(self, module_text, symbol: str, arg_types: Sequence[TensorType], *,
                source_key: str | None = None, pipeline: str = DEFAULT_PIPELINE,
                tier: str = "full", cached_only: bool = False):
        """As Backend.compile, at `tier`; with `cached_only`, None where no cache has it."""
        return compile_function(module_text, symbol, arg_types, CpuBackend(tier_options(tier)),
                                source_key=source_key, pipeline=pipeline,
                                cached_only=cached_only)

    def stages(self, instrument: dict | None = None, **options) -> CpuBackend:
        return CpuBackend(CpuOptions(**options), instrument)


@dataclasses.dataclass(frozen=True)
class EntryMeta:
    """What an entry of the compile cache holds besides its object code (JSON on disk):
    the function, its result types (variables' new values last), which arguments are
    variables, its print sites and error sites; for a function split by rows, the blocks
    (start, count), the rank and row count they split and which arguments have rows."""
    symbol: str
    results: tuple
    variables: tuple = ()
    prints: tuple = ()
    errors: tuple = ()  # (status, site) pairs
    split: tuple = ()
    split_rows: tuple = ()
    split_args: tuple = ()
    hosts: tuple = ()  # host-call sites, by site number (host_call_lowering.check)

    def as_json(self) -> dict:
        return {**dataclasses.asdict(self), "errors": dict(self.errors)}

    @classmethod
    def from_json(cls, record: dict) -> "EntryMeta":
        """The metadata of a stored entry; KeyError/TypeError if a field is missing or of
        the wrong kind (the caller discards such an entry)."""
        return cls(str(record["symbol"]), tuple(record["results"]),
                   tuple(int(i) for i in record["variables"]), tuple(record["prints"]),
                   tuple(dict(record.get("errors", {})).items()),
                   tuple(tuple(b) for b in record.get("split", ())),
                   tuple(int(n) for n in record.get("split_rows", ())),
                   tuple(bool(a) for a in record.get("split_args", ())),
                   tuple(dict(site) for site in record.get("hosts", ())))


class _BadEntry(Exception):
    """A compile-cache entry that passed its checksum but cannot be used as this entry."""


def _load(entry: tuple[bytes, dict], module_text, symbol: str, arg_types, backend: CpuBackend,
          block, source_key, pipeline: str = DEFAULT_PIPELINE) -> Executable | SplitExecutable:
    """The executable of a cache entry (object code + metadata). Everything that could
    make it unusable is checked before native code sees it (a truncated object crashes
    the loader): raises _BadEntry naming the problem."""
    obj, record = entry
    try:
        meta = EntryMeta.from_json(record)
        if meta.symbol != symbol:
            raise _BadEntry(f"it holds @{meta.symbol}, not @{symbol}")
        results = [parse_type(t) for t in meta.results]
        if meta.split:
            rank, rows = meta.split_rows
            blocks = [(compile_function(module_text, symbol, arg_types, backend,
                                        (rank, rows, int(count)), source_key, pipeline),
                       int(start)) for start, count in meta.split]
            return SplitExecutable(blocks, arg_types, results, list(meta.split_args))
        variables = list(meta.variables)
        if any(not 0 <= i < len(arg_types) for i in variables):
            raise _BadEntry(f"variable indices {variables} out of range")
        if not object_is_whole(obj):
            raise _BadEntry("the object file is truncated or not an object file")
        errors = dict(meta.errors)
        prints = [bind_print(p) for p in meta.prints]
        prints += [host_calls.bind(site) for site in meta.hosts]
        own_types = _block_types(arg_types, block) if block else arg_types
        with compile_log.stage("load"):
            exe = Executable(load_code(backend, obj, record.get("shared")), symbol,
                             own_types, results)
    except (JitError, KeyError, TypeError, ValueError, AttributeError) as e:
        raise _BadEntry(f"{type(e).__name__}: {e}") from None
    exe.variables = variables
    exe.errors = errors
    exe.keep_alive = prints
    exe.host_sites = list(meta.hosts)  # bound to a function's callables by host_calls
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
            result_types = _block_types(result_types, block)
            arg_types = _block_types(arg_types, block)
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
    llvm_ir += entry_wrapper(symbol, list(arg_types) + result_types)
    meta = EntryMeta(symbol, tuple(str(t) for t in result_types), tuple(variables),
                     tuple(prints), tuple(errors.items()), hosts=tuple(hosts))
    # the JIT's code allocates through the block cache (AOT libraries keep libc's)
    return object_code(backend, block_cache.route(llvm_ir)), meta.as_json()
