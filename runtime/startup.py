"""The process's one-off set-up, done when `ember` is imported rather than inside the first
traced call: the MLIR context traced functions are built in (the dialects the tracer uses
loaded; a pipeline run loads the others) and the default pipeline (every em.function parses
it; the code of its passes loads when they first run).

The backends are not loaded here: LLVM (llvmlite) and the ember-to-linalg conversions cost
more than the rest of `import ember` together, and the command-line tools and eager code never
need them. The first compiled call loads the backend it runs on (`backends.get`).

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


def prepare() -> None:
    from ember.dialects.ember.irdl import tracing_context
    from ember.passes.pipeline import Pipeline
    from ember.runtime.function import DEFAULT_PIPELINE
    tracing_context()
    Pipeline.parse(DEFAULT_PIPELINE)


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
