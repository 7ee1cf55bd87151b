"""em.einsum and em.tensordot against numpy: eager, compiled (no interpreter fallback) with
static shapes, compiled with every dim dynamic, and the errors for bad equations."""

import warnings

import numpy as np
import pytest

import ember as em

# equation -> operand shapes (numpy.einsum is the oracle)
EQUATIONS = {
    "ij,jk->ik": [(2, 3), (3, 4)],
    "ij,jk": [(2, 3), (3, 4)],
    "ij,kj->ik": [(2, 3), (4, 3)],
    "ji,jk->ik": [(3, 2), (3, 4)],
    "ij,jk->ki": [(2, 3), (3, 4)],
    "bij,bjk->bik": [(2, 3, 4), (2, 4, 5)],
    "bij,bkj->bik": [(2, 3, 4), (2, 5, 4)],
    "bij,jk->bik": [(2, 3, 4), (4, 5)],
    "ij,bjk->bik": [(3, 4), (2, 4, 5)],
    "bhqd,bhkd->bhqk": [(2, 2, 3, 4), (2, 2, 5, 4)],
    "bhqk,bhkd->bqhd": [(2, 2, 3, 5), (2, 2, 5, 4)],
    "i,i->": [(5,), (5,)],
    "i,i": [(5,), (5,)],
    "i,j->ij": [(3,), (4,)],
    "i,j": [(3,), (4,)],
    "ij,j->i": [(3, 4), (4,)],
    "ij,i->j": [(3, 4), (3,)],
    "ij,ij->ij": [(2, 3), (2, 3)],
    "ij,ij->": [(2, 3), (2, 3)],
    "ij,ij->i": [(2, 3), (2, 3)],
    "ij,ji->ij": [(2, 3), (3, 2)],
    "ii": [(4, 4)],
    "ii->i": [(4, 4)],
    "ij->ji": [(2, 3)],
    "ij->": [(2, 3)],
    "ij->j": [(2, 3)],
    "ijk->kji": [(2, 3, 4)],
    "ijk->jk": [(2, 3, 4)],
    "iij->ji": [(3, 3, 2)],
    "iij->j": [(3, 3, 2)],
    "iii->i": [(3, 3, 3)],
    "ijk,kj->i": [(2, 3, 4), (4, 3)],
    "ijk,jil->kl": [(3, 2, 4), (2, 3, 5)],
    "abc,cd,de->abe": [(2, 3, 4), (4, 5), (5, 2)],
    "ab,cd,bc->ad": [(2, 3), (4, 5), (3, 4)],
    "a,b,c->abc": [(2,), (3,), (4,)],
    "ab,bc,cd,de->ae": [(2, 3), (3, 4), (4, 2), (2, 3)],
    "ij,jk,kl": [(2, 3), (3, 4), (4, 2)],
    "ii,ij->j": [(3, 3), (3, 4)],
    "iij,jk->ik": [(3, 3, 2), (2, 4)],
    "...ij,...jk->...ik": [(2, 3, 4), (2, 4, 5)],
    "...ij,...jk": [(2, 1, 3, 4), (5, 4, 2)],
    "...ij,jk->...ik": [(2, 3, 3, 4), (4, 5)],
    "...i,...i->...": [(2, 3, 4), (3, 4)],
    "...->...": [(2, 3)],
    "...ii->...i": [(2, 3, 3)],
    "i...->...": [(2, 3, 4)],
    "ij...,jk...->ik...": [(2, 3, 4), (3, 5, 4)],
    "...,...": [(2, 3), (1, 3)],
    "a...b,b...->a...": [(2, 3, 4), (4, 3)],
    "ij,j...->i...": [(2, 3), (3,)],
    "bn,anm,bm->ba": [(2, 3), (4, 3, 5), (2, 5)],
    "AB,Bc->Ac": [(2, 3), (3, 4)],
    "Ba,aC": [(2, 3), (3, 4)],
    " i j , j k -> i k ": [(2, 3), (3, 4)],
    "ij,jk->ik#empty": [(0, 3), (3, 4)],
    "ij,jk->ik#empty_k": [(2, 0), (0, 4)],
    "bij,bjk->bik#empty_batch": [(0, 3, 4), (0, 4, 5)],
}


