"""frontend/variables.py: an em.Variable's `==` and `!=` are elementwise, as a Tensor's (as
tf.Variable's with TensorFlow 2's Tensor equality), eagerly and inside em.function; a
variable cannot be hashed, and `v.ref()` keys dicts and sets instead."""

import numpy as np
import pytest

import ember as em


def _same(got, want):
    """`got` (a variable's comparison) is what the tensor comparison `want` gave: the same
    Python bool, or a tensor of the same dtype, shape and values."""
    if isinstance(want, bool):
        assert got is want
        return
    assert isinstance(got, em.Tensor) and got.dtype is want.dtype is em.bool
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert got.shape == want.shape


OTHERS = {
    "scalar": 3,
    "equal_scalar": 1,
    "row": [1, 5, 3],
    "broadcast_column": [[1], [2]],
    "numpy": np.array([3, 2, 1], np.int32),
    "tensor": em.constant([1, 2, 4]),
    "none": None,
    "object": object(),
    "string": "abc",
    "other_dtype": 1.5,  # an int32 variable and a float: not comparable, as a Tensor's
    "unbroadcastable": [1, 2],
}


@pytest.mark.parametrize("op", ["==", "!="])
@pytest.mark.parametrize("name", sorted(OTHERS))
def test_eager_comparison_is_the_tensor_comparison(name, op):
    v = em.Variable([1, 2, 3])
    other = OTHERS[name]
    compare = (lambda a, b: a == b) if op == "==" else (lambda a, b: a != b)
    _same(compare(v, other), compare(v.read_value(), other))


def test_eager_scalar_compare_with_a_number():
    v = em.Variable(3)
    assert isinstance(v == 3, em.Tensor) and bool(v == 3) and not bool(v != 3)
    assert bool(3 == v) and not bool(v == 4)  # reflected: int.__eq__ defers to the variable


def test_two_variables_compare_by_value_not_identity():
    v, w = em.Variable([1.0, 2.0]), em.Variable([1.0, 5.0])
    _same(v == w, em.constant([True, False]))
    _same(v != w, em.constant([False, True]))
    _same(v == v, em.constant([True, True]))
    same_values = em.Variable([1.0, 2.0])
    _same(v != same_values, em.constant([False, False]))


def test_broadcasting_against_a_variable():
    v = em.Variable([[1, 2, 3]])
    w = em.Variable([[1], [3]])
    _same(v == w, em.constant([[True, False, False], [False, False, True]]))


@pytest.mark.parametrize("jit_compile", [False, True])
def test_comparison_inside_a_function_is_read_when_it_runs(jit_compile):
    v, w = em.Variable([1, 2, 3]), em.Variable([1, 0, 3])

    @em.function(jit_compile=jit_compile)
    def compare(x):
        return v == x, v != w, v == None, v != object()  # noqa: E711

    eq, ne, none, obj = compare(em.constant([1, 1, 1]))
    _same(eq, em.constant([True, False, False]))
    _same(ne, em.constant([False, True, False]))
    assert none is False or not bool(none)  # a Python False, returned as a tensor
    assert obj is True or bool(obj)
    w.assign([1, 2, 0])  # the same trace sees the new value
    _, ne, _, _ = compare(em.constant([1, 1, 1]))
    _same(ne, em.constant([False, False, True]))
    assert compare.experimental_get_tracing_count() == 1


def test_a_variable_cannot_be_hashed():
    v = em.Variable(1.0, name="weights")
    with pytest.raises(TypeError, match=r"Variable is unhashable: its `==` is elementwise\. "
                                        r"Instead, use variable\.ref\(\) as the key "
                                        r"\(Variable: <ember\.Variable 'weights:0'"):
        hash(v)
    with pytest.raises(TypeError, match="unhashable"):
        {v: 1}
    with pytest.raises(TypeError, match="unhashable"):
        {v}


def test_refs_key_dicts_and_sets_by_identity():
    a, b = em.Variable(1.0), em.Variable(1.0)
    table = {a.ref(): "a", b.ref(): "b"}
    assert table[a.ref()] == "a" and table[b.ref()] == "b"
    assert a.ref() == a.experimental_ref() and a.ref() != b.ref()
    assert a.ref().deref() is a
    assert len({a.ref(), a.ref(), b.ref()}) == 2
    assert a.ref() != em.constant(1.0).ref()
    assert "Reference wrapping <ember.Variable" in repr(a.ref())


def test_identity_containers_hold_variables_weakly():
    import gc
    from ember.frontend.object_identity import WeakIdentityKeyDictionary, WeakIdentitySet
    table, members = WeakIdentityKeyDictionary(), WeakIdentitySet()
    a, b = em.Variable(1.0), em.Variable(1.0)  # equal values: still two keys
    table[a], table[b] = "a", "b"
    members.add(a)
    members.add(a)
    assert table.get(a) == "a" and table.get(b) == "b" and len(table) == 2
    assert a in members and b not in members and len(members) == 1
    assert table.setdefault(a, "other") == "a"
    del a
    gc.collect()
    assert [value for _, value in table.items()] == ["b"] and len(members) == 0
