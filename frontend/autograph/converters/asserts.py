"""`assert test, message` -> `ag__.assert_stmt(test, lambda: message, line)`.

Python values are asserted at once, as Python does; a tensor test becomes a run-time check
that raises `InvalidArgumentError` with the message in compiled code as in eager. The
message is a lambda: Python evaluates it only when the assertion fails.
"""

from __future__ import annotations

import ast

from ember.frontend.autograph.ast_util import LocalTransformer, expr


class _Asserts(LocalTransformer):
    def visit_Assert(self, node: ast.Assert):
        message = expr("lambda: __m", node, __m=node.msg) if node.msg is not None else \
            ast.Constant(None)
        call = expr(f"ag__.assert_stmt(__t, __m, {node.lineno})", node, __t=node.test,
                    __m=message)
        return ast.copy_location(ast.Expr(call), node)


def transform(fn: ast.FunctionDef) -> None:
    fn.body = [_Asserts().visit(s) for s in fn.body]
