"""ConcreteFunction.graph.to_dot() / to_svg(): the DOT text read back by a small DOT parser
(structure, clusters, escaping) with no Graphviz needed, and the SVG when Graphviz is there."""

from __future__ import annotations

import re
import shutil
import sys
import types
import xml.etree.ElementTree as ET

import pytest
from mlir import ir

import ember as em
from ember.dialects.ember.irdl import make_context
from ember.passes import view_op_graph
from ember.passes.view_op_graph import GraphvizUnavailable, function_to_dot, module_to_dot

try:
    import graphviz  # noqa: F401
    HAVE_GRAPHVIZ = shutil.which("dot") is not None
except ImportError:
    HAVE_GRAPHVIZ = False
_SKIP_WITHOUT_GRAPHVIZ = pytest.mark.skipif(
    not HAVE_GRAPHVIZ, reason="needs the graphviz package (pip install 'ember[viz]') and "
    "Graphviz's dot program (apt-get install graphviz)")


def NEEDS_GRAPHVIZ(test):
    """Marks `test` `graphviz` (pytest -m graphviz) and skips it without Graphviz."""
    return pytest.mark.graphviz(_SKIP_WITHOUT_GRAPHVIZ(test))


# -- a parser for the DOT subset to_dot writes ------------------------------------------------

_TOKEN = re.compile(r'\s*(?:("(?:[^"\\]|\\.)*")|(->|[{}\[\];,=])|([A-Za-z0-9_.#]+))', re.S)


def _tokens(text: str) -> list[str]:
    out, pos = [], 0
    while text[pos:].strip():
        m = _TOKEN.match(text, pos)
        assert m, f"not DOT at {text[pos:pos + 40]!r}"
        out.append(m.group(m.lastindex))
        pos = m.end()
    return out


def _unquote(token: str) -> str:
    if not token.startswith('"'):
        return token
    return re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1), token[1:-1])


class Graph:
    """Nodes (id -> attributes, with the clusters they sit in), edges and clusters."""

    def __init__(self, text: str):
        self.nodes: dict[str, dict] = {}
        self.edges: list[tuple[str, str, dict]] = []
        self.clusters: dict[str, dict] = {}
        tokens = _tokens(text)
        assert tokens[:1] == ["digraph"], tokens[:3]
        self.title = _unquote(tokens[1])
        end = self._statements(tokens, 3, [], {}) if tokens[2] == "{" else 0
        assert end == len(tokens) - 1 and tokens[-1] == "}", "unbalanced braces"

    def _attrs(self, tokens, i) -> tuple[dict, int]:
        assert tokens[i] == "["
        attrs, i = {}, i + 1
        while tokens[i] != "]":
            assert tokens[i + 1] == "=", tokens[i:i + 3]
            attrs[tokens[i]] = _unquote(tokens[i + 2])
            i += 3
            if tokens[i] == ",":
                i += 1
        return attrs, i + 1

    def _statements(self, tokens, i, path, own) -> int:
        while tokens[i] != "}":
            if tokens[i] == "subgraph":
                name, inner = tokens[i + 1], {}
                assert tokens[i + 2] == "{"
                self.clusters[name] = inner
                i = self._statements(tokens, i + 3, path + [name], inner) + 1
                inner["parent"] = path[-1] if path else None
                continue
            if tokens[i + 1] == "=":  # graph attribute
                own[tokens[i]] = _unquote(tokens[i + 2])
                i += 3
            elif tokens[i + 1] == "->":
                source, target = tokens[i], tokens[i + 2]
                attrs, i = self._attrs(tokens, i + 3)
                self.edges.append((source, target, attrs))
            else:
                name = tokens[i]
                attrs, i = self._attrs(tokens, i + 1)
                if name not in ("node", "edge"):
                    attrs["clusters"] = list(path)
                    self.nodes[name] = attrs
            assert tokens[i] == ";", f"statement not ended by ';' at {tokens[i - 3:i + 1]}"
            i += 1
        return i

    def node_by_name(self, name: str) -> tuple[str, dict]:
        found = [(k, v) for k, v in self.nodes.items() if v["label"].split("\n")[0] == name]
        assert len(found) == 1, f"{len(found)} nodes named {name!r}"
        return found[0]

    def cluster_labels(self, node_id: str) -> list[str]:
        return [self.clusters[c]["label"] for c in self.nodes[node_id]["clusters"]]


def _edges_of(text: str) -> list[tuple[str, str, str]]:
    """(source, target, label) of every edge."""
    return [(a, b, attrs.get("label", "")) for a, b, attrs in Graph(text).edges]


