"""A Function traced for `None` dims (input_signature, reduce_retracing), called from inside
another trace where the sizes are known: the call forgets them (tensor.cast), compiled, as
TensorFlow's nested calls do. Found by the new-user trial: `func.call` refused the static
operand type, a ParseError from deep inside."""

import warnings

import numpy as np
import pytest

import ember as em


@pytest.fixture(autouse=True)
def _compiled_only():
    with warnings.catch_warnings():
        warnings.simplefilter("error", em.InterpreterFallbackWarning)
        yield


def _inner():
    return em.function(lambda x: x * 2.0,
                       input_signature=[em.TensorSpec([None, 2], em.float32)])


def test_a_signature_with_none_dims_called_from_a_static_trace():
    inner = _inner()
    outer = em.function(lambda x: inner(x) + 1.0)
    x = np.arange(6, dtype=np.float32).reshape(3, 2)
    np.testing.assert_array_equal(outer(x).numpy(), x * 2 + 1)
    assert outer(x).shape == (3, 2)


def test_a_reduce_retracing_callee_called_from_a_static_trace():
    g = em.function(lambda x: x[:, :1] * 3.0, reduce_retracing=True)
    g(np.ones((2, 2), np.float32))
    g(np.ones((5, 2), np.float32))  # now traced for [None, 2]
    h = em.function(lambda x: g(x) - 1.0)
    x = np.arange(8, dtype=np.float32).reshape(4, 2)
    np.testing.assert_array_equal(h(x).numpy(), x[:, :1] * 3 - 1)


def test_dataset_map_of_a_function_with_a_signature():
    ds = em.data.Dataset.from_tensor_slices(np.ones((4, 3, 2), np.float32)).map(_inner())
    got = [e.numpy() for e in ds]
    assert len(got) == 4 and all(np.array_equal(e, np.full((3, 2), 2.0)) for e in got)


def test_gradient_through_a_module_call_with_a_signature_in_a_train_step():
    class Linear(em.Module):
        def __init__(self):
            super().__init__()
            self.w = em.Variable(np.ones((2, 1), np.float32))

        @em.function(input_signature=[em.TensorSpec([None, 2], em.float32)])
        def __call__(self, x):
            return em.matmul(x, self.w)

    model = Linear()

    @em.function
    def step(x):
        with em.GradientTape() as tape:
            loss = em.reduce_sum(model(x) ** 2)
        return loss, tape.gradient(loss, model.w)

    x = np.ones((3, 2), np.float32)
    loss, grad = step(x)
    assert float(loss) == 12.0  # three rows of (1 + 1)^2
    np.testing.assert_array_equal(grad.numpy(), 2 * x.T @ (x @ np.ones((2, 1))))
