"""`Dataset.list_files`, `em.data.TextLineDataset` and the checksummed record files
(`RecordWriter` / `RecordDataset`): expected values written out by hand."""

import gzip
import os
import struct
import zlib

import numpy as np
import pytest

import ember as em

Dataset = em.data.Dataset


def values(ds):
    return [np.asarray(x).tolist() for x in ds.as_numpy_iterator()]


def write(path, text):
    with open(path, "w", newline="") as f:
        f.write(text)
    return str(path)


def test_list_files_sorted_shuffled_and_errors(tmp_path):
    for name in ("b.txt", "a.txt", "c.txt", "skip.csv"):
        write(tmp_path / name, "")
    pattern = str(tmp_path / "*.txt")
    names = [os.path.basename(p) for p in values(Dataset.list_files(pattern, shuffle=False))]
    assert names == [b"a.txt", b"b.txt", b"c.txt"]
    assert Dataset.list_files(pattern, shuffle=False).element_spec == em.TensorSpec([],
                                                                                    em.string)
    shuffled = Dataset.list_files(pattern, seed=4)
    first = values(shuffled)
    assert sorted(first) == values(Dataset.list_files(pattern, shuffle=False))
    assert values(Dataset.list_files(pattern, seed=4)) == first  # same seed, same order
    both = values(Dataset.list_files([str(tmp_path / "c*"), str(tmp_path / "*.csv")],
                                     shuffle=False))
    assert [os.path.basename(p) for p in both] == [b"c.txt", b"skip.csv"]
    with pytest.raises(em.errors.InvalidArgumentError, match="No files matched pattern: .*zz"):
        Dataset.list_files(str(tmp_path / "*.zz"))
    with pytest.raises(TypeError, match="file_pattern must be a string"):
        Dataset.list_files(3)


def test_text_lines_strip_line_ends_across_files(tmp_path):
    a = write(tmp_path / "a.txt", "one\r\ntwo\n\nthree")
    b = write(tmp_path / "b.txt", "four\n")
    ds = em.data.TextLineDataset([a, b])
    assert values(ds) == [b"one", b"two", b"", b"three", b"four"]
    assert ds.element_spec == em.TensorSpec([], em.string)
    first = next(iter(ds))
    assert first.dtype == em.string and first.shape == []
    from_names = em.data.TextLineDataset(Dataset.list_files(str(tmp_path / "*.txt"),
                                                            shuffle=False))
    assert values(from_names) == values(ds)
    assert values(em.data.TextLineDataset(em.constant([b]))) == [b"four"]
    assert values(em.data.TextLineDataset(write(tmp_path / "empty.txt", ""))) == []


def test_text_lines_missing_file_and_bad_names(tmp_path):
    ds = em.data.TextLineDataset(str(tmp_path / "nope.txt"))  # opened only when iterated
    with pytest.raises(em.errors.NotFoundError, match="nope.txt; No such file"):
        values(ds)
    with pytest.raises(TypeError, match="filenames must be a string"):
        em.data.TextLineDataset(7)
    with pytest.raises(TypeError, match="string scalar elements"):
        em.data.TextLineDataset(Dataset.range(3))


def test_records_round_trip(tmp_path):
    path = str(tmp_path / "r.rec")
    records = [b"first", "sécond", b"", bytes(range(256)), em.constant(b"tensor")]
    with em.data.RecordWriter(path) as writer:
        for record in records:
            writer.write(record)
    got = values(em.data.RecordDataset(path))
    assert got == [b"first", "sécond".encode(), b"", bytes(range(256)), b"tensor"]
    assert em.data.RecordDataset(path).element_spec == em.TensorSpec([], em.string)
    # The documented layout: length, crc32(length), data, crc32(data).
    raw = open(path, "rb").read()
    assert raw[:8] == struct.pack("<Q", 5)
    assert raw[8:12] == struct.pack("<I", zlib.crc32(raw[:8]))
    assert raw[12:17] == b"first" and raw[17:21] == struct.pack("<I", zlib.crc32(b"first"))
    twice = values(em.data.RecordDataset([path, path]))
    assert twice == got + got


