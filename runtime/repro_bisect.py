"""Miscompile bisection: the first pass or stage after which a function computes something
else than its traced module does on Ember's reference interpreter.

    found = bisect(module_text, "ember-optimize,test-swap", "f", inputs)
    if found:
        print(found)            # the culprit, the IR before and after it, the reproducer

The reference is the input module run by the interpreter (backends/interpreter.py, what
the runtime falls back to). The pipeline is cut into single pass applications
(reproducer.single_steps: each ember pass, each upstream element, each pass nested under
`func.func(...)`) and the module is evaluated on the interpreter after each one. When all
agree, the result is compiled for the inputs' shapes by the CPU backend and run. Lowering
and codegen (specialisation, the backend's linalg, bufferized and LLVM stages, LLVM's
optimisation, the JIT) are one step here: the interpreter runs ember-level IR only, so the
stages in between cannot be evaluated on their own. (Its specialisation runs ember-inline and
ember-shape-refine only, where the runtime also re-runs the Function's pipeline at the static
shapes: the pipeline's passes are checked one by one above, at the traced shapes.) When
that step differs, it is retried
with the backend's optional transforms turned off one at a time (LLVM's optimisation, the
GEMM kernels, row-splitting across threads) and the result says which of them matter.

A step after which the interpreter cannot run the IR (an upstream conversion) is grouped
with the following steps until one can be evaluated; the culprit is then that range. Where
LLVM's bisection compares a program's output by a script, this compares the results with
`numpy.allclose(rtol, atol)` (NaNs equal), shapes and dtypes exactly; an error raised by the
IR counts as a result (the same error type agrees).

The miscompile's reproducer (passes/reproducer.py) holds the IR before the culprit, the
culprit's pipeline and an `ember_bisect` entry naming the function, the inputs (an .npz
beside it) and tolerances; `ember-opt FILE --run-reproducer --bisect-against-interpreter`
re-runs the bisection on it and fails naming the same pass.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import os

import numpy as np
from mlir import ir, passmanager

from ember.backends.base import NotCompilable
from ember.backends.interpreter import Interpreter, InterpreterError
from ember.dialects.ember.convert import type_from_mlir
from ember.dialects.ember.errors import EmberError
from ember.dialects.ember.irdl import make_context
from ember.dialects.ember.parsing import parse_module
from ember.dialects.ember.types import ResourceType, TensorType
from ember.passes import reproducer
from ember.passes.ir_utils import symbol_table
from ember.passes.base import Statistics
from ember.passes.pipeline import Pipeline
from ember.passes.pipeline_syntax import FUNCTION, Nest, Upstream

LOWERING = "lowering and codegen"
DYNAMIC_DIM = 3  # the size random inputs give a `?` dimension
_VARIANTS = (("LLVM's optimisation", {"opt_level": 0}), ("the GEMM kernels", {"gemm": "loops"}),
             ("splitting rows across threads", {"threads": 1}))


class BisectError(EmberError, ValueError):
    """The bisection cannot start: no such function, inputs that do not fit, or a
    reference the interpreter cannot compute."""


@dataclasses.dataclass
class Miscompile:
    """The first step whose output differs from the reference.

    `pass_name` is the step's pipeline element (`ember-cse`, `func.func(ember-licm)`, or
    "lowering and codegen"); `before`/`after` the IR around it (`after` is LLVM IR for the
    lowering step); `reproducer` the file that replays it and `command` the line that does.
    """
    pass_name: str
    before: str
    after: str
    function: str
    difference: str
    pipeline: str
    reproducer: str | None = None
    command: str | None = None
    notes: list = dataclasses.field(default_factory=list)

    def __str__(self) -> str:
        lines = [f"miscompile: the output of @{self.function} first differs from the traced "
                 f"module's after '{self.pass_name}': {self.difference}"]
        lines += [f"note: {n}" for n in self.notes]
        if self.reproducer:
            lines += [f"reproducer: {self.reproducer}", f"run: {self.command}"]
        lines += [f"// -----// IR Before {self.pass_name} //----- //", self.before.rstrip(),
                  f"// -----// IR After {self.pass_name} //----- //", self.after.rstrip()]
        return "\n".join(lines)


def argument_types(module: ir.Module, symbol: str) -> list:
    """The ember types (TensorType / ResourceType) of `@symbol`'s arguments."""
    fn = function(module, symbol)
    with module.context:
        return [type_from_mlir(a.type) for a in fn.regions[0].blocks[0].arguments]


