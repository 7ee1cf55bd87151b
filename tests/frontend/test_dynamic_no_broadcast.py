"""Ops that do not broadcast, traced with `?` dims: a run whose sizes differ raises as eager
does (found by a differential fuzz campaign: compiled code stretched a `?` of size 1 and
returned a result where eager raised)."""

import numpy as np
import pytest

import ember as em

C = np.ones((4, 3), np.float32)
CASES = {
    "add_n": lambda x: em.add_n([x, em.constant(C)]),
    "einsum": lambda x: em.einsum("ij,ij->ij", x, em.constant(C)),
    "einsum_contract": lambda x: em.einsum("ij,jk->ik", x, em.ones([3, 2])),
    "tensordot": lambda x: em.tensordot(x, em.ones([3, 2]), 1),
    "bias_add": lambda x: em.nn.bias_add(em.constant(C), em.reshape(x, [-1])),
    "softmax_xent": lambda x: em.nn.softmax_cross_entropy_with_logits(labels=C, logits=x),
    "sigmoid_xent": lambda x: em.nn.sigmoid_cross_entropy_with_logits(labels=C, logits=x),
    "solve": lambda x: em.linalg.solve(em.eye(3) * 2.0, x),
}
BAD = {"add_n": (1, 3), "einsum": (1, 3), "einsum_contract": (2, 1), "tensordot": (2, 1),
       "bias_add": (1, 1), "softmax_xent": (1, 3), "sigmoid_xent": (1, 3), "solve": (1, 1)}
GOOD = {"add_n": (4, 3), "einsum": (4, 3), "einsum_contract": (2, 3), "tensordot": (2, 3),
        "bias_add": (1, 3), "softmax_xent": (4, 3), "sigmoid_xent": (4, 3), "solve": (3, 2)}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_run_time_size_mismatch_raises_as_eager(name):
    fn = CASES[name]
    compiled = em.function(fn, input_signature=[em.TensorSpec([None, None], em.float32)])
    good = np.linspace(-1, 1, int(np.prod(GOOD[name])), dtype=np.float32).reshape(GOOD[name])
    np.testing.assert_allclose(compiled(good).numpy(), fn(em.constant(good)).numpy(),
                               rtol=1e-6)
    bad = np.ones(BAD[name], np.float32)
    with pytest.raises(ValueError):
        fn(em.constant(bad))
    with pytest.raises(ValueError):
        compiled(bad)
