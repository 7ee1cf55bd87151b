"""`em.map_fn`, `em.scan`, `em.foldl`, `em.foldr`: loops over the first dimension of
tensors (tf.map_fn and friends), built on `em.while_loop` and `em.TensorArray`.

`elems` may be a tensor or a nested structure of tensors with the same first dimension;
`fn` gets the matching structure of slices. Eagerly the loops are Python loops; in a trace
each is one `scf.while` whose body holds `fn` once (converted by AutoGraph, as
TensorFlow's are), its results written into a TensorArray per output tensor, so they
compile. A trace learns the type of `fn`'s output
from a trial trace of `fn` on the first slices (its trace-time side effects happen twice).
"""

from __future__ import annotations

from ember.dialects.ember import dtypes
from ember.frontend import nest
from ember.frontend.control_flow import trial_trace
from ember.frontend.while_loop import while_loop
from ember.frontend.shape import TensorSpec
from ember.frontend.tensor import convert_to_tensor
from ember.frontend.tensor_array import TensorArray
from ember.frontend.tracing import current_graph


_NO_ELEMENTS = ("em.map_fn over zero elements cannot know the shape of an output whose size "
                "depends on the element's values")


def _leading(elems) -> tuple[list, object]:
    """The flat tensors of `elems` and their common first dimension (int or tensor)."""
    from ember.frontend.ops import shape
    flat = [convert_to_tensor(e) for e in nest.flatten(elems)]
    if not flat:
        raise ValueError("map_fn/scan/fold: elems must hold at least one tensor")
    for t in flat:
        if t.shape.rank == 0:
            raise ValueError(f"map_fn/scan/fold: elems must have a first dimension, got {t!r}")
    sizes = {t.shape[0] for t in flat}
    if len(sizes - {None}) > 1:
        raise ValueError(f"map_fn/scan/fold: elems have different first dimensions "
                         f"{sorted(sizes - {None})}")
    known = next(iter(sizes - {None}), None)
    return flat, known if known is not None else shape(flat[0])[0]


def _slice(elems, flat, i):
    return nest.pack_sequence_as(elems, [t[i] for t in flat])


def _arrays(specs, size, like=None) -> list:
    """A TensorArray of `size` per spec; with `like` (a tensor per spec), allocated with its
    run-time shape when the spec's shape is not fully known (a `?` dim). (Every element has
    one shape, so not the padded arrays an element_shape with a `?` dim would make.)"""
    arrays = [TensorArray(s.dtype, size=size, element_shape=s.shape
                          if s.shape.is_fully_defined() else None) for s in specs]
    if like is None:
        return arrays
    return [a if a.allocated else a.allocated_for(t) for a, t in zip(arrays, like)]


def map_fn(fn, elems, dtype=None, fn_output_signature=None, name=None):
    """`fn` applied to each slice of `elems` along the first dimension, stacked.

    Example:
      >>> import ember as em
      >>> em.map_fn(lambda x: x * x, em.constant([1, 2, 3]))
      <ember.Tensor: shape=(3,), dtype=int32, numpy=array([1, 4, 9], dtype=int32)>
    """
    del dtype, fn_output_signature, name
    fn = _converted(fn)
    flat, n = _leading(elems)
    if current_graph() is None:
        from ember.frontend.ops import stack
        outs = [fn(_slice(elems, flat, i)) for i in range(int(n))]
        if not outs:
            return _empty(fn, elems, flat)
        return nest.pack_sequence_as(outs[0], [stack(list(parts)) for parts in zip(
            *[nest.flatten(o) for o in outs])])
    template = trial_trace(lambda *rows: fn(nest.pack_sequence_as(elems, list(rows))),
                           [TensorSpec(t.shape.dims[1:], t.dtype) for t in flat])
    specs = [_spec(s) for s in nest.flatten(template)]

    def apply(i):
        return [convert_to_tensor(v) for v in nest.flatten(fn(_slice(elems, flat, i)))]

    def body(i, arrays):
        return i + 1, [a.write(i, v) for a, v in zip(arrays, apply(i))]
    start, arrays = 0, _arrays(specs, n)
    if not all(a.allocated for a in arrays):  # `?` dims: sized by the first output
        start, arrays = 1, _first_written(apply, specs, arrays, n)
    _, arrays = while_loop(lambda i, _: i < n, body,
                           (convert_to_tensor(start, dtype=dtypes.int32), arrays))
    return nest.pack_sequence_as(template, [a.stack() for a in arrays])



def vectorized_map(fn, elems, fallback_to_while_loop=True, warn=True):
    """tf.vectorized_map's results: `fn` applied to each slice of `elems` along the first
    dimension, stacked, as map_fn computes them. TensorFlow rewrites `fn` into batched ops
    where it can and falls back to a while loop where it cannot; Ember always runs the loop
    (compiled, one iteration per element), which gives the same values."""
    del fallback_to_while_loop, warn
    return map_fn(fn, elems)

def _empty(fn, elems, flat):
    """map_fn's result over zero elements, eagerly: `fn` traced on an element's type gives
    each output's type, stacked zero times, as compiled code gives it; an output whose
    shape the trace leaves open cannot be known (ValueError, compiled too)."""
    from ember.frontend.ops import zeros
    from ember.frontend.trace_scope import graph_scope
    from ember.frontend.tracing import FuncGraph
    with graph_scope(FuncGraph("map_fn's element")):
        template = trial_trace(lambda *rows: fn(nest.pack_sequence_as(elems, list(rows))),
                               [TensorSpec(t.shape.dims[1:], t.dtype) for t in flat])
    specs = nest.flatten(template)
    if not all(isinstance(s, TensorSpec) and s.shape.is_fully_defined() for s in specs):
        raise ValueError(_NO_ELEMENTS)
    return nest.pack_sequence_as(template, [zeros([0] + list(s.shape.dims), s.dtype)
                                            for s in specs])


