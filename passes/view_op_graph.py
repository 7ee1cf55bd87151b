"""DOT pictures of MLIR functions: ops, the values between them, arguments, results and
control-flow regions, as MLIR's `-view-op-graph` (mlir/lib/Transforms/ViewOpGraph.cpp).

    digraph "f" {
      n0 [label="x\\nargument 0: tensor<4xf32>", shape=ellipse, ...];
      n2 [label="neg\\nember.neg\\n-> tensor<4xf32>"];
      n0 -> n2 [label="tensor<4xf32>"];
      subgraph cluster_1 { label="if (scf.if)"; ... subgraph cluster_2 { label="then"; ... } }
    }

Each op is a box labelled with its node name (TensorFlow-style: `Const`, `neg`, `neg_1`,
the names of `ConcreteFunction.graph.nodes`), its op name, its result types and its short
attributes; each use of a value is an edge from its producer labelled with the value's type;
function arguments and results are ellipses. An op with regions (`scf.if`, `scf.while`,
`scf.for`) is a cluster holding its own node and one cluster per region (`then`/`else`,
`before`/`after`, `body`) with the region's block arguments and ops; a terminator's operands
flow back to the op along a dashed edge. As in MLIR, long attributes are cut at
`MAX_ATTRIBUTE_CHARS` and large dense constants elided. Ember differs from MLIR in drawing
each function's arguments and results as nodes and in naming ops as TensorFlow does.

`render_svg(dot)` lays the text out with Graphviz's `dot` through the `graphviz` package (the
`viz` extra); without either it raises `GraphvizUnavailable`, an ImportError saying what to
install, as TensorFlow's `plot_model` does without pydot and Graphviz.
"""

from __future__ import annotations

import collections
import itertools

from mlir import ir

from ember.dialects.ember.errors import EmberError

MAX_ATTRIBUTE_CHARS = 60
MAX_SHOWN_ELEMENTS = 16  # dense constants with more elements are shown by type only

_REGION_NAMES = {"scf.if": ("then", "else"), "scf.while": ("before", "after"),
                 "scf.for": ("body",), "scf.forall": ("body",), "scf.parallel": ("body",)}
_HEADER = ('  compound=true; fontname="Helvetica";\n'
           '  node [shape=box, style="rounded,filled", fillcolor=white, '
           'fontname="Helvetica", fontsize=10];\n'
           '  edge [fontname="Helvetica", fontsize=8, color="#555555"];\n')


class GraphvizUnavailable(EmberError, ImportError):
    """The `graphviz` package or Graphviz's `dot` program is missing (DOT text needs
    neither)."""


class NodeNamer:
    """TensorFlow-style unique node names: `add`, `add_1`, `add_2`, ..."""

    def __init__(self):
        self._counts: collections.Counter = collections.Counter()

    def __call__(self, base: str) -> str:
        n = self._counts[base]
        self._counts[base] += 1
        return base if n == 0 else f"{base}_{n}"


def node_base(op: ir.Operation) -> str:
    """The base of an op's node name: `Const` for constants, else the op name's suffix."""
    return "Const" if op.name == "ember.constant" else op.name.split(".", 1)[-1]