def _operands(key, dtype=np.float64):
    rng = np.random.default_rng(abs(hash(key)) % 2**32)
    if np.issubdtype(dtype, np.integer):
        return [rng.integers(-5, 6, s).astype(dtype) for s in EQUATIONS[key]]
    return [rng.standard_normal(s).astype(dtype) for s in EQUATIONS[key]]


def _equation(key):
    return key.partition("#")[0]


def _compiled(fn, *args, signature=None):
    with warnings.catch_warnings():
        warnings.simplefilter("error", em.InterpreterFallbackWarning)
        return em.function(fn, input_signature=signature)(*args).numpy()


def test_table_has_forty_equations():
    assert len({_equation(k).replace(" ", "") for k in EQUATIONS}) >= 40


@pytest.mark.parametrize("key", list(EQUATIONS))
def test_eager_matches_numpy(key):
    xs = _operands(key)
    want = np.einsum(_equation(key), *xs)
    got = em.einsum(_equation(key), *[em.constant(x) for x in xs])
    assert got.dtype == em.float64 and got.shape == want.shape
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("key", list(EQUATIONS))
def test_compiled_matches_numpy(key):
    xs = _operands(key, np.float32)
    eq = _equation(key)
    got = _compiled(lambda *a: em.einsum(eq, *a), *xs)
    want = np.einsum(eq, *[x.astype(np.float64) for x in xs])
    assert got.dtype == np.float32 and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


DYNAMIC = ["ij,jk->ik", "bij,bjk->bik", "ii->i", "iij->ji", "ij->", "i,j", "ij,ij->i",
           "abc,cd,de->abe", "...ij,...jk->...ik", "...ij,jk->...ik", "bhqd,bhkd->bhqk",
           "bij,bjk->bik#empty_batch"]


@pytest.mark.parametrize("key", DYNAMIC)
def test_compiled_with_dynamic_dims(key):
    xs = _operands(key, np.float32)
    eq = _equation(key)
    signature = [em.TensorSpec([None] * x.ndim, em.float32) for x in xs]
    fixed = {1: lambda a: em.einsum(eq, a), 2: lambda a, b: em.einsum(eq, a, b),
             3: lambda a, b, c: em.einsum(eq, a, b, c)}[len(xs)]
    got = _compiled(fixed, *xs, signature=signature)
    want = np.einsum(eq, *[x.astype(np.float64) for x in xs])
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.int8, np.uint8, np.float16,
                                   em.bfloat16.as_numpy_dtype],
                         ids=["int32", "int64", "int8", "uint8", "float16", "bfloat16"])
@pytest.mark.parametrize("key", ["ij,jk->ik", "ii->i", "ij,ij->", "...ij,jk->...ik"])
def test_every_numeric_dtype_exact_on_small_integers(key, dtype):
    rng = np.random.default_rng(5)
    xs = [rng.integers(0, 3, s).astype(dtype) for s in EQUATIONS[key]]
    eq = _equation(key)
    want = np.einsum(eq, *[x.astype(np.float64) for x in xs])
    eager = em.einsum(eq, *[em.constant(x) for x in xs]).numpy()
    compiled = _compiled(lambda *a: em.einsum(eq, *a), *xs)
    for got in (eager, compiled):
        assert got.dtype == dtype
        np.testing.assert_array_equal(got.astype(np.float64), want)


BAD = [
    ("ij,jk->ik", [(2, 3)], "names 2 operand\\(s\\) but 1 were given"),
    ("ij->ik", [(2, 3)], "output label 'k' is in no input"),
    ("ij->ii", [(2, 3)], "output label 'i' appears more than once"),
    ("ijk->i", [(2, 3)], "operand 0 has rank 2 but its subscripts 'ijk' name 3"),
    ("i->i", [(2, 3)], "operand 0 has rank 2 but its subscripts 'i' name 1"),
    ("i1->i", [(2, 3)], "has '1'; labels are letters"),
    ("......->", [(2, 3)], "more than one '...'"),
    ("i->i->i", [(2,)], "more than one '->'"),
    ("ij,jk->ik", [(2, 3), (4, 5)],
     "label 'j' has size 3 at dim 1 of operand 0 but 4 at dim 0 of operand 1"),
    ("ii->i", [(2, 3)], "label 'i' has size 2 at dim 0 of operand 0 but 3 at dim 1 of operand 0"),
    ("...i,...i->...", [(2, 3), (4, 3)], "do not broadcast \\(2 against 4\\)"),
    ("...i->i", [(2, 3)], "1 '...' dim\\(s\\) but the output has no '...'"),
]


