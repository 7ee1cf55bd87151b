"""What the runtime, `ember-compile` and the tests need of a backend, and the registry of
backends by name (`em.function(backend=...)`).

A `Backend` compiles one traced function for one set of static argument types and returns
an executable: called with the argument arrays, it returns the result arrays. Its
`stages()` is the same compiler as named stages (a `Lowering`), for `ember-compile` and
the lowering tests, so they run the code the runtime runs. What it cannot
compile it refuses with `NotCompilable`, whose `reason` the runtime decides on: host work by
design runs on the reference interpreter quietly, anything else with a fallback warning
(or an error under `em.config.set_fallback("error")`). A backend that compiles nothing
(`compiles = False`: the interpreter) runs every trace on the interpreter.
"""

from __future__ import annotations

import enum
from typing import Callable, Protocol, Sequence

from ember.dialects.ember.errors import EmberError
from ember.dialects.ember.types import TensorType


class NotCompilable(EmberError):
    """A backend cannot compile the function; the message names the reason and op,
    `reason` says which kind of reason (the runtime decides on it, never on the text)."""

    class Reason(enum.Enum):
        HOST_ONLY = "host-only"  # an op that runs on the host by design (py_function)
        UNSUPPORTED = "unsupported"  # no CPU lowering for it yet: strings, unknown ranks
        BAD_ARGUMENTS = "bad-arguments"  # the call's types do not fit the function
        FAILED = "failed"  # specialising, lowering or loading failed

    def __init__(self, message: str, reason: "NotCompilable.Reason" = Reason.UNSUPPORTED):
        super().__init__(message)
        self.reason = reason


class Lowering(Protocol):
    """A backend's compiler as an ordered list of named stages, each printable: MLIR
    stages return the `ir.Module` (rewritten in place), later ones text or bytes."""
    STAGES: tuple[str, ...]

    def path_to(self, stop: str, start: str) -> list[str]:
        """The stages run to reach `stop` from `start` (empty if `start` comes after)."""

    def lower(self, module, stop: str, start: str):
        """Runs the stages from `start` up to and including `stop` on `module`."""


class StagedLowering:
    """The `lower` the backends share: their `make_<stage>` methods run in the order their
    `path_to` gives, each one a step of the compile log (EMBER_LOG=compile)."""
    STAGES: tuple[str, ...] = ()
    DEFAULT_STOP = ""
    LOG_PREFIX = ""  # the backend's name in the log, when its stage names are not enough

    def lower(self, module, stop: str | None = None, start: str = "linalg"):
        """Runs the stages from `start` up to and including `stop` (DEFAULT_STOP) on
        `module` (in place for IR stages); returns the last stage's output."""
        from ember.backends import compile_log  # (imports MLIR)
        stop = stop or self.DEFAULT_STOP
        if stop not in self.STAGES:
            raise ValueError(f"unknown stage {stop!r}; stages: {', '.join(self.STAGES)}")
        value = module
        for stage in self.path_to(stop, start):
            with compile_log.stage(f"{self.LOG_PREFIX}{stage}"):
                value = getattr(self, f"make_{stage}")(value)
        return value


class Backend(Protocol):
    name: str
    compiles: bool  # False: every trace runs on the reference interpreter

    def stages(self, instrument: dict | None = None, **options) -> Lowering:
        """The backend's lowering with these code-generation options (the CPU's: the
        fields of CpuOptions) and `instrument` (Pipeline.run's MLIR instrumentation:
        print_ir_after_all, print_ir_after, timing). NotCompilable if the backend
        compiles nothing."""

    def compile(self, module_text: str | Callable[[], str], symbol: str,
                arg_types: Sequence[TensorType], *, source_key: str | None = None,
                pipeline: str = "ember-optimize") -> Callable:
        """The executable of `@symbol` for `arg_types` (NotCompilable if there is none).
        `module_text` may be a callable, called only when no cache has the code; then
        `source_key` keys the caches in its place; `pipeline` optimised the module.
        A backend with tiers (`tiers = ("fast", "full")`, the CPU's) also takes
        `tier=` and `cached_only=` (None where no cache has that tier's code), and the
        runtime compiles through them as runtime/tiers.py says."""


_FACTORIES: dict[str, Callable[[], Backend]] = {}
_INSTANCES: dict[str, Backend] = {}
_REQUIRES: dict[str, Callable[[], None]] = {}
# other names users reach for: named in the error
_ALIASES = {"gpu": "the GPU backend is called 'cuda'", "nvidia": "use 'cuda'",
            "llvm": "use 'cpu'", "eager": "use 'interpreter', or jit_compile=False"}


def register(name: str, factory: Callable[[], Backend],
             requires: Callable[[], None] | None = None) -> None:
    """Makes `factory()` the backend called `name` (made on first use). `requires()`, if
    given, raises when this process cannot run the backend's code (the CUDA backend
    without a GPU): `check_backend` calls it, so selecting the backend fails at once,
    while its stages (`ember-compile`) stay usable."""
    _FACTORIES[name] = factory
    _INSTANCES.pop(name, None)
    _REQUIRES.pop(name, None)
    if requires is not None:
        _REQUIRES[name] = requires


def unregister(name: str) -> None:
    """Forgets the backend called `name`."""
    _FACTORIES.pop(name, None)
    _INSTANCES.pop(name, None)
    _REQUIRES.pop(name, None)


def names() -> list[str]:
    return sorted(_FACTORIES)


def get(name: str) -> Backend:
    """The backend called `name` (see `check_backend` for the error on an unknown one;
    its `requires` is not checked: its stages work anywhere)."""
    _check_name(name)
    if name not in _INSTANCES:
        _INSTANCES[name] = _FACTORIES[name]()
    return _INSTANCES[name]


def check_backend(backend, runs: bool = True) -> str:
    """`backend` if Ember has it and this process can run it, else a ValueError listing
    the backends (an unknown name) or what its `requires` raises; with `runs=False`
    (`jit_compile=False`: nothing will be compiled for it) only the name is checked."""
    _check_name(backend)
    if runs and backend in _REQUIRES:
        _REQUIRES[backend]()
    return backend


def _check_name(backend) -> str:
    if isinstance(backend, str) and backend in _FACTORIES:
        return backend
    why = _ALIASES.get(backend) if isinstance(backend, str) else None
    available = ", ".join(repr(b) for b in names())
    raise ValueError(f"em.function: unknown backend {backend!r}"
                     f"{' (' + why + ')' if why else ''}; available backends: {available}")
