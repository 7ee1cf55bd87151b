"""Functional control flow: `em.cond` -> `scf.if` (`em.while_loop` is while_loop.py).

Eagerly it is a plain Python `if`. While tracing, each branch (converted by AutoGraph, as
TensorFlow converts the functions given to tf.cond) is traced once into its own
region (Python side effects in it happen once, at trace time), whatever the predicate (one
known while tracing becomes a constant, which the optimiser folds), and the op picks at run
time. Branch outputs are converted to tensors as tf.cond's are and must have the same
structure and dtypes; where shapes differ the result gets the most specific common shape
(`tensor<2xf32>` and `tensor<3xf32>` give `tensor<?xf32>`, via `tensor.cast`).
`smart_cond`, for Ember's own code, picks a branch known while tracing instead.
"""

from __future__ import annotations

import contextlib
from typing import Callable

import numpy as np
from mlir import ir

from ember.dialects.ember import dtypes
from ember.dialects.ember.errors import EmberError
from ember.dialects.ember.types import TensorType
from ember.frontend import detached, nest
from ember.frontend.autodiff import control, recording
from ember.frontend.ensure_shape import ensure_shape
from ember.frontend.shape import TensorSpec
from ember.frontend.tensor import Tensor, convert_to_tensor
from ember.frontend.tracing import FuncGraph, SymbolicTensor, current_graph


class ControlFlowError(EmberError, TypeError):
    """Branches or loop bodies that do not fit together (structure, dtype)."""


def _predicate(graph: FuncGraph, pred, what: str) -> ir.Value:
    pred = convert_to_tensor(pred)
    if pred.dtype is not dtypes.bool_ or pred.shape.rank not in (0, None):
        raise ControlFlowError(f"the condition of {what} must be a scalar bool tensor, got "
                               f"{pred!r}; compare it (e.g. `x > 0`) or reduce it "
                               "(em.reduce_any)")
    if pred.shape.rank is None:  # a scalar or not, seen when it runs: checked there
        pred = ensure_shape(pred, [])
    value = graph.resolve(pred)
    with graph.context, graph.insertion_point(), graph.location():
        return ir.Operation.create("tensor.extract", operands=[value], results=[
            ir.ShapedType(value.type).element_type]).result


def _join(types: list[TensorType]) -> TensorType:
    first = types[0]
    shapes = [t.shape for t in types]
    if any(s is None for s in shapes) or len({len(s) for s in shapes}) > 1:
        return TensorType(first.dtype, None)
    return TensorType(first.dtype, tuple(d[0] if len(set(d)) == 1 else None
                                         for d in zip(*shapes)))


def _cast(graph: FuncGraph, value: ir.Value, ttype: TensorType) -> ir.Value:
    if str(value.type) == str(ttype):
        return value
    with graph.context, graph.location():
        return ir.Operation.create("tensor.cast", results=[ir.Type.parse(str(ttype))],
                                   operands=[value]).result


def _leaf_values(graph: FuncGraph, leaves: list) -> list:
    return [graph.resolve(leaf) if isinstance(leaf, Tensor) else leaf for leaf in leaves]


def cond(pred, true_fn: Callable = None, false_fn: Callable = None, name=None):
    """Runs `true_fn()` if `pred` else `false_fn()` (tf.cond); traced as `scf.if`.

    Eagerly only the chosen branch runs, and its result is returned as it is. Inside an
    em.function both branches are traced whatever `pred` is (a symbolic tensor; a
    variable, read when the function runs; an eager tensor or a Python bool, which become
    constants), and their results must have the same structure and dtypes: the checks do
    not depend on whether the predicate is known while tracing. As tf.cond converts its
    branches' outputs with convert_to_tensor, the Python numbers and bools, numpy values
    and variables a branch returns become tensors there (`lambda: 1` and `lambda: 0`
    give an int32 tensor; `[1, 2]` a list of two); None and other Python values must be
    equal in both branches. (TensorFlow 2 refuses a Python bool `pred` inside
    tf.function; Ember traces it as a constant. To trace one branch only, use a Python
    `if` on a value known while tracing.)

    Example:
      >>> import ember as em
      >>> em.cond(em.constant(3) > 2, lambda: "big", lambda: "small")
      'big'
      >>> em.function(lambda x: em.cond(x > 2, lambda: 1, lambda: 0))(em.constant(3))
      <ember.Tensor: shape=(), dtype=int32, numpy=1>
    """
    del name
    if true_fn is None or false_fn is None:
        raise TypeError("em.cond needs both true_fn and false_fn")
    if current_graph() is None:
        return true_fn() if bool(pred) else false_fn()
    from ember.frontend.autograph.conversion import convert  # (it imports this module)
    return trace_cond(convert_to_tensor(pred), tensor_outputs(convert(true_fn)),
                      tensor_outputs(convert(false_fn)))


