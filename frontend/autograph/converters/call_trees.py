"""Calls -> `ag__.converted_call(f, *args, **kwargs)`, which converts `f` first when it is
the user's own Python function (conversion.py) and calls anything else as is.

Calls of `ag__` itself and of the builtins that look at their caller's frame (`locals`,
`globals`, `vars`, `super`, `eval`, `exec`, `dir`) stay direct.

    y = helper(x, k=2)    ->   y = ag__.converted_call(helper, x, k=2)
"""

from __future__ import annotations

import ast

from ember.frontend.autograph.ast_util import AG, LocalTransformer

_FRAME_BUILTINS = {"locals", "globals", "vars", "super", "eval", "exec", "dir"}


class _Calls(LocalTransformer):
    def visit_Call(self, node: ast.Call):
        self.generic_visit(node)
        f = node.func
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == AG:
            return node
        if isinstance(f, ast.Name) and f.id in _FRAME_BUILTINS:
            return node
        call = ast.Attribute(ast.Name(AG, ast.Load()), "converted_call", ast.Load())
        return ast.copy_location(ast.Call(call, [f] + node.args, node.keywords), node)


def transform(fn: ast.FunctionDef) -> None:
    fn.body = [_Calls().visit(s) for s in fn.body]
