"""File readers: `em.data.TextLineDataset`, and a binary record format with checksums
(`em.data.RecordWriter` writes it, `em.data.RecordDataset` reads it).

The record format is TFRecord's layout with zlib's CRC-32 (unmasked) instead of TFRecord's
masked CRC-32C. A file is a sequence of records, each:

    uint64 length          little-endian, the number of data bytes
    uint32 crc32(length)   zlib.crc32 of those 8 bytes
    bytes  data[length]
    uint32 crc32(data)     zlib.crc32 of the data

Reading checks both checksums and the sizes: a damaged or cut-short file raises
`em.errors.DataLossError` naming the file and the byte offset of the bad record, so a reader
never yields wrong data. Both readers take file names as a string, a list of strings, a
string tensor or a dataset of string scalars (e.g. `Dataset.list_files`), read the files in
order and open each only when the pass reaches it; `compression_type` ("GZIP", "ZLIB") reads
compressed files (compression.py), a damaged stream being a DataLossError too. (Offsets are
then in the uncompressed data.) The file names are the reader's input
dataset (`_inputs()`), which is what `AutoShardPolicy.FILE` shards.
"""

import os
import struct
import zlib

import numpy as np

from ember.dialects.ember import dtypes
from ember.frontend.shape import TensorSpec
from ember.frontend.tensor import Tensor, constant

from ember.runtime.data import compression
from ember.runtime.data.dataset import Dataset
from ember.runtime.data.errors import DataLossError, NotFoundError
from ember.runtime.data.sources import file_names, string_tensor

_LENGTH = struct.Struct("<Q")
_CRC = struct.Struct("<I")
_HEADER = _LENGTH.size + _CRC.size


def _crc(data: bytes) -> bytes:
    return _CRC.pack(zlib.crc32(data) & 0xFFFFFFFF)


class FileReaderDataset(Dataset):
    """A dataset of string scalars read from the files its input dataset names."""

    _input_attrs = ("_files",)
    _op = "FileReader"

    def __init__(self, filenames, compression_type=None):
        self._compression = compression.check_kind(compression_type,
                                                   f"em.data.{type(self).__name__}")
        where = f"em.data.{type(self).__name__}: filenames"
        if isinstance(filenames, Dataset):
            if filenames.element_spec != TensorSpec([], dtypes.string):
                raise TypeError(f"{where}: a dataset of file names must have string scalar "
                                f"elements, got element_spec {filenames.element_spec}")
            self._files = filenames
        else:
            self._files = Dataset.from_tensor_slices(string_tensor(file_names(filenames,
                                                                              where)))
        self._spec = TensorSpec([], dtypes.string)

    def _iterate(self):
        for name in self._files._iterate():
            path = os.fsdecode(name.numpy())
            try:
                handle = compression.open_for_reading(path, self._compression)
            except FileNotFoundError:
                raise NotFoundError(self._op, f"{path}; No such file or directory") from None
            except IsADirectoryError:
                raise NotFoundError(self._op, f"{path} is a directory, not a file") from None
            with handle:
                records = self._records(handle, path)
                while True:
                    try:
                        record = next(records, None)
                    except compression.STREAM_ERRORS as e:
                        raise DataLossError(self._op, f"{path}: the {self._compression} "
                                            f"stream is damaged or cut short ({e})") from None
                    if record is None:
                        break
                    yield constant(record, dtype=dtypes.string)

    def _records(self, handle, path):  # pragma: no cover - every reader defines it
        raise TypeError(f"{type(self).__name__} is abstract")


class TextLineDataset(FileReaderDataset):
    """The lines of text files, without their line ends (`\\n` or `\\r\\n`), as string
    scalars (`tf.data.TextLineDataset`).

    Example:
      >>> import ember as em, os, tempfile
      >>> path = os.path.join(tempfile.mkdtemp(), "a.txt")
      >>> _ = open(path, "w").write("one\\ntwo\\n")
      >>> list(em.data.TextLineDataset(path).as_numpy_iterator())
      [b'one', b'two']
    """

    _op = "TextLineDataset"

    def _records(self, handle, path):
        for line in handle:
            if line.endswith(b"\n"):
                line = line[:-2] if line.endswith(b"\r\n") else line[:-1]
            yield line


class RecordDataset(FileReaderDataset):
    """The records of files written by `em.data.RecordWriter`, as string scalars (the
    format is in this module's docstring); `em.errors.DataLossError` for a damaged file.

    Example:
      >>> import ember as em, os, tempfile
      >>> path = os.path.join(tempfile.mkdtemp(), "r.rec")
      >>> with em.data.RecordWriter(path) as w:
      ...     w.write(b"first"); w.write("second")
      >>> list(em.data.RecordDataset(path).as_numpy_iterator())
      [b'first', b'second']
    """

    _op = "RecordDataset"

    def _records(self, handle, path):
        offset = 0
        while True:
            header = handle.read(_HEADER)
            if not header:
                return
            if len(header) < _HEADER:
                raise self._loss(path, offset, f"the file ends inside its {_HEADER}-byte "
                                 f"header ({len(header)} bytes left)", "truncated")
            length_bytes, length_crc = header[:_LENGTH.size], header[_LENGTH.size:]
            if _crc(length_bytes) != length_crc:
                raise self._loss(path, offset, "the checksum of its length does not match")
            (length,) = _LENGTH.unpack(length_bytes)
            data = handle.read(length)
            footer = handle.read(_CRC.size)
            if len(data) < length or len(footer) < _CRC.size:
                raise self._loss(path, offset, f"the file ends inside its {length}-byte "
                                 "data or checksum", "truncated")
            if _crc(data) != footer:
                raise self._loss(path, offset, "the checksum of its data does not match")
            yield data
            offset += _HEADER + length + _CRC.size

    def _loss(self, path, offset, why, what="corrupted"):
        return DataLossError(self._op, f"{what} record at offset {offset} in {path}: {why} "
                             "(the file is damaged, or was not written by "
                             "em.data.RecordWriter)")


class RecordWriter:
    """Writes records (bytes, str as UTF-8, or string scalar tensors) to a file in the format
    `em.data.RecordDataset` reads (`tf.io.TFRecordWriter`'s interface), compressed by
    `compression_type` ("GZIP", "ZLIB"; read it back with the same): use it as a context
    manager, or call `close()`."""

    def __init__(self, path, compression_type=None):
        kind = compression.check_kind(compression_type, "em.data.RecordWriter")
        self._path = file_names(path, "em.data.RecordWriter: path")
        if len(self._path) != 1:
            raise TypeError(f"em.data.RecordWriter: path must be one file name, got {path!r}")
        self._path = self._path[0]
        self._file = compression.open_for_writing(self._path, kind)

    def write(self, record) -> None:
        """Appends one record."""
        if isinstance(record, Tensor) and record.dtype.is_string and record.shape.rank == 0:
            record = record.numpy()
        if isinstance(record, str):
            record = record.encode()
        if not isinstance(record, (bytes, bytearray, memoryview)):
            raise TypeError(f"em.data.RecordWriter.write: a record must be bytes, str or a "
                            f"string scalar tensor, got {type(record).__name__} {record!r}")
        if self._file.closed:
            raise ValueError(f"em.data.RecordWriter: {self._path} is closed")
        record = bytes(record)
        length = _LENGTH.pack(len(record))
        self._file.write(length + _crc(length) + record + _crc(record))

    def flush(self) -> None:
        self._file.flush()

    def close(self) -> None:
        self._file.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
