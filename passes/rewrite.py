"""Pattern rewriting for ember passes, on MLIR's own pattern machinery (`mlir.rewrite`).

A pattern is a function decorated with `@rewrite(root)`; given a matched op and a Rewriter,
it returns the values replacing the op's results, or None when it does not match. A pass is
a `PatternPass` with its patterns, registered in one line:

    @rewrite(MulOp)
    def mul_two(op, rw):                              # mul(x, 2) -> add(x, x)
        for x, c in commuted(op):
            if splat(c) == 2 and same_type(x, op.results[0]):
                return [rw.emit(AddOp, [x, x])]
        return None

    @register_pass
    @dataclasses.dataclass(frozen=True)
    class MulTwoPass(PatternPass):
        name: ClassVar[str] = "mul-two"
        patterns: ClassVar[tuple] = (mul_two,)

It nests under `func.func(...)` in a pipeline; each application counts the pattern's name
(`mul-two`) in the pass's Statistics. Patterns know Ember's op traits from the op specs:
`is_pure`, `may_fail`, `is_commutative`/`commuted`, `constant_of`/`splat`, `defined_by`.

How a pass runs (upstream: `applyPatternsGreedily` with a `RewriterBase::Listener`):
  1. Its patterns go into one upstream `RewritePatternSet` (root op name, benefit), so MLIR's
     PatternApplicator tries an op's patterns by benefit, higher first (equal benefits in
     the order listed).
  2. MLIR's walk driver (`walk_and_apply_patterns`) sweeps each function: post-order, nested
     ops and earlier ops first, each op's first matching pattern applied through MLIR's
     PatternRewriter.
  3. Ops left dead are erased by Ember's effects model: pure, cannot fail, unused.
  4. Sweeps repeat until no pattern matched or `max_iterations` sweeps ran.

What the upstream drivers cannot do safely in this build (MLIR 22.1.8, assertions on), and
is done in Python on top (checked by experiment):
  - `apply_patterns_and_fold_greedily` erases the ops MLIR thinks trivially dead. IRDL ops
    carry no traits, so it keeps every dead ember op (step 3 erases them), but it erases
    upstream ops that Ember counts as may-fail: an unused `tensor.cast` to a static shape,
    whose check eager runs. The walk driver neither folds nor erases dead ops.
  - The bindings have no listener: the drivers tell their own worklists what a pattern
    erased, not Python, and touching an erased op reads freed memory. The Rewriter records
    what patterns erase (the op and what it holds), refuses to touch it again, invalidates
    the Python objects it was given, and the driver skips recorded ops.
  - Replacing results by values of another count aborts (an assertion); of another type, or
    by the result of an op not inserted in the IR, leaves invalid IR or aborts ("operation
    destroyed but still has uses"). `Rewriter.replace` checks all three first.
  - A Python exception in a pattern unwinds through MLIR's driver: the pattern's wrapper
    catches it, fails every later match of the sweep and raises it once the driver returned.
Under `--opt-bisect-limit` (passes/bisect_limit.py) every application counts: the Rewriter
asks the gate before its first change to existing IR, and when told no erases the ops the
pattern had built and reports no match, so the op stays as it was.
An op that its operand types make invalid (a trace specialised to static shapes: eager raises
there) is never rewritten: the first change is refused as the gate's no is.
A pattern may replace or erase only the op it matched (and what that op holds): the walk
driver has already taken the next op. It may insert ops before it and move ops.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, ClassVar, Optional, Sequence

import numpy as np
from mlir import ir, rewrite as upstream

from ember.dialects.ember.base import Op, Trait
from ember.dialects.ember.builder import emit
from ember.dialects.ember.base import REGISTRY
from ember.dialects.ember.verifier import Diagnostic, iter_ops
from ember.passes.analysis.effects import is_pure, may_fail
from ember.passes import bisect_limit
from ember.passes.base import Pass, Statistics
from ember.passes.bufferizable import PassFailure
from ember.passes.analysis.effects import op_error
from ember.passes.ir_utils import (STRUCTURAL, as_operation, constant_of, has_uses, make_constant,
                                   op_id, same_type, spec_of, until_fixed_point)
from ember.passes.transforms.dce import erase_dead

__all__ = ["Pattern", "PatternPass", "RewriteError", "Rewriter", "apply_patterns", "commuted",
           "constant_of", "defined_by", "is_commutative", "is_dead", "is_pure", "may_fail",
           "rewrite", "same_type", "splat"]


class RewriteError(PassFailure):
    """A pattern misused the Rewriter (a replacement of the wrong count or type, an erased
    op touched again); located at the matched op."""


@dataclasses.dataclass(frozen=True)
class Pattern:
    """A match-and-rewrite function for ops named `root`, tried by `benefit` (higher first)."""
    root: str
    fn: Callable
    benefit: int = 1
    name: str = ""

    def __call__(self, op: ir.Operation, rw: "Rewriter"):
        return self.fn(op, rw)


def rewrite(root, benefit: int = 1, name: str = "") -> Callable[[Callable], Pattern]:
    """Decorates `fn(op, rw) -> values | True | None` as a Pattern on `root` (an op spec
    class or an op name). `fn` returns the values replacing `op`'s results (a list, or
    one value; each of the result's type), True when it rewrote through `rw` itself, or
    None: no match. The
    statistics name is `name`, else the function's (`_add_zero` counts as `add-zero`)."""
    op_name = root.name if isinstance(root, type) and issubclass(root, Op) else root
    if not isinstance(op_name, str) or "." not in op_name:
        raise TypeError(f"@rewrite takes an op spec or a dialect.op name, got {root!r}")
    if op_name.startswith("ember.") and op_name not in REGISTRY:
        import difflib  # only for a misspelt name
        close = ["ember." + c for c in difflib.get_close_matches(
            op_name[len("ember."):], [n.split(".", 1)[1] for n in REGISTRY], n=1)]
        raise ValueError(f"@rewrite: there is no op '{op_name}' in the ember dialect"
                         + (f"; did you mean '{close[0]}'?" if close else ""))
    if not isinstance(benefit, int) or not 0 <= benefit < 65535:  # 65535: MLIR's "never"
        raise ValueError(f"@rewrite benefit must be an integer in [0, 65534], got {benefit!r}")

    def decorate(fn: Callable) -> Pattern:
        label = name or fn.__name__.strip("_").replace("_", "-")
        return Pattern(op_name, fn, benefit, label)
    return decorate


