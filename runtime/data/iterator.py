"""The iterator of an `em.data.Dataset` (`iter(ds)`), and its optional values."""

from ember.dialects.ember.base import InvalidArgumentError, OpError
from ember.dialects.ember import dtypes
from ember.frontend.tensor import constant


class OutOfRangeError(OpError):
    """`Iterator.get_next()` was called after the last element (TensorFlow's
    `tf.errors.OutOfRangeError`)."""

    def __init__(self, message: str = "End of sequence"):
        super().__init__("IteratorGetNext", message)


class Iterator:
    """One pass over a dataset: `next(it)` (StopIteration at the end), `it.get_next()`
    (`em.errors.OutOfRangeError` at the end) or `it.get_next_as_optional()`."""

    def __init__(self, dataset):
        self._dataset = dataset
        self._elements = dataset._iterate()

    @property
    def element_spec(self):
        return self._dataset.element_spec

    def __iter__(self):
        return self

    def __next__(self):
        return next(self._elements)

    def get_next(self):
        """The next element; `em.errors.OutOfRangeError` after the last one."""
        try:
            return next(self._elements)
        except StopIteration:
            raise OutOfRangeError() from None

    def get_next_as_optional(self):
        """The next element as an `Optional` (empty after the last one)."""
        try:
            return Optional(next(self._elements), self._dataset)
        except StopIteration:
            return Optional(None, self._dataset, empty=True)

    def __repr__(self):
        return f"<em.data.Iterator element_spec={self.element_spec}>"

    # em.function: traced by element_spec, passed as an int64 handle; the function pulls
    # from this iterator, which keeps its position across calls (runtime/data/staged.py)
    __ember_kind__ = "Iterator"

    def __tracing_type__(self, context):
        from ember.runtime.data.staged import trace_type
        return trace_type(self, "iterator")

    def __ember_components__(self):
        from ember.runtime.data.staged import handle_of
        return [handle_of(self)]

    def __ember_rebuild__(self, parts):
        from ember.runtime.data.staged import rebuild
        return rebuild("iterator", self.element_spec, parts)

    def __ember_staged_iter__(self):
        from ember.runtime.data.staged import captured_iterator
        return captured_iterator(self)


class Optional:
    """A value that may be missing (`tf.experimental.Optional`): `has_value()` is a scalar
    bool tensor; `get_value()` the element, or `em.errors.InvalidArgumentError` if empty."""

    def __init__(self, value, dataset, empty: bool = False):
        self._value = value
        self._dataset = dataset
        self._empty = empty

    @property
    def element_spec(self):
        return self._dataset.element_spec

    def has_value(self):
        return constant(not self._empty, dtype=dtypes.bool_)

    def get_value(self):
        if self._empty:
            raise InvalidArgumentError("OptionalGetValue",
                                       "the optional has no value (the iterator is at its "
                                       "end); check has_value() first")
        return self._value
