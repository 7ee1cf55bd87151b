"""The process's one-off set-up, done when `ember` is imported rather than inside the first
traced call: the MLIR context traced functions are built in (its dialects loaded) and the
passes of the default pipeline (every em.function parses it).

The backends are not loaded here: LLVM (llvmlite) and the ember-to-linalg conversions cost
more than the rest of `import ember` together, and the command-line tools and eager code never
need them. The first compiled call loads the backend it runs on (`backends.get`).
"""

from __future__ import annotations


def prepare() -> None:
    from ember.dialects.ember.irdl import default_context
    from ember.passes.pipeline import Pipeline
    from ember.runtime.function import DEFAULT_PIPELINE
    default_context()
    Pipeline.parse(DEFAULT_PIPELINE)
