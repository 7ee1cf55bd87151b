"""The runtime-library calls LLVM's code generator may emit, and a check that none is left
unresolved when machine code is loaded.

LLVM lowers some operations to calls of compiler-rt/libgcc functions that no process here
is guaranteed to have. One seen: on a CPU without AVX512-BF16 (AMD Zen 3), instcombine folds
`fcmp (fpext bf16 a), (fpext bf16 b)` into a bf16 compare, which x86 legalises with a call of
`__truncsfbf2`; libgcc has it only from GCC 13, and an unresolved call jumped to address 0
(a segfault in `em.searchsorted` on bf16). So the module provides it itself (`provide`),
with the rounding ember-round-to-bf16 uses (to nearest even, NaN kept quiet with its sign),
weak and hidden: every module may carry a copy, and an AOT library does not export it.

`unresolved` lists the undefined symbols of an ELF object that the process cannot resolve,
so that loading refuses with their names instead of running code that calls address 0.
"""

from __future__ import annotations

import struct

__all__ = ["provide", "unresolved", "undefined_symbols"]

# What the loader (RuntimeDyld, ld.so) defines for any object that refers to it.
_LOADER_DEFINED = frozenset({"_GLOBAL_OFFSET_TABLE_"})

_TRUNCSFBF2 = """
define weak_odr hidden bfloat @__truncsfbf2(float %x) {
  %bits = bitcast float %x to i32
  %magnitude = and i32 %bits, 2147483647
  %nan = icmp ugt i32 %magnitude, 2139095040
  %high = lshr i32 %bits, 16
  %odd = and i32 %high, 1
  %bias = add i32 %odd, 32767
  %rounded = add i32 %bits, %bias
  %quiet = or i32 %bits, 4194304
  %chosen = select i1 %nan, i32 %quiet, i32 %rounded
  %top = lshr i32 %chosen, 16
  %half = trunc i32 %top to i16
  %result = bitcast i16 %half to bfloat
  ret bfloat %result
}
"""


def provide(llvm_ir: str) -> str:
    """`llvm_ir` with the library functions its bf16 code may need defined in it."""
    if "bfloat" not in llvm_ir or "@__truncsfbf2(" in llvm_ir:
        return llvm_ir
    return llvm_ir + _TRUNCSFBF2


def undefined_symbols(obj: bytes) -> list[str]:
    """The names of the undefined global or weak symbols of a 64-bit little-endian ELF
    relocatable object (what the loader must resolve)."""
    if obj[:4] != b"\x7fELF" or obj[4] != 2 or obj[5] != 1:
        return []
    shoff, = struct.unpack_from("<Q", obj, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", obj, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", obj, shoff + i * shentsize)
                for i in range(shnum)]
    names = []
    for _, kind, _, _, offset, size, link, _, _, entsize in sections:
        if kind != 2 or not entsize:  # SHT_SYMTAB
            continue
        strings = sections[link][4]
        for at in range(offset + entsize, offset + size, entsize):  # entry 0 is null
            name, info, _, shndx = struct.unpack_from("<IBBH", obj, at)
            if shndx == 0 and name and info >> 4 in (1, 2):  # undefined, global or weak
                end = obj.index(b"\0", strings + name)
                names.append(obj[strings + name:end].decode())
    return names


def unresolved(obj: bytes, llvm) -> list[str]:
    """The undefined symbols of `obj` that neither the process nor symbols added to the JIT
    (llvmlite's `add_symbol`) provide."""
    return [s for s in undefined_symbols(obj)
            if s not in _LOADER_DEFINED and not llvm.address_of_symbol(s)]
