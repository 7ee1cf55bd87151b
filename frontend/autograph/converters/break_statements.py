"""`break` -> `break_ = True`, what follows it in the loop body guarded by `if not break_:`,
`not break_` added to the loop's test (a `for` loop's extra test) and the loop's `else:`
run only `if not break_` after it. Inner loops are rewritten first; their breaks are their
own.

    while x > 0:                 break_ = False
        if x > 5:        ->      while not break_ and x > 0:
            break                    if x > 5:
        x -= 1                           break_ = True
                                     if not break_:
                                         x -= 1
"""

from __future__ import annotations

import ast

from ember.frontend.autograph.ast_util import Namer, expr, stmts
from ember.frontend.autograph.converters.guards import LoopJumps


def _finish(node, flag: str):
    """`not flag` joins the loop's test; its `else:` runs only if no break happened."""
    test = expr(f"not {flag}", node)
    if isinstance(node, ast.While):
        node.test = ast.copy_location(ast.BoolOp(ast.And(), [test, node.test]), node.test)
    else:
        node._ag_extra_tests = getattr(node, "_ag_extra_tests", []) + [test]
    after = stmts(f"if not {flag}:\n    __rest", node, __rest=node.orelse) if node.orelse \
        else []
    node.orelse = []
    return stmts(f"{flag} = False", node) + [node] + after


def transform(fn: ast.FunctionDef, namer: Namer) -> None:
    LoopJumps(namer, ast.Break, "break_", _finish).transform(fn)