def smart_cond(pred, true_fn: Callable, false_fn: Callable):
    """`true_fn()` if `pred` else `false_fn()`, picked at once where `pred` is known (a
    Python bool, an eager tensor), em.cond's `scf.if` where it is symbolic; the results
    are the branches' own. For Ember's own code, whose conditions (shapes, capacities) are
    often known while tracing: one branch traced keeps static shapes (TensorFlow's
    smart_cond)."""
    if current_graph() is None or not isinstance(pred, SymbolicTensor):
        return true_fn() if bool(pred) else false_fn()
    from ember.frontend.autograph.conversion import convert  # (it imports this module)
    return trace_cond(pred, convert(true_fn), convert(false_fn))


def tensor_outputs(fn: Callable) -> Callable:
    """`fn` with what it returns converted as tf.cond converts a branch's outputs (in the
    branch, where the constants belong)."""
    return lambda: nest.map_structure(_as_output, fn())


def _as_output(value):
    if isinstance(value, Tensor):
        return value
    if isinstance(value, (bool, int, float, complex, np.generic, np.ndarray)):
        kind = np.asarray(value).dtype.kind
        return convert_to_tensor(value) if kind in "biufc" else value
    if callable(getattr(type(value), "_as_tensor", None)):  # a variable: its read
        return value._as_tensor()
    return value


def trace_cond(pred: SymbolicTensor, true_fn: Callable, false_fn: Callable,
               reconcile: Callable | None = None, what: str = "em.cond",
               branches: tuple[str, str] | None = None):
    """`cond` on a symbolic `pred`: both branches traced into an `scf.if`. AutoGraph's
    `reconcile(outs, enter)` may rewrite the branches' outputs before they are merged:
    `outs` is [true output, false output], `enter(i)` re-enters branch i's region (to
    create values there); it returns the outputs to merge. `branches` names the two
    branches for a caller built on `cond` (em.switch_case's "branch 0"); the errors then
    name `what` and those branches instead of em.cond's true and false branch."""
    graph = current_graph()
    condition = _predicate(graph, pred, what)
    labels = ("em.cond", "the true branch", "the false branch") if branches is None else \
        (what, *branches)
    with graph.context:
        owner = ir.Operation.create("scf.execute_region", regions=2, loc=ir.Location.unknown())
    blocks, scopes, outs = [], [], []
    seen = control.Region() if recording.recording() else None
    replayed = control.ReplayedBranches()

    def enter(i: int):
        return graph.region(blocks[i], "", scopes[i])
    with detached.abandoned_on_error(owner):  # (its blocks move to the scf.if at the end)
        for i, (fn, branch) in enumerate(((true_fn, labels[1]), (false_fn, labels[2]))):
            block = ir.Block.create_at_start(owner.regions[i], [])
            replayed.enter()
            with graph.region(block, f"{branch} of {what}") as scope, \
                    (control.region(seen) if seen else contextlib.nullcontext()):
                outs.append(fn())
            replayed.leave()
            blocks.append(block)
            scopes.append(scope)
        if seen is not None:
            seen.passes(nest.flatten(outs))
        if reconcile is not None:
            outs = reconcile(outs, enter)
        outs = replayed.outputs(outs)
        merged = []
        for i, out in enumerate(outs):
            with enter(i):
                merged.append((out, _leaf_values(graph, nest.flatten(out))))
        if seen is not None and seen.inputs():
            seen.snapshot()  # the Variables' values before the scf.if, for its gradient
        result = replayed.result(_merge_branches(graph, condition, merged, blocks, labels))
    if seen is not None:
        control.record_cond(pred, true_fn, false_fn, result, seen)
    return result


