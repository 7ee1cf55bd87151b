"""em.data's pipeline optimisations, as tf.data's static optimiser makes them: each changes
how batches are computed, never what they hold.

- Source batching (`experimental_optimization.source_batching`): `batch(n)` over
  `from_tensor_slices` or `range`, possibly through `take`, `skip`, `shard` and
  `with_options`, cuts each batch as one slice of the source arrays (a copy: a batch never
  aliases the source), instead of stacking n elements one by one.
- Map vectorisation (`experimental_optimization.map_vectorization`, tf.data's
  map_vectorization): `map(f).batch(n)` runs as `batch(n).map(f_batched)`, one compiled call
  per batch, when f is provably batchable. f's traced IR must take only the element's
  components (no captured arrays or variables) and hold only elementwise ember ops
  (arithmetic, comparisons, select, unary math; `cast`; constants): no reductions, reshapes,
  shape-dependent, random or host-call ops, no state. Every op touching the element computes
  over values of one fixed shape, with constants (of any shape, broadcast as trailing
  dimensions) as the only other operands, and every output depends on the element. f is then
  traced again over batches (a leading `None` dimension): that trace must be the same program
  (ops, attributes, operands; `program`), giving the same outputs with the leading dimension.
  Strings, and element shapes not fully known, keep the per-element path. If a batched call
  raises, the batch is mapped element by element, which raises the per-element error at its
  element. `num_parallel_calls` runs that many batched calls at once, in order.

Both are on by default; `Options().experimental_optimization` switches them off for the
pipeline it is set on. `ds._optimizations()` lists what iterating `ds` applies, and why a
`map` keeps its per-element path.
"""

import collections
import concurrent.futures
import contextvars
import inspect

import numpy as np

from ember.frontend.tensor import Tensor

from ember.runtime.data import structure

# The pipeline options of the iterator whose elements are being computed (iterator.py sets
# it for each `next`; a prefetch thread takes its creator's); None: every optimisation on.
current_options = contextvars.ContextVar("ember_data_options", default=None)


def enabled(name: str) -> bool:
    options = current_options.get()
    return options is None or bool(getattr(options.experimental_optimization, name))


def _elementwise_names() -> frozenset:
    from ember.dialects.ember.base import Op
    from ember.dialects.ember.elementwise import binary, compare, special, unary
    names = {"ember.cast"}
    for module in (binary, compare, special, unary):
        for value in vars(module).values():
            if inspect.isclass(value) and issubclass(value, Op) and \
                    isinstance(getattr(value, "name", None), str):
                names.add(value.name)
    return frozenset(names)


_ELEMENTWISE = _elementwise_names()


# Source batching ---------------------------------------------------------------------------

def row_plan(dataset):
    """(source, rows): `dataset`'s elements are rows `rows` (a `range`) of `source`, a node
    that can cut batches (`_slice_rows`); None when they are not."""
    return dataset._rows()


def sliced_batches(dataset, size: int, drop: bool):
    """`dataset.batch(size, drop)`'s batches, each one slice of the source; None when
    `dataset` is not a sliceable source or source batching is off."""
    if not enabled("source_batching"):
        return None
    plan = row_plan(dataset)
    if plan is None:
        return None
    source, rows = plan
    return _cut(source, rows, size, drop)


def _cut(source, rows, size, drop):
    for start in range(0, len(rows), size):
        part = rows[start:start + size]
        if drop and len(part) < size:
            return
        yield source._slice_rows(part)


def range_sliceable(bounds: range, dtype) -> bool:
    """Whether `Dataset.range(bounds, dtype)`'s batches may be cut with numpy: values the
    dtype cannot hold fail per element, and floats round as from a Python int only while
    int64 -> float is exact in float64."""
    kind = np.dtype(dtype.np_dtype).kind
    if kind not in "iuf" or len(bounds) == 0:
        return False
    info = np.iinfo(dtype.np_dtype) if kind in "iu" else np.iinfo(np.int64)
    low, high = min(bounds[0], bounds[-1]), max(bounds[0], bounds[-1])
    return info.min <= low and high <= info.max and (kind != "f" or max(-low, high) <= 2**53)