# -- what patterns ask about ops ---------------------------------------------------------------

def is_commutative(op) -> bool:
    """Whether the op's spec says f(a, b) == f(b, a)."""
    spec = spec_of(as_operation(op))
    return spec is not None and spec.has(Trait.COMMUTATIVE)


def commuted(op) -> list[tuple[ir.Value, ir.Value]]:
    """The (lhs, rhs) orders to match a binary op's operands in: both when it commutes."""
    a, b = as_operation(op).operands
    return [(a, b), (b, a)] if is_commutative(op) else [(a, b)]


def defined_by(value: ir.Value, root) -> Optional[ir.Operation]:
    """The op defining `value` when it is a `root` (op spec or name), else None."""
    name = root.name if isinstance(root, type) else root
    owner = value.owner
    return owner.operation if isinstance(owner, ir.OpView) and owner.operation.name == name \
        else None


def splat(value: ir.Value):
    """The one element (a Python scalar) of a non-empty constant whose elements are all
    equal, else None."""
    array = constant_of(value)
    if array is None or array.size == 0 or array.dtype == object:
        return None
    flat = array.reshape(-1)
    if any(array.strides):  # (a splat is a broadcast view: one element, nothing to compare)
        with np.errstate(all="ignore"):
            if not bool(np.all(flat == flat[0])):
                return None
    return flat[0].item()


def is_dead(op) -> bool:
    """Unused, pure and cannot fail: erasing it changes nothing eager would show."""
    op = as_operation(op)
    return op.name not in STRUCTURAL and not has_uses(op) and is_pure(op) and not may_fail(op)


# -- the rewriter patterns are given --------------------------------------------------------

