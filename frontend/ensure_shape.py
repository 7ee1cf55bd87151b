"""`em.ensure_shape`: a tensor's shape checked against an expected one and its static shape
refined to it (tf.ensure_shape), for results whose shape tracing cannot know
(`em.py_function`'s, a dataset element read from a file).

A composition of existing ops, no new op: the check is `em.debugging.assert_true` over
`em.shape(x)`, padded with -1 to one more than the expected rank (so a tensor of another
rank compares safely); the refinement is a reshape to the expected dims, the unknown ones
taken from that shape. Eagerly (and where the traced shape already proves it) the check is
done at once and `x` is returned as it is.
"""

from ember.dialects.ember.base import InvalidArgumentError
from ember.frontend.shape import TensorShape
from ember.frontend.user_code import user_located


def _merged(have: TensorShape, want: TensorShape) -> TensorShape:
    if have.rank is None:
        return want
    return TensorShape([h if w is None else w for h, w in zip(have.dims, want.dims)])


def ensure_shape(x, shape, name=None):
    """`x`, checked to have a shape compatible with `shape` (a list with None for a
    dimension of any size, an `em.TensorShape`; None: any shape), with that static shape.

    An incompatible shape raises `ValueError` while tracing when the traced shape already
    shows it, else `em.errors.InvalidArgumentError` when the value arrives (eagerly at once,
    in compiled code when it runs). Both name the expected shape and the tensor's.

    Example:
      >>> import ember as em
      >>> em.ensure_shape(em.constant([1, 2, 3]), [None]).shape
      TensorShape([3])
    """
    from ember.frontend import ops
    from ember.frontend.creation_ops import shape as shape_of
    from ember.frontend.effects import assert_true
    from ember.frontend.tensor import constant, convert_to_tensor
    from ember.frontend.tracing import SymbolicTensor
    del name
    x = convert_to_tensor(x)
    want = TensorShape(shape)
    have = x.shape
    if not isinstance(x, SymbolicTensor):
        if not want.is_compatible_with(have):
            raise user_located(InvalidArgumentError(
                "em.ensure_shape", f"Shape of tensor {have} is not compatible with expected "
                f"shape {want}."))
        return x
    if not want.is_compatible_with(have):
        raise ValueError(f"em.ensure_shape: the tensor's shape {have} is not compatible with "
                         f"the expected shape {want}")
    merged = _merged(have, want)
    if want.rank is None or merged == have:
        return x  # the traced shape proves it
    rank = want.rank
    padded = ops.concat([shape_of(x, "int64"), constant([-1] * (rank + 1), "int64")],
                        0)[:rank + 1]
    expected = constant([-1 if d is None else d for d in want.dims] + [-1], "int64")
    known = constant([d is not None for d in want.dims] + [True])
    fits = ops.where(known, ops.equal(padded, expected), padded >= 0)
    assert_true(ops.reduce_all(fits),
                f"em.ensure_shape: Shape of tensor (traced as {have}) is not compatible with "
                f"expected shape {want}.")
    dims = [padded[i] if d is None else d for i, d in enumerate(merged.dims)]
    return ops.reshape(x, dims)

