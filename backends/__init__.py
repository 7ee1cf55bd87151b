"""Ember's backends layer: the reference interpreter (interpreter.py), the CPU backend
(cpu/) and the CUDA backend (cuda/), behind the `Backend` protocol and registry of base.py.
"""

from ember.backends.base import (Backend, Lowering, NotCompilable, check_backend, get, names,
                                 register, unregister)


class _Interpreter:
    """Every trace runs on the reference interpreter (`em.function(backend="interpreter")`,
    the same as `jit_compile=False`)."""
    name = "interpreter"
    compiles = False

    def compile(self, module_text, symbol, arg_types, *, source_key=None,
                pipeline="ember-optimize"):
        raise NotCompilable("the interpreter backend compiles nothing",
                            NotCompilable.Reason.HOST_ONLY)

    def stages(self, instrument=None, **options):
        raise NotCompilable("the interpreter backend compiles nothing: it has no stages",
                            NotCompilable.Reason.HOST_ONLY)


class _Cpu:
    """The CPU backend (backends/cpu/warm.py CpuCompiler: the caches' hit path, which
    `import ember` loads (runtime/startup.py); the compiler, imported on a miss)."""
    name = "cpu"
    compiles = True
    tiers = ("fast", "full")

    def __init__(self):
        self._compiler = None

    def _real(self) -> Backend:
        if self._compiler is None:
            from ember.backends.cpu.warm import CpuCompiler  # compiler.py: on a miss
            self._compiler = CpuCompiler()
        return self._compiler

    def compile(self, *args, **kwargs):
        return self._real().compile(*args, **kwargs)

    def stages(self, *args, **kwargs):
        return self._real().stages(*args, **kwargs)

    def __getattr__(self, name: str):
        if name == "_compiler":  # not set yet (a copy being made): no recursion
            raise AttributeError(name)
        return getattr(self._real(), name)


def _cpu() -> Backend:
    return _Cpu()


def _cuda() -> Backend:
    from ember.backends.cuda.compiler import CudaCompiler
    return CudaCompiler()


def _cuda_device() -> None:
    from ember.backends.cuda.driver import probe  # GpuUnavailableError without a GPU
    probe()


def _cuda_emulated() -> Backend:
    from ember.backends.cuda.emulated import EmulatedCompiler
    return EmulatedCompiler()


register("cpu", _cpu)
register("cuda", _cuda, requires=_cuda_device)
register("interpreter", _Interpreter)
register("cuda-emulated", _cuda_emulated)

__all__ = ["Backend", "Lowering", "NotCompilable", "check_backend", "get", "names", "register",
           "unregister"]
