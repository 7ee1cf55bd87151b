"""em.keras.layers' preprocessing layers against the Keras documentation's examples
(StringLookup, IntegerLookup, Normalization, Rescaling), eagerly, inside em.function and
inside Dataset.map, and their errors."""

import warnings

import numpy as np
import pytest

import ember as em

VOCAB = ["a", "b", "c", "d"]
DATA = [["a", "c", "d"], ["d", "z", "b"]]


def _tokens(t):
    return [[s.decode() for s in row] for row in t.numpy().tolist()]


def test_keras_layers_reexport_the_em_layers():
    assert em.keras.layers.Dense is em.layers.Dense
    assert em.keras.layers.Conv2D is em.layers.Conv2D
    assert em.keras.Sequential is not em.Sequential  # with the training API
    assert issubclass(em.keras.Sequential, em.Sequential)


def test_string_lookup_with_a_known_vocabulary():
    layer = em.keras.layers.StringLookup(vocabulary=VOCAB)
    assert layer(em.constant(DATA)).numpy().tolist() == [[1, 3, 4], [4, 0, 2]]
    assert layer(em.constant(DATA)).dtype == em.int64
    assert layer.get_vocabulary() == ["[UNK]", "a", "b", "c", "d"]
    assert layer.vocabulary_size() == 5


def test_string_lookup_adapt():
    layer = em.keras.layers.StringLookup()
    layer.adapt(em.constant(DATA))
    assert layer.get_vocabulary() == ["[UNK]", "d", "z", "c", "b", "a"]
    assert layer(em.constant(DATA)).numpy().tolist() == [[5, 3, 1], [1, 2, 4]]
    layer = em.keras.layers.StringLookup(max_tokens=3)
    layer.adapt(em.data.Dataset.from_tensor_slices(["x", "y", "y", "z", "z", "z"]).batch(2))
    assert layer.get_vocabulary() == ["[UNK]", "z", "y"]


def test_string_lookup_with_several_oov_indices():
    layer = em.keras.layers.StringLookup(vocabulary=VOCAB, num_oov_indices=2)
    out = layer(em.constant([["a", "c", "d"], ["m", "z", "b"]])).numpy().tolist()
    assert out[0] == [2, 4, 5] and out[1][2] == 3 and {out[1][0], out[1][1]} <= {0, 1}
    again = layer(em.constant(["m", "z"])).numpy().tolist()
    assert again == out[1][:2]  # an unknown token always lands on the same OOV index


def test_string_lookup_output_modes():
    data = [["a", "c", "d", "d"], ["d", "z", "b", "z"]]
    one_hot = em.keras.layers.StringLookup(vocabulary=VOCAB, output_mode="one_hot")
    assert one_hot(em.constant(["a", "b", "c", "d", "z"])).numpy().tolist() == \
        np.eye(5)[[1, 2, 3, 4, 0]].tolist()
    multi = em.keras.layers.StringLookup(vocabulary=VOCAB, output_mode="multi_hot")
    assert multi(em.constant(data)).numpy().tolist() == [[0, 1, 0, 1, 1], [1, 0, 1, 0, 1]]
    count = em.keras.layers.StringLookup(vocabulary=VOCAB, output_mode="count")
    out = count(em.constant(data))
    assert out.numpy().tolist() == [[0, 1, 0, 1, 2], [2, 0, 1, 0, 1]]
    assert out.dtype == em.float32
    assert multi(em.constant(["a", "a", "b"])).numpy().tolist() == [0, 1, 1, 0, 0]


def test_string_lookup_invert_and_mask():
    inverse = em.keras.layers.StringLookup(vocabulary=VOCAB, invert=True)
    out = inverse(em.constant([[1, 3, 4], [4, 0, 2]]))
    assert out.dtype == em.string
    assert _tokens(out) == [["a", "c", "d"], ["d", "[UNK]", "b"]]
    masked = em.keras.layers.StringLookup(vocabulary=VOCAB, mask_token="")
    assert masked.get_vocabulary() == ["", "[UNK]", "a", "b", "c", "d"]
    assert masked(em.constant([["a", "c", "d"], ["d", "z", "b"]])).numpy().tolist() == \
        [[2, 4, 5], [5, 1, 3]]
    assert masked(em.constant(["", "a"])).numpy().tolist() == [0, 2]
    # in other modes the mask token is not in the vocabulary and is dropped
    hot = em.keras.layers.StringLookup(vocabulary=VOCAB, mask_token="",
                                       output_mode="multi_hot")
    assert hot(em.constant(["", "a"])).numpy().tolist() == [0, 1, 0, 0, 0]
    # the vocabulary as get_vocabulary() gives it round-trips
    again = em.keras.layers.StringLookup(vocabulary=masked.get_vocabulary(), mask_token="")
    assert again.get_vocabulary() == masked.get_vocabulary()


