"""Datasets of 0-d (scalar) elements, now that `.numpy()` of one is a numpy scalar or bytes:
the pipeline's own reads keep arrays, so strings keep their exact bytes (trailing NULs
included) and batches keep their dtype."""

import numpy as np

import ember as em

WORDS = [b"a\x00", b"", b"\xc3\xa9b"]


def test_string_scalars_batch_and_unbatch_keep_exact_bytes():
    ds = em.data.Dataset.from_tensor_slices(em.constant(WORDS))
    batch = next(iter(ds.batch(3)))
    assert batch.dtype is em.string and batch.numpy().tolist() == WORDS
    assert [w.numpy() for w in ds.batch(2).unbatch()] == WORDS
    assert list(ds.as_numpy_iterator()) == WORDS
    assert all(type(w) is bytes for w in ds.as_numpy_iterator())


def test_from_generator_of_scalar_tensors_keeps_exact_bytes():
    ds = em.data.Dataset.from_generator(lambda: (em.constant(w) for w in WORDS),
                                        output_signature=em.TensorSpec([], em.string))
    assert [w.numpy() for w in ds] == WORDS


def test_padded_batch_with_a_string_scalar_tensor_as_padding():
    ds = em.data.Dataset.from_generator(lambda: iter([np.array([b"a"], object),
                                                      np.array([b"b", b"c"], object)]),
                                        output_signature=em.TensorSpec([None], em.string))
    batch = next(iter(ds.padded_batch(2, padding_values=em.constant("-"))))
    assert batch.numpy().tolist() == [[b"a", b"-"], [b"b", b"c"]]


def test_padded_batch_keeps_a_padding_value_s_trailing_nul():
    ds = em.data.Dataset.from_tensor_slices(em.constant([["a"], ["b"]]))
    batch = next(iter(ds.padded_batch(2, padded_shapes=[3], padding_values=b"x\x00")))
    assert batch.numpy().tolist() == [[b"a", b"x\x00", b"x\x00"], [b"b", b"x\x00", b"x\x00"]]


def test_record_writer_takes_a_string_scalar_tensor(tmp_path):
    path = str(tmp_path / "r.rec")
    with em.data.RecordWriter(path) as writer:
        for word in WORDS:
            writer.write(em.constant(word))
    assert [r.numpy() for r in em.data.RecordDataset(em.constant(path))] == WORDS


def test_numeric_scalars_and_reduce():
    ds = em.data.Dataset.range(4)
    assert [type(x.numpy()) for x in ds] == [np.int64] * 4
    assert type(ds.reduce(np.int64(0), lambda s, x: s + x).numpy()) is np.int64
    assert next(iter(ds.batch(4))).numpy().tolist() == [0, 1, 2, 3]
