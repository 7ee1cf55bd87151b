"""em.Module finds Variables and submodules by walking attributes, as tf.Module does."""

import pytest

import ember as em


class Leaf(em.Module):
    def __init__(self, name=None):
        super().__init__(name=name)
        self.w = em.Variable(1.0, name="w")
        self.frozen = em.Variable(2.0, name="frozen", trainable=False)


class Tree(em.Module):
    def __init__(self):
        super().__init__()
        self.z_leaf = Leaf("z")
        self.a_list = [em.Variable(3.0, name="l0"), (em.Variable(4.0, name="l1"),)]
        self.m_dict = {"b": em.Variable(5.0, name="db"), "a": em.Variable(6.0, name="da")}
        self.alias = self.a_list[0]  # the same Variable twice: listed once
        self.leaves = [Leaf("x"), Leaf("y")]
        self.number = 7  # not a Variable: ignored


def names(vs):
    return [v.name.split(":")[0] for v in vs]


def test_variables_walk_sorted_attributes_then_submodules():
    t = Tree()
    # own attributes in sorted order (a_list, alias, leaves, m_dict, number, z_leaf), dict
    # entries by key, then each submodule (leaves/0, leaves/1, z_leaf) in discovery order
    assert names(t.variables) == ["l0", "l1", "da", "db", "frozen", "w", "frozen", "w",
                                  "frozen", "w"]
    assert [m.name for m in t.submodules] == ["x", "y", "z"]
    assert len(t.variables) == len({id(v) for v in t.variables})


def test_trainable_variables_leave_out_non_trainable():
    t = Tree()
    assert names(t.trainable_variables) == ["l0", "l1", "da", "db", "w", "w", "w"]
    assert names(t.non_trainable_variables) == ["frozen"] * 3


def test_nested_submodules_and_cycles_are_walked_once():
    outer = em.Module(name="outer")
    inner = Leaf()
    outer.inner = inner
    inner.parent = outer  # a cycle
    outer.again = [inner]
    assert [m.name for m in outer.submodules] == ["leaf"]
    assert names(outer.variables) == ["frozen", "w"]
    assert [p for p, _ in outer._flatten(lambda v: isinstance(v, em.Variable),
                                         with_path=True)][:2] == [
        ("again", 0, "frozen"), ("again", 0, "w")]


def test_default_name_is_snake_case_class_name():
    class MyDense2D(em.Module):
        pass
    assert MyDense2D().name == "my_dense2_d"
    assert em.Module().name == "module"


@pytest.mark.parametrize("bad", ["", "1abc", "a b", 3])
def test_invalid_name_raises(bad):
    with pytest.raises(ValueError, match="not a valid module name"):
        em.Module(name=bad)


def test_missing_super_init_is_explained():
    class NoInit(em.Module):
        def __init__(self):
            self.v = em.Variable(1.0)
    with pytest.raises(AttributeError, match="did not call super"):
        NoInit().name  # noqa: B018


def test_layers_are_modules():
    model = em.Sequential([em.layers.Dense(2), em.layers.Dense(1)])
    assert model.variables == ()  # nothing built yet
    model(em.ones([1, 3]))
    assert isinstance(model.layers[0], em.Module)
    assert len(model.trainable_variables) == 4
    assert model.submodules == tuple(model.layers)


def test_a_built_dense_layer_given_another_feature_size_says_so_as_keras():
    """Found by a new-user trial: the error was the matmul's ("contraction dims differ"),
    naming neither the layer nor the size it expects."""
    layer = em.layers.Dense(2)
    layer(em.ones([2, 3]))
    with pytest.raises(ValueError, match=r"Input 0 of layer 'dense\w*' is incompatible with "
                                         r"the layer: expected axis -1 of input shape to have "
                                         r"value 3, but received input with shape \(2, 4\)"):
        layer(em.ones([2, 4]))


def test_a_dense_layer_traced_with_an_unknown_feature_size_checks_it_when_it_runs():
    """Found by a new-user trial: a second fit with 6 features ran the step traced with
    a `?` feature dim, and failed in the matmul ("contraction dims differ")."""
    layer = em.layers.Dense(2)
    layer(em.ones([2, 3]))
    forward = em.function(layer, input_signature=[em.TensorSpec([None, None], em.float32)])
    assert forward(em.ones([4, 3])).shape == (4, 2)
    with pytest.raises(em.errors.InvalidArgumentError,
                       match=r"Input 0 of layer 'dense\w*' is incompatible with the layer: "
                             r"expected axis -1 of input shape to have value 3"):
        forward(em.ones([4, 5]))