def test_string_lookup_from_a_vocabulary_file(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_text("a\nb\nc\nd\n")
    layer = em.keras.layers.StringLookup(vocabulary=str(path))
    assert layer(em.constant(DATA)).numpy().tolist() == [[1, 3, 4], [4, 0, 2]]


def test_integer_lookup_documentation_examples(tmp_path):
    data = em.constant([[12, 1138, 42], [42, 1000, 36]])
    layer = em.keras.layers.IntegerLookup(vocabulary=[12, 36, 1138, 42])
    assert layer(data).numpy().tolist() == [[1, 3, 4], [4, 0, 2]]
    assert layer.get_vocabulary() == [-1, 12, 36, 1138, 42]
    adapted = em.keras.layers.IntegerLookup()
    adapted.adapt(data)
    assert adapted.get_vocabulary() == [-1, 42, 1138, 1000, 36, 12]
    inverse = em.keras.layers.IntegerLookup(vocabulary=[12, 36, 1138, 42], invert=True)
    assert inverse(em.constant([[1, 3, 4], [4, 0, 2]])).numpy().tolist() == \
        [[12, 1138, 42], [42, -1, 36]]
    masked = em.keras.layers.IntegerLookup(vocabulary=[12, 36, 1138, 42], mask_token=0)
    assert masked(em.constant([[12, 1138, 42], [42, 1000, 36]])).numpy().tolist() == \
        [[2, 4, 5], [5, 1, 3]]
    path = tmp_path / "ints.txt"
    path.write_text("12\n36\n1138\n42\n")
    assert em.keras.layers.IntegerLookup(vocabulary=str(path))(data).numpy().tolist() == \
        [[1, 3, 4], [4, 0, 2]]


def test_lookups_agree_eagerly_compiled_and_in_dataset_map():
    strings = em.keras.layers.StringLookup(vocabulary=VOCAB)
    ints = em.keras.layers.IntegerLookup(vocabulary=[12, 36, 1138, 42], output_mode="one_hot")
    x = em.constant([12, 7, 42, 36])

    @em.function
    def both(s, i):
        return strings(s), ints(i)

    with pytest.warns(em.InterpreterFallbackWarning, match="string tensors"):
        s_out, i_out = both(em.constant(["a", "e", "c", "d"]), x)  # strings: host only
    assert s_out.numpy().tolist() == [1, 0, 3, 4]
    assert i_out.shape == (4, 5)
    assert np.array_equal(i_out.numpy(), ints(x).numpy())
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # integers compile (no fallback to the interpreter)
        assert np.array_equal(em.function(lambda i: ints(i))(x).numpy(), ints(x).numpy())
    dataset = em.data.Dataset.from_tensor_slices(["a", "c", "e"]).repeat().batch(2)
    mapped = dataset.map(strings)
    assert mapped.element_spec == em.TensorSpec([None], em.int64)
    assert [b.numpy().tolist() for b in mapped.take(3)] == [[1, 3], [0, 1], [3, 0]]


def test_lookup_errors():
    with pytest.raises(TypeError, match="StringLookup 'string_lookup.*': inputs must be "
                                        "strings, got dtype int32"):
        em.keras.layers.StringLookup(vocabulary=VOCAB, name="string_lookup_x")(
            em.constant([1]))
    with pytest.raises(ValueError, match="must not repeat tokens; repeated: \\['a'\\]"):
        em.keras.layers.StringLookup(vocabulary=["a", "b", "a"])
    with pytest.raises(ValueError, match="the vocabulary file '/nonexistent/v.txt' does not"):
        em.keras.layers.StringLookup(vocabulary="/nonexistent/v.txt")
    with pytest.raises(ValueError, match="invert=True needs output_mode='int'"):
        em.keras.layers.StringLookup(invert=True, output_mode="one_hot")
    with pytest.raises(ValueError, match="output_mode must be one of"):
        em.keras.layers.IntegerLookup(output_mode="tf-idf")
    with pytest.raises(ValueError, match="needs 6 indices .* but max_tokens=4"):
        em.keras.layers.IntegerLookup(vocabulary=[1, 2, 3, 4, 5], max_tokens=4)
    strict = em.keras.layers.StringLookup(vocabulary=VOCAB, num_oov_indices=0)
    assert strict(em.constant(["a", "b"])).numpy().tolist() == [0, 1]
    with pytest.raises(em.InvalidArgumentError, match="the string 'z' is not in the "
                                                      "vocabulary and num_oov_indices=0"):
        strict(em.constant(["z"]))
    with pytest.raises(ValueError, match="takes inputs of rank <= 2"):
        em.keras.layers.IntegerLookup(vocabulary=[1], output_mode="count")(
            em.constant([[[1]]]))


def test_normalization_documentation_examples():
    layer = em.keras.layers.Normalization(axis=None)
    layer.adapt(np.array([1.0, 2.0, 3.0, 4.0, 5.0]))
    np.testing.assert_allclose(layer(np.array([1.0, 2.0, 3.0])).numpy(),
                               [-1.4142135, -0.70710677, 0.0], rtol=1e-6)
    layer = em.keras.layers.Normalization(axis=-1)
    layer.adapt(np.array([[0.0, 7.0, 4.0], [2.0, 9.0, 6.0], [0.0, 7.0, 4.0], [2.0, 9.0, 6.0]]))
    np.testing.assert_allclose(layer(np.array([[0.0, 7.0, 4.0]])).numpy(), [[-1.0, -1.0, -1.0]])
    assert [v.trainable for v in layer.variables] == [False, False]
    given = em.keras.layers.Normalization(mean=3.0, variance=2.0)
    np.testing.assert_allclose(given(np.array([[1.0], [2.0], [3.0]])).numpy(),
                               [[-1.4142135], [-0.70710677], [0.0]], rtol=1e-6)
    inverse = em.keras.layers.Normalization(axis=None, invert=True)
    inverse.adapt(np.array([1.0, 2.0, 3.0, 4.0, 5.0]))
    np.testing.assert_allclose(inverse(np.array([1.0, 2.0, 3.0])).numpy(),
                               3.0 + np.sqrt(2.0) * np.array([1.0, 2.0, 3.0]), rtol=1e-6)
    compiled = em.function(lambda x: layer(x))
    x = np.array([[1.0, 8.0, 5.0], [3.0, 3.0, 3.0]], np.float32)
    np.testing.assert_allclose(compiled(x).numpy(), layer(x).numpy(), rtol=1e-6)


def test_normalization_adapts_on_a_dataset_and_maps_it():
    data = np.arange(12, dtype=np.float32).reshape(6, 2)
    layer = em.keras.layers.Normalization()
    layer.adapt(em.data.Dataset.from_tensor_slices(data).batch(4))
    np.testing.assert_allclose(layer.mean.numpy(), [data.mean(0)])
    out = np.concatenate([b.numpy() for b in
                          em.data.Dataset.from_tensor_slices(data).batch(4).map(layer)])
    np.testing.assert_allclose(out, (data - data.mean(0)) / data.std(0), rtol=1e-5)


def test_normalization_and_rescaling_errors():
    with pytest.raises(ValueError, match="no mean and variance yet: pass them to the "
                                         "constructor or call adapt"):
        em.keras.layers.Normalization()(em.ones([2, 2]))
    with pytest.raises(ValueError, match="pass both mean and variance, or neither"):
        em.keras.layers.Normalization(mean=1.0)
    with pytest.raises(TypeError, match="Rescaling: scale must be a number"):
        em.keras.layers.Rescaling("x")


def test_rescaling():
    out = em.keras.layers.Rescaling(1 / 255)(em.constant([[0, 51, 255]], em.uint8))
    np.testing.assert_allclose(out.numpy(), [[0.0, 0.2, 1.0]], rtol=1e-6)
    assert out.dtype == em.float32
    shifted = em.keras.layers.Rescaling(1 / 127.5, offset=-1)
    np.testing.assert_allclose(em.function(lambda x: shifted(x))(
        em.constant([0.0, 127.5, 255.0])).numpy(), [-1.0, 0.0, 1.0])