@pytest.mark.parametrize("equation,shapes,match", BAD)
def test_bad_equation_names_it(equation, shapes, match):
    xs = [em.zeros(s) for s in shapes]
    with pytest.raises(ValueError, match=match) as info:
        em.einsum(equation, *xs)
    assert repr(equation) in str(info.value)


def test_bad_equation_while_tracing():
    fn = em.function(lambda x: em.einsum("ij->k", x))
    with pytest.raises(ValueError, match="'ij->k'.*output label 'k'"):
        fn(np.zeros((2, 2), np.float32))


def test_mixed_dtypes_are_rejected():
    with pytest.raises(TypeError, match="operand 1 of 'i,i' is int32"):
        em.einsum("i,i", em.zeros([2]), em.constant([1, 2]))


def test_bool_operands_are_rejected():
    with pytest.raises(TypeError, match="operands of 'i,i' are bool"):
        em.einsum("i,i", em.constant([True]), em.constant([False]))


def test_linalg_einsum_is_einsum():
    assert em.linalg.einsum is em.einsum and em.linalg.tensordot is em.tensordot


TENSORDOT = [
    ((3, 4), (4, 5), 1),
    ((2, 3, 4), (3, 4, 5), 2),
    ((2, 3), (4, 5), 0),
    ((2, 3, 4), (4, 3, 5), [[1, 2], [1, 0]]),
    ((2, 3, 4), (5, 2), [[0], [1]]),
    ((2, 3, 4), (5, 2), [0, 1]),
    ((2, 3), (3, 2), [[-1, 0], [0, -1]]),
]


@pytest.mark.parametrize("sa,sb,axes", TENSORDOT)
def test_tensordot_matches_numpy(sa, sb, axes):
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    want = np.tensordot(a, b, axes)
    np.testing.assert_allclose(em.tensordot(a, b, axes).numpy(), want, rtol=1e-12)
    np.testing.assert_allclose(_compiled(lambda x, y: em.tensordot(x, y, axes), a, b), want,
                               rtol=1e-12)


def test_tensordot_bad_axes():
    with pytest.raises(ValueError, match="axes=3 must be in \\[0, 2\\]"):
        em.tensordot(em.zeros([2, 3]), em.zeros([3, 2]), 3)
    with pytest.raises(ValueError, match="2 axes of a but 1 of b"):
        em.tensordot(em.zeros([2, 3]), em.zeros([3, 2]), [[0, 1], [0]])


@pytest.mark.parametrize("flags,oracle", [
    ({"adjoint_a": True}, lambda a, b: a.T @ b),
    ({"adjoint_b": True}, lambda a, b: a @ b.T),
    ({"adjoint_a": True, "transpose_b": True}, lambda a, b: a.T @ b.T),
    ({"a_is_sparse": True, "b_is_sparse": True}, lambda a, b: a @ b),
])
def test_matmul_adjoint_flags(flags, oracle):
    a = np.arange(9, dtype=np.float32).reshape(3, 3)
    b = np.arange(9, dtype=np.float32).reshape(3, 3)[::-1].copy()
    np.testing.assert_array_equal(em.linalg.matmul(a, b, **flags).numpy(), oracle(a, b))
    np.testing.assert_array_equal(_compiled(lambda x, y: em.matmul(x, y, **flags), a, b),
                                  oracle(a, b))


def test_matmul_transpose_and_adjoint_together_is_an_error():
    with pytest.raises(ValueError, match="only one of transpose_a and adjoint_a"):
        em.matmul(em.zeros([2, 2]), em.zeros([2, 2]), transpose_a=True, adjoint_a=True)
