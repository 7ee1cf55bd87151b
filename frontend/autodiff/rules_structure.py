"""Gradient rules of the structural ops (dialects/ember/structure.py), the reductions
(reduction.py), softmax/log_softmax (nn.py) and the indexing ops (indexing.py)."""

from __future__ import annotations

from ember.dialects.ember import indexing as I
from ember.dialects.ember import nn as N
from ember.dialects.ember import reduction as R
from ember.dialects.ember import structure as T
from ember.frontend.autodiff.registry import non_differentiable, vjp
from ember.frontend.tensor import convert_to_tensor
from ember.frontend.autodiff.rule_helpers import conj, is_real_or_complex, ops, unbroadcast

non_differentiable("integer or boolean result", R.ReduceAnyOp, R.ReduceAllOp, R.ArgMaxOp,
                   R.ArgMinOp)


def shape_of(x):
    """x's shape: a list of ints when static, else an int32 shape tensor."""
    dims = x.shape.dims
    if dims is not None and None not in dims:
        return list(dims)
    return ops().shape(x)


def reshape_like(ct, x):
    if ct.shape.dims == x.shape.dims and None not in (x.shape.dims or (None,)):
        return ct
    return ops().reshape(ct, shape_of(x))


# -- structure ----------------------------------------------------------------------------

@vjp(T.MatmulOp)
def _matmul(ct, a, b, *, out, transpose_a, transpose_b):
    mm = ops().matmul
    # the real formulas, on the conjugated operands for complex ones (TensorFlow's convention)
    ca, cb = conj(a), conj(b)
    if not transpose_a and not transpose_b:
        ga, gb = mm(ct, cb, transpose_b=True), mm(ca, ct, transpose_a=True)
    elif transpose_a and not transpose_b:
        ga, gb = mm(cb, ct, transpose_b=True), mm(ca, ct)
    elif not transpose_a and transpose_b:
        ga, gb = mm(ct, cb), mm(ct, ca, transpose_a=True)
    else:
        ga, gb = mm(cb, ct, transpose_a=True, transpose_b=True), \
            mm(ct, ca, transpose_a=True, transpose_b=True)
    if (a.ndim or 0) > 2 or (b.ndim or 0) > 2:  # broadcast batch dims
        ga, gb = unbroadcast(ga, a, b), unbroadcast(gb, b, a)
    return ga, gb


@vjp(T.TransposeOp)
def _transpose(ct, x, *, out, perm):
    inverse = [0] * len(perm)
    for i, p in enumerate(perm):
        inverse[p] = i
    return ops().transpose(ct, inverse)


@vjp(T.ReshapeOp, T.ExpandDimsOp, T.SqueezeOp)
def _reshape(ct, x, *, out, **attrs):
    return reshape_like(ct, x)


@vjp(T.DynamicReshapeOp)
def _dynamic_reshape(ct, x, shape, *, out):
    return reshape_like(ct, x), None


@vjp(T.BroadcastToOp)
def _broadcast_to(ct, x, *, out, shape):
    return unbroadcast(ct, x)


@vjp(T.DynamicBroadcastToOp)
def _dynamic_broadcast_to(ct, x, shape, *, out):
    return unbroadcast(ct, x), None


@vjp(T.ConcatOp)
def _concat(ct, *inputs, out, dim):
    from ember.frontend.array_composites import size_of, split
    sizes = [size_of(x, dim) for x in inputs]
    parts = split(ct, sizes, axis=dim) if len(inputs) > 1 else [ct]
    return [p if is_real_or_complex(x) else None for p, x in zip(parts, inputs)]


# -- reductions ---------------------------------------------------------------------------

def _expanded(ct, x, axes, keepdims):
    """`ct` of a reduction over `axes` with size-1 dims where they were, broadcast to x."""
    o = ops()
    if not keepdims:
        for a in sorted(axes):
            ct = o.expand_dims(ct, a)
    return o.broadcast_to(ct, shape_of(x))


def _count(x, axes, dtype):
    dims = x.shape.dims
    if all(dims[a] is not None for a in axes):
        n = 1
        for a in axes:
            n *= dims[a]
        return n
    o = ops()
    return o.cast(o.reduce_prod(o.gather(o.shape(x), axes)), dtype)