def function(module: ir.Module, symbol: str) -> ir.Operation:
    fns = {n: op for n, op in symbol_table(module).items() if op.name == "func.func"}
    if symbol not in fns:
        raise BisectError(f"the module has no function @{symbol}; it has "
                          f"{', '.join('@' + n for n in fns) or 'none'} (choose with --function)")
    return fns[symbol]


def random_inputs(types: list, seed: int = 0) -> list[np.ndarray]:
    """Seeded random arrays of `types` (a `?` dim is DYNAMIC_DIM long, an unranked tensor a
    vector): floats normal, integers in [-5, 5), booleans fair coins."""
    rng = np.random.default_rng(seed)
    out = []
    for t in types:
        t = t.value if isinstance(t, ResourceType) else t
        shape = (DYNAMIC_DIM,) if t.shape is None else \
            tuple(DYNAMIC_DIM if d is None else d for d in t.shape)
        dtype = t.dtype.np_dtype
        if dtype.kind == "b":
            a = rng.random(shape) < 0.5
        elif dtype.kind in "iu":
            a = rng.integers(0 if dtype.kind == "u" else -5, 5, shape)
        elif dtype.kind == "c":
            a = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
        elif dtype.kind == "f":
            a = rng.standard_normal(shape)
        else:
            raise BisectError(f"cannot make random inputs of type {t}; give the inputs")
        out.append(np.asarray(a).astype(dtype))
    return out


class _Holder:
    """A variable's handle for the interpreter (a fresh copy per evaluation)."""

    def __init__(self, value):
        self.value = np.array(value, copy=True)


def _interpret(module: ir.Module, symbol: str, types: list, inputs: list):
    """The results (or the error raised) of `@symbol` on the interpreter; InterpreterError
    propagates (the IR is not the interpreter's)."""
    args = [_Holder(a) if isinstance(t, ResourceType) else np.array(a, copy=True)
            for t, a in zip(types, inputs)]
    try:
        return [np.asarray(r) for r in Interpreter(module).call(symbol, args)]
    except InterpreterError:
        raise
    except EmberError as e:
        return e


def _compare(expected, actual, rtol: float, atol: float) -> str | None:
    """What differs between two outcomes (None when they agree)."""
    if isinstance(expected, Exception) or isinstance(actual, Exception):
        if type(expected) is type(actual):
            return None
        said = [f"raised {type(o).__name__}: {o}" if isinstance(o, Exception) else "returned"
                for o in (expected, actual)]
        return f"the reference {said[0]}, the step's output {said[1]}"
    if len(expected) != len(actual):
        return f"{len(actual)} results instead of {len(expected)}"
    for i, (e, a) in enumerate(zip(expected, actual)):
        e, a = np.asarray(e), np.asarray(a)
        if e.shape != a.shape or e.dtype != a.dtype:
            return f"result #{i} is {a.dtype}{list(a.shape)}, expected {e.dtype}{list(e.shape)}"
        if e.dtype.kind in "fc" and np.allclose(a, e, rtol=rtol, atol=atol, equal_nan=True):
            continue
        if e.dtype.kind not in "fc" and np.array_equal(a, e):
            continue
        diff = np.abs(a.astype(np.complex128) - e.astype(np.complex128)).reshape(-1)
        at = np.unravel_index(int(np.nanargmax(np.where(np.isnan(diff), np.inf, diff))),
                              e.shape) if e.size else ()
        return (f"result #{i} differs at index {tuple(int(k) for k in at)}: "
                f"{a[at] if e.size else a} instead of {e[at] if e.size else e} "
                f"(rtol={rtol}, atol={atol})")
    return None


