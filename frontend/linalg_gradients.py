"""`em.linalg` inv, solve, det, slogdet, cholesky and triangular_solve with closed-form
gradients (TensorFlow's linalg_grad.py formulas), through `em.custom_gradient`.

The functions of linalg_solvers.py are elimination loops (`em.while_loop`); differentiating
through their iterations would be slow and lose precision, so the tape sees each as one
operation whose gradient is:
  inv:      -A^-H ct A^-H
  solve:    rhs: solve(A^H, ct); matrix: -rhs_grad X^H
  det:      ct det A^-H;   slogdet: ct_logabs A^-H (the sign has none)
  cholesky: Murray (2016), as TensorFlow's CholeskyGrad (symmetric: only the lower
            triangle of the input is read, so the gradient is that of a symmetric input)
  triangular_solve: as solve, the matrix gradient kept to the triangle that is read
With `adjoint=True` the formulas are those of the adjoint matrix. Batch dims broadcast in
solve and triangular_solve; their gradients are summed back over the broadcast dims.
"""

from __future__ import annotations

from ember.frontend import linalg_solvers as S
from ember.frontend import ops
from ember.frontend.autodiff.custom import custom_gradient
from ember.frontend.autodiff.rule_helpers import unbroadcast
from ember.frontend.linalg_composites import band_part
from ember.frontend.tensor import convert_to_tensor

__all__ = ["cholesky", "det", "inv", "slogdet", "solve", "triangular_solve"]


def _mm(a, b, adjoint_a=False, adjoint_b=False):
    return ops.matmul(a, b, adjoint_a=adjoint_a, adjoint_b=adjoint_b)


def _conj_t(x):
    if x.dtype.is_complex:
        from ember.frontend.complex_ops import conj
        x = conj(x)
    return S._swap_last(x)


def _scalar_times_matrix(scalar, matrix):
    return ops.expand_dims(ops.expand_dims(scalar, -1), -1) * matrix


def inv(input, adjoint=False, name=None):  # noqa: A002
    @custom_gradient
    def forward(a):
        x = S.inv(a, adjoint=adjoint)

        def grad(ct):
            if adjoint:
                return -_mm(x, _mm(ct, x, adjoint_a=True), adjoint_a=False)
            return -_mm(x, _mm(ct, x, adjoint_b=True), adjoint_a=True)
        return x, grad
    del name
    return forward(convert_to_tensor(input))


def solve(matrix, rhs, adjoint=False, name=None):
    @custom_gradient
    def forward(a, b):
        x = S.solve(a, b, adjoint=adjoint)

        def grad(ct):
            gb = S.solve(a, ct, adjoint=not adjoint)
            ga = -_mm(x, gb, adjoint_b=True) if adjoint else -_mm(gb, x, adjoint_b=True)
            return unbroadcast(ga, a, b), unbroadcast(gb, b, a)
        return x, grad
    del name
    a = convert_to_tensor(matrix)
    return forward(a, convert_to_tensor(rhs, dtype_hint=a.dtype))


def slogdet(input, name=None):  # noqa: A002
    @custom_gradient
    def forward(a):
        sign, logabs = S.slogdet(a)

        def grad(ct_sign, ct_logabs):
            return _scalar_times_matrix(ct_logabs, S.inv(a, adjoint=True))
        return S.Slogdet(sign, logabs), grad
    del name
    return forward(convert_to_tensor(input))


def det(input, name=None):  # noqa: A002
    @custom_gradient
    def forward(a):
        d = S.det(a)

        def grad(ct):
            return _scalar_times_matrix(ct * d, S.inv(a, adjoint=True))
        return d, grad
    del name
    return forward(convert_to_tensor(input))


def cholesky(input, name=None):  # noqa: A002
    @custom_gradient
    def forward(a):
        low = S.cholesky(a)

        def grad(ct):
            n = low.shape[-1] if low.shape[-1] is not None else ops.shape(low)[-1]
            eye = ops.cast(ops.equal(ops.expand_dims(ops.range(n), 1), ops.range(n)),
                           low.dtype)
            low_inv = S.triangular_solve(low, eye + ops.zeros_like(low), lower=True)
            middle = _mm(low, ct, adjoint_a=True)
            middle = band_part(middle * (1 - 0.5 * eye), -1, 0)
            ga = _mm(_mm(low_inv, middle, adjoint_a=True), low_inv)
            return (ga + _conj_t(ga)) * 0.5
        return low, grad
    del name
    return forward(convert_to_tensor(input))


def triangular_solve(matrix, rhs, lower=True, adjoint=False, name=None):
    @custom_gradient
    def forward(a, b):
        x = S.triangular_solve(a, b, lower=lower, adjoint=adjoint)

        def grad(ct):
            gb = S.triangular_solve(a, ct, lower=lower, adjoint=not adjoint)
            ga = -_mm(x, gb, adjoint_b=True) if adjoint else -_mm(gb, x, adjoint_b=True)
            ga = band_part(ga, -1, 0) if lower else band_part(ga, 0, -1)
            return unbroadcast(ga, a, b), unbroadcast(gb, b, a)
        return x, grad
    del name
    a = convert_to_tensor(matrix)
    return forward(a, convert_to_tensor(rhs, dtype_hint=a.dtype))


for _f in (inv, solve, slogdet, det, cholesky, triangular_solve):
    _f.__doc__ = getattr(S, _f.__name__).__doc__ + (
        "\n    Its gradient is closed-form (see ember.frontend.linalg_gradients).")
