"""The tensors at a trace's boundary, as `tf.types.experimental.ConcreteFunction` shows them.

A mixin of `ConcreteFunction` (concrete.py): `inputs` and `outputs` are the flat lists of the
graph's parameter and result tensors, `structured_input_signature` and `structured_outputs`
the same seen through the Python structures the function was called with and returned.
TensorFlow's `ConcreteFunction.inputs` is its FuncGraph's `inputs`: one placeholder per
tensor leaf of the arguments, then one per captured value (a variable's handle is a
`resource` placeholder of shape ()), which is the order of the traced `func.func`'s block
arguments here too (tracing.py adds captures after the parameters).
"""

from __future__ import annotations

from ember.frontend import nest
from ember.frontend.shape import TensorShape
from ember.frontend.tracing import SymbolicTensor
from ember.runtime.structures import spec_of


class ResourceDType:
    """The dtype of a variable handle (TF's `tf.resource`): not an element type, so it
    only names itself; no op takes it. `CapturedHandle.dtype` is the one instance."""

    name = "resource"

    def __repr__(self) -> str:
        return "em.resource"


RESOURCE = ResourceDType()


class CapturedHandle:
    """The placeholder a trace takes a captured em.Variable's handle through (a
    `!ember.resource<...>` block argument): TF shows it as a `resource` tensor of shape ().

    `variable` is the captured em.Variable; reading or writing it happens through the
    Variable itself, never through this placeholder, which has no value.
    """

    __slots__ = ("_name", "variable")

    def __init__(self, name: str, variable):
        self._name, self.variable = name, variable

    @property
    def name(self) -> str:
        return f"{self._name}:0"

    @property
    def dtype(self) -> ResourceDType:
        return RESOURCE

    @property
    def shape(self) -> TensorShape:
        return TensorShape(())

    def __repr__(self) -> str:
        return f"<ember.Tensor '{self.name}' shape=() dtype=resource>"


class ConcreteIO:
    """`inputs`, `outputs`, `structured_input_signature` and `structured_outputs` of a
    ConcreteFunction (which sets `_graph`, `_signature`, `_templates` and `_outputs`)."""

    _captured_inputs: list | None = None  # made on first use

    @property
    def inputs(self) -> list:
        """The graph's input placeholders, flat: the tensor leaves of the arguments in
        parameter order, then the captured values (variables' handles as `CapturedHandle`s,
        large constants and tensors of an enclosing trace as tensors), as TF's
        `ConcreteFunction.inputs`. They are symbolic: use them to inspect the trace.

        Example:
          >>> import ember as em
          >>> v = em.Variable(2.0)
          >>> @em.function
          ... def f(x):
          ...     return x * v
          >>> x, handle = f.get_concrete_function(em.TensorSpec([3], em.float32)).inputs
          >>> x
          <ember.Tensor 'x:0' shape=(3,) dtype=float32>
          >>> handle, handle.variable is v
          (<ember.Tensor 'Variable:0' shape=() dtype=resource>, True)
        """
        if self._captured_inputs is None:
            self._captured_inputs = _captured_inputs(self._graph)
        return list(self._graph.inputs) + self._captured_inputs

    @property
    def outputs(self) -> list:
        """The graph's result tensors, flat, in the order of `nest.flatten(structured_outputs)`
        (TF's `ConcreteFunction.outputs`); leaves that are not tensors (None, objects
        returned as they are) have no result and are left out, as in TF."""
        return [leaf for leaf in nest.flatten(self._outputs)
                if isinstance(leaf, SymbolicTensor)]

    @property
    def structured_input_signature(self) -> tuple:
        """((positional specs...), {keyword: spec}), tensors shown as TensorSpecs."""
        args, kwargs = [], {}
        for name, param in self._signature.parameters.items():
            spec = nest.map_structure(lambda leaf, n=name: spec_of(leaf, n),
                                      self._templates[name])
            if param.kind is param.VAR_POSITIONAL:
                args.extend(spec)
            elif param.kind is param.VAR_KEYWORD:
                kwargs.update(spec)
            elif param.kind is param.KEYWORD_ONLY:
                kwargs[name] = spec
            else:
                args.append(spec)
        return tuple(args), kwargs

    @property
    def structured_outputs(self):
        """What the Python function returned, its tensors symbolic (TF's)."""
        return self._outputs


def _captured_inputs(graph) -> list:
    """One input per captured value, in the order of the block arguments after the
    parameters."""
    arguments = list(graph.block.arguments)[len(graph.inputs):]
    assert len(arguments) == len(graph.extra_args), "captures and block arguments disagree"
    out = []
    for (kind, obj), argument in zip(graph.extra_args, arguments):
        if kind == "variable":
            out.append(CapturedHandle(obj._name, obj))
        else:  # a snapshot of a large constant, or a tensor of an enclosing trace
            out.append(graph.wrap(argument, getattr(obj, "_name", None) or "Const"))
    return out