def _first_written(apply, specs, arrays, n) -> list:
    """The arrays of a map_fn whose output has `?` dims, allocated for the run-time shape of
    the first element's output and holding it (the loop then starts at 1, so `fn` runs once
    per element). Over zero elements those dims are unknowable: eager's error."""
    from ember.frontend import ops
    from ember.frontend.control_flow import smart_cond
    from ember.frontend.effects import assert_true

    def none():
        assert_true(ops.equal(n, 1), _NO_ELEMENTS)  # n is 0 here: it raises
        return [ops.zeros([0 if d is None else d for d in s.shape.dims], s.dtype)
                for s in specs]
    first = smart_cond(n > 0, lambda: apply(0), none)
    arrays = [a if a.allocated else a.allocated_for(t) for a, t in zip(arrays, first)]
    return smart_cond(n > 0, lambda: [a.write(0, t) for a, t in zip(arrays, first)],
                lambda: arrays)


def scan(fn, elems, initializer=None, parallel_iterations=None, back_prop=True,
         swap_memory=False, infer_shape=True, reverse=False, name=None):
    """The successive values of `acc = fn(acc, x)` over the slices `x` of `elems`.

    Example:
      >>> import ember as em
      >>> em.scan(lambda a, x: a + x, em.constant([1, 2, 3, 4]))
      <ember.Tensor: shape=(4,), dtype=int32, numpy=array([ 1,  3,  6, 10], dtype=int32)>
    """
    del parallel_iterations, back_prop, swap_memory, infer_shape, name
    return _fold(fn, elems, initializer, reverse, keep_all=True)


def foldl(fn, elems, initializer=None, parallel_iterations=None, back_prop=True,
          swap_memory=False, name=None):
    """`acc = fn(acc, x)` over the slices of `elems`, first to last; the last `acc`.

    Example:
      >>> import ember as em
      >>> em.foldl(lambda a, x: a * x, em.constant([1, 2, 3, 4]))
      <ember.Tensor: shape=(), dtype=int32, numpy=24>
    """
    del parallel_iterations, back_prop, swap_memory, name
    return _fold(fn, elems, initializer, False, keep_all=False)


def foldr(fn, elems, initializer=None, parallel_iterations=None, back_prop=True,
          swap_memory=False, name=None):
    """`acc = fn(acc, x)` over the slices of `elems`, last to first; the last `acc`."""
    del parallel_iterations, back_prop, swap_memory, name
    return _fold(fn, elems, initializer, True, keep_all=False)


def _fold(fn, elems, initializer, reverse: bool, keep_all: bool):
    from ember.frontend import ops
    fn = _converted(fn)
    flat, n = _leading(elems)
    n = convert_to_tensor(n, dtype=dtypes.int32)
    start = 0 if initializer is not None else 1

    def position(i):
        return n - 1 - i if reverse else i
    if initializer is None:
        initializer = _slice(elems, flat, position(0))
    acc = nest.map_structure(convert_to_tensor, initializer)
    if current_graph() is None:
        results = [acc] if keep_all and start == 1 else []
        for i in range(start, int(n.numpy())):
            acc = nest.map_structure(convert_to_tensor,
                                     fn(acc, _slice(elems, flat, position(i))))
            results.append(acc)
        if not keep_all:
            return acc
        if not results:  # no slices (and an initializer): each leaf's (0, ...) stack
            return nest.map_structure(lambda t: ops.expand_dims(t, 0)[:0], acc)
        if reverse:
            results = results[::-1]
        return nest.pack_sequence_as(acc, [ops.stack(list(p)) for p in zip(
            *[nest.flatten(r) for r in results])])
    if not keep_all:
        def step(i, a):
            return i + 1, fn(a, _slice(elems, flat, position(i)))
        return while_loop(lambda i, _: i < n, step,
                          (convert_to_tensor(start, dtype=dtypes.int32), acc))[1]
    specs = [TensorSpec.from_tensor(t) for t in nest.flatten(acc)]
    arrays = _arrays(specs, n, like=nest.flatten(acc))
    if start == 1:
        arrays = [a.write(position(0), t) for a, t in zip(arrays, nest.flatten(acc))]

    def body(i, a, arrays):
        a = fn(a, _slice(elems, flat, position(i)))
        return i + 1, a, [t.write(position(i), v) for t, v in
                          zip(arrays, [convert_to_tensor(x) for x in nest.flatten(a)])]
    _, _, arrays = while_loop(lambda i, *_: i < n, body,
                              (convert_to_tensor(start, dtype=dtypes.int32), acc, arrays))
    return nest.pack_sequence_as(acc, [t.stack() for t in arrays])


def _converted(fn):
    """`fn` as AutoGraph converts it while tracing (as tf.map_fn's is), else `fn`."""
    if current_graph() is None:
        return fn
    from ember.frontend.autograph.conversion import convert
    return convert(fn)


def _spec(value) -> TensorSpec:
    if isinstance(value, TensorSpec):
        return value
    return TensorSpec.from_tensor(convert_to_tensor(value))
