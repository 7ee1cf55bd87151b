"""`a and b`, `a or b`, `not a`, `a if c else b` and `a < b < c` -> `ag__.and_`, `or_`,
`not_`, `if_exp`.

The right operand of `and`/`or` and both arms of a conditional expression become lambdas,
so Python evaluates them only when it would have; on tensors they are traced into the
branches of an `scf.if`.

    x > 0 and y > 0      ->   ag__.and_(lambda: x > 0, lambda: y > 0)
    not done             ->   ag__.not_(done)
    0 < x < 10           ->   ag__.compare_chain(0, ('Lt', lambda: x), ('Lt', lambda: 10))
"""

from __future__ import annotations

import ast

from ember.frontend.autograph.ast_util import LocalTransformer, expr, generated


class _Logical(LocalTransformer):
    def visit_BoolOp(self, node: ast.BoolOp):
        self.generic_visit(node)
        op = "and_" if isinstance(node.op, ast.And) else "or_"
        out = node.values[-1]
        for value in reversed(node.values[:-1]):
            out = expr(f"ag__.{op}(lambda: __a, lambda: __b)", node, __a=value, __b=out)
        return _mark(out)

    def visit_UnaryOp(self, node: ast.UnaryOp):
        self.generic_visit(node)
        if not isinstance(node.op, ast.Not):
            return node
        return expr("ag__.not_(__a)", node, __a=node.operand)

    def visit_Compare(self, node: ast.Compare):
        """`a < b < c` -> `ag__.compare_chain(a, ('<', lambda: b), ('<', lambda: c))`:
        each operand evaluated once, left to right, as Python does."""
        self.generic_visit(node)
        if len(node.ops) == 1:
            return node
        rest = ", ".join(f"({type(op).__name__!r}, lambda: __c{i})"
                         for i, op in enumerate(node.ops))
        holes = {f"__c{i}": c for i, c in enumerate(node.comparators)}
        return _mark(expr(f"ag__.compare_chain(__first, {rest})", node, __first=node.left,
                          **holes))

    def visit_IfExp(self, node: ast.IfExp):
        self.generic_visit(node)
        return _mark(expr(f"ag__.if_exp(__c, lambda: __a, lambda: __b, {node.lineno})", node,
                          __c=node.test, __a=node.body, __b=node.orelse))


def _mark(node: ast.AST) -> ast.AST:
    for n in ast.walk(node):
        if isinstance(n, ast.Lambda):
            generated(n)
    return node


def transform(fn: ast.FunctionDef) -> None:
    fn.body = [_Logical().visit(s) for s in fn.body]
