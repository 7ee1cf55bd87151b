"""Ember's backends layer: the reference interpreter (interpreter.py) and the CPU backend
(cpu/), and which backend names `em.function(backend=...)` takes."""

# Where compiled code can run; `_PLANNED` names backends that are designed but not built.
BACKENDS = ("cpu",)
_PLANNED = {"gpu": "the GPU backend is not available yet: issue 17",
            "cuda": "the CUDA backend is not available yet: issue 17"}


def check_backend(backend) -> str:
    """`backend` if Ember has it, else a ValueError listing those it has."""
    if isinstance(backend, str) and backend in BACKENDS:
        return backend
    why = _PLANNED.get(backend) if isinstance(backend, str) else None
    available = ", ".join(repr(b) for b in BACKENDS)
    raise ValueError(f"em.function: unknown backend {backend!r}"
                     f"{' (' + why + ')' if why else ''}; available backends: {available}")