class Rewriter:
    """What a pattern rewrites through: MLIR's PatternRewriter, with checks and a record of
    erased ops (the listener the bindings lack)."""

    def __init__(self, upstream_rewriter, op: ir.Operation, pattern: Pattern, erased: set):
        self._rw = upstream_rewriter
        self.op = op  # the matched op; new ops go before it
        self.pattern = pattern
        self._erased = erased
        self._location = op.location  # (for errors after the op is gone)
        self._built: list = []  # ops this application built, until it changes existing IR
        self._allowed = False  # whether the opt-bisect gate let this application change IR

    def erased(self, op) -> bool:
        """Whether a pattern of this sweep erased `op`."""
        try:
            return op_id(as_operation(op)) in self._erased
        except RuntimeError:  # its Python object was invalidated when it was erased
            return True

    @property
    def ip(self) -> ir.InsertionPoint:
        """The insertion point before the matched op, for ops built by hand."""
        return ir.InsertionPoint(self.op)

    def emit(self, spec: type[Op], operands: Sequence[ir.Value], attrs: dict | None = None):
        """A new `spec` op before the matched op, at its location (builder.emit's result)."""
        with ir.InsertionPoint(self.op), self.op.location:
            made = emit(spec, list(operands), attrs, loc=self.op.location)
        for value in made if isinstance(made, tuple) else (made,) if made is not None else ():
            self._erased.discard(op_id(value.owner.operation))  # a reused address
            self._built.append(value.owner.operation)
        return made

    def constant(self, array, like: ir.Value) -> ir.Value:
        """An `ember.constant` of `array` with `like`'s type, before the matched op."""
        value = make_constant(array, like, self.op)
        self._erased.discard(op_id(value.owner.operation))
        self._built.append(value.owner.operation)
        return value

    def replace(self, op, values: Sequence[ir.Value]) -> None:
        """Replaces `op`'s results by `values` (one each, of the same type, in the IR) and
        erases it."""
        op = self._check_erasable(op, "replace")
        values = list(values)
        if len(values) != len(op.results):
            self._fail(f"gave {len(values)} values for the {len(op.results)} results of "
                       f"'{op.name}'")
        for i, (value, result) in enumerate(zip(values, op.results)):
            if not isinstance(value, ir.Value):
                self._fail(f"gave a {type(value).__name__} for result #{i}, not a value")
            if not same_type(value, result):
                self._fail(f"replaced result #{i} of '{op.name}' ({result.type}) by a value of "
                           f"type {value.type}")
            owner = value.owner
            if isinstance(owner, ir.OpView) and _parent(owner.operation) is None:
                self._fail(f"replaced result #{i} by the result of an op not in the IR")
        self._gate()
        self._record(op)
        self._rw.replace_op(op, values)
        _invalidate(op)

    def erase(self, op) -> None:
        """Erases `op` (the matched op or one it holds), which must have no uses."""
        op = self._check_erasable(op, "erase")
        if has_uses(op):
            self._fail(f"erased '{op.name}' while its results have uses")
        self._gate()
        self._record(op)
        self._rw.erase_op(op)
        _invalidate(op)

    def _check_erasable(self, op, verb: str) -> ir.Operation:
        op = as_operation(op)
        if self.erased(op):
            self._fail(f"tried to {verb} an op it had already erased")
        ancestor, root = op, op_id(self.op)
        while ancestor is not None and op_id(ancestor) != root:
            ancestor = _parent(ancestor)
        if ancestor is None:
            self._fail(f"tried to {verb} '{op.name}', which is neither the matched op nor "
                       "inside it (the walk driver has already taken the next op)")
        return op

    def _gate(self) -> None:
        """Once per application, before it changes existing IR: _Denied (the op stays as it
        was) for an op its operand types make invalid (known_values.op_error: it must raise
        when it runs, as eager does, not be folded away), or when the opt-bisect gate says
        no."""
        if self._allowed:
            return
        spec = REGISTRY.get(self.op.name)
        if (spec is not None and op_error(self.op, spec) is not None) or (
                bisect_limit.active() and not bisect_limit.should_run(
                    f"pattern {self.pattern.name} on {self.op.name}")):
            for built in reversed(self._built):  # uses only among themselves, latest first
                if not has_uses(built):
                    self._rw.erase_op(built)
            raise _Denied
        self._allowed = True

    def _record(self, op: ir.Operation) -> None:
        self._erased.update(op_id(o) for o in (op, *iter_ops(op)))

    def _fail(self, what: str):
        message = f"pattern '{self.pattern.name}' {what}"
        raise RewriteError(message, [Diagnostic.at(self._location, message)])


