"""The process's one-off set-up, done when `ember` is imported rather than inside the first
traced call: the MLIR context traced functions are built in (the dialects the tracer uses
loaded; a pipeline run loads the others) and the default pipeline (every em.function parses
it; the code of its passes loads when they first run).

The compilers are not loaded here: LLVM (llvmlite) and the ember-to-linalg conversions cost
more than the rest of `import ember` together, and the command-line tools and eager code never
need them. The first call that compiles loads them. What a call whose code is in the
compile cache runs is loaded here, though: the CPU backend's hit path (backends/cpu/warm.py,
the loader shared.py, the calling code executable.py and what they import; ~1.5 ms, no LLVM).
It is one-off set-up of the same kind, and a warm start's first call is the commonest first
call of a program that ran before. So is the hash of the compiler's source that keys the
disk cache (backends/cpu/cache.py `compiler_fingerprint`: ~200 `stat`s and a record read,
~0.8 ms), taken here where a cache directory exists (an import makes none): it then
describes the compiler as the process found it at its start (its dialects are in memory
from now on), and a call whose code is cached does not wait for it. AutoGraph's converters
are fingerprinted here too, for the same reason (frontend/autograph/code_cache.py).

The import makes ~23,000 objects that live as long as the process (modules, classes,
functions, the MLIR context and its types). The cyclic garbage collector would walk them
in each of its collections during the import and again in every full collection after it
(the first one, 10-30 ms here, comes wherever the program next allocates enough). So it
is paused while `ember` is imported (`pause_collector`), and then everything alive is
moved to its permanent generation (`gc.freeze`, `resume_collector`): it is never walked
again. Objects the program made before importing `ember` are frozen with it; cyclic
garbage among them is not collected (`gc.unfreeze()` gives them back to the collector).
"""

from __future__ import annotations

import gc
import os


def prepare() -> None:
    from ember.dialects.ember.irdl import tracing_context
    from ember.passes.pipeline import Pipeline
    from ember.runtime.function import DEFAULT_PIPELINE
    tracing_context()
    Pipeline.parse(DEFAULT_PIPELINE)
    import ember.backends.cpu.executable
    import ember.backends.cpu.shared
    import ember.backends.cpu.warm  # noqa: F401 - the cache-hit path, loaded
    from ember.backends.cpu import cache
    from ember.frontend.autograph import code_cache
    code_cache.fingerprint_converters()
    directory = cache.default_directory()
    if directory is not None and os.path.isdir(directory):  # (none made here)
        try:
            cache.compiler_fingerprint()
        except OSError:  # a source file it cannot stat or read: the first compile says so
            pass


def pause_collector() -> bool:
    """Pauses the cyclic garbage collector; whether it was running."""
    running = gc.isenabled()
    gc.disable()
    return running


def resume_collector(running: bool, freeze: bool) -> None:
    """Moves every object alive to the collector's permanent generation if `freeze` (the
    import succeeded), then restarts the collector if it was `running`."""
    if freeze:
        gc.freeze()
    if running:
        gc.enable()
