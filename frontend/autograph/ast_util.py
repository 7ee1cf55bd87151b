"""Small helpers the converters share: parsing templates, fresh names, local walks."""

from __future__ import annotations

import ast
from typing import Iterator

# What the converters do not look into: the user's nested functions and classes are
# converted (or not) on their own when they are called. A lambda's body is an expression
# of the function it is in: its calls and `and`/`or` are converted with it.
OPAQUE = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
AG = "ag__"


def generated(node: ast.AST) -> ast.AST:
    """Marks a node the converters made (later converters look into generated defs)."""
    node._ag_generated = True
    return node


def is_opaque(node: ast.AST) -> bool:
    return isinstance(node, OPAQUE) and not getattr(node, "_ag_generated", False)


class LocalTransformer(ast.NodeTransformer):
    """A NodeTransformer over one function's own code: it leaves opaque nodes alone."""

    def generic_visit(self, node):
        if is_opaque(node):
            return node
        return super().generic_visit(node)


def walk_local(node: ast.AST) -> Iterator[ast.AST]:
    """`node` and everything inside it, not descending into opaque nodes below it."""
    yield node
    for child in ast.iter_child_nodes(node):
        if is_opaque(child):
            continue
        yield from walk_local(child)


def contains(nodes, kinds: tuple, stop: tuple = ()) -> bool:
    """Whether any of `nodes` holds a node of `kinds`, not looking into `stop` kinds
    (or opaque nodes) below the top."""
    for top in nodes:
        stack = [top]
        while stack:
            n = stack.pop()
            if isinstance(n, kinds):
                return True
            for child in ast.iter_child_nodes(n):
                if not is_opaque(child) and not isinstance(child, stop):
                    stack.append(child)
    return False


def stmts(source: str, at: ast.AST | None = None, **holes: ast.AST) -> list[ast.stmt]:
    """Statements parsed from `source`; each name in `holes` is replaced by its node
    (an expression, or a statement list for a lone `name` statement); located at `at`."""
    tree = ast.parse(source)
    out = _Fill(holes).visit(tree).body
    if at is not None:
        for s in out:
            for n in ast.walk(s):
                if getattr(n, "_ag_template", True):  # not a hole's (user's) node
                    _locate(n, at)
    return out


def _locate(node: ast.AST, at: ast.AST) -> None:
    """`node` at the first line of `at` (a generated statement spans no user lines)."""
    if "lineno" in node._attributes:
        node.lineno = node.end_lineno = at.lineno
        node.col_offset = node.end_col_offset = at.col_offset


def expr(source: str, at: ast.AST | None = None, **holes: ast.AST) -> ast.expr:
    (statement,) = stmts(source, at, **holes)
    return statement.value


class _Fill(ast.NodeTransformer):
    def __init__(self, holes: dict):
        self.holes = holes

    def visit_Name(self, node: ast.Name):
        if node.id in self.holes:
            return _keep(self.holes[node.id])
        return node

    def visit_Expr(self, node: ast.Expr):
        if isinstance(node.value, ast.Name) and isinstance(self.holes.get(node.value.id),
                                                           list):
            return [_keep(s) for s in self.holes[node.value.id]]
        self.generic_visit(node)
        return node

    def generic_visit(self, node):
        super().generic_visit(node)
        if isinstance(node, (ast.FunctionDef, ast.Lambda)):
            generated(node)
        return node


def _keep(node):
    """A node from the user's code keeps its own location."""
    for n in ast.walk(node):
        n._ag_template = False
    return node


class Namer:
    """Fresh names for one function: not used anywhere in it."""

    def __init__(self, fn: ast.AST):
        self.taken = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)}
        self.taken |= {n.arg for n in ast.walk(fn) if isinstance(n, ast.arg)}
        self.taken |= {n.name for n in ast.walk(fn) if isinstance(n, (ast.FunctionDef,
                                                                      ast.ClassDef))}

    def new(self, base: str) -> str:
        name, k = base, 0
        while name in self.taken:
            k += 1
            name = f"{base}_{k}"
        self.taken.add(name)
        return name


def name_tuple(names) -> str:
    """`('a', 'b')` as source."""
    return "(" + "".join(f"{n!r}, " for n in names).rstrip(" ") + ")" if names else "()"


def target_tuple(names) -> str:
    """`(a, b)` as an assignment target or a returned tuple (source)."""
    return "(" + "".join(f"{n}, " for n in names).rstrip(" ") + ")" if names else "()"