# -- the traced functions ---------------------------------------------------------------------

@em.function
def branch_and_loop(x, n):
    if em.reduce_sum(x) > 0:
        y = x * 2.0
    else:
        y = -x
    i = 0
    while i < n:
        y = y + 1.0
        i += 1
    return y


def _concrete():
    return branch_and_loop.get_concrete_function(em.TensorSpec([4], em.float32),
                                                 em.TensorSpec([], em.int32))


def test_dot_has_a_cluster_per_region_and_every_node_by_its_graph_name():
    cf = _concrete()
    text = cf.graph.to_dot()
    graph = Graph(text)
    assert graph.title == "branch_and_loop"
    # every node of graph.nodes (but region arguments) is drawn under the same name
    for node in cf.graph.nodes:
        if node.name != "while/arg":
            graph.node_by_name(node.name)
    assert graph.cluster_labels(graph.node_by_name("mul")[0]) == ["if (scf.if)", "then"]
    assert graph.cluster_labels(graph.node_by_name("neg")[0]) == ["if (scf.if)", "else"]
    assert graph.cluster_labels(graph.node_by_name("less")[0]) == ["while (scf.while)", "before"]
    assert graph.cluster_labels(graph.node_by_name("add")[0]) == ["while (scf.while)", "after"]
    assert graph.cluster_labels(graph.node_by_name("while")[0]) == ["while (scf.while)"]
    assert graph.cluster_labels(graph.node_by_name("x")[0]) == []
    assert all(name.startswith("cluster_") for name in graph.clusters)
    assert len(graph.clusters) == 6
    x_id, x = graph.node_by_name("x")
    assert x["label"] == "x\nargument 0: tensor<4xf32>" and x["shape"] == "ellipse"
    mul_id, mul = graph.node_by_name("mul")
    assert mul["label"].split("\n")[1:3] == ["ember.mul", "-> tensor<4xf32>"]
    _, total = graph.node_by_name("reduce_sum")
    assert "axes = array<i64: 0>" in total["label"].split("\n")


def test_dot_edges_carry_value_types_and_terminators_flow_back():
    cf = _concrete()
    text = cf.graph.to_dot()
    graph = Graph(text)
    ids = {attrs["label"].split("\n")[0]: k for k, attrs in graph.nodes.items()}
    edges = _edges_of(text)
    assert (ids["x"], ids["mul"], "tensor<4xf32>") in edges
    assert (ids["extract"], ids["if"], "i1") in edges
    # the loop's second result (of two) is the function's result
    assert (ids["while"], ids["Identity"], "#1 tensor<4xf32>") in edges
    assert (ids["mul"], ids["yield"], "tensor<4xf32>") in edges
    assert (ids["yield"], ids["if"], "") in edges  # dashed: the yielded value leaves the if
    assert f"{ids['yield']} -> {ids['if']} [style=dashed, constraint=false];" in text
    assert len(edges) == text.count(" -> ")


def _parse(text: str) -> ir.Module:
    context = make_context()
    context.allow_unregistered_dialects = True
    with context:
        return ir.Module.parse(text)


HOSTILE = r'say \"hi\" {x} | <y> \\n end'


def test_dot_escapes_quotes_braces_and_backslashes_in_attributes():
    module = _parse(f'''
    func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {{
      %y = "test.note"(%x) {{note = "{HOSTILE}"}} : (tensor<2xf32>) -> tensor<2xf32>
      %c = "ember.constant"() {{value = dense<1.0> : tensor<300xf32>}} : () -> tensor<300xf32>
      %d = "ember.constant"() {{value = dense<[1.0, 2.0]> : tensor<2xf32>}} : () -> tensor<2xf32>
      return %y : tensor<2xf32>
    }}''')
    with module.context:
        fn = module.body.operations[0].operation
        text = function_to_dot(fn)
        note = fn.regions[0].blocks[0].operations[0].operation.attributes["note"]
        printed = str(note)
    graph = Graph(text)  # the parser would lose its place at an unescaped quote
    _, node = graph.node_by_name("note")
    assert node["label"].split("\n")[3] == f"note = {printed}"
    assert printed.startswith('"say ') and "{x} | <y>" in printed  # (MLIR prints `"` as \\22)
    assert "\\\\n end" in text  # MLIR's backslash is doubled: Graphviz shows `\n`, no newline
    _, splat = graph.node_by_name("Const")
    assert "value = dense<1.000000e+00> : tensor<300xf32>" in splat["label"]
    _, pair = graph.node_by_name("Const_1")
    assert "value = dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>" in pair["label"]
    assert Graph(function_to_dot(fn, attributes=False)).node_by_name("note")[1]["label"] \
        == "note\ntest.note\n-> tensor<2xf32>"


