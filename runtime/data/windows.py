"""tf.data's `Dataset.window`: a dataset of windows, each window a dataset (per component of
the element: a tuple of datasets for tuple elements), described by `DatasetSpec`; attached
to `Dataset` here (dataset.py holds the others). Read windows with `for`, `flat_map`
(`ds.window(3).flat_map(lambda w: w.batch(3))`) or `interleave`."""

from ember.runtime.data import structure
from ember.runtime.data.combine import _END
from ember.runtime.data.dataset import Dataset, _count
from ember.runtime.data.transforms import _Unary


class DatasetSpec:
    """The spec of a dataset-valued element (tf.data.DatasetSpec): its `element_spec`."""

    def __init__(self, element_spec):
        self.element_spec = element_spec

    def __eq__(self, other):
        return isinstance(other, DatasetSpec) and other.element_spec == self.element_spec

    def __hash__(self):
        return hash(repr(self))

    def __repr__(self):
        return f"DatasetSpec({self.element_spec!r}, TensorShape([]))"


class _Elements(Dataset):
    """A window: the elements it holds, of one component."""

    def __init__(self, elements, spec):
        self._elements = tuple(elements)
        self._spec = spec

    def _iterate(self):
        return iter(self._elements)

    def _cardinality(self):
        return len(self._elements)


def empty_window(spec: DatasetSpec):
    """An empty window of `spec` (what `interleave` and `flat_map` probe their function
    with)."""
    return _Elements((), spec.element_spec)


class WindowDataset(_Unary):
    def __init__(self, source, size, shift, stride, drop_remainder):
        super().__init__(source)
        self._size = _count(size, "Dataset.window: size")
        self._shift = self._size if shift is None else _count(shift, "Dataset.window: shift")
        self._stride = _count(stride, "Dataset.window: stride")
        for what, value in (("size", self._size), ("shift", self._shift),
                            ("stride", self._stride)):
            if value <= 0:
                raise ValueError(f"Dataset.window: {what} must be positive, got {value}")
        self._drop = bool(drop_remainder)

    @property
    def element_spec(self):
        return structure.map_structure(DatasetSpec, self._source.element_spec)

    def _window(self, elements):
        specs = structure.flatten(self._source.element_spec)
        columns = zip(*[structure.flatten(e) for e in elements])
        return structure.pack_as(self._source.element_spec, [
            _Elements(column, spec) for column, spec in zip(columns, specs)])

    def _iterate(self):
        inputs = self._source._iterate()
        buffer, base, start, exhausted = [], 0, 0, False
        span = (self._size - 1) * self._stride + 1
        while True:
            while not exhausted and base + len(buffer) < start + span:
                element = next(inputs, _END)
                exhausted = element is _END
                if not exhausted:
                    buffer.append(element)
            window = buffer[start - base:start - base + span:self._stride]
            if not window or (self._drop and len(window) < self._size):
                return
            yield self._window(window)
            start += self._shift
            if start - base <= len(buffer):
                del buffer[:start - base]
            else:  # windows further apart than they are long: skip the elements between
                for _ in range(start - base - len(buffer)):
                    if next(inputs, _END) is _END:
                        return
                buffer = []
            base = start

    def _cardinality(self):
        n = self._source._cardinality()
        if n < 0:  # infinite or unknown, as the input
            return n
        if self._drop:
            span = (self._size - 1) * self._stride + 1
            return 0 if n < span else (n - span) // self._shift + 1
        return -(-n // self._shift)


def window(self, size, shift=None, stride=1, drop_remainder=False, name=None):
    """Windows of `size` elements (every `stride`-th), starting every `shift` (default
    `size`) elements; the last ones shorter unless `drop_remainder`. Each window is a
    dataset (for a tuple or dict element, a tuple or dict of datasets), as tf.data's.

    Example:
      >>> import ember as em
      >>> for w in em.data.Dataset.range(7).window(3, stride=2):
      ...     print([int(x) for x in w])
      [0, 2, 4]
      [3, 5]
      [6]
      >>> ds = em.data.Dataset.range(7).window(3, shift=1, drop_remainder=True)
      >>> [b.numpy().tolist() for b in ds.flat_map(lambda w: w.batch(3))]
      [[0, 1, 2], [1, 2, 3], [2, 3, 4], [3, 4, 5], [4, 5, 6]]
    """
    del name
    return WindowDataset(self, size, shift, stride, drop_remainder)


Dataset.window = window
