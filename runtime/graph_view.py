"""A TensorFlow-style view of a traced function: nodes with names, ops and inputs.

`concrete_fn.graph.nodes` (and `graph.as_graph_def().node`, as in the tf.function guide)
lists the function's arguments (op `Placeholder`), every op in program order (nested regions
included) and one `Identity` node per returned value — enough to count and inspect a trace.
"""

from __future__ import annotations

import collections
import dataclasses


from ember.dialects.ember.verifier import iter_ops


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
        counts: collections.Counter = collections.Counter()
        names: dict = {}

        def unique(base: str) -> str:
            n = counts[base]
            counts[base] += 1
            return base if n == 0 else f"{base}_{n}"

        nodes = []
        arg_names = [t._name for t in graph.inputs] + [
            getattr(obj, "_name", kind) for kind, obj in graph.extra_args]
        for arg, base in zip(graph.block.arguments, arg_names):
            names[arg] = unique(base)
            nodes.append(Node(names[arg], "Placeholder", []))
        for op in iter_ops(graph.func.operation):
            inputs = [names.get(v, "?") for v in op.operands]
            if op.name == "func.return":
                for value in inputs:
                    nodes.append(Node(unique("Identity"), "Identity", [value]))
                continue
            base = "Const" if op.name == "ember.constant" else op.name.split(".", 1)[-1]
            name = unique(base)
            for r in op.results:
                names[r] = name
            for region in op.regions:
                for block in region.blocks:
                    for a in block.arguments:
                        names[a] = f"{name}/arg"
            nodes.append(Node(name, op.name, inputs))
        return nodes

    def as_graph_def(self) -> "GraphView":
        return self

    @property
    def node(self) -> list[Node]:
        return self.nodes

    def __repr__(self) -> str:
        return f"<GraphView of '{self.name}': {len(self.nodes)} nodes>"
