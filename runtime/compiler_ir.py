"""The IR of a trace at its backend's stages: `ConcreteFunction.mlir(stage)` past
"optimized", and `Function.experimental_get_compiler_ir` (tf.function's, with Ember's stage
names for XLA's "hlo" and "optimized_hlo").

A stage is what the backend's compile goes through: the optimised module specialised to the
trace's input types (inlined, shapes propagated: backends/cpu/compiler.py `specialize`), then
lowered by the backend's stages (the CPU's "linalg", "bufferized", "llvm", "llvmir", "asm"),
the text `ember-compile --emit=STAGE` prints for the same module. Dims the trace left
unknown (`?`) stay unknown: the code a call compiles has its arguments' static shapes.
"""

from __future__ import annotations

from ember import backends
from ember.dialects.ember.convert import type_from_mlir
from ember.dialects.ember.types import ResourceType

FRONTEND_STAGES = ("traced", "optimized")


def stage_names(concrete) -> tuple[str, ...]:
    """Every stage `concrete.mlir` prints: the frontend's, then its backend's text stages."""
    lowering = _lowering(concrete)
    later = tuple(s for s in lowering.STAGES if s not in ("obj", "cubin")) if lowering else ()
    return FRONTEND_STAGES + later


def lowered(concrete, stage: str) -> str:
    """The module of `concrete` at its backend's `stage`, as text."""
    from ember.backends.cpu.compilable import check_compilable, function_named
    from ember.backends.cpu.compiler import specialize  # (the compiler: not on a call)
    lowering = _lowering(concrete)
    names = stage_names(concrete)
    if lowering is None or stage not in names:
        raise ValueError(f"unknown stage {stage!r} of '{concrete.name}'; available: "
                         f"{', '.join(repr(s) for s in names)}")
    optimized = concrete._ensure_optimized().module
    fn = function_named(optimized, concrete._graph.symbol)
    types = [type_from_mlir(a.type) for a in fn.regions[0].blocks[0].arguments]
    types = [t.value if isinstance(t, ResourceType) else t for t in types]
    module = specialize(concrete._optimized_text(), concrete._graph.symbol, types,
                        concrete._executor._pipeline)
    check_compilable(module, concrete._graph.symbol, host_calls=True)  # (as a compile)
    value = lowering.lower(module, stop=stage, start=lowering.STAGES[0])
    return value if isinstance(value, str) else str(value)


class CompilerIR:
    """Function's `experimental_get_compiler_ir` (a mixin: function.py)."""

    def experimental_get_compiler_ir(self, *args, **kwargs):
        """The trace for these arguments (tensors, TensorSpecs or Python values) as a
        callable `(stage="optimized") -> str`, as tf.function's, whose stages are XLA's;
        its `stages` lists the names (ConcreteFunction.mlir's).

        Example:
          >>> f = em.function(lambda x: em.tanh(x) * 2.0)
          >>> ir = f.experimental_get_compiler_ir(em.TensorSpec([4], em.float32))
          >>> ir.stages
          ('traced', 'optimized', 'linalg', 'bufferized', 'llvm', 'llvmir', 'asm')
          >>> "linalg.generic" in ir("linalg")
          True
        """
        concrete = self.get_concrete_function(*args, **kwargs)

        def at(stage: str = "optimized", device_name=None) -> str:
            del device_name  # (the trace's own backend)
            return concrete.mlir(stage)
        at.stages = stage_names(concrete)
        return at


def _lowering(concrete):
    backend = concrete._executor._backend
    if not getattr(backend, "compiles", False):
        return None
    return backend.stages()
