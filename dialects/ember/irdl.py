"""The IRDL definition of the `ember` dialect, generated from the op specs, and loading it.

Every operand and result gets its own constraint variable (an IRDL variable binds one type
across all its uses), so MLIR checks operand counts, resource operands and attribute kinds,
and the Python verifier (`verifier.py`) checks the rest — tensor types included — by
re-running the specs' type inference.
Ops print in generic form: IRDL gives no custom assembly.
"""

from __future__ import annotations

import functools
import threading

from mlir import ir
# `mlir.dialects.irdl`'s one function this module calls, without the generated IRDL op classes
# that module also imports (~2 ms of `import ember`): the dialect is parsed from text.
from mlir._mlir_libs._mlirDialectsIRDL import load_dialects

from ember.dialects.ember.base import ATTR_KINDS, REGISTRY, Op

# Tensor operands may be ranked or unranked (py_function results are `tensor<*xT>`). IRDL's
# `any_of` aborts in this MLIR build ("unknown IRDL constraint"), so tensors are `irdl.any`
# here and the ember verifier checks that each one is a tensor of an ember dtype.
_TENSOR = "irdl.any"
_RESOURCE = "irdl.base @ember::@resource"


def _operation(spec: type[Op]) -> list[str]:
    body: list[str] = []

    def var(constraint: str) -> str:
        body.append(f"    %v{len(body)} = {constraint}")
        return f"%v{len(body) - 1}"

    operands = [f"{o}: {var(_RESOURCE if o in spec.resource_operands else _TENSOR)}"
                for o in spec.operands]
    attrs = [f'"{k}" = {var(ATTR_KINDS[a.kind][0])}' for k, a in spec.attrs.items()]
    results = [f"{r}: {var(_TENSOR)}" for r in spec.results]
    if operands:
        body.append(f"    irdl.operands({', '.join(operands)})")
    if attrs:
        body.append(f"    irdl.attributes {{{', '.join(attrs)}}}")
    if results:
        body.append(f"    irdl.results({', '.join(results)})")
    short = spec.name.split(".", 1)[1]
    return [f"  irdl.operation @{short} {{", *body, "  }"]


@functools.lru_cache(maxsize=1)
def irdl_text() -> str:
    """The `irdl.dialect @ember` module text for every registered (non-upstream) op."""
    lines = ["irdl.dialect @ember {",
             "  irdl.type @string {",
             "  }",
             "  irdl.type @resource {",
             "    %v0 = irdl.any",
             "    irdl.parameters(value: %v0)",
             "  }"]
    for spec in sorted(REGISTRY.values(), key=lambda s: s.name):
        if not spec.upstream:
            assert not spec.variadic, f"{spec.name}: IRDL cannot declare mixed variadics"
            lines += _operation(spec)
    lines.append("}")
    return "\n".join(lines)


_keep_alive: list = []  # IRDL modules must outlive the contexts that loaded them
_lock = threading.RLock()


def load_ember_dialect(context: ir.Context) -> None:
    """Registers the ember dialect's ops and types in `context`."""
    with context, ir.Location.unknown():
        module = ir.Module.parse(irdl_text())
        load_dialects(module)
    with _lock:
        _keep_alive.append(module)


def _register_python_module() -> None:
    """Lets the bindings find a Python module for the `ember` namespace.

    When IR is iterated, the bindings import `<prefix>.<dialect>` to find typed op classes;
    a miss is not remembered, so without this every visited ember op cost a failed import
    search, tens of microseconds each. `ember.dialects.ember` is that module (it has no
    OpView classes; ops stay generic `ir.Operation`s).
    """
    from mlir._mlir_libs import _mlir
    if "ember.dialects" not in _mlir.globals.dialect_search_modules:
        _mlir.globals.append_dialect_search_prefix("ember.dialects")


# The upstream dialects the tracer and the runtime build ops of (and IRDL, which defines the
# ember dialect). The process context loads only these when it is made: loading every
# dialect the bindings register (~70) was ~5% of `import ember`, and a call whose code is
# cached needs no other. The first pipeline run or compile loads the rest (`full_context`).
TRACING_DIALECTS = ("builtin", "func", "arith", "scf", "tensor", "cf", "math", "complex",
                    "irdl")


def make_context(dialects: tuple | None = None) -> ir.Context:
    """A new MLIR context with the upstream dialects and the ember dialect loaded: every
    upstream dialect, or only `dialects`.

    Multithreading is off: MLIR's thread pool starts its threads on the first parallel
    verification or pass and does not survive `fork()` (a forked child that compiled waited
    forever in `PassManager.run` for threads that only the parent has). Ember's modules are
    small and its passes Python, so the pool bought no measurable compile time.
    """
    _register_python_module()
    from ember.dialects.ember.elements import install_complex_caster
    context = ir.Context(load_on_create_dialects=None if dialects is None else [])
    for name in dialects or ():
        context.get_dialect_descriptor(name)  # loads it (without its Python module)
    install_complex_caster(context)  # in this context: a context of its own costs ~15 ms
    context.enable_multithreading(False)
    load_ember_dialect(context)
    return context


_default: ir.Context | None = None
_default_full = False


def tracing_context() -> ir.Context:
    """The process-wide context that traced functions are built in (created on first use),
    with the TRACING_DIALECTS loaded."""
    global _default
    with _lock:
        if _default is None:
            _default = make_context(TRACING_DIALECTS)
        return _default


def full_context(context: ir.Context) -> ir.Context:
    """`context` with every upstream dialect loaded (a pipeline or a lowering builds ops of
    any): the process context loads the rest on the first call."""
    global _default_full
    if context is _default and not _default_full:
        with _lock:
            if not _default_full:
                context.load_all_available_dialects()
                _default_full = True
    return context


def default_context() -> ir.Context:
    """The process-wide context, every upstream dialect loaded (`tracing_context`'s)."""
    return full_context(tracing_context())
