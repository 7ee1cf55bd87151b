"""Ahead-of-time compilation for the CPU: traced functions -> one self-contained shared
library with a C API (`em.aot.compile`; the runtime side is runtime/aot).

    build.py   one entry: specialise to the signature (`?` dims stay), bind variables and
               captured constants, lower, wrap (jit.entry_wrapper), emit a PIC object
    errors.py  the library's error table: each error site's class and message template
    capi.py    the C API: the header and the C source around the entries
    runtime_c.py  the C runtime at the top of that source (errors, buffer tracking)
    targets.py the CPUs a library may target and the features each implies
    link.py    `cc -shared` of the objects and the C source into lib<name>.so

Upstream equivalent: IREE's `iree-compile` + its C runtime, XLA's `tfcompile`; here the
library needs nothing but libc, libm and libpthread.
"""
