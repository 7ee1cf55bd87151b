"""The CPU backend's cache hit: a compiled function's key, and its code from the memory or
disk cache, without the compiler.

A fresh process whose disk cache holds a function's code spends its first call on tracing,
this key and loading a shared library (shared.py). This module is all of that path: it
imports the options (options.py), the caches (cache.py), the loader (shared.py, jit.py's
Executable) and nothing of the lowering, LLVM or the GEMM kernels' IR generators (~10 ms
of imports; compiler.py is imported on a miss). `CpuCompiler` is the backend the runtime
gets (backends.get("cpu")); compiler.compile_function keys and loads entries through
`entry_key` and `load_entry` too, so both paths agree on every key and every check.
"""

from __future__ import annotations

import functools
import struct
import sys
from typing import Sequence

from ember.backends import compile_log
from ember.backends.cpu import cache, host_calls
from ember.backends.cpu.host import bind_print
from ember.backends.cpu.options import CpuOptions, tier_options
from ember.dialects.ember.types import TensorType, parse_type
from ember.passes.pipeline import Pipeline

DEFAULT_PIPELINE = "ember-optimize"

# Specialisation runs only what makes shapes static, inlining nested functions and refining
# shapes, around the Function's own pipeline ({user}), which folds the shape computations
# it can: a user's pipeline is the whole pipeline, and "" compiles the trace unoptimised.
_SPECIALIZE = "builtin.module(ember-inline{{max-ops=1000000}},{user}ember-shape-refine{after})"


@functools.lru_cache(maxsize=64)
def specialize_pipeline(pipeline: str = DEFAULT_PIPELINE) -> str:
    """The pipeline `specialize` runs for a Function whose pipeline is `pipeline`."""
    inner = str(Pipeline.parse(pipeline))[len("builtin.module("):-1] if pipeline else ""
    return _SPECIALIZE.format(user=f"{inner}," if inner else "",
                              after=f",{inner}" if inner else "")


def entry_key(module_text, symbol: str, arg_types: Sequence[TensorType], pipeline: str,
              options: CpuOptions, block: tuple | None = None,
              source_key: str | None = None) -> str:
    """The compile-cache key of `@symbol` for `arg_types` (see compiler.compile_function:
    `source_key` stands for the module when given; `options` are resolved here)."""
    return cache.cache_key(module_text if source_key is None else ("source", source_key),
                           symbol, tuple(str(t) for t in arg_types),
                           specialize_pipeline(pipeline), options.key(), block)


class _BadEntry(Exception):
    """A compile-cache entry that passed its checksum but cannot be used as this entry."""


class _ObjectNeeded(Exception):
    """An entry read without its object (DiskCache.load) whose library does not load."""


def cached(key: str, module_text, symbol: str, arg_types: Sequence[TensorType], backend,
           block=None, source_key=None, pipeline: str = DEFAULT_PIPELINE):
    """The executable cached under `key` in memory or on disk (loaded, and kept in memory),
    or None. An entry on disk that cannot be used is discarded (it is rebuilt). `backend`:
    a CpuBackend, or the resolved CpuOptions the code was compiled with."""
    exe = cache.memory_cache.get(key)
    if exe is not None:
        return exe
    disk = cache.disk_cache()
    for check_object in (False, True):  # its object read only where its library fails
        entry = disk.load(key, check_object)
        if entry is None:
            return None
        try:
            exe = load_entry(entry, module_text, symbol, arg_types, backend, block,
                             source_key, pipeline)
        except _ObjectNeeded:
            continue
        except _BadEntry as e:  # checksummed but unusable: discard it and rebuild, once
            disk.discard(key, str(e))
            return None
        cache.memory_cache.put(key, exe)
        return exe
    return None


class CpuCompiler:
    """The CPU backend as the runtime sees it (backends.Backend): compile_function with
    the options of the environment (CpuOptions, resolved on each compile). It compiles at
    two tiers (runtime/tiers.py): "full" (the default options) and "fast" (tier_options).
    A call whose code is cached loads it here; a miss imports the compiler."""
    name = "cpu"
    compiles = True
    tiers = ("fast", "full")

    def compile(self, module_text, symbol: str, arg_types: Sequence[TensorType], *,
                source_key: str | None = None, pipeline: str = DEFAULT_PIPELINE,
                tier: str = "full", cached_only: bool = False):
        """As Backend.compile, at `tier`; with `cached_only`, None where no cache has it."""
        requested = tier_options(tier)
        if source_key is not None or not callable(module_text):
            options = requested.resolved()
            key = entry_key(module_text, symbol, arg_types, pipeline, options,
                            source_key=source_key)
            exe = cached(key, module_text, symbol, arg_types, options, None, source_key,
                         pipeline)
            if exe is not None or cached_only:
                return exe
        from ember.backends.cpu.backend import CpuBackend
        from ember.backends.cpu.compiler import compile_function
        return compile_function(module_text, symbol, arg_types, CpuBackend(requested),
                                source_key=source_key, pipeline=pipeline,
                                cached_only=cached_only)

    def stages(self, instrument: dict | None = None, **options):
        from ember.backends.cpu.backend import CpuBackend
        return CpuBackend(CpuOptions(**options), instrument)