def quote(text: str) -> str:
    """`text` as a DOT quoted string: backslashes and quotes escaped, so nothing in an IR
    attribute (quotes, braces, `\\n`) can end the string or become a Graphviz escape."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _label(*lines: str) -> str:
    return "\\n".join(quote(line)[1:-1] for line in lines)


def attribute_text(attr: ir.Attribute) -> str:
    """An attribute as a label shows it: large dense constants by type, long text cut."""
    if isinstance(attr, ir.DenseElementsAttr) and not attr.is_splat \
            and len(attr) > MAX_SHOWN_ELEMENTS:
        return f"dense<...> : {attr.type}"
    text = str(attr)
    return text if len(text) <= MAX_ATTRIBUTE_CHARS else text[:MAX_ATTRIBUTE_CHARS - 3] + "..."


class _Builder:
    def __init__(self, attributes: bool):
        self.attributes = attributes
        self.lines: list[str] = []
        self.ids = itertools.count()
        self.clusters = itertools.count()
        self.namer = NodeNamer()
        self.sources: dict = {}  # value -> (node id, "#i " for a result of several, or "")
        self.edges: list[str] = []  # written last, so every node is declared in its cluster

    def node(self, indent: str, label: str, **attrs: str) -> str:
        node_id = f"n{next(self.ids)}"
        extra = "".join(f", {k}={quote(v)}" for k, v in attrs.items())
        self.lines.append(f"{indent}{node_id} [label=\"{label}\"{extra}];")
        return node_id

    def uses(self, op: ir.Operation, target: str) -> None:
        for value in op.operands:
            self.edge(value, target)

    def edge(self, value: ir.Value, target: str) -> None:
        source = self.sources.get(value)
        if source is not None:  # (values come from this function only)
            node_id, which = source
            self.edges.append(f"  {node_id} -> {target} [label={quote(which + str(value.type))}];")

    def function(self, fn: ir.Operation, arg_names, indent: str) -> None:
        block = fn.regions[0].blocks[0]
        names = list(arg_names or [])
        for i, arg in enumerate(block.arguments):
            name = self.namer(names[i] if i < len(names) else f"arg{i}")
            self.sources[arg] = (self.node(indent, _label(name, f"argument {i}: {arg.type}"),
                                           shape="ellipse", fillcolor="#dbe9f6"), "")
        self.block_ops(block, indent, None)

    def block_ops(self, block: ir.Block, indent: str, parent: str | None) -> None:
        ops = [child.operation for child in block.operations]
        for position, op in enumerate(ops, 1):
            if op.name == "func.return":
                for i, value in enumerate(op.operands):
                    label = _label(self.namer("Identity"), f"result {i}: {value.type}")
                    self.edge(value, self.node(indent, label, shape="ellipse",
                                               fillcolor="#dcf0d8"))
                continue
            if len(op.regions):
                self.region_op(op, indent)
                continue
            node_id = self.op_node(op, indent)
            if parent is not None and position == len(ops) and len(op.operands):
                self.edges.append(f"  {node_id} -> {parent} [style=dashed, "
                                  "constraint=false];")

    def op_node(self, op: ir.Operation, indent: str, name: str | None = None) -> str:
        name = name or self.namer(node_base(op))
        lines = [name, op.name]
        if len(op.results):
            lines.append("-> " + ", ".join(str(r.type) for r in op.results))
        if self.attributes:
            for i in range(len(op.attributes)):
                named = op.attributes[i]
                lines.append(f"{named.name} = {attribute_text(named.attr)}")
        node_id = self.node(indent, _label(*lines))
        self.uses(op, node_id)
        for i, result in enumerate(op.results):
            self.sources[result] = (node_id, f"#{i} " if len(op.results) > 1 else "")
        return node_id

    def region_op(self, op: ir.Operation, indent: str) -> None:
        name = self.namer(node_base(op))
        self.lines.append(f"{indent}subgraph cluster_{next(self.clusters)} {{")
        inner = indent + "  "
        self.lines.append(f"{inner}label={quote(f'{name} ({op.name})')}; "
                          'style="rounded,filled"; fillcolor="#f4f4f4"; color="#888888";')
        node_id = self.op_node(op, inner, name)
        region_names = _REGION_NAMES.get(op.name, ())
        for r, region in enumerate(op.regions):
            title = region_names[r] if r < len(region_names) else f"region {r}"
            self.lines.append(f"{inner}subgraph cluster_{next(self.clusters)} {{")
            self.lines.append(f"{inner}  label={quote(title)}; style=\"dashed\"; "
                              "color=\"#999999\";")
            for b, block in enumerate(region.blocks):
                for i, arg in enumerate(block.arguments):
                    label = _label(f"{name}/arg{i}" + (f" ^bb{b}" if b else ""), str(arg.type))
                    self.sources[arg] = (self.node(inner + "  ", label, shape="ellipse",
                                                   fillcolor="#fff3d6"), "")
                self.block_ops(block, inner + "  ", node_id)
            self.lines.append(f"{inner}}}")
        self.lines.append(f"{indent}}}")

    def text(self, title: str) -> str:
        return (f"digraph {quote(title)} {{\n{_HEADER}  label={quote(title)}; labelloc=t;\n"
                + "\n".join(self.lines + self.edges) + "\n}\n")


def function_to_dot(fn: ir.Operation, arg_names=None, title: str | None = None,
                    attributes: bool = True) -> str:
    """The DOT text of one `func.func` (`arg_names` name its arguments' nodes)."""
    builder = _Builder(attributes)
    builder.function(fn, arg_names, "  ")
    return builder.text(title or _symbol(fn))


def module_to_dot(module: ir.Module, attributes: bool = True) -> str:
    """The DOT text of every function of `module`, one cluster per function."""
    builder = _Builder(attributes)
    for child in module.body.operations:
        fn = child.operation
        if fn.name != "func.func" or not len(fn.regions[0].blocks):
            continue
        builder.lines.append(f"  subgraph cluster_{next(builder.clusters)} {{")
        builder.lines.append(f"    label={quote('@' + _symbol(fn))}; color=\"#bbbbbb\";")
        builder.function(fn, None, "    ")
        builder.lines.append("  }")
    return builder.text("module")


def render_svg(dot: str) -> str:
    """The SVG picture of DOT text `dot`, laid out by Graphviz's `dot`.

    Raises:
      GraphvizUnavailable: the `graphviz` package or the `dot` program is missing.
    """
    try:
        import graphviz
    except ImportError:
        raise GraphvizUnavailable(
            "rendering SVG needs the 'graphviz' Python package and Graphviz's 'dot' program: "
            "pip install 'ember[viz]' (or: pip install graphviz), and apt-get install "
            "graphviz (brew install graphviz on macOS); to_dot() gives the DOT text "
            "without them") from None
    try:
        return graphviz.Source(dot).pipe(format="svg", encoding="utf-8")
    except graphviz.ExecutableNotFound:
        raise GraphvizUnavailable(
            "rendering SVG needs Graphviz's 'dot' program, which is not on PATH: "
            "apt-get install graphviz (brew install graphviz on macOS); to_dot() gives "
            "the DOT text without it") from None


def _symbol(fn: ir.Operation) -> str:
    return ir.StringAttr(fn.attributes["sym_name"]).value
