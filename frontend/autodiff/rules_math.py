"""Gradient rules of digamma (special.py), reduce_prod (reduction.py) and the scans cumsum and
cumprod (scan.py), with TensorFlow's formulas."""

from __future__ import annotations

import math

from ember.dialects.ember import reduction as R
from ember.dialects.ember import scan as Sc
from ember.dialects.ember.elementwise import special as S
from ember.frontend.autodiff.registry import non_differentiable, vjp
from ember.frontend.autodiff.rule_helpers import conj, is_real_or_complex, ops

non_differentiable("integer result (insertion positions)", Sc.SearchSortedOp)

_SHIFT = 8  # trigamma's recurrence steps before the asymptotic series
_SERIES = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66)  # Bernoulli numbers B2, B4, ... B10


def trigamma(x):
    """psi'(x), the derivative of digamma: the reflection psi'(x) = pi^2 / sin^2(pi x) -
    psi'(1 - x) below 1/2, the recurrence psi'(z) = psi'(z + 1) + 1/z^2 up to z + 8, then
    the asymptotic series 1/z + 1/(2 z^2) + sum B_2k / z^(2k+1). NaN at the poles."""
    o = ops()
    reflect = o.less(x, 0.5)
    z = o.where(reflect, 1 - x, x)
    total = o.zeros_like(z)
    for i in range(_SHIFT):
        total = total + 1 / o.square(z + i)
    z = z + _SHIFT
    inv = 1 / z
    inv2 = inv * inv
    series = o.zeros_like(z)
    for b in reversed(_SERIES):
        series = (series + b) * inv2
    total = total + inv + inv2 / 2 + series * inv
    sin = o.sin(x * math.pi)
    pole = o.logical_and(reflect, o.equal(o.floor(x), x))
    reflected = math.pi ** 2 / o.square(o.where(pole, o.ones_like(sin), sin)) - total
    nan = o.zeros_like(x) * math.nan
    return o.where(pole, nan, o.where(reflect, reflected, total))


@vjp(S.DigammaOp)
def _digamma(ct, x, *, out):
    return ct * trigamma(x)


def _inverse(perm):
    inverse = [0] * len(perm)
    for i, p in enumerate(perm):
        inverse[p] = i
    return inverse


def _count(x, axes):
    """The number of elements in `axes` of x: an int when static, else an int32 scalar."""
    dims = x.shape.dims
    if all(dims[a] is not None for a in axes):
        return math.prod(dims[a] for a in axes)
    o = ops()
    return o.reduce_prod(o.gather(o.shape(x), axes))


@vjp(R.ReduceProdOp)
def _reduce_prod(ct, x, *, out, axes, keepdims):
    """TensorFlow's: the product of every other element, as the exclusive products from
    both sides of the reduced dims packed into one, so zeros in the input are handled.
    For complex inputs (which ember.cumprod does not take) it is conj(out / x): exact
    where x has no zeros, 0 where it has."""
    if not is_real_or_complex(x):
        return None
    o = ops()
    if x.dtype.is_complex:
        from ember.frontend.autodiff.rules_structure import _expanded
        zero = o.equal(x, 0)
        others = _expanded(out, x, axes, keepdims) / o.where(zero, o.ones_like(x), x)
        return _expanded(ct, x, axes, keepdims) * conj(o.where(zero, o.zeros_like(x), others))
    from ember.frontend.autodiff.rules_structure import _expanded, shape_of
    from ember.frontend.scan_ops import cumprod
    rank = x.ndim
    if rank is None:
        raise ValueError(f"the gradient of reduce_prod needs the rank of {x}, unknown while "
                         "tracing; give the input a known rank in the input_signature")
    axes = sorted(a % rank for a in axes)
    if not axes:
        return ct
    others = [a for a in range(rank) if a not in axes]
    perm = axes + others
    permuted = o.transpose(x, perm) if perm != list(range(rank)) else x
    rows = o.reshape(permuted, [_count(x, axes), _count(x, others)])
    left = cumprod(rows, axis=0, exclusive=True)
    right = cumprod(rows, axis=0, exclusive=True, reverse=True)
    y = o.reshape(conj(left) * conj(right), shape_of(permuted))
    if perm != list(range(rank)):
        y = o.transpose(y, _inverse(perm))
    return _expanded(ct, x, axes, keepdims) * y


@vjp(Sc.CumsumOp)
def _cumsum(ct, x, *, out, axis, exclusive, reverse):
    if not is_real_or_complex(x):
        return None
    from ember.frontend.scan_ops import cumsum
    return cumsum(ct, axis=axis, exclusive=exclusive, reverse=not reverse)


@vjp(Sc.CumprodOp)
def _cumprod(ct, x, *, out, axis, exclusive, reverse):
    """TensorFlow's: the reverse cumsum of out * ct, divided by x (0 where x is 0, as
    TensorFlow's div_no_nan: the gradient there is not computed)."""
    if not is_real_or_complex(x):
        return None
    from ember.frontend.scan_ops import cumsum
    o = ops()
    total = cumsum(conj(out) * ct, axis=axis, exclusive=exclusive, reverse=not reverse)
    zero = o.equal(x, 0)
    safe = o.where(zero, o.ones_like(x), x)
    return o.where(zero, o.zeros_like(total), total / conj(safe))
