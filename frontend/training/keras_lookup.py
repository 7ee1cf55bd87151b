"""`em.keras.layers.StringLookup` and `IntegerLookup`: Keras's lookup preprocessing layers.

A lookup layer maps tokens (strings or integers) to indices in a vocabulary laid out as
Keras lays it out: the mask token first (index 0, when `mask_token` is set and
`output_mode="int"`), then `num_oov_indices` out-of-vocabulary indices, then the vocabulary.
With the default `num_oov_indices=1` an unknown token gives 0 and the vocabulary starts at 1.
`invert=True` maps indices back to tokens. The vocabulary is a list or the path of a text
file with one token per line, or is learnt by `adapt(data)` (tokens by decreasing frequency,
ties in decreasing token order, as Keras).

The table lives on the host: the lookup is an `em.py_function`, so the layer runs the same
eagerly, inside an `em.function` and inside `Dataset.map` (string tensors are host-only).
The output has the static shape Keras gives. With `num_oov_indices > 1` unknown tokens are
spread over the OOV indices by CRC-32 of their text (Keras uses farmhash: the bucket of a
given unknown token may differ from Keras's).
"""

from __future__ import annotations

import collections
import os
import zlib

import numpy as np

from ember.dialects.ember import dtypes
from ember.dialects.ember.base import InvalidArgumentError
from ember.frontend.effects import py_function
from ember.frontend.ensure_shape import ensure_shape
from ember.frontend.tensor import Tensor, convert_to_tensor
from ember.frontend.training.layers_core import Layer

_MODES = ("int", "one_hot", "multi_hot", "count")