@vjp(R.ReduceSumOp)
def _reduce_sum(ct, x, *, out, axes, keepdims):
    return _expanded(ct, x, axes, keepdims)


@vjp(R.ReduceMeanOp)
def _reduce_mean(ct, x, *, out, axes, keepdims):
    if not is_real_or_complex(x):
        return None
    return _expanded(ct, x, axes, keepdims) / _count(x, axes, x.dtype)


@vjp(R.ReduceMaxOp, R.ReduceMinOp)
def _reduce_extreme(ct, x, *, out, axes, keepdims):
    if not is_real_or_complex(x):
        return None
    o = ops()
    picked = o.cast(o.equal(x, _expanded(out, x, axes, keepdims)), x.dtype)
    ties = o.reduce_sum(picked, axis=axes, keepdims=True)
    return _expanded(ct, x, axes, keepdims) * picked / ties


# -- softmax ------------------------------------------------------------------------------

@vjp(N.SoftmaxOp)
def _softmax(ct, x, *, out, axis):
    o = ops()
    return (ct - o.reduce_sum(ct * out, axis=axis, keepdims=True)) * out


@vjp(N.LogSoftmaxOp)
def _log_softmax(ct, x, *, out, axis):
    o = ops()
    return ct - o.reduce_sum(ct, axis=axis, keepdims=True) * o.exp(out)


# -- indexing: the gradient goes back to the elements the op read --------------------------

def _positions(x):
    """An int tensor shaped like `x` holding each element's row-major position."""
    o = ops()
    return o.reshape(o.range(o.size(x)), shape_of(x))


def _scatter_back(ct, x, picked):
    """`ct` added back into zeros shaped like `x` at the positions in `picked` (`x`'s
    positions selected by the op, shaped like ct); duplicates add up."""
    o = ops()
    from ember.frontend.scatter_ops import scatter_nd
    flat = scatter_nd(o.reshape(picked, [-1, 1]), o.reshape(ct, [-1]),
                      o.reshape(o.size(x), [1]))
    return o.reshape(flat, shape_of(x))


@vjp(I.StridedSliceOp)
def _strided_slice(ct, x, *, out, **attrs):
    from ember.frontend.dispatch import execute
    return _scatter_back(ct, x, execute(I.StridedSliceOp, [_positions(x)], attrs))


@vjp(I.DynamicStridedSliceOp)
def _dynamic_strided_slice(ct, x, begin, end, strides, *, out, **attrs):
    from ember.frontend.dispatch import execute
    picked = execute(I.DynamicStridedSliceOp, [_positions(x), begin, end, strides], attrs)
    return _scatter_back(ct, x, picked), None, None, None


@vjp(I.SliceOp)
def _slice(ct, x, begin, size, *, out):
    from ember.frontend.dispatch import execute
    return _scatter_back(ct, x, execute(I.SliceOp, [_positions(x), begin, size])), None, None


@vjp(I.GatherOp)
def _gather(ct, params, indices, *, out, axis):
    from ember.frontend.dispatch import execute
    if not is_real_or_complex(params):
        return None, None
    picked = execute(I.GatherOp, [_positions(params), indices], {"axis": axis})
    return _scatter_back(ct, params, picked), None


@vjp(I.PadOp)
def _pad(ct, x, constant_value, *, out, paddings, mode):
    from ember.frontend.dispatch import execute
    if not is_real_or_complex(x):
        return None, None
    if mode == "CONSTANT":
        o = ops()
        begin = list(paddings[0::2])
        inner = o.slice(ct, begin, shape_of(x))
        return inner, o.reduce_sum(ct) - o.reduce_sum(inner)
    positions = _positions(x)
    picked = execute(I.PadOp, [positions, convert_to_tensor(0, dtype=positions.dtype)],
                     {"paddings": paddings, "mode": mode})
    return _scatter_back(ct, x, picked), None


@vjp(I.OneHotOp)
def _one_hot(ct, indices, on_value, off_value, *, out, depth, axis):
    o = ops()
    mask = o.one_hot(indices, depth, 1, 0, axis=axis, dtype=ct.dtype)
    return None, o.reduce_sum(ct * mask), o.reduce_sum(ct * (1 - mask))
