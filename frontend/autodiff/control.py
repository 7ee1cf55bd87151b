"""Gradients through `scf.if` (em.cond), and the replay of a region for its gradient
(`gradient_of`) that the loops' gradients (loops.py) use too.

The backward of an `scf.if` is another `scf.if` on the same condition whose branches trace
the forward branch again under a tape and take its gradient (TensorFlow's cond_v2 keeps the
branch's intermediates as extra outputs instead; tracing again keeps the forward op as it
was). What the tapes see of a region, and how its replay reads the values the forward's
Variable reads saw, is regions.py.
"""

from __future__ import annotations

from ember.frontend import nest
from ember.frontend.autodiff import recording
from ember.frontend.autodiff.closures import frozen
from ember.frontend.autodiff.regions import Region, ReplayedBranches, record, region
from ember.frontend.autodiff.tape import GradientTape, UnconnectedGradients, differentiable
from ember.frontend.tensor import Tensor, convert_to_tensor

__all__ = ["Region", "ReplayedBranches", "gradient_of", "record", "record_cond", "region"]


def gradient_of(fn, sources: list, outputs_like: list, cts: list, structure=None,
                snapshots: list = (), drawn: list = ()):
    """Traces `fn()` again under a tape watching `sources`; the gradient of its tensor
    outputs (paired with `outputs_like`, the op's results, laid out as `structure` when
    given) weighted by `cts`, with zeros for sources it does not reach. `snapshots` are
    (Variable, value) pairs: what the Variables held where the region began in the forward,
    which the replay's reads see, and `drawn` the generators its random ops drew from, in
    order (regions.py)."""
    with GradientTape(watch_accessed_variables=False) as tape, \
            recording.replaying({id(v): value for v, value in snapshots}, drawn):
        tape._watch(sources)
        out = fn()
    leaves = nest.flatten(out) if structure is None else _aligned(out, structure)
    targets, weights = [], []
    for leaf, like, ct in zip(leaves, outputs_like, cts):
        if isinstance(leaf, Tensor) and like is not None and ct is not None and \
                differentiable(leaf):
            targets.append(leaf)
            weights.append(ct)
    if not targets:
        return [_zeros(s) for s in sources]
    return tape.gradient(targets, list(sources), output_gradients=weights,
                         unconnected_gradients=UnconnectedGradients.ZERO)


def _aligned(value, like) -> list:
    """`value`'s leaves laid out as `like`'s: a branch's output before AutoGraph reconciled
    it, against the merged result. A return value the branch leaves undefined became zeros
    of the other branch's structure in the result (placeholders): None for each leaf."""
    from ember.frontend.autograph.undefined import Undefined
    if isinstance(value, Undefined):
        return [None] * len(nest.flatten(like))
    kids, like_kids = nest._children(value), nest._children(like)
    if kids is None or like_kids is None or len(kids) != len(like_kids):
        return nest.flatten(value)
    return [leaf for k, lk in zip(kids, like_kids) for leaf in _aligned(k, lk)]


def _zeros(value):
    from ember.frontend import ops
    if hasattr(value, "read_value"):
        return ops.zeros_like(value.read_value())
    return ops.zeros_like(value)


def filled(cts: list, outputs: list) -> list:
    """The cotangents of `outputs`, zeros where there is none (a branch must yield each)."""
    from ember.frontend import ops
    return [None if not isinstance(o, Tensor) or not differentiable(o)
            else (c if c is not None else ops.zeros_like(o)) for c, o in zip(cts, outputs)]


# -- em.cond ------------------------------------------------------------------------------

def record_cond(pred, true_fn, false_fn, result, seen: Region) -> None:
    sources = seen.inputs()
    if not sources:
        return
    true_fn, false_fn = frozen(true_fn), frozen(false_fn)  # as they were traced
    outputs = nest.flatten(result)

    def backward(cts):
        from ember.frontend.control_flow import trace_cond
        cts = filled(cts, outputs)

        def branch(fn, drawn):
            return lambda: tuple(gradient_of(fn, sources, outputs, cts, result,
                                             seen.snapshots, drawn))
        return list(trace_cond(pred, branch(true_fn, seen.runs[0]),
                               branch(false_fn, seen.runs[1]),
                               what="the gradient of an em.cond"))
    record(sources, outputs, backward)