def bisect(module_text: str, pipeline: str, symbol: str, inputs: list | None = None, *,
           rtol: float = 1e-5, atol: float = 1e-6, seed: int = 0, compiled: bool = True,
           context: ir.Context | None = None) -> tuple[Miscompile | None, list[str]]:
    """Bisects `pipeline` (and, with `compiled`, lowering and codegen) on `@symbol` of
    `module_text`: returns (the Miscompile or None, notes on what was not checked)."""
    context = context or make_context()
    with context, ir.Location.unknown():
        module = parse_module(module_text)
    types = argument_types(module, symbol)
    inputs = random_inputs(types, seed) if inputs is None else _fitted(inputs, types, symbol)
    try:
        reference = _interpret(module, symbol, types, inputs)
    except InterpreterError as e:
        raise BisectError(f"the interpreter cannot run the input's @{symbol}, the reference "
                          f"of the bisection: {e}") from None
    steps = reproducer.single_steps(Pipeline.parse(pipeline).steps)
    notes, start, before = [], None, None
    for i, step in enumerate(steps):
        text = module.operation.get_asm(enable_debug_info=True)
        if start is None:
            start, before = i, text
        with context:
            Pipeline.parse(step).run(module)
        try:
            outcome = _interpret(module, symbol, types, inputs)
        except InterpreterError as e:
            if i == len(steps) - 1:
                notes.append(f"the interpreter cannot run the IR after '{steps[start]}' ({e}); "
                             f"the steps from there on were not checked")
            continue
        difference = _compare(reference, outcome, rtol, atol)
        if difference:
            if start == i:
                notes += _per_function(step, before, symbol, types, inputs, reference,
                                       rtol, atol, context)
            return _found(steps[start:i + 1], before, module, symbol, difference, inputs,
                          rtol, atol, notes), notes
        start = None
    if compiled and start is None:
        return _check_compiled(module, symbol, types, inputs, reference, rtol, atol, notes)
    return None, notes


def _per_function(step: str, before: str, symbol: str, types, inputs, reference, rtol, atol,
                  context: ir.Context) -> list[str]:
    """For a culprit nested under func.func(...) in a module of several functions: which
    functions' rewrite alone changes the output (the pass runs on one function at a time)."""
    nested = Pipeline.parse(step).steps
    if len(nested) != 1 or not isinstance(nested[0], (Nest, Upstream)) or \
            not step.startswith(f"{FUNCTION}("):
        return []
    culprits = []
    with context, ir.Location.unknown():
        whole = parse_module(before)  # (kept alive while its ops are looked at)
        names = [n for n, op in symbol_table(whole).items()
                 if op.name == FUNCTION and len(op.regions[0].blocks) > 0]
        if len(names) < 2:
            return []
        for name in names:
            module = parse_module(before)
            fn = symbol_table(module)[name]
            if isinstance(nested[0], Nest):
                for inner in nested[0].steps:
                    inner.run(fn, Statistics(inner.name))
            else:
                pm = passmanager.PassManager(FUNCTION)
                pm.add(step[len(FUNCTION) + 1:-1])
                pm.run(fn)
            try:
                outcome = _interpret(module, symbol, types, inputs)
            except InterpreterError:
                continue
            if _compare(reference, outcome, rtol, atol):
                culprits.append(f"@{name}")
    if not culprits:
        return []
    return [f"run on one function at a time, '{step}' changes the output on "
            f"{', '.join(culprits)}"]


def _fitted(inputs: list, types: list, symbol: str) -> list[np.ndarray]:
    if len(inputs) != len(types):
        raise BisectError(f"@{symbol} takes {len(types)} arguments, {len(inputs)} inputs given")
    out = []
    for i, (a, t) in enumerate(zip(inputs, types)):
        held = t.value if isinstance(t, ResourceType) else t
        a = np.asarray(a)
        if a.dtype != held.dtype.np_dtype or (held.shape is not None and (
                len(held.shape) != a.ndim or
                any(d is not None and d != n for d, n in zip(held.shape, a.shape)))):
            raise BisectError(f"input #{i} of @{symbol} is {a.dtype}{list(a.shape)}, which "
                              f"does not fit the argument's type {held}")
        out.append(a)
    return out


