"""Gradient rules of tensor_scatter and where_indices (scatter.py), sort and unique
(sorting.py), with TensorFlow's formulas (TensorScatterUpdate/Add/Sub/Min/Max grads)."""

from __future__ import annotations

from ember.dialects.ember import scatter as Sc
from ember.dialects.ember import sorting as So
from ember.frontend.autodiff.registry import non_differentiable, vjp
from ember.frontend.autodiff.rule_helpers import conj, is_real_or_complex, ops

non_differentiable("integer result (the coordinates of the true elements)", Sc.WhereIndicesOp)
non_differentiable("TensorFlow defines no gradient for Unique: which duplicate each unique "
                   "value came from is arbitrary", So.UniqueOp)


@vjp(Sc.TensorScatterOp)
def _tensor_scatter(ct, tensor, indices, updates, *, out, mode):
    from ember.frontend import scatter_ops as so
    o = ops()
    if not is_real_or_complex(tensor):
        return None, None, None
    if mode == "update":
        return (so.tensor_scatter_nd_update(ct, indices, o.zeros_like(updates)), None,
                _winning_updates(ct, tensor, indices, updates))
    if mode == "add":
        return ct, None, so.gather_nd(ct, indices)
    if mode == "sub":
        return ct, None, -so.gather_nd(ct, indices)
    if mode == "mul":
        return _scatter_mul(ct, tensor, indices, updates, out)
    # min / max: the cotangent is shared between the tensor's element and the updates that
    # equal the result there
    picked = o.cast(o.equal(tensor, out), ct.dtype)
    from_updates = o.cast(o.equal(updates, so.gather_nd(out, indices)), ct.dtype)
    ties = picked + so.scatter_nd(indices, from_updates, o.shape(tensor))
    shared = ct / ties
    return ct * picked / ties, None, so.gather_nd(shared, indices) * from_updates


def _winning_updates(ct, tensor, indices, updates):
    """The cotangent of the updates of mode update: the result's at each update's slice for
    the update that wins there (the last of duplicates, as the op applies them), 0 for those
    overwritten. (TensorFlow, whose order for duplicates is unspecified, gives every
    duplicate the slice's cotangent; without duplicates the two agree.)"""
    from ember.frontend import scatter_ops as so
    o = ops()
    rows = o.shape(indices)[:-1]
    ids = o.reshape(o.range(o.reduce_prod(rows)), rows)
    slots = o.fill(o.shape(tensor)[:indices.shape.dims[-1]], -1)
    won = o.equal(so.gather_nd(so.tensor_scatter_nd_update(slots, indices, ids), indices), ids)
    for _ in range(updates.ndim - (indices.ndim - 1)):  # to the updates' slice dims
        won = o.expand_dims(won, -1)
    picked = so.gather_nd(ct, indices)
    return o.where(won, picked, o.zeros_like(picked))


def _scatter_mul(ct, tensor, indices, updates, out):
    """Each element of the result is a product of the tensor's element and the updates
    scattered to it: the derivative by one factor is the product of the others, computed
    without dividing where a factor is zero (TensorFlow's UnsortedSegmentProd gradient)."""
    from ember.frontend import scatter_ops as so
    from ember.frontend.dispatch import execute
    o = ops()
    t_zero, u_zero = o.equal(tensor, 0), o.equal(updates, 0)
    zeros = o.cast(t_zero, ct.dtype) + so.scatter_nd(indices, o.cast(u_zero, ct.dtype),
                                                      o.shape(tensor))
    ct = o.where(o.greater(zeros, 1), o.zeros_like(ct), ct)  # two zeros: all derivatives 0
    t_safe = o.where(t_zero, o.ones_like(tensor), tensor)
    u_safe = o.where(u_zero, o.ones_like(updates), updates)
    nonzero_product = execute(Sc.TensorScatterOp, [t_safe, indices, u_safe], {"mode": "mul"})
    d_tensor = o.where(t_zero, nonzero_product, out / t_safe)
    d_updates = o.where(u_zero, so.gather_nd(nonzero_product, indices),
                        so.gather_nd(out, indices) / u_safe)
    return ct * conj(d_tensor), None, so.gather_nd(ct, indices) * conj(d_updates)


@vjp(So.SortOp)
def _sort(ct, x, *, out, descending):
    """The values' cotangent goes back to the positions the indices name."""
    values_ct = ct[0]
    if values_ct is None or not is_real_or_complex(x):
        return None
    from ember.frontend.autodiff.rules_structure import _positions, _scatter_back
    o = ops()
    positions = _positions(x)
    picked = positions[..., :1] + o.cast(out[1], positions.dtype)  # row start + column
    return _scatter_back(values_ct, x, picked)
