"""Pieces the gradient rules share: undoing broadcasting, conjugation, dtype handling."""

from __future__ import annotations

from ember.frontend.tensor import Tensor


def ops():
    from ember.frontend import ops as _ops
    return _ops


def conj(x: Tensor) -> Tensor:
    """The complex conjugate (the identity on real tensors): TensorFlow's rules give the
    conjugate of the Jacobian for complex inputs."""
    if x.dtype.is_complex:
        from ember.frontend.complex_ops import conj as _conj
        return _conj(x)
    return x


def unbroadcast(ct: Tensor | None, x: Tensor, *others: Tensor) -> Tensor | None:
    """`ct` (the cotangent of a result `x` was broadcast into) summed back to x's shape.
    `others` are the op's other operands: where none of them can be larger than x in a dim
    x has as `?`, that dim was not broadcast (else a run-time check decides)."""
    if ct is None:
        return None
    if not (x.dtype.is_floating or x.dtype.is_complex):
        return None
    xs, cs = x.shape.dims, ct.shape.dims
    if xs is not None and xs == cs and None not in xs:
        return ct
    o = ops()
    if xs is None or cs is None:
        return _unbroadcast_unranked(ct, x)
    lead = len(cs) - len(xs)
    axes = list(range(lead))
    ambiguous = []
    for i, d in enumerate(xs):
        c = cs[lead + i]
        if d == 1 and c != 1:
            axes.append(lead + i)
        elif d is None and c != 1 and _may_exceed(others, len(cs) - 1 - (lead + i)):
            ambiguous.append(lead + i)
    out = o.reduce_sum(ct, axis=axes, keepdims=True) if axes else ct
    for axis in ambiguous:  # x's dim is known only when it runs: 1 (broadcast) or not
        out = _sum_if_broadcast(out, x, axis - lead, axis)
    if lead or out.shape.dims != tuple(xs):
        out = o.reshape(out, xs if None not in xs else o.shape(x))
    return out


def _may_exceed(others, from_end: int) -> bool:
    """Whether an operand in `others` may have a dim > 1 `from_end` dims from its last."""
    for y in others:
        dims = y.shape.dims
        if dims is None:
            return True
        if from_end < len(dims) and dims[len(dims) - 1 - from_end] != 1:
            return True
    return not others


def _sum_if_broadcast(ct: Tensor, x: Tensor, x_axis: int, axis: int) -> Tensor:
    from ember.frontend.control_flow import smart_cond
    o = ops()
    dim = o.shape(x)[x_axis]
    broadcast = o.logical_and(o.equal(dim, 1), o.not_equal(o.shape(ct)[axis], 1))
    return smart_cond(broadcast, lambda: o.reduce_sum(ct, axis=[axis], keepdims=True), lambda: ct)


def _unbroadcast_unranked(ct: Tensor, x: Tensor) -> Tensor:
    raise ValueError(f"the gradient needs the rank of {x} (broadcast to {ct.shape}), which "
                     "is unknown while tracing; give the input a known rank in the "
                     "input_signature")


def cast_like(ct: Tensor, x: Tensor) -> Tensor:
    return ct if ct.dtype is x.dtype else ops().cast(ct, x.dtype)


def is_real_or_complex(x) -> bool:
    return x.dtype.is_floating or x.dtype.is_complex