def _check_compiled(module, symbol, types, inputs, reference, rtol, atol, notes):
    """Compiles the pipeline's output for the inputs' shapes and compares its results."""
    text = module.operation.get_asm(enable_debug_info=True)
    static = [TensorType(t.dtype, a.shape) for t, a in zip(
        [t.value if isinstance(t, ResourceType) else t for t in types], inputs)]
    outcome = _run_compiled(text, symbol, static, inputs, {})
    if isinstance(outcome, str):
        notes.append(f"{LOWERING} not checked: {outcome}")
        return None, notes
    difference = _compare(reference, outcome[:len(reference)] if isinstance(reference, list)
                          else outcome, rtol, atol)
    if not difference:
        return None, notes
    for what, options in _VARIANTS:
        other = _run_compiled(text, symbol, static, inputs, options)
        if not isinstance(other, str) and not _compare(reference, other[:len(reference)]
                                                       if isinstance(reference, list)
                                                       else other, rtol, atol):
            notes.append(f"the output agrees with {what} turned off "
                         f"({', '.join(f'{k}={v}' for k, v in options.items())})")
    found = _found([], text, None, symbol, difference, inputs, rtol, atol, notes)
    found.after = _llvm_ir(text, symbol, static)
    return found, notes


def compile_function(text: str, symbol: str, static: list, backend, **kwargs):
    """The CPU backend's `compile_function`, imported on first use (it loads LLVM)."""
    from ember.backends.cpu.compiler import compile_function as compile_
    return compile_(text, symbol, static, backend, **kwargs)


def _run_compiled(text: str, symbol: str, static: list, inputs: list, options: dict):
    """The compiled code's results on `inputs`, its error, or a string saying why it could
    not be compiled."""
    from ember.backends.cpu.backend import CpuBackend, CpuOptions  # LLVM: loaded on use
    try:
        exe = compile_function(text, symbol, static, CpuBackend(CpuOptions(**options)),
                               pipeline="")
    except NotCompilable as e:
        return str(e)
    try:
        return [np.asarray(r) for r in exe([np.array(a, copy=True) for a in inputs])]
    except EmberError as e:
        return e


def _llvm_ir(text: str, symbol: str, static: list) -> str:
    from ember.backends.cpu.backend import CpuBackend
    from ember.backends.cpu.compiler import specialize
    try:
        return CpuBackend().lower(specialize(text, symbol, static, ""), "llvmir")
    except EmberError as e:
        return f"(the LLVM IR could not be printed: {e})"


def _found(steps: list[str], before: str, module, symbol: str, difference: str, inputs: list,
           rtol: float, atol: float, notes: list) -> Miscompile:
    name = ",".join(steps) or LOWERING
    if len(steps) > 1:
        notes.append(f"the interpreter cannot run the IR between these {len(steps)} steps, "
                     "so the culprit is one of them")
    after = module.operation.get_asm(enable_debug_info=True) if module is not None else ""
    pipeline = f"builtin.module({','.join(steps)})"
    found = Miscompile(name, before, after, symbol, difference, pipeline, notes=notes)
    found.reproducer, found.command = write_reproducer(found, inputs, rtol, atol, steps)
    return found


def write_reproducer(found: Miscompile, inputs: list, rtol: float, atol: float,
                     steps: list[str]) -> tuple[str | None, str | None]:
    """Writes the miscompile's reproducer and its inputs (.npz beside it)."""
    where = reproducer.directory()
    if where is None:
        return None, None
    buffer = io.BytesIO()
    np.savez(buffer, *inputs)
    digest = hashlib.sha1(found.before.encode() + found.pipeline.encode() +
                          buffer.getvalue()).hexdigest()[:12]
    npz = os.path.join(where, f"miscompile-{digest}.npz")
    try:
        os.makedirs(where, exist_ok=True)
        with open(npz, "wb") as f:
            f.write(buffer.getvalue())
    except OSError:
        return None, None
    extra = {"function": found.function, "inputs": npz, "rtol": rtol, "atol": atol}
    path = reproducer.write(found.before, found.pipeline, extra, stem="miscompile")
    if path is None:
        return None, None
    with make_context():
        plugins = reproducer.plugin_files(Pipeline.parse(found.pipeline).steps) if steps else []
    flags = (f" --bisect-against-interpreter --function {found.function} --inputs {npz} "
             f"--rtol {rtol} --atol {atol}")
    return path, reproducer.command(path, plugins, flags)


def load_inputs(path: str) -> list[np.ndarray]:
    """The arrays of an .npz written by write_reproducer (or np.savez(path, *arrays))."""
    try:
        with np.load(path, allow_pickle=False) as data:
            names = sorted(data.files, key=lambda n: int(n.split("_")[-1])
                           if n.split("_")[-1].isdigit() else n)
            return [data[n] for n in names]
    except (OSError, ValueError) as e:
        raise BisectError(f"cannot read inputs '{path}': {e}") from None
