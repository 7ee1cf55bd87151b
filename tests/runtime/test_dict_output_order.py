"""Dicts come back in their own key order, as tf.nest's `sequence_like` rebuilds them (it
flattens in sorted-key order but packs in the template's order): a function returning
`{'b': x, 'a': y}` gives keys b, a — compiled, concrete, nested, and through control flow."""

import collections

import numpy as np

import ember as em


def _unsorted(x):
    return {"b": x, "a": x + 1.0, "c": {"z": x * 2.0, "y": x}}


def _keys(d):
    return [list(d), list(d["c"])]


def test_function_and_concrete_function_keep_the_returned_key_order():
    f = em.function(_unsorted)
    assert _keys(f(em.constant(1.0))) == [["b", "a", "c"], ["z", "y"]]
    cf = f.get_concrete_function(em.TensorSpec([], em.float32))
    assert _keys(cf.structured_outputs) == [["b", "a", "c"], ["z", "y"]]
    out = cf(em.constant(2.0))
    assert _keys(out) == [["b", "a", "c"], ["z", "y"]]
    assert float(out["a"]) == 3.0 and float(out["c"]["z"]) == 4.0


def test_run_functions_eagerly_agrees_with_compiled():
    em.config.run_functions_eagerly(True)
    try:
        eager = em.function(_unsorted)(em.constant(1.0))
    finally:
        em.config.run_functions_eagerly(False)
    assert _keys(eager) == [["b", "a", "c"], ["z", "y"]]


def test_nest_packs_in_the_templates_order_and_type():
    s = {"b": 1, "a": 2}
    assert em.nest.flatten(s) == [2, 1]
    packed = em.nest.pack_sequence_as(s, [20, 10])
    assert list(packed.items()) == [("b", 10), ("a", 20)]
    assert list(em.nest.map_structure(lambda v: v * 3, s).items()) == [("b", 3), ("a", 6)]
    ordered = em.nest.pack_sequence_as(collections.OrderedDict(s), [20, 10])
    assert type(ordered) is collections.OrderedDict and list(ordered) == ["b", "a"]
    default = em.nest.pack_sequence_as(collections.defaultdict(list, s), [20, 10])
    assert type(default) is collections.defaultdict and default.default_factory is list
    assert list(default.items()) == [("b", 10), ("a", 20)]


def _body(i, d):
    return i + 1, {"b": d["b"] + 1.0, "a": d["a"]}


def _control_flow(x):
    branch = em.cond(x > 0, lambda: {"b": x, "a": -x}, lambda: {"b": -x, "a": x})
    _, loop = em.while_loop(lambda i, d: i < 3, _body, (em.constant(0), {"b": x, "a": x}))
    return {"cond": branch, "loop": loop}


def test_cond_and_while_loop_keep_the_key_order_eager_and_compiled():
    for out in (_control_flow(em.constant(1.0)),
                em.function(_control_flow)(em.constant(1.0))):
        assert list(out) == ["cond", "loop"]
        assert list(out["cond"]) == ["b", "a"] and list(out["loop"]) == ["b", "a"]
        np.testing.assert_allclose([float(out["loop"]["b"]), float(out["loop"]["a"])],
                                   [4.0, 1.0])


def test_dataset_elements_keep_the_key_order():
    ds = em.data.Dataset.from_tensor_slices({"b": [1, 2], "a": [3, 4]})
    assert list(ds.element_spec) == ["b", "a"]
    assert list(next(iter(ds))) == ["b", "a"]
    mapped = ds.map(lambda d: {"z": d["a"], "y": d["b"]}).batch(2)
    assert list(mapped.element_spec) == ["z", "y"] and list(next(iter(mapped))) == ["z", "y"]