def test_quote_keeps_any_text_inside_one_dot_string():
    raw = 'a "quoted" {brace} [x] \\ back\nnew line'
    token = view_op_graph.quote(raw)
    assert _tokens(token) == [token]
    assert _unquote(token) == raw


def test_dot_elides_large_constants_and_cuts_long_attributes():
    values = ", ".join(f"{i}.0" for i in range(40))
    module = _parse(f'''
    func.func @f() -> tensor<40xf32> {{
      %c = "ember.constant"() {{value = dense<[{values}]> : tensor<40xf32>}} : () -> tensor<40xf32>
      %y = "test.long"() {{text = "{'a' * 100}"}} : () -> tensor<40xf32>
      return %c : tensor<40xf32>
    }}''')
    with module.context:
        graph = Graph(function_to_dot(module.body.operations[0].operation))
    assert graph.node_by_name("Const")[1]["label"].endswith(
        "value = dense<...> : tensor<40xf32>")
    long_line = graph.node_by_name("long")[1]["label"].split("\n")[-1]
    assert long_line == "text = " + ('"' + "a" * 100)[:view_op_graph.MAX_ATTRIBUTE_CHARS - 3] \
        + "..."


def test_module_dot_has_one_cluster_per_function():
    module = _parse('''
    func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
      %y = "ember.neg"(%x) : (tensor<2xf32>) -> tensor<2xf32>
      return %y : tensor<2xf32>
    }
    func.func private @g(%x: tensor<2xf32>) -> tensor<2xf32>''')
    with module.context:
        graph = Graph(module_to_dot(module))
    assert [c["label"] for c in graph.clusters.values()] == ["@f"]  # a declaration has no body
    assert graph.cluster_labels(graph.node_by_name("neg")[0]) == ["@f"]
    assert graph.node_by_name("arg0")[1]["label"] == "arg0\nargument 0: tensor<2xf32>"


def test_to_svg_without_the_graphviz_package_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "graphviz", None)  # `import graphviz` raises ImportError
    with pytest.raises(GraphvizUnavailable, match=r"pip install 'ember\[viz\]'.*to_dot\(\)"):
        _concrete().graph.to_svg()
    assert issubclass(GraphvizUnavailable, ImportError)


def test_to_svg_without_the_dot_program_says_what_to_install(monkeypatch):
    class ExecutableNotFound(RuntimeError):
        pass

    def pipe(self, format, encoding):
        raise ExecutableNotFound("failed to execute PosixPath('dot')")
    fake = types.SimpleNamespace(ExecutableNotFound=ExecutableNotFound,
                                 Source=type("Source", (), {"__init__": lambda s, d: None,
                                                            "pipe": pipe}))
    monkeypatch.setitem(sys.modules, "graphviz", fake)
    with pytest.raises(GraphvizUnavailable, match=r"'dot' program.*apt-get install graphviz"):
        _concrete().graph.to_svg()


@NEEDS_GRAPHVIZ
def test_to_svg_draws_every_node_and_cluster():
    cf = _concrete()
    svg = ET.fromstring(cf.graph.to_svg())
    ns = {"svg": "http://www.w3.org/2000/svg"}
    groups = svg.findall(".//svg:g", ns)
    nodes = [g for g in groups if g.get("class") == "node"]
    clusters = [g for g in groups if g.get("class") == "cluster"]
    assert len(nodes) == len(Graph(cf.graph.to_dot()).nodes)
    assert len(clusters) == 6
    texts = {t.text for t in svg.iter("{http://www.w3.org/2000/svg}text")}
    assert {"mul", "ember.mul", "then", "else", "before", "after"} <= texts


@NEEDS_GRAPHVIZ
def test_to_svg_shows_hostile_attribute_text_verbatim():
    module = _parse(f'''
    func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {{
      %y = "test.note"(%x) {{note = "{HOSTILE}"}} : (tensor<2xf32>) -> tensor<2xf32>
      return %y : tensor<2xf32>
    }}''')
    with module.context:
        fn = module.body.operations[0].operation
        printed = str(fn.regions[0].blocks[0].operations[0].operation.attributes["note"])
        svg = ET.fromstring(view_op_graph.render_svg(function_to_dot(fn)))
    texts = [t.text for t in svg.iter("{http://www.w3.org/2000/svg}text")]
    assert f"note = {printed}" in texts
