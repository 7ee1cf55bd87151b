"""The per-element call of a traced `map`/`filter` function, with no more Python per element
than the data pointers in and the result tensors out.

`em.function`'s own fast path binds no arguments, but still packs its results through the
general structure code, which costs more than a small compiled function takes to run. A
dataset's function has one fixed signature (the element_spec, `input_signature`) and returns
a flat list, so its compiled entry is taken once (`runtime/fast_path.make_entry`, for the
element's exact shapes) and its results wrapped directly as tensors of the traced dtypes.
Each call checks that the element's tensors still have those dtypes and shapes; anything else
(unknown dimensions, strings on the interpreter, a recording `GradientTape`, functions run
eagerly) goes through `em.function`'s ordinary call.
"""

import threading

from ember.frontend.autodiff import recording
from ember.frontend.tensor import Tensor
from ember.runtime import config

from ember.runtime.data import structure


class CompiledCall:
    """`call(leaves)`: the function's flat results for the flat element `leaves`."""

    def __init__(self, function, in_specs, out_specs):
        self._function = function
        self._out_dtypes = [s.dtype for s in out_specs]
        self._lean = all(s.shape.is_fully_defined() and not s.dtype.is_string
                         for s in in_specs)
        # Only a fully defined signature has a fast entry, so only then is a layout needed
        # (an unknown rank has no dims to take).
        self._layout = [(s.dtype, tuple(s.shape.dims)) for s in in_specs] if self._lean \
            else []
        self._entry = None
        self._lock = threading.Lock()

    def __call__(self, leaves):
        entry = self._entry
        if entry is not None and self._fits(leaves) and not _general():
            return entry(leaves)
        results = self._function(*leaves)  # compiles on the first call
        if self._lean and entry is None and self._fits(leaves) and not _general():
            self._make_entry(leaves)
        return results

    def _fits(self, leaves) -> bool:
        for leaf, (dtype, shape) in zip(leaves, self._layout):
            if type(leaf) is not Tensor or leaf._dtype is not dtype or \
                    leaf._value.shape != shape:
                return False
        return len(leaves) == len(self._layout)

    def _make_entry(self, leaves):
        from ember.runtime.fast_path import make_entry
        with self._lock:
            if self._entry is not None or not self._lean:
                return
            concrete = self._function.get_concrete_function()
            dtypes = self._out_dtypes

            def pack():
                return lambda outs: [Tensor._of_output(a, d) for a, d in zip(outs, dtypes)]

            entry = make_entry(tuple(leaves), list(concrete._signature.parameters.values()),
                               concrete._templates, concrete._graph.extra_args,
                               concrete._executor.compiled, pack)
            if entry is None:  # the interpreter, captured variables: the general call
                self._lean = False
                return
            concrete.watch_fast_entry(entry, self._dropped)
            self._entry = entry

    def _dropped(self):
        """The executable left the compiled-code cache: the next call takes a new entry."""
        self._entry = None


def _general() -> bool:
    """Whether calls must take em.function's general path (a tape records them, or
    functions run as Python)."""
    return recording.recording() or config.functions_run_eagerly()


def packer(spec):
    """A fast `structure.pack_as(spec, leaves)` for the common layouts."""
    if not isinstance(spec, (tuple, dict)):
        return lambda leaves: leaves[0]
    if type(spec) is tuple and not any(isinstance(s, (tuple, dict)) for s in spec):
        return tuple
    return lambda leaves: structure.pack_as(spec, leaves)


def flattener(spec):
    """A fast `structure.flatten(element)` for elements structured as `spec`."""
    if not isinstance(spec, (tuple, dict)):
        return lambda element: [element]
    if type(spec) is tuple and not any(isinstance(s, (tuple, dict)) for s in spec):
        return list
    return structure.flatten