# Map vectorisation -------------------------------------------------------------------------

def refusal(call, spec):
    """Why the traced map function `call` (trace_map_function's) is not batchable over the
    element `spec`, or None when it is."""
    specs = structure.flatten(spec)
    for s in specs:
        if s.dtype.is_string:
            return "its element holds strings (host tensors)"
        if not s.shape.is_fully_defined():
            return f"the element shape {s.shape} is not fully known"
    graph = call.function.get_concrete_function()._graph
    if graph.callbacks:
        return "it calls Python (em.py_function or a host callback)"
    body = _body(call)
    if len(body.arguments) != len(specs):
        return "it captures tensors or variables (state outside the element)"
    element = set(body.arguments)  # values computed from the element
    for op in body.operations:
        name = op.operation.name
        if name == "func.return":
            if any(v not in element for v in op.operands):
                return "an output does not depend on the element (a constant)"
            continue
        if name == "ember.constant":
            continue
        if name not in _ELEMENTWISE or len(op.regions):
            return f"{name} is not elementwise"
        if not any(v in element for v in op.operands):
            continue  # computes on constants only
        problem = _operand_problem(op, element)
        if problem:
            return f"{name}: {problem}"
        element.update(op.results)
    return None


def _body(call):
    """The block of the traced function of `call` (trace_map_function's)."""
    graph = call.function.get_concrete_function()._graph
    return graph.module.body.operations[0].regions[0].blocks[0]


def program(call) -> list:
    """The traced function's ops without their types: (name, attributes, operand numbers),
    values numbered in order of definition. Equal for two traces of one elementwise
    function whatever the shapes, unless its Python code branched on them."""
    body = _body(call)
    numbers = {v: i for i, v in enumerate(body.arguments)}
    ops = []
    for op in body.operations:
        named = (op.attributes[i] for i in range(len(op.attributes)))
        attributes = sorted((str(a.name), str(a.attr)) for a in named)
        ops.append((op.operation.name, attributes, [numbers[v] for v in op.operands]))
        for v in op.results:
            numbers[v] = len(numbers)
    return ops


def _operand_problem(op, element):
    from mlir import ir
    shape = ir.RankedTensorType(op.results[0].type).shape
    for v in op.operands:
        operand = ir.RankedTensorType(v.type).shape
        if v in element and operand != shape:
            return (f"an operand of shape {operand} from the element is broadcast to "
                    f"{shape}")
        if v not in element and len(operand) > len(shape):
            return f"a constant operand of shape {operand} widens the result {shape}"
    return None


def batched_spec(spec):
    return structure.map_structure(lambda s: structure.with_outer(s, None), spec)


class Vectorized:
    """The decision for one `map`: `call` (the batched function) or `reason` (why not)."""

    def __init__(self, call=None, reason=None):
        self.call, self.reason = call, reason


def vectorize(map_dataset) -> Vectorized:
    """`map_dataset`'s batched function, traced once, or why there is none."""
    from ember.runtime.data.mapping import trace_map_function
    spec = map_dataset._source.element_spec
    try:
        reason = refusal(map_dataset._call, spec)
    except Exception as error:  # noqa: BLE001 - an IR this analysis does not know: refuse
        reason = f"its IR could not be analysed ({type(error).__name__}: {error})"
    if reason is not None:
        return Vectorized(reason=reason)
    try:
        call, out = trace_map_function(map_dataset._fn, batched_spec(spec), "Dataset.map")
        same = program(call) == program(map_dataset._call)
    except Exception as error:  # noqa: BLE001 - the per-element path stays, and says why
        return Vectorized(reason=f"tracing it over batches failed ({type(error).__name__})")
    if out != batched_spec(map_dataset._spec):
        return Vectorized(reason=f"over batches it returns {out}")
    if not same:
        return Vectorized(reason="its trace over batches computes differently (its Python "
                                 "code depends on the shape)")
    return Vectorized(call=call)


