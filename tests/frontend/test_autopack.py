"""TensorFlow's auto-packing (frontend/autopack.py): a list holding tensors converts by
stacking, the same eagerly and compiled (where the tensors are symbolic), with gradients,
the other elements taking the first tensor's dtype."""

import numpy as np
import pytest

import ember as em

X = np.arange(5, dtype=np.int64)

CASES = {
    "convert_to_tensor": lambda x, i: em.convert_to_tensor([i, i + 1]),
    "nested": lambda x, i: em.convert_to_tensor([[i, 2], (3, i * 2)]),
    "gather": lambda x, i: em.gather(x, [i, 0]),
    "gather_nd": lambda x, i: em.gather_nd(x, [[i]]),
    "scatter update": lambda x, i: em.tensor_scatter_nd_update(x, [[1]], [x[0]]),
    "operator": lambda x, i: x[:2] + [x[0], x[1]],
    "concat": lambda x, i: em.concat([x, [x[-1]]], 0),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_lists_of_tensors_pack_eagerly_and_compiled(name):
    fn = CASES[name]
    args = (em.constant(X), em.constant(2))
    eager = fn(*args)
    compiled = em.function(fn)(*args)
    assert eager.dtype == compiled.dtype
    np.testing.assert_array_equal(compiled.numpy(), eager.numpy())


def test_packing_keeps_gradients_and_takes_the_first_tensors_dtype():
    x = em.constant(2.0)
    with em.GradientTape() as tape:
        tape.watch(x)
        y = em.reduce_sum(em.convert_to_tensor([x * 3.0, 1.0, x]))
    assert float(tape.gradient(y, x).numpy()) == 4.0
    assert em.convert_to_tensor([[em.constant(1), 2], [3, 4]]).dtype == em.int32
    assert em.convert_to_tensor((em.Variable(1.0), 2.0)).numpy().tolist() == [1.0, 2.0]
    for run in (lambda: em.convert_to_tensor([em.constant(1), 2.5]),
                em.function(lambda: em.convert_to_tensor([em.constant(1), 2.5]))):
        with pytest.raises(TypeError, match="cannot convert 2.5 to a tensor of dtype int32"):
            run()
    with pytest.raises(TypeError, match="float32 tensor cannot be used where int32"):
        em.convert_to_tensor([em.constant(1.0), 2], dtype=em.int32)
    with pytest.raises(ValueError, match="one shape"):
        em.convert_to_tensor([em.constant([1, 2]), [3]])
    with pytest.raises(ValueError, match="empty list beside tensors"):
        em.convert_to_tensor([em.constant(1), []])
