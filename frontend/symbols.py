"""Symbol names of traced functions: valid MLIR identifiers, unique, and never the name of
a C library function that compiled code calls."""

from __future__ import annotations

import collections


# C library functions compiled code calls or may call (libm through convert-math-to-libm,
# the runtime's allocation and unwinding): a traced function of one of these names (a
# Function of em.sin, say) would be taken for it, so its symbol gets a "_fn" suffix.
_RESERVED = frozenset(
    f + suffix for f in ("acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "cbrt",
                         "ceil", "copysign", "cos", "cosh", "erf", "erfc", "exp", "exp2",
                         "expm1", "fabs", "floor", "fma", "fmod", "hypot", "log", "log10",
                         "log1p", "log2", "pow", "round", "roundeven", "rsqrt", "sin",
                         "sinh", "sqrt", "tan", "tanh", "trunc") for suffix in ("", "f")) | {
    "malloc", "free", "calloc", "realloc", "abort", "exit", "longjmp", "_setjmp", "setjmp",
    "memcpy", "memmove", "memset", "pthread_getspecific", "pthread_setspecific",
    "pthread_key_create", "printf", "puts", "fprintf"}


def symbol_for(name: str) -> str:
    """A valid, safe MLIR symbol for a function called `name`."""
    clean = "".join(c if c.isalnum() or c == "_" else "_" for c in name) or "fn"
    return clean + "_fn" if clean in _RESERVED else clean


def unique_name(counter: collections.Counter, base: str) -> str:
    n = counter[base]
    counter[base] += 1
    return base if n == 0 else f"{base}_{n}"
