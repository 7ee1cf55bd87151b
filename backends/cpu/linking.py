"""Linking compiled code into the shared library a cache entry keeps (shared.py loads it):
`ld -shared` over the object and, for the symbols Ember provides at run time, an object of
thunks (`_thunks`: each a jump through its slot, filled by shared.load_code). Only a
compile links: a cache hit imports shared.py, not this module.
"""

from __future__ import annotations

import os
from typing import Optional

from ember.backends.cpu import host_target
from ember.backends.cpu.shared import SLOT, SharedCode, linker, pointers, provided


def _thunks(symbols: list[str], backend, data: list[str] = ()) -> Optional[bytes]:
    """An object defining each of `symbols` as a jump through its slot, and each of `data`
    as a pointer (None off x86-64)."""
    if os.uname().machine != "x86_64":
        return None
    lines = ['module asm ".text"']
    for s in symbols:
        lines += [f'module asm ".globl {s}"', f'module asm ".type {s},@function"',
                  'module asm ".p2align 4"', f'module asm "{s}:"',
                  f'module asm "  jmpq *{s}{SLOT}(%rip)"', f'module asm ".size {s}, .-{s}"',
                  f'@"{s}{SLOT}" = protected global ptr null, align 8']
    lines += [f'@"{s}" = protected global ptr null, align 8' for s in data]
    llvm = host_target.binding()
    return backend.target_machine(reloc="pic").emit_object(llvm.parse_assembly("\n".join(lines)))


def link(obj: bytes, backend=None) -> Optional[bytes]:
    """The shared library of object file `obj` (compiled by `backend`), with thunks for
    the symbols of `provided()` it calls (none without `backend`: the GEMM library defines
    them); None if there is no linker, linking fails or the library does not load in this
    process (it needs a symbol nothing here provides): the object alone is cached then."""
    ld = linker()
    if ld is None or not obj:
        return None
    wanted = [s for s in provided() if s.encode() in obj] if backend is not None else []
    data = [s for s in pointers() if s.encode() in obj] if backend is not None else []
    thunks = _thunks(wanted, backend, data) if wanted or data else b""
    if thunks is None:
        return None
    import subprocess  # only where code is compiled: a warm start runs no linker
    try:
        import tempfile
        with tempfile.TemporaryDirectory(prefix="ember-link-") as work:
            objects = []
            for name, data in (("code.o", obj), ("thunks.o", thunks)):
                if data:
                    objects.append(os.path.join(work, name))
                    with open(objects[-1], "wb") as f:
                        f.write(data)
            out = os.path.join(work, "code.so")
            command = [ld, "-shared", "-Bsymbolic", "-z", "noexecstack", "-z", "now",
                       "--hash-style=gnu", "-o", out, *objects]
            done = subprocess.run(command, capture_output=True, timeout=120)
            if done.returncode != 0:
                return None
            with open(out, "rb") as f:
                library = f.read()
        SharedCode(library)
    except (OSError, subprocess.SubprocessError):
        return None
    return library