def cond_effects(pred, true_fn: Callable, false_fn: Callable) -> None:
    """`cond` for branches run only for their effects (they return None)."""
    def run(fn):
        return lambda: (fn(), None)[1]
    smart_cond(pred, run(true_fn), run(false_fn))


def _merge_branches(graph: FuncGraph, condition: ir.Value, outs, blocks, labels):
    """Checks the branch outputs agree, adds the yields and builds the `scf.if`. `labels`
    is (what, true branch's name, false branch's name), for the errors."""
    (t_out, t_leaves), (f_out, f_leaves) = outs
    what, t_name, f_name = labels
    if nest.structure(t_out) != nest.structure(f_out):
        raise ControlFlowError(f"{what} branches must return the same structure; {t_name} "
                               f"returned {t_out!r}, {f_name} {f_out!r}")
    positions, types = [], []
    for i, (a, b) in enumerate(zip(t_leaves, f_leaves)):
        a_is, b_is = isinstance(a, ir.Value), isinstance(b, ir.Value)
        if not a_is and not b_is:
            if a is not b and a != b:
                raise ControlFlowError(f"{what} branches return different Python values "
                                       f"{a!r} ({t_name}) and {b!r} ({f_name}) at output "
                                       f"{i}; return tensors instead")
            continue
        if a_is != b_is:
            raise ControlFlowError(f"output {i} of {what} is a tensor in one branch and the "
                                   f"Python value {b if a_is else a!r} in the other; "
                                   f"return a tensor from both")
        ta, tb = _ttype(a), _ttype(b)
        if ta.dtype is not tb.dtype:
            raise ControlFlowError(f"output {i} of {what} has dtype {ta.dtype.name} in "
                                   f"{t_name} and {tb.dtype.name} in {f_name}; cast one of "
                                   f"them (em.cast: a Python int becomes int32, a float "
                                   f"float32)")
        positions.append(i)
        types.append(_join([ta, tb]))
    for block, leaves in zip(blocks, (t_leaves, f_leaves)):
        with graph.context, ir.InsertionPoint(block), ir.Location.unknown():
            ir.Operation.create("scf.yield", operands=[
                _cast(graph, leaves[i], t) for i, t in zip(positions, types)])
    with graph.context, graph.insertion_point(), graph.location():
        if_op = ir.Operation.create("scf.if", results=[ir.Type.parse(str(t)) for t in types],
                                    operands=[condition], regions=2)
    for i, block in enumerate(blocks):
        block.append_to(if_op.regions[i])
    leaves = list(t_leaves)
    for i, result in zip(positions, if_op.results):
        leaves[i] = graph.wrap(result, "cond")
    return nest.pack_sequence_as(t_out, leaves)


def trial_trace(fn: Callable, args: list):
    """`fn(*args)` traced into a region that is then dropped: its output with each tensor
    replaced by its `TensorSpec`. Tensors in `args` enter as the region's arguments (as a
    loop body's variables do). For what must be known before the real trace (the type a
    loop body gives a value it has none of yet); `fn`'s trace-time side effects happen."""
    from ember.dialects.ember.convert import type_to_mlir
    graph = current_graph()
    typed = (Tensor, TensorSpec)  # a TensorSpec enters as a tensor of its type
    tensors = [a for a in args if isinstance(a, typed)]
    with graph.context, ir.Location.unknown():
        trial = ir.Operation.create("scf.execute_region", regions=1)
        block = ir.Block.create_at_start(trial.regions[0], [
            type_to_mlir(TensorType(t.dtype, t.shape.dims)) for t in tensors])
    params = iter(block.arguments)
    dropped = control.region(control.Region()) if recording.recording() else \
        contextlib.nullcontext()  # what the tapes record in it goes with it
    try:
        with graph.region(block, "a trial trace"), dropped:
            out = fn(*[graph.wrap(next(params), "trial") if isinstance(a, typed) else a
                       for a in args])
            return nest.map_structure(
                lambda v: TensorSpec.from_tensor(v) if isinstance(v, Tensor) else v, out)
    finally:
        detached.cut(trial)  # dropped: its tensors may be held where the module is not


def _ttype(value: ir.Value) -> TensorType:
    from ember.dialects.ember.convert import type_from_mlir
    return type_from_mlir(value.type)