class _IndexLookup(Layer):
    """The shared machinery of StringLookup and IntegerLookup (Keras's IndexLookup)."""

    _token_kind = "token"

    def __init__(self, max_tokens, num_oov_indices, mask_token, oov_token, vocabulary,
                 invert, output_mode, name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        where = type(self).__name__
        if max_tokens is not None and (not isinstance(max_tokens, int) or max_tokens <= 1):
            raise ValueError(f"{where}: max_tokens must be None or an integer > 1, got "
                             f"{max_tokens!r}")
        if not isinstance(num_oov_indices, int) or num_oov_indices < 0:
            raise ValueError(f"{where}: num_oov_indices must be an integer >= 0, got "
                             f"{num_oov_indices!r}")
        if output_mode not in _MODES:
            raise ValueError(f"{where}: output_mode must be one of {list(_MODES)}, got "
                             f"{output_mode!r}")
        if invert and output_mode != "int":
            raise ValueError(f"{where}: invert=True needs output_mode='int' (indices to "
                             f"tokens), got output_mode={output_mode!r}")
        self.max_tokens, self.num_oov_indices = max_tokens, num_oov_indices
        self.mask_token, self.oov_token = mask_token, oov_token
        self.invert, self.output_mode = bool(invert), output_mode
        self._tokens: list = []
        self._table: dict = {}
        if vocabulary is not None:
            self.set_vocabulary(vocabulary)

    # -- the vocabulary ----------------------------------------------------------------------

    def _key(self, token):
        """The table's key of a token (strings as UTF-8 bytes, integers as int)."""
        raise TypeError(f"{type(self).__name__} subclasses _IndexLookup without defining "
                        "_key(token)")

    def _parse_line(self, line: str):
        return line

    def _mask_in_vocab(self) -> bool:
        return self.mask_token is not None and self.output_mode == "int"

    def _token_start(self) -> int:
        return int(self._mask_in_vocab()) + self.num_oov_indices

    def set_vocabulary(self, vocabulary) -> None:
        """Replaces the vocabulary: a list (or 1-D tensor / array) of tokens, or the path of
        a text file with one token per line. Leading mask / OOV tokens laid out as
        `get_vocabulary()` returns them are accepted and skipped."""
        where = f"{type(self).__name__}.set_vocabulary"
        if isinstance(vocabulary, (str, os.PathLike)) and not isinstance(vocabulary, bytes):
            path = os.fspath(vocabulary)
            if not os.path.isfile(path):
                raise ValueError(f"{where}: the vocabulary file {path!r} does not exist (pass "
                                 "a list of tokens or the path of a file with one per line)")
            with open(path, encoding="utf-8") as f:
                lines = [line.rstrip("\r\n") for line in f]
            while lines and lines[-1] == "":  # blank lines at the end of the file
                lines.pop()
            tokens = [self._parse_line(line) for line in lines]
        else:
            if isinstance(vocabulary, Tensor):
                vocabulary = vocabulary._numpy_array()
            tokens = [self._from_key(self._key(t)) for t in np.asarray(vocabulary,
                                                                       dtype=object).ravel()]
        reserved = self.get_vocabulary()[:self._token_start()]
        if reserved and tokens[:len(reserved)] == reserved:
            tokens = tokens[len(reserved):]
        keys = [self._key(t) for t in tokens]
        seen = collections.Counter(keys)
        repeated = [self._from_key(k) for k, n in seen.items() if n > 1]
        if repeated:
            raise ValueError(f"{where}: the vocabulary must not repeat tokens; repeated: "
                             f"{repeated[:5]}")
        special = {self._key(t) for t in (self.mask_token, self.oov_token) if t is not None}
        clash = [self._from_key(k) for k in keys if k in special]
        if clash:
            raise ValueError(f"{where}: the vocabulary holds the reserved token(s) {clash} "
                             "(mask_token / oov_token) after its start: remove them")
        size = self._token_start() + len(tokens)
        if self.max_tokens is not None and size > self.max_tokens:
            raise ValueError(f"{where}: the vocabulary needs {size} indices (with the mask "
                             f"and OOV ones) but max_tokens={self.max_tokens}")
        start = self._token_start()
        self._tokens = tokens
        self._table = {k: start + i for i, k in enumerate(keys)}

    def _from_key(self, key):
        return key

    def get_vocabulary(self, include_special_tokens: bool = True) -> list:
        """The tokens by index: [mask] + [oov] * num_oov_indices + vocabulary."""
        special = ([self.mask_token] if self._mask_in_vocab() else []) + \
            [self.oov_token] * self.num_oov_indices
        return (special if include_special_tokens else []) + list(self._tokens)

    def vocabulary_size(self) -> int:
        return len(self.get_vocabulary())

    def adapt(self, data, steps=None) -> None:
        """Learns the vocabulary from `data` (a tensor, array, list or em.data.Dataset):
        the tokens by decreasing count, ties in decreasing token order, at most
        `max_tokens` indices in all."""
        counts = collections.Counter()
        for batch in _batches(data, steps, f"{type(self).__name__}.adapt"):
            counts.update(self._key(t) for t in np.asarray(batch, dtype=object).ravel())
        special = {self._key(t) for t in (self.mask_token, self.oov_token) if t is not None}
        ranked = sorted(((n, k) for k, n in counts.items() if k not in special), reverse=True)
        keys = [k for _, k in ranked]
        if self.max_tokens is not None:
            keys = keys[:max(self.max_tokens - self._token_start(), 0)]
        self._tokens, self._table = [], {}
        self.set_vocabulary([self._from_key(k) for k in keys])

    # -- the lookup --------------------------------------------------------------------------

    def _lookup(self, values: np.ndarray) -> np.ndarray:
        """Token array -> index array (int64), on the host."""
        table, n_oov = self._table, self.num_oov_indices
        oov_start = int(self._mask_in_vocab())
        mask = self._key(self.mask_token) if self.mask_token is not None else None
        mask_index = 0 if self._mask_in_vocab() else -1
        out = np.empty(values.size, np.int64)
        for i, token in enumerate(values.ravel().tolist()):
            key = self._key(token)
            index = table.get(key)
            if index is None:
                if mask is not None and key == mask:
                    index = mask_index
                elif n_oov == 0:
                    raise InvalidArgumentError(
                        type(self).__name__, f"the {self._token_kind} {self._from_key(key)!r} "
                        "is not in the vocabulary and num_oov_indices=0; set "
                        "num_oov_indices >= 1 to map unknown tokens to OOV indices")
                elif n_oov == 1:
                    index = oov_start
                else:
                    index = oov_start + zlib.crc32(str(self._from_key(key)).encode()) % n_oov
            out[i] = index
        return out.reshape(values.shape)

    def _inverse(self, values: np.ndarray) -> np.ndarray:
        vocab = self.get_vocabulary()
        flat = [vocab[i] if 0 <= i < len(vocab) else self.oov_token
                for i in values.ravel().tolist()]
        return np.asarray([self._key(t) for t in flat], dtype=self._np_out).reshape(
            values.shape)

    def _encode(self, indices: np.ndarray) -> np.ndarray:
        depth = self.vocabulary_size()
        if self.output_mode == "one_hot":
            if indices.ndim and indices.shape[-1] == 1:
                indices = indices[..., 0]
            out = np.zeros(indices.shape + (depth,), np.float32)
            valid = (indices >= 0) & (indices < depth)
            np.put_along_axis(out, np.where(valid, indices, 0)[..., None],
                              valid[..., None].astype(np.float32), -1)
            return out
        rows = indices.reshape(1, -1) if indices.ndim <= 1 else indices
        out = np.zeros((rows.shape[0], depth), np.float32)
        for r, row in enumerate(rows):
            row = row[(row >= 0) & (row < depth)]
            np.add.at(out[r], row, 1.0)
        if self.output_mode == "multi_hot":
            out = np.minimum(out, 1.0)
        return out[0] if indices.ndim <= 1 else out

    def _out_shape(self, shape: list | None):
        if self.output_mode == "int" or shape is None:
            return shape
        depth = self.vocabulary_size()
        if self.output_mode == "one_hot":
            return (shape[:-1] if shape and shape[-1] == 1 else shape) + [depth]
        return [depth] if len(shape) <= 1 else [shape[0], depth]

    def call(self, inputs):
        where = type(self).__name__
        if self.invert:
            if not inputs.dtype.is_integer:
                raise TypeError(f"{where}(invert=True): inputs must be integer indices, got "
                                f"dtype {inputs.dtype.name}")
            run, out_dtype = self._inverse, self._out_dtype
        else:
            self._check_input(inputs)
            out_dtype = dtypes.int64 if self.output_mode == "int" else dtypes.float32

            def run(values):
                indices = self._lookup(values)
                return indices if self.output_mode == "int" else self._encode(indices)
        shape = inputs.shape.as_list()
        if self.output_mode in ("multi_hot", "count") and shape is not None and len(shape) > 2:
            raise ValueError(f"{where}: output_mode={self.output_mode!r} takes inputs of rank "
                             f"<= 2 (a batch of token lists), got shape {inputs.shape}")
        out = py_function(lambda x: run(x._numpy_array()), [inputs], out_dtype)
        return ensure_shape(out, self._out_shape(shape))

    def get_config(self) -> dict:
        return {"name": self.name, "max_tokens": self.max_tokens,
                "num_oov_indices": self.num_oov_indices, "mask_token": self.mask_token,
                "oov_token": self.oov_token, "invert": self.invert,
                "output_mode": self.output_mode, "vocabulary": list(self._tokens)}


def _batches(data, steps, where: str):
    """The numpy batches of adapt's `data`: one array, or each element of a Dataset."""
    if hasattr(data, "element_spec") and hasattr(data, "__iter__"):
        for i, element in enumerate(data):
            if steps is not None and i >= steps:
                break
            if isinstance(element, tuple):
                raise ValueError(f"{where}: the dataset's elements must be single tensors "
                                 "(map it to the features first), got a tuple")
            yield element._numpy_array()
        return
    if isinstance(data, Tensor):
        yield data._numpy_array()
        return
    try:
        yield convert_to_tensor(data)._numpy_array()
    except (TypeError, ValueError) as error:
        raise TypeError(f"{where}: data must be a tensor, array, list or em.data.Dataset, "
                        f"got {type(data).__name__}: {error}") from None


class StringLookup(_IndexLookup):
    """Maps strings to integer indices through a vocabulary (keras.layers.StringLookup).

    Example:
      >>> layer = em.keras.layers.StringLookup(vocabulary=["a", "b", "c", "d"])
      >>> layer(em.constant([["a", "c", "d"], ["d", "z", "b"]])).numpy().tolist()
      [[1, 3, 4], [4, 0, 2]]
    """

    _token_kind = "string"
    _out_dtype = dtypes.string
    _np_out = object

    def __init__(self, max_tokens=None, num_oov_indices=1, mask_token=None, oov_token="[UNK]",
                 vocabulary=None, invert=False, output_mode="int", encoding="utf-8",
                 name=None, **kwargs):
        if encoding != "utf-8":
            raise ValueError(f"StringLookup: only encoding='utf-8' is supported, got "
                             f"{encoding!r}")
        super().__init__(max_tokens, num_oov_indices, mask_token, oov_token, vocabulary,
                         invert, output_mode, name=name, **kwargs)

    def _key(self, token):
        if isinstance(token, bytes):
            return token
        if isinstance(token, str):
            return token.encode("utf-8")
        raise TypeError(f"StringLookup: tokens must be strings, got {token!r}")

    def _from_key(self, key):
        return key.decode("utf-8")

    def _check_input(self, inputs):
        if not inputs.dtype.is_string:
            raise TypeError(f"StringLookup '{self.name}': inputs must be strings, got dtype "
                            f"{inputs.dtype.name} (use IntegerLookup for integer tokens)")


class IntegerLookup(_IndexLookup):
    """Maps integer tokens to contiguous indices through a vocabulary
    (keras.layers.IntegerLookup); `oov_token` is -1 by default.

    Example:
      >>> layer = em.keras.layers.IntegerLookup(vocabulary=[12, 36, 1138, 42])
      >>> layer(em.constant([[12, 1138, 42], [42, 1000, 36]])).numpy().tolist()
      [[1, 3, 4], [4, 0, 2]]
    """

    _token_kind = "integer"
    _out_dtype = dtypes.int64
    _np_out = np.int64

    def __init__(self, max_tokens=None, num_oov_indices=1, mask_token=None, oov_token=-1,
                 vocabulary=None, vocabulary_dtype="int64", invert=False, output_mode="int",
                 name=None, **kwargs):
        if dtypes.as_dtype(vocabulary_dtype) not in (dtypes.int64, dtypes.int32):
            raise ValueError(f"IntegerLookup: vocabulary_dtype must be int64 or int32, got "
                             f"{vocabulary_dtype!r}")
        super().__init__(max_tokens, num_oov_indices, mask_token, oov_token, vocabulary,
                         invert, output_mode, name=name, **kwargs)

    def _key(self, token):
        if isinstance(token, (bool, np.bool_)) or not isinstance(token, (int, np.integer)):
            raise TypeError(f"IntegerLookup: tokens must be integers, got {token!r}")
        return int(token)

    def _parse_line(self, line: str):
        try:
            return int(line.strip())
        except ValueError:
            raise ValueError(f"IntegerLookup: the vocabulary file has the line {line!r}, "
                             "which is not an integer (one integer token per line)") from None

    def _check_input(self, inputs):
        if not inputs.dtype.is_integer:
            raise TypeError(f"IntegerLookup '{self.name}': inputs must be integers, got "
                            f"dtype {inputs.dtype.name} (use StringLookup for strings)")