class EntryMeta:
    """What an entry of the compile cache holds besides its object code (JSON on disk):
    the function (`symbol`), its result types (`results`, variables' new values last),
    which arguments are `variables`, its `prints` sites and `errors` sites ((status, site)
    pairs); for a function split by rows, the blocks (`split`: (start, count)), the rank
    and row count they split (`split_rows`) and which arguments have rows (`split_args`);
    `hosts`: its host-call sites, by site number (host_call_lowering.check).
    (A plain class: a dataclass costs a cache hit ~1 ms to define, a namedtuple ~0.2 ms.)"""
    __slots__ = ("symbol", "results", "variables", "prints", "errors", "split", "split_rows",
                 "split_args", "hosts")

    def __init__(self, symbol: str, results: tuple, variables: tuple = (), prints: tuple = (),
                 errors: tuple = (), split: tuple = (), split_rows: tuple = (),
                 split_args: tuple = (), hosts: tuple = ()):
        self.symbol, self.results, self.variables, self.prints = symbol, results, variables, prints
        self.errors, self.split, self.split_rows = errors, split, split_rows
        self.split_args, self.hosts = split_args, hosts

    def as_json(self) -> dict:
        return {**{name: getattr(self, name) for name in self.__slots__},
                "errors": dict(self.errors)}

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


def load_entry(entry: tuple[bytes, dict], module_text, symbol: str, arg_types, backend,
               block, source_key, pipeline: str = DEFAULT_PIPELINE):
    """The executable of a cache entry (object code + metadata). Everything that could
    make it unusable is checked before native code sees it (a truncated object crashes
    the loader): raises _BadEntry naming the problem. An entry read without its object
    (None) raises _ObjectNeeded where its library does not load."""
    from ember.backends.cpu.executable import Executable, JitError
    from ember.backends.cpu.shared import load_code
    obj, record = entry
    try:
        meta = EntryMeta.from_json(record)
        if meta.symbol != symbol:
            raise _BadEntry(f"it holds @{meta.symbol}, not @{symbol}")
        results = [parse_type(t) for t in meta.results]
        if meta.split:
            return _split(meta, results, module_text, symbol, arg_types, backend, source_key,
                          pipeline)
        variables = list(meta.variables)
        if any(not 0 <= i < len(arg_types) for i in variables):
            raise _BadEntry(f"variable indices {variables} out of range")
        if obj is not None and not object_is_whole(obj):
            raise _BadEntry("the object file is truncated or not an object file")
        errors = dict(meta.errors)
        prints = [bind_print(p) for p in meta.prints]
        prints += [host_calls.bind(site) for site in meta.hosts]
        own_types = block_types(arg_types, block) if block else arg_types
        with compile_log.stage("load"):
            code = load_code(backend, obj, record.get("shared"))
            if code is None:
                raise _ObjectNeeded
            exe = Executable(code, symbol, own_types, results)
    except (JitError, KeyError, TypeError, ValueError, AttributeError) as e:
        raise _BadEntry(f"{type(e).__name__}: {e}") from None
    exe.variables = variables
    exe.errors = errors
    exe.keep_alive = prints
    exe.host_sites = list(meta.hosts)  # bound to a function's callables by host_calls
    return exe


def _split(meta: EntryMeta, results, module_text, symbol, arg_types, backend, source_key,
           pipeline):
    """A function split by rows: each block's code from the caches, else compiled."""
    from ember.backends.cpu.parallel import SplitExecutable
    options = getattr(backend, "options", backend)
    rank, rows = meta.split_rows
    blocks = []
    for start, count in meta.split:
        block = (rank, rows, int(count))
        key = entry_key(module_text, symbol, arg_types, pipeline, options, block, source_key)
        exe = cached(key, module_text, symbol, arg_types, backend, block, source_key,
                     pipeline)
        if exe is None:
            from ember.backends.cpu.backend import CpuBackend
            from ember.backends.cpu.compiler import compile_function
            exe = compile_function(module_text, symbol, arg_types,
                                   backend if isinstance(backend, CpuBackend)
                                   else CpuBackend(options), block, source_key, pipeline)
        blocks.append((exe, int(start)))
    return SplitExecutable(blocks, arg_types, results, list(meta.split_args))


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


def block_types(types: Sequence[TensorType], block: tuple[int, int, int]) -> list[TensorType]:
    """`types` with the rows of a block of `block = (rank, rows, count)` (parallel.py)."""
    from ember.backends.cpu.parallel import has_rows
    rank, rows, count = block
    return [TensorType(t.dtype, (count, *t.shape[1:])) if has_rows(t.shape, rank, rows)
            else t for t in types]
