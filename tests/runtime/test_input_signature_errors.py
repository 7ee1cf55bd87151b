"""Parameters an input_signature does not cover (runtime/input_signature.check_defaults), and
specs wider than it."""

import pytest

import ember as em
from ember.errors import InputSignatureError


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


def test_a_variable_default_the_signature_does_not_cover_is_that_variable_only():
    """Another variable holding the same value is not the default (a Variable's `==` is
    elementwise: a true tensor)."""
    default, other = em.Variable(3.0), em.Variable(3.0)
    spec = [em.TensorSpec([], em.float32)]
    f = em.function(lambda x, v=default: x + v, input_signature=spec)
    assert float(f(em.constant(1.0))) == 4.0 and float(f(em.constant(1.0), default)) == 4.0
    with pytest.raises(TypeError, match="does not cover 'v', which may only take its "
                                        "default"):
        f(em.constant(1.0), other)


def test_a_spec_wider_than_the_signature_is_refused_not_narrowed():
    """get_concrete_function (and em.aot's `signature`) with a spec less specific than the
    input_signature's was given the signature's concrete function: a `--signature
    'f32[?,784]'` asking for a dynamic batch silently compiled batch 32. As TensorFlow, a
    spec must be a subtype of the signature's: as specific or more."""
    f = em.function(lambda x: x * 2.0, input_signature=[em.TensorSpec([32, 784])])
    with pytest.raises(InputSignatureError, match="argument `x` has shape \\(None, 784\\), its "
                       "em.TensorSpec shape \\(32, 784\\): dimension 0 is None, the "
                       "signature fixes it to 32"):
        f.get_concrete_function(em.TensorSpec([None, 784]))
    with pytest.raises(InputSignatureError, match="has shape <unknown> \\(rank unknown\\)"):
        f.get_concrete_function(em.TensorSpec(None))
    with pytest.raises(InputSignatureError, match="dimension 0 is None"):
        em.aot.compile(f, ["f32[?,784]"], out_dir="/nonexistent/never-written")
    cf = f.get_concrete_function(em.TensorSpec([32, 784]))
    assert cf.structured_input_signature[0][0].shape.as_list() == [32, 784]
    g = em.function(lambda x: x * 2.0, input_signature=[em.TensorSpec([None, 784])])
    narrower = g.get_concrete_function(em.TensorSpec([8, 784]))  # a subtype: the signature's
    assert narrower.structured_input_signature[0][0].shape.as_list() == [None, 784]


def test_fits_gives_a_bool_for_a_variable_and_a_python_value():
    """`fits` falls back on `==` for a leaf that is no spec: a Variable's is elementwise (a
    tensor), so a Variable is compared as itself."""
    from ember.runtime.input_signature import fits
    v = em.Variable(1.0)
    assert fits(v, 1.0) is False and fits(v, v) is True and fits(1.0, 1.0) is True