class _Denied(Exception):
    """The opt-bisect gate refused an application: the op stays as it was."""


def _parent(op: ir.Operation) -> Optional[ir.Operation]:
    """The op holding `op`, None for a top-level or detached op."""
    try:
        parent = op.parent
    except ValueError:  # "Detached operations have no parent"
        return None
    return None if parent is None else as_operation(parent)


def _invalidate(op: ir.Operation) -> None:
    """Makes the Python object of an erased op raise when touched, as the bindings' own
    `erase()` does (other objects for the same op are not reached: hence the record)."""
    invalidate = getattr(op, "_set_invalid", None)
    if invalidate is not None:
        invalidate()


# -- the driver ------------------------------------------------------------------------------

@dataclasses.dataclass
class _Sweep:
    """The state of one run that the upstream callbacks share."""
    stats: Statistics
    fired: int = 0
    erased: set = dataclasses.field(default_factory=set)
    error: Optional[BaseException] = None


def _callback(pattern: Pattern, sweep: _Sweep) -> Callable:
    """`pattern` as the bindings call it: falsy result = matched and rewritten."""
    def match_and_rewrite(view, upstream_rewriter) -> bool:
        op = as_operation(view)
        if sweep.error is not None or op_id(op) in sweep.erased:
            return True
        try:
            rw = Rewriter(upstream_rewriter, op, pattern, sweep.erased)
            values = pattern(op, rw)
            if values is None or values is False:
                return True
            if isinstance(values, ir.Value):
                values = [values]
            elif values is not True and not isinstance(values, (list, tuple)):
                rw._fail(f"returned a {type(values).__name__}: a pattern returns the values "
                         "replacing the op, True (it rewrote through rw) or None (no match)")
            if values is not True:
                rw.replace(op, values)
        except _Denied:
            return True
        except BaseException as e:  # noqa: BLE001 - raised again once the driver returned
            sweep.error = e
            return True
        sweep.fired += 1
        sweep.stats.add(pattern.name)
        return False
    return match_and_rewrite


def apply_patterns(root, patterns: Sequence[Pattern], stats: Statistics, *,
                   max_iterations: int = 16, erase_dead_ops: bool = True) -> None:
    """Applies `patterns` to every function of `root` (a module or a function) to a fixed
    point, counting each application under its pattern's name in `stats` (see the module
    docstring for the algorithm)."""
    sweep = _Sweep(stats)
    context = as_operation(root.operation if isinstance(root, ir.Module) else root).context
    pattern_set = upstream.RewritePatternSet(context)
    # MLIR sorts an op's patterns by benefit, stably: equal benefits keep the listed order
    for pattern in patterns:
        pattern_set.add(pattern.root, _callback(pattern, sweep), benefit=pattern.benefit)
    frozen = pattern_set.freeze()

    def step(fn: ir.Operation) -> bool:
        sweep.fired = 0
        sweep.erased.clear()  # addresses may be reused from here on
        upstream.walk_and_apply_patterns(fn, frozen)
        if sweep.error is not None:
            error, sweep.error = sweep.error, None
            raise error
        if erase_dead_ops:
            erase_dead(fn)
        return sweep.fired > 0
    until_fixed_point(root, step, max_iterations)


@dataclasses.dataclass(frozen=True)
class PatternPass(Pass):
    """A pass that applies `patterns` (see the module docstring); subclasses set `name` and
    `patterns`, and may add option fields."""
    patterns: ClassVar[tuple] = ()
    per_function: ClassVar[bool] = True
    max_iterations: int = 16

    def run(self, module: ir.Module, stats: Statistics) -> None:
        apply_patterns(module, self.patterns, stats, max_iterations=self.max_iterations)

