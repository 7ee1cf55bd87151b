"""Parameters an input_signature does not cover (runtime/input_signature.check_defaults)."""

import pytest

import ember as em


def test_a_parameter_the_signature_does_not_cover_takes_only_its_default():
    """As tf.function: another value for it, or no default to take, is a TypeError (it was
    accepted, and traces were keyed on its value)."""
    spec = [em.TensorSpec([], em.float32)]
    f = em.function(lambda x, flag=False: x * 2.0 if flag else x, input_signature=spec)
    assert float(f(em.constant(1.0))) == 1.0 and float(f(em.constant(1.0), False)) == 1.0
    with pytest.raises(TypeError, match="does not cover 'flag', which may only take its "
                                        "default False"):
        f(em.constant(1.0), True)
    g = em.function(lambda x, flag: x, input_signature=spec)
    with pytest.raises(TypeError, match="no entry for parameter 'flag', which has no default"):
        g(em.constant(1.0), True)
    assert f.experimental_get_tracing_count() == 1
