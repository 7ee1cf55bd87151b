"""A TensorFlow-style view of a traced function: nodes with names, ops and inputs.

`concrete_fn.graph.nodes` (and `graph.as_graph_def().node`, as in the tf.function guide)
lists the function's arguments (op `Placeholder`), every op in program order (nested regions
included) and one `Identity` node per returned value — enough to count and inspect a trace.
`graph.to_dot()` draws the same nodes as DOT text (passes/view_op_graph.py: edges labelled
with types, control-flow regions as clusters) and `graph.to_svg()` lays it out with Graphviz
(the `viz` extra); `ir_diff_report(concrete_fn, path)` is `ConcreteFunction.ir_diff_report`.
"""

from __future__ import annotations

import dataclasses

from mlir import ir

from ember.dialects.ember.verifier import iter_ops
from ember.passes.view_op_graph import NodeNamer, function_to_dot, node_base, render_svg


@dataclasses.dataclass
class Node:
    """One node: `input` is a list of node names, as in a TensorFlow NodeDef (so the guide's
    `print(f'{node.input} -> {node.name}')` prints `['a', 'a'] -> add`)."""

    name: str
    op: str
    input: list  # names of the nodes whose values this node uses

    @property
    def inputs(self) -> list:
        return self.input


class GraphView:
    """Nodes of one traced function (`func.func` of a FuncGraph)."""

    def __init__(self, graph):
        self._graph = graph
        self.name = graph.name

    @property
    def nodes(self) -> list[Node]:
        graph = self._graph
        unique = NodeNamer()
        names: dict = {}
        nodes = []
        for arg, base in zip(graph.block.arguments, self._arg_names()):
            names[arg] = unique(base)
            nodes.append(Node(names[arg], "Placeholder", []))
        for op in iter_ops(graph.func.operation):
            inputs = [names.get(v, "?") for v in op.operands]
            if op.name == "func.return":
                for value in inputs:
                    nodes.append(Node(unique("Identity"), "Identity", [value]))
                continue
            name = unique(node_base(op))
            for r in op.results:
                names[r] = name
            for region in op.regions:
                for block in region.blocks:
                    for a in block.arguments:
                        names[a] = f"{name}/arg"
            nodes.append(Node(name, op.name, inputs))
        return nodes

    def _arg_names(self) -> list[str]:
        graph = self._graph
        return [t._name for t in graph.inputs] + [
            getattr(obj, "_name", kind) for kind, obj in graph.extra_args]

    def to_dot(self, attributes: bool = True) -> str:
        """The function as Graphviz DOT text: a box per op (its name in `nodes`, op name,
        result types and, with `attributes`, its short attributes), an edge per use of a
        value labelled with its type, ellipses for arguments and results, and a cluster per
        op with regions (`scf.if`, `scf.while`, `scf.for`) holding one per region.
        Needs no Graphviz."""
        with self._graph.context:
            return function_to_dot(self._graph.func.operation, self._arg_names(),
                                   self.name, attributes)

    def to_svg(self, attributes: bool = True) -> str:
        """`to_dot()` laid out by Graphviz, as SVG text. Without Graphviz this raises rather
        than return the DOT text (which a caller would write to a `.svg` file unawares):
        `to_dot()` is that text.

        Raises:
          GraphvizUnavailable (an ImportError): the `graphviz` package (`pip install
            'ember[viz]'`) or Graphviz's `dot` program is missing; `to_dot()` works without.
        """
        return render_svg(self.to_dot(attributes))

    def as_graph_def(self) -> "GraphView":
        return self

    @property
    def node(self) -> list[Node]:
        return self.nodes

    def __repr__(self) -> str:
        return f"<GraphView of '{self.name}': {len(self.nodes)} nodes>"


def ir_diff_report(concrete, path: str) -> str:
    """Writes the IR diff report (passes/report.py) of `concrete`'s optimisation pipeline to
    `path`: the pipeline runs again, on a copy of the trace, with every pass recorded (the
    function's own optimised module is left as it is). Returns `path`.

    Bound as `ConcreteFunction.ir_diff_report(path)`:

        cf = f.get_concrete_function(x)
        cf.ir_diff_report("report.html")
    """
    from ember.passes.report import IRDiffRecorder, write_html
    graph, pipeline = concrete._graph, concrete._pipeline
    with graph.context, ir.Location.unknown():
        module = ir.Module.create()
        with ir.InsertionPoint(module.body):
            for op in graph.module.body.operations:
                op.operation.clone()
    recorder = IRDiffRecorder(module, label=f"{concrete.name}",
                              pipeline=str(pipeline) if pipeline else "")
    try:
        if pipeline is not None:
            pipeline.run(module, instruments=[recorder])
    finally:
        write_html(path, [recorder], f"IR diff report: {concrete.name}")
    return path