def _damage(path, how):
    raw = bytearray(open(path, "rb").read())
    second = 12 + 3 + 4  # the second record starts after b"abc"'s 19 bytes
    if how == "length":
        raw[second] ^= 0x01
    elif how == "length crc":
        raw[second + 9] ^= 0x80
    elif how == "data":
        raw[second + 12] ^= 0x20
    elif how == "data crc":
        raw[-1] ^= 0x01
    elif how == "cut data":
        raw = raw[:-6]
    elif how == "cut header":
        raw = raw[:second + 5]
    open(path, "wb").write(bytes(raw))


@pytest.mark.parametrize("how, match", [
    ("length", "corrupted record at offset 19 in .*the checksum of its length"),
    ("length crc", "corrupted record at offset 19 in .*the checksum of its length"),
    ("data", "corrupted record at offset 19 in .*the checksum of its data"),
    ("data crc", "corrupted record at offset 19 in .*the checksum of its data"),
    ("cut data", "truncated record at offset 19 in .*ends inside its 5-byte data"),
    ("cut header", "truncated record at offset 19 in .*ends inside its 12-byte header"),
])
def test_damaged_records_raise_data_loss_naming_file_and_offset(tmp_path, how, match):
    path = str(tmp_path / "d.rec")
    with em.data.RecordWriter(path) as writer:
        writer.write(b"abc")
        writer.write(b"hello")
    _damage(path, how)
    it = iter(em.data.RecordDataset(path))
    assert next(it).numpy() == b"abc"  # the good record before the damage is read
    with pytest.raises(em.errors.DataLossError, match=match) as info:
        next(it)
    assert path in str(info.value)
    assert isinstance(info.value, em.errors.OpError)


def test_record_writer_errors(tmp_path):
    writer = em.data.RecordWriter(str(tmp_path / "w.rec"))
    with pytest.raises(TypeError, match="must be bytes, str or a string scalar tensor"):
        writer.write(3)
    writer.close()
    with pytest.raises(ValueError, match="is closed"):
        writer.write(b"x")
    with pytest.raises(TypeError, match="one file name"):
        em.data.RecordWriter([str(tmp_path / "a"), str(tmp_path / "b")])


@pytest.mark.parametrize("kind", ["GZIP", "ZLIB"])
def test_compressed_records_and_lines(tmp_path, kind):
    path = str(tmp_path / "r.rec")
    records = [b"x" * 100_000, b"", "zwei"]  # the first spans several read chunks
    with em.data.RecordWriter(path, compression_type=kind) as writer:
        for record in records:
            writer.write(record)
    assert open(path, "rb").read(2) != struct.pack("<Q", 100_000)[:2]  # compressed
    assert values(em.data.RecordDataset(path, compression_type=kind)) == [
        b"x" * 100_000, b"", b"zwei"]
    text = tmp_path / "t.txt"
    data = b"one\ntwo\r\nthree"
    text.write_bytes(gzip.compress(data) if kind == "GZIP" else zlib.compress(data))
    assert values(em.data.TextLineDataset(str(text), compression_type=kind)) == [
        b"one", b"two", b"three"]
    raw = open(path, "rb").read()
    open(path, "wb").write(raw[:len(raw) // 2])
    with pytest.raises(em.errors.DataLossError, match=f"r.rec: the {kind} stream is damaged"):
        values(em.data.RecordDataset(path, compression_type=kind))


def test_unknown_compression_type(tmp_path):
    with pytest.raises(ValueError, match="compression_type must be None, '', 'GZIP' or "
                                         "'ZLIB', got 'LZ4'"):
        em.data.TextLineDataset(str(tmp_path / "a"), compression_type="LZ4")
    with pytest.raises(ValueError, match="compression_type must be"):
        em.data.RecordWriter(str(tmp_path / "a"), compression_type="zip")