def vectorized_batches(map_dataset, size: int, drop: bool):
    """`map_dataset.batch(size, drop)`'s batches with one batched call each; None when the
    map is not batchable or map vectorisation is off."""
    if not enabled("map_vectorization"):
        return None
    plan = map_dataset._vectorized()
    if plan.call is None:
        return None
    return _mapped(map_dataset, plan.call, size, drop)


def input_batches(dataset, size: int, drop: bool):
    """`dataset.batch(size, drop)`'s batches, by the fastest sound way."""
    from ember.runtime.data.mapping import MapDataset
    from ember.runtime.data.transforms import BatchDataset
    batches = vectorized_batches(dataset, size, drop) \
        if isinstance(dataset, MapDataset) else None
    if batches is None:
        batches = sliced_batches(dataset, size, drop)
    if batches is None:
        batches = BatchDataset(dataset, size, drop)._iterate_elementwise()
    return batches


def _mapped(map_dataset, call, size, drop):
    """The batches mapped, `num_parallel_calls` of them at once (compiled calls release the
    GIL), in order; an error comes out after the batches before it, as per element."""
    def one(batch):
        try:
            return call(batch)
        except Exception:  # noqa: BLE001 - element by element: the precise error, in place
            return _one_by_one(map_dataset, batch)

    inputs = iter(input_batches(map_dataset._source, size, drop))
    if map_dataset._parallel == 1:
        for batch in inputs:
            yield one(batch)
        return
    pool = concurrent.futures.ThreadPoolExecutor(map_dataset._parallel,
                                                 thread_name_prefix="ember-data-map")
    pending, error = collections.deque(), None
    try:
        while error is None:
            try:
                batch = next(inputs, None)
            except Exception as raised:  # noqa: BLE001 - after the batches before it
                error = raised
                break
            if batch is None:
                break
            pending.append(pool.submit(one, batch))
            if len(pending) >= map_dataset._parallel:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
        if error is not None:
            raise error
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


def _one_by_one(map_dataset, batch):
    """The batch mapped element by element, as the unoptimised pipeline maps it."""
    specs = structure.flatten(map_dataset._source.element_spec)
    arrays = [t._numpy_array() for t in structure.flatten(batch)]
    outputs = []
    for row in range(arrays[0].shape[0] if arrays else 0):
        element = structure.pack_as(map_dataset._source.element_spec,
                                    [Tensor(a[row], s.dtype) for a, s in zip(arrays, specs)])
        outputs.append(map_dataset._call(element))
    return stack(outputs)


def stack(elements):
    """Elements of one shape stacked into a batch."""
    columns = zip(*[structure.flatten(e) for e in elements])
    return structure.pack_as(elements[0], [
        Tensor(np.stack([p._numpy_array() for p in parts]), parts[0].dtype) for parts in columns])


# Inspection --------------------------------------------------------------------------------

def describe(dataset) -> list:
    """What iterating `dataset` applies, one line per rewrite (see the module docstring)."""
    from ember.runtime.data.mapping import MapDataset
    from ember.runtime.data.options import merged_options, pipeline_nodes
    from ember.runtime.data.transforms import BatchDataset
    token = current_options.set(merged_options(dataset))
    try:
        lines = []
        for node in pipeline_nodes(dataset):
            if type(node) is not BatchDataset:
                continue
            source = node._source
            while isinstance(source, MapDataset) and enabled("map_vectorization"):
                plan = source._vectorized()
                if plan.call is None:
                    lines.append(f"map_vectorization refused for map({source._name}): "
                                 f"{plan.reason}")
                    break
                lines.append(f"map_vectorization: map({source._name}).batch({node._size})"
                             f" runs as batch({node._size}).map(batched)")
                source = source._source
            if enabled("source_batching") and row_plan(source) is not None:
                lines.append(f"source_batching: batch({node._size}) slices "
                             f"{type(row_plan(source)[0]).__name__.lstrip('_')}")
        return lines
    finally:
        current_options.reset(token)
