"""Compressed files for em.data's readers and `RecordWriter`, as tf.data's `compression_type`:
None or "" (none), "GZIP" (a gzip file) or "ZLIB" (one raw zlib stream).

Readers get a binary file object to read and iterate by lines; a damaged or cut-short
stream raises one of `STREAM_ERRORS`, which the readers turn into `DataLossError`.
"""

import gzip
import io
import zlib

KINDS = ("", "GZIP", "ZLIB")
STREAM_ERRORS = (EOFError, zlib.error, gzip.BadGzipFile)
_CHUNK = 1 << 16


def check_kind(kind, where: str) -> str:
    kind = "" if kind is None else kind
    if kind not in KINDS:
        raise ValueError(f"{where}: compression_type must be None, '', 'GZIP' or 'ZLIB', got "
                         f"{kind!r}")
    return kind


def open_for_reading(path: str, kind: str):
    if kind == "GZIP":
        return gzip.open(path, "rb")
    raw = open(path, "rb")
    return io.BufferedReader(_ZlibReader(raw)) if kind == "ZLIB" else raw


def open_for_writing(path: str, kind: str):
    if kind == "GZIP":
        return gzip.open(path, "wb")
    raw = open(path, "wb")
    return _ZlibWriter(raw) if kind == "ZLIB" else raw


class _ZlibReader(io.RawIOBase):
    """The inflated bytes of a zlib stream; zlib.error if it ends before its end marker."""

    def __init__(self, raw):
        self._raw = raw
        self._inflate = zlib.decompressobj()
        self._pending = b""

    def readable(self):
        return True

    def readinto(self, buffer):
        while not self._pending and not self._inflate.eof:
            chunk = self._raw.read(_CHUNK)
            if not chunk:
                raise zlib.error("the zlib stream ends before its end marker")
            self._pending = self._inflate.decompress(chunk)
        n = min(len(buffer), len(self._pending))
        buffer[:n] = self._pending[:n]
        self._pending = self._pending[n:]
        return n

    def close(self):
        self._raw.close()
        super().close()


class _ZlibWriter(io.RawIOBase):
    """Deflates what is written into one zlib stream, finished by `close()`."""

    def __init__(self, raw):
        self._raw = raw
        self._deflate = zlib.compressobj()

    def writable(self):
        return True

    def write(self, data):
        self._raw.write(self._deflate.compress(bytes(data)))
        return len(data)

    def flush(self):
        if not self._raw.closed:
            self._raw.flush()

    def close(self):
        if not self.closed:
            self._raw.write(self._deflate.flush())
            self._raw.close()
        super().close()
