"""An input_signature covering `*args` (as tf.function's): the entries past the positional
parameters are the `*args` values, whose count it then fixes (runtime/input_signature.py
per_parameter). It was refused as "takes 0 positional parameters"."""

import numpy as np
import pytest

import ember as em
from ember.errors import InputSignatureError

S = em.TensorSpec
SIGNATURE = [S([None], em.float32), S([], em.int32), S([2], em.float32)]


def _f(x, *args):
    n, y = args
    return x * em.cast(n, em.float32) + em.reduce_sum(y)


def test_the_entries_past_the_positional_parameters_are_the_varargs():
    f = em.function(_f, input_signature=SIGNATURE)
    want = np.full(3, 2.0 + 2.0, np.float32)
    np.testing.assert_array_equal(f(em.ones([3]), 2, em.ones([2])).numpy(), want)
    # numpy arrays, Python numbers and lists convert to the specs' dtypes, as for x
    got = f(np.ones(3, np.float32), em.constant(3), [1.0, 2.0]).numpy()
    np.testing.assert_array_equal(got, np.full(3, 6.0, np.float32))
    np.testing.assert_array_equal(f(em.ones([5]), 1, em.zeros([2])).numpy(), np.ones(5))
    assert f.experimental_get_tracing_count() == 1  # one trace: the signature's
    assert f.input_signature == tuple(SIGNATURE)  # as given


def test_the_concrete_function_takes_and_shows_them_flat():
    f = em.function(_f, input_signature=SIGNATURE)
    cf = f.get_concrete_function()
    args, kwargs = cf.structured_input_signature
    assert [s.shape.as_list() for s in args] == [[None], [], [2]] and kwargs == {}
    assert [s.dtype for s in args] == [em.float32, em.int32, em.float32]
    np.testing.assert_array_equal(cf(em.ones([4]), em.constant(1), em.ones([2])).numpy(),
                                  np.full(4, 3.0, np.float32))


def test_only_varargs_and_a_method():
    g = em.function(lambda *xs: xs[0] - xs[1], input_signature=[S([None]), S([None])])
    np.testing.assert_array_equal(g(em.ones([2]), em.ones([2])).numpy(), np.zeros(2))

    class Model:
        @em.function(input_signature=[S([None]), S([None])])
        def diff(self, *xs):
            return xs[0] - xs[1]
    np.testing.assert_array_equal(Model().diff(em.ones([2]), em.zeros([2])).numpy(),
                                  np.ones(2))


@pytest.mark.parametrize("args, message", [
    ((2,), r"it fixes \*args to 2 value\(s\), got 1"),
    ((2, em.ones([2]), 5), r"it fixes \*args to 2 value\(s\), got 3"),
    ((2.5, em.ones([2])), r"argument `args\[0\]` should be a int32 tensor of shape \(\), got "
                          r"2.5 \(it does not convert to int32 without loss\)"),
    ((2, em.ones([3])), r"argument `args\[1\]` has shape \(3,\), its em.TensorSpec shape "
                        r"\(2,\): dimension 0 is 3"),
])
def test_a_call_that_does_not_fit_says_where(args, message):
    f = em.function(_f, input_signature=SIGNATURE)
    with pytest.raises(InputSignatureError, match=message) as info:
        f(em.ones([3]), *args)
    listing = str(info.value).split("input_signature: (", 1)[1]
    assert listing.count("TensorSpec(") == 3  # the signature as given, flat


def test_more_entries_than_parameters_without_varargs_is_refused():
    with pytest.raises(TypeError, match="has 2 entries but the function takes 1 positional "
                                        r"parameters \(and no \*args\)"):
        em.function(lambda x: x, input_signature=[S([1]), S([1])])
