"""`GradientTape.jacobian` and `batch_jacobian`: one backward pass per target element, run
by `em.map_fn` (a loop while tracing), as TensorFlow does without pfor."""

from __future__ import annotations

from ember.frontend import nest
from ember.frontend.autodiff import recording
from ember.frontend.autodiff.tape import UnconnectedGradients, backprop


def _ops():
    from ember.frontend import ops
    return ops


def _dims(t):
    o = _ops()
    dims = t.shape.dims
    if dims is None:
        raise ValueError(f"the jacobian needs the rank of {t}, which is unknown while tracing")
    return list(dims) if None not in dims else o.shape(t)


def jacobian(tape, target, sources, unconnected: UnconnectedGradients):
    from ember.frontend.functional_ops import map_fn
    o = _ops()
    tape._check_usable("jacobian")
    flat = nest.flatten(sources)
    t = o.convert_to_tensor(target)
    n = o.size(t)
    entries = list(tape._entries)

    def row(i):
        seed = o.reshape(o.one_hot(i, n, dtype=t.dtype), _dims(t))
        grads = backprop(entries, [t], [seed], flat)
        return [o.zeros_like(_read(s)) if g is None else g for s, g in zip(flat, grads)]
    def shape(s):
        return o.concat([o.shape(t), o.shape(_read(s))], 0) if _dynamic(t, s) \
            else list(t.shape.dims) + list(s.shape.dims)

    def jacobians():
        rows = map_fn(row, o.range(n), fn_output_signature=[_spec(s) for s in flat])
        return [o.reshape(r, shape(s)) for s, r in zip(flat, rows)]
    with recording.without(tape):
        connected = backprop(entries, [t], None, flat)
        if flat and any(_dynamic(t, s) for s in flat):  # map_fn over no element cannot
            from ember.frontend.control_flow import cond  # know a `?` dim: zeros instead
            blocks = cond(o.greater(n, 0), jacobians,
                          lambda: [o.zeros(shape(s), s.dtype) for s in flat])
        else:
            blocks = jacobians() if flat else []
    tape._used_once()
    out = [None if c is None and unconnected is UnconnectedGradients.NONE else b
           for b, c in zip(blocks, connected)]
    return nest.pack_sequence_as(sources, out)


def batch_jacobian(tape, target, source, unconnected: UnconnectedGradients):
    from ember.frontend.functional_ops import map_fn
    o = _ops()
    tape._check_usable("batch_jacobian")
    t = o.convert_to_tensor(target)
    if t.ndim is None or t.ndim < 1 or source.shape.rank in (None, 0):
        raise ValueError("batch_jacobian needs a target and a source with a batch dim first")
    rows = o.reshape(t, o.stack([o.shape(t)[0], -1]))
    m = o.shape(rows)[1]
    entries = list(tape._entries)

    def column(j):
        seed = o.reshape(o.broadcast_to(o.one_hot(j, m, dtype=t.dtype), o.shape(rows)),
                         o.shape(t))
        (g,) = backprop(entries, [t], [seed], [source])
        return o.zeros_like(_read(source)) if g is None else g
    with recording.without(tape):
        (connected,) = backprop(entries, [t], None, [source])
        cols = map_fn(column, o.range(m), fn_output_signature=_spec(source))
    tape._used_once()
    if connected is None and unconnected is UnconnectedGradients.NONE:
        return None
    rank = cols.ndim
    moved = o.transpose(cols, [1, 0] + list(range(2, rank)))
    return o.reshape(moved, o.concat([o.shape(t), o.shape(_read(source))[1:]], 0))


def _read(s):
    return s.read_value() if hasattr(s, "read_value") else s


def _spec(s):
    from ember.frontend.shape import TensorSpec
    return TensorSpec(s.shape, s.dtype)


def _dynamic(t, s) -> bool:
    return not (t.shape.is_fully_defined() and s.shape.is_fully_defined())
